/*
 * probe.h - `mcpwitness probe` (also installed as mcpwitness-probe): a drop-in runtime probe
 * for mcp-server-fuzzer, speaking the mcpfz-probe sidecar protocol (docs/protocol.md of
 * mcpfz-probe) on stdin/stdout while the privileged collector records a signed trace.
 *
 * The split keeps JSON out of the privileged process (DESIGN.md section 10): this unprivileged
 * front parses the control lines; the collector only stores them raw, as Mark records, with
 * the timestamp of its own clock. The probe reads the trace back from a pipe through the trace
 * library's streaming verifier and turns the recorded events into the protocol's event lines,
 * attributing each to a call by comparing its kernel timestamp with the recorded marks.
 *
 *   probe_cmd.c    options, the control loop on stdin, signals, shutdown
 *   probe_gen.c    one scope = one generation: the collector process, the trace file, the
 *                  threads that copy the trace and read it back
 *   probe_emit.c   records -> protocol lines: buckets, comm, status acknowledgements
 */
#ifndef MW_PROBE_H
#define MW_PROBE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "mcpt.h"

#define PROBE_FALLBACK_NS 250000000ull /* an end ack waits at most this past its grace window */

struct probe_opts {
	const char *dir;       /* where the traces go */
	const char *key;       /* the collector's signing key */
	const char *pubkey;    /* what the stream is verified with */
	bool pubkey_given;     /* --pubkey: failing to load it is an error, not a warning */
	const char *collector; /* the collector binary */
	uint64_t grace_ns;     /* trailing window after an end mark */
};

/* One call window, from its begin mark to its end mark (end_ts 0 = still open). */
struct probe_window {
	char *call_id;
	uint64_t begin_ts, end_ts;
	bool end_acked;
};

struct probe_comm {
	uint32_t pid;
	char comm[16];
};

/* Threads blocked in a connect at once that the probe remembers (probe_emit.c). */
#define PROBE_CONNECTS_MAX 256

/* Everything one generation's reader shares with the control loop (under probe.lock). */
struct probe_gen {
	struct probe *probe;
	long long pgid, generation;
	char path[4096];    /* the trace file */
	pid_t collector;    /* pid of the collector (or of sudo running it) */
	int ctl_w;	    /* control lines go here (the collector's --control-fd) */
	int out_r;	    /* the trace comes from here (the collector's --output-fd) */
	int file_fd;	    /* the copy on disk */
	int pipe_r, pipe_w; /* tee -> verifier */
	pthread_t tee, reader;
	bool threads;
	bool attached;	     /* the header was read: the collector records the group */
	bool done;	     /* the reader reached the end of the trace */
	int64_t wall_offset; /* realtime - event clock, from the header's clock sample */
	struct probe_window *win;
	size_t n_win, cap_win;
	bool seen_begin; /* a begin mark of this generation was read */
	struct probe_comm comms[1024];
	size_t n_comms, next_comm;
	/* threads whose pending connect was reported from its entry-time record, oldest first */
	uint32_t connect_tids[PROBE_CONNECTS_MAX];
	size_t n_connect_tids;
	struct mcpt_pubkey *key; /* NULL: structure only */
};

struct probe {
	struct probe_opts opts;
	pthread_mutex_t lock;  /* stdout and every probe_gen's shared fields */
	struct probe_gen *gen; /* the current generation, NULL before the first scope */
	struct mcpt_pubkey key;
	bool have_key;
	bool out_failed; /* stdout is gone: nothing more to say */
};

/* ---- probe_emit.c (all called with probe.lock held) ---- */

/* Prints one protocol line built from a jansson object (consumed); adds "ts_ns" when the
 * object has none. */
void probe_emit(struct probe *p, json_t *obj);
/* {"type":"status","message":msg,"bucket":bucket[,"call_id":call_id]} */
void probe_status(struct probe *p, const char *msg, const char *bucket, const char *call_id);
/* The reader's record callback (replay_cb): marks, events, losses, seals. */
struct replay_rec;
int probe_on_record(void *ctx, const struct replay_rec *r);
/* Acknowledges every end mark whose grace window is over at boottime now_ns (the control
 * loop's timer), or all of them (flush, at the end of a generation). */
void probe_ack_ends(struct probe_gen *g, uint64_t now_ns, bool flush);
void probe_gen_forget(struct probe_gen *g); /* frees the windows */
uint64_t probe_boottime_ns(void);

/* ---- probe_gen.c ---- */

/* Starts the collector for a scope and the threads that read its trace back. NULL with a
 * one-line error logged (and errno set) when it cannot. */
struct probe_gen *probe_gen_start(struct probe *p, long long pgid, long long generation);
/* Sends a control line (with its newline) to the collector; 0 or -errno. */
int probe_gen_send(struct probe_gen *g, const char *line, size_t len);
/* Stops the collector (TERM, FINAL seal), waits for the whole trace to be read back, frees. */
void probe_gen_stop(struct probe_gen *g);

/* ---- probe_cmd.c ---- */
int do_probe(int argc, char **argv);

#endif /* MW_PROBE_H */
