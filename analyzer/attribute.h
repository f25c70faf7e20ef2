/*
 * attribute.h - the call model of a trace and the attribution of every event to the call
 * that caused it (DESIGN.md section 6).
 *
 * Attribution needs the whole of every window (a response, a cancellation, a task's end can
 * come long after the events they bound), so a trace is read twice:
 *   pass 1  callmodel__header / __stdio / __mark / __event (fork, exec, exit) / __loss:
 *           the channel is reassembled into calls, marks are read, process facts recorded;
 *   resolve callmodel__resolve: windows closed, marks matched, processes bound to calls;
 *   pass 2  callmodel__attribute for each event (or callmodel__seen, and
 *           callmodel__attribution where the result is needed), in any order, then
 *           callmodel__finish.
 * Memory grows with calls, processes, marks and losses, never with events. (analyze reads once
 * when no verdict needs an attribution: pass 1 fed from the same records as the rules, resolve
 * after, and pass 2 only for the findings' events, attr_later.h.)
 *
 * The rules, in order; each attributed event carries the one that placed it:
 *   lineage    the event's process belongs to a call (procbind.h)
 *   window     otherwise, the event lies inside exactly one call's window
 *   evidence   inside several windows (or a process created inside several): its path,
 *              address or argv is named by exactly one candidate's arguments (evidence.h)
 *   ambiguous  otherwise: every candidate is named
 *   bucket     outside every window: startup (before the first request was read), shutdown
 *              (after an explicit shutdown mark, end-of-file on the server's stdin or the
 *              server's exit, whichever came first), ambient (between)
 * Only the client's requests have windows; requests the server sends (roots/list...) do not.
 */
#ifndef MW_ATTRIBUTE_H
#define MW_ATTRIBUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "event.h"
#include "marks.h"
#include "procbind.h"

#define ATTR_CANDIDATES_MAX 8

enum attr_rule {
	ATTR_LINEAGE = 0,
	ATTR_WINDOW,
	ATTR_EVIDENCE,
	ATTR_AMBIGUOUS,
	ATTR_BUCKET,
	ATTR_RULES,
};

enum attr_bucket {
	BUCKET_NONE = 0,
	BUCKET_STARTUP,
	BUCKET_AMBIENT,
	BUCKET_SHUTDOWN,
	BUCKETS,
};

struct attribution {
	enum attr_rule rule;
	enum attr_bucket bucket;	  /* ATTR_BUCKET */
	size_t call;			  /* LINEAGE, WINDOW, EVIDENCE: 1-based */
	size_t cand[ATTR_CANDIDATES_MAX]; /* AMBIGUOUS: in call order */
	size_t n_cand;			  /* kept */
	size_t n_cand_total;		  /* all of them */
	const char *matched; /* EVIDENCE: the argument that named the event (owned by the call) */
	uint64_t order;	     /* sort key: 2 * call, or 2 * (calls begun before) + 1 */
};

struct callmodel_opts {
	uint64_t cancel_grace_ns; /* 0 = CANCEL_GRACE_DEFAULT_NS */
	size_t line_max;	  /* 0 = CHAN_LINE_MAX_DEFAULT */
};

struct callmodel;

struct callmodel *callmodel__new(const struct callmodel_opts *o);
void callmodel__free(struct callmodel *cm);

/* Pass 1. Each returns 0 or -ENOMEM. */
int callmodel__header(struct callmodel *cm, const Mcpt__Header *h);
int callmodel__stdio(struct callmodel *cm, const Mcpt__StdioFrame *f, uint64_t index);
int callmodel__mark(struct callmodel *cm, const Mcpt__Mark *m, uint64_t index);
int callmodel__event(struct callmodel *cm, const struct ev_view *v);
/* False for an op whose events callmodel__event ignores (all but fork, exec and exit): the
 * caller need not decode them. */
bool callmodel_wants_op(int op);
int callmodel__loss(struct callmodel *cm, const Mcpt__Loss *l);
/* A ProcInfo record: ALIVE_AT_END marks its process (procbind__alive); others are ignored. */
int callmodel__proc(struct callmodel *cm, const Mcpt__ProcInfo *pi, uint64_t index);
int callmodel__resolve(struct callmodel *cm);

/* Pass 2: where v belongs. Never fails. The same as callmodel__seen then
 * callmodel__attribution. */
void callmodel__attribute(struct callmodel *cm, const struct ev_view *v, struct attribution *a);
/* Its two halves, for a caller that needs the attribution of only some subjects: every subject
 * must be seen (the losses' bounds come from the events around them); the attribution reads
 * the model alone, so it can be made later, or never. */
void callmodel__seen(struct callmodel *cm, const struct ev_view *v);
void callmodel__attribution(const struct callmodel *cm, const struct ev_view *v,
			    struct attribution *a);
/* After pass 2: calls whose window saw a loss are marked incomplete. */
void callmodel__finish(struct callmodel *cm);

struct callset *callmodel__calls(const struct callmodel *cm);
const struct procbind *callmodel__procs(const struct callmodel *cm);
const struct markset *callmodel__marks(const struct callmodel *cm);
bool callmodel__channel_captured(const struct callmodel *cm);
/* A trace of an attached server (--pid, --pgid): it has no startup bucket. */
bool callmodel__attached(const struct callmodel *cm);
uint64_t callmodel__shutdown_ts(const struct callmodel *cm); /* 0: none */

const char *attr_rule_name(enum attr_rule r);
int attr_rule_by_name(const char *name);
const char *attr_bucket_name(enum attr_bucket b);
int attr_bucket_by_name(const char *name);

#endif /* MW_ATTRIBUTE_H */
