/*
 * procbind.h - which call each process of the trace belongs to (DESIGN.md section 6, lineage).
 *
 * Pass 1 records the facts of every process from fork, exec and exit records: its parent,
 * when it was created, its first exec's argv, how it ended. Once the call windows are known,
 * processes are bound in creation order:
 *   - a child of a process bound to a call belongs to that call (for its whole life, even after
 *     the response): a daemon a tool spawned stays that tool's;
 *   - a process created (fork) by the server while exactly one call window was open belongs
 *     to that call (lineage); while several were open, its first exec's argv may name exactly
 *     one of them (evidence); else it keeps them all as candidates (ambiguous);
 *   - a server process created outside every window that later execs while exactly one window
 *     is open is bound then (exec is a creation too);
 *   - anything else is the server's own (the server, its threads, helpers started at startup):
 *     its events are attributed one by one, by window and evidence.
 * Memory grows with the number of processes (argv kept up to what the trace holds).
 */
#ifndef MW_PROCBIND_H
#define MW_PROCBIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "event.h"
#include "strbuf.h"
#include "winidx.h"

#define BIND_CANDIDATES_MAX 8

enum bind_kind {
	BIND_SERVER = 0, /* the server's own: events attributed one by one */
	BIND_LINEAGE,
	BIND_EVIDENCE,
	BIND_AMBIGUOUS,
};

struct pb_proc {
	uint32_t pid;
	uint64_t pstart;
	bool has_parent;
	uint32_t ppid;
	uint64_t ppstart;
	bool forked;
	uint64_t fork_ts, order;
	bool execd;
	uint64_t exec_ts;
	uint8_t *exe; /* the last exec's path */
	size_t exe_len;
	uint8_t *argv; /* the first exec's argv, NUL separated */
	size_t argv_len;
	bool exited;
	int64_t exit_status;
	uint64_t exit_ts;
	bool is_target;
	bool alive_at_end; /* still running when recording stopped (ProcInfo ALIVE_AT_END) */
	bool killed_at_end; /* ... and then killed by the collector (--after-linger kill) */
	uint64_t alive_ts, alive_index; /* that record's time and index */
	bool has_uid;
	uint32_t uid; /* real uid at its fork or last exec (the records this table reads) */
	enum bind_kind bind;
	size_t call;	     /* LINEAGE, EVIDENCE: 1-based */
	const char *matched; /* EVIDENCE: the argument that named it (owned by the call) */
	size_t cand[BIND_CANDIDATES_MAX]; /* AMBIGUOUS */
	size_t n_cand;
	struct pb_proc *next;
};

struct procbind;

struct procbind *procbind__new(void);
void procbind__free(struct procbind *pb);

int procbind__set_target(struct procbind *pb, uint32_t pid, uint64_t pstart);
/* A fork, exec or exit record (others are ignored). Returns 0 or -ENOMEM. */
int procbind__event(struct procbind *pb, const struct ev_view *v);
/* A process the collector found still running when recording stopped (a ProcInfo
 * ALIVE_AT_END; killed: the collector then killed it); one with no record of its own is added.
 * Returns 0 or -ENOMEM. */
int procbind__alive(struct procbind *pb, uint32_t pid, uint64_t pstart, uint64_t ts, uint64_t index,
		    bool killed);
/* Whether the server was among them: then the recording was stopped with it running. */
bool procbind__server_alive(const struct procbind *pb);
/* Binds every process (see above). Returns 0 or -ENOMEM. */
int procbind__resolve(struct procbind *pb, const struct callset *cs, const struct winidx *wi);

struct pb_proc *procbind__find(const struct procbind *pb, uint32_t pid, uint64_t pstart);
/* Processes in creation order (after resolve); NULL past the end. */
const struct pb_proc *procbind__at(const struct procbind *pb, size_t i);
size_t procbind__count(const struct procbind *pb);

/* How p is bound: "lineage", "evidence", "ambiguous", or "server" (the server's own). */
const char *procbind_bind_name(enum bind_kind b);
/* Whether p is one of the processes other than the server still running when recording
 * stopped. */
static inline bool procbind_outlived(const struct pb_proc *p)
{
	return p->alive_at_end && !p->is_target;
}
/* A process's executable and argv, as the reports write them: /usr/bin/sleep ["sleep" "5"].
 * For one that ran no exec: no_exec, or (NULL) "(a fork of pid N, no exec seen)". */
void procbind_exe_text(struct strbuf *sb, const struct pb_proc *p, const char *no_exec);

#endif /* MW_PROCBIND_H */
