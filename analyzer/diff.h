/*
 * diff.h - `mcpwitness diff`: what a trace shows a server doing that its baseline traces never
 * did, and what they did that it no longer does, per scope (learn.h), in four categories:
 * files (read, write, change, secrets), network (destinations, listening ports, DNS names),
 * processes (executables, programs run with their argv shapes) and other operations; and the
 * tool-call graph (which tool follows which).
 *
 * New: an item of the trace's model that the baseline's model lacks in the same scope. The
 * trace's model is read with the baseline as reference, so a program the baseline never saw
 * in a scope is one new exec, not one new read per library it loads.
 * Gone: an item of the baseline absent from the trace, in the scopes the trace has (a tool the
 * trace never called is named as not called, its items are not listed as gone).
 * Neither: reads of the processor counts every baseline allows (gen_runtime_noise,
 * learn_gen.h), which a runtime makes in one session and not the next.
 * Sequence drift: a new edge from a tool whose call neither read a secret nor sent data to one
 * whose call did (the exfiltration pattern of a poisoned tool chain), with the sequence of
 * tools of the trace up to it.
 * Order: scopes and items as lmodel__sort orders them, so the same traces give the same bytes.
 */
#ifndef MW_DIFF_H
#define MW_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "learn.h"
#include "obs.h"

struct dentry {
	const struct litem *it; /* of the trace's model (new) or the baseline's (gone) */
	bool gone;
};

struct dscope {
	enum ls_kind kind;
	const char *name;	    /* tool or method, else NULL */
	uint64_t calls, base_calls; /* in the trace, in the baseline */
	struct dentry *e;
	size_t n;
};

struct dseq {
	const struct litem *edge; /* of the trace's model */
	const char *to_tool;
	bool secret, sent; /* what the call the edge leads to did */
	char *sequence;	   /* "echo -> read_file -> fetch" (escaped names) */
};

struct diff {
	struct dscope *scopes;
	size_t n_scopes;
	struct dseq *seq;
	size_t n_seq;
	const struct lscope **not_called; /* baseline scopes of calls the trace never made */
	size_t n_not_called;
	size_t n_new, n_gone;
};

/* Compares cur (read with ref as its reference, from trace t) with ref. Both sorted. Returns
 * 0 or -ENOMEM. */
int diff_compute(struct diff *d, const struct lmodel *ref, const struct lmodel *cur,
		 const struct obs_trace *t);
void diff_fini(struct diff *d);

/* The category of an item: "files", "network", "processes", "other", "sequence". */
const char *diff_category(enum lk_kind k);
/* The item as one line of text ("connect 127.0.0.1:443", "exec /bin/sh: sh -c *"). */
void diff_item_text(struct strbuf *sb, const struct litem *it);

struct diff_input {
	struct obs_trace *base; /* the baseline traces */
	size_t n_base;
	struct obs_trace *trace;
};

/* Reports (diff_report.c). Return 0 or -errno of the write. */
int diff_report_text(FILE *out, const struct diff *d, const struct diff_input *in);
int diff_report_json(FILE *out, const struct diff *d, const struct diff_input *in);

#endif /* MW_DIFF_H */
