/*
 * session_int.h - what session.c (the record loop) and session_end.c (the end of a recording)
 * share; not for the collector's other modules, which use session.h.
 */
#ifndef MW_COLLECTOR_SESSION_INT_H
#define MW_COLLECTOR_SESSION_INT_H

#include <stdint.h>
#include <time.h>

#include "mcpt.h"
#include "session.h"

/* session.c */
uint64_t session_now_ns(clockid_t clock);
/* Marks the trace unwritable (sticky; the first error is the one reported). */
void session_set_write_err(struct session *s, int err, const char *what);
/* Appends one record to the trace. 0 or the sticky write error. */
int session_append(struct session *s, enum mcpt_type type, const ProtobufCMessage *msg,
		   uint64_t ts);
/* Reaps every exited child: the server (its status is kept) and orphaned descendants. */
void session_reap(struct session *s);
/* Writes a Loss record for each loss counter that grew since the last one. */
void session_flush_losses(struct session *s);

/* session_end.c, in session_run's order */
/* Kills the processes still recorded when the options say so, once: after a forced stop or a
 * write error with --on-collector-exit kill, or once the linger after the server's exit ran out
 * with --after-linger kill; their exits are drained into the trace meanwhile (while it can
 * still be written). */
void session_end_kill(struct session *s);
/* Writes the calls still in flight as unfinished and the processes still alive (or killed by
 * session_end_kill) as ALIVE_AT_END. */
void session_end_list(struct session *s);

#endif
