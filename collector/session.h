/*
 * session.h - one recording: the BPF programs are attached, the server is gated, the trace
 * writer is open; session_run drains the ring into the trace, forwards signals, reaps the
 * server and its orphans, lingers while descendants live, and ends with a FINAL seal.
 */
#ifndef MW_COLLECTOR_SESSION_H
#define MW_COLLECTOR_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "launch.h"
#include "leftovers.h"
#include "mcpt.h"

struct control;
struct loader;
struct options;

struct session {
	const struct options *opts;
	struct loader *bpf;
	struct mcpt_writer *writer;
	struct control *control; /* explicit marks, or NULL */
	struct launch server;
	int sigfd;
	int epfd;

	uint64_t loss_seen[MW_LOSS_REASONS]; /* counters already written as Loss records */
	uint64_t loss_seq; /* kernel's next sequence number before the counters were last read */
	uint64_t records;
	uint64_t dropped; /* kernel records that could not be encoded, written as USER_QUEUE loss */
	uint32_t drained_this_turn;
	bool ring_backlog; /* the last drain stopped at its budget */
	bool seal_pending; /* a server write ended: seal at the end of this loop turn */

	bool attached; /* --pid: the server is not our child; stop on the first INT/TERM/HUP */
	int write_err; /* sticky: the trace can no longer be written */
	bool server_done;
	int server_status; /* wait status */
	uint64_t linger_until_ms;
	int stop_signals; /* INT/TERM/HUP received */
	bool stop_now;
	struct leftovers leftovers; /* killed after the linger (--after-linger kill) */
	uint64_t pending_scanned_ns; /* the last scan for blocked calls (pending.h) */
	bool pending_warned;	     /* a scan failed (warned once) */
	/* the record being packed (wire.c): a kernel record's fields plus framing fit */
	uint8_t wire[MW_EVENT_MAX + 512];
};

/* Sets up signal handling (INT, TERM, HUP, QUIT, CHLD through a signalfd) and the epoll set. Must
 * run before the server is forked so no signal is lost. 0 or -errno. */
int session_init(struct session *s, const struct options *opts);

/* Record callback for the loader: encodes and appends one kernel record. */
int session_on_record(void *ctx, const struct mw_event *ev, size_t size);

/* Adds the control channel to the loop (after session_init). 0 or -errno. */
int session_add_control(struct session *s, struct control *c);

/* Writes a ProcInfo record about pid (its executable read from /proc before the sandbox; pstart
 * 0 = not known here, the pid's own records carry it; uid: its real uid, read by the caller
 * before the sandbox, 0 for ALIVE_AT_END, where it is not known). 0 or -errno. */
int session_note_proc(struct session *s, Mcpt__ProcInfo__Kind kind, uint32_t pid, uint32_t ppid,
		      uint64_t pstart, uint32_t uid);

/* Attach mode: watch pid (not our child) through pidfd, which the session takes (and closes).
 * 0 or -errno. */
int session_watch(struct session *s, pid_t pid, int pidfd);

/* Runs until the server and its descendants are gone (or linger expired), a stop is forced, or
 * the trace cannot be written; then writes the FINAL seal. Returns the collector's exit code:
 * the server's status (128+N for signal N), or 2 if the trace could not be completed. */
int session_run(struct session *s);

void session_fini(struct session *s);

#endif
