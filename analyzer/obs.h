/*
 * obs.h - a verified trace read for `policy learn` and `diff`: the call model first, then every
 * event with the call it is attributed to and the process that did it (as analyze sees them),
 * handed to a callback.
 *
 * Only what a baseline may rest on is handed over: the trace is verified with the trusted key
 * and held segment by segment until its seal verified (analyze --verify-before-release), so no
 * unsealed or forged record reaches a baseline. A trace that fails verification is refused (so
 * is what is not a trace); one that is only a valid prefix (no FINAL seal) is refused unless
 * allow_incomplete. With allow_incomplete nothing is held back: the records after the last
 * verified seal are used as analyze --allow-incomplete uses them, unproven, and a warning says
 * so; a record of a segment that then fails its seal may have been handed over, but the trace
 * is refused all the same (the caller then writes nothing).
 */
#ifndef MW_OBS_H
#define MW_OBS_H

#include <stdbool.h>
#include <stdint.h>

#include "attribute.h"
#include "event.h"
#include "proctree.h"
#include "replay.h"
#include "vars.h"

struct obs_opts {
	const char *pubkey; /* NULL: MW_DEFAULT_PUBKEY */
	bool allow_incomplete;
};

/* One event as learn and diff see it (valid during the callback). */
struct obs_event {
	const struct ev_view *v;
	const struct attribution *a;
	struct ev_bytes exe, argv; /* of the process (after an exec: the new program) */
	bool launch;		   /* the collector starting the server (policy field launch) */
	bool server;		   /* the server process itself or one of its threads */
	uint64_t index;		   /* record index */
};

struct obs_trace {
	const char *path;
	char id[33]; /* trace id in hex */
	struct replay *rp;
	struct callmodel *cm;
	struct vars *vars; /* the header's variables */
	struct proctree *pt;
	uint64_t events;
};

struct obs_ops {
	/* once, when the header is known (t->vars is set); may be NULL */
	int (*header)(void *ctx, struct obs_trace *t);
	/* every event released by the verifier, in stream order */
	int (*event)(void *ctx, struct obs_trace *t, const struct obs_event *e);
};

/* Reads path into t (zeroed by the caller) and calls ops. Returns 0, or the exit code after
 * one line on stderr: MW_EXIT_VERIFY (verification failed, incomplete), MW_EXIT_USAGE (not a
 * trace, input or memory). A callback's -errno stops the read (reported as "failed to read").
 * t->id is set once the Header was read, whether or not any record was handed over. */
int obs_read(struct obs_trace *t, const char *path, const struct obs_opts *o,
	     const struct obs_ops *ops, void *ctx);

/* The verdict line of a read trace ("VALID_COMPLETE"). */
const char *obs_verdict(const struct obs_trace *t);

void obs_fini(struct obs_trace *t);

#endif /* MW_OBS_H */
