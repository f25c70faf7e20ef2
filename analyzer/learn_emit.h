/*
 * learn_emit.h - a baseline model written as a policy in the ordinary rules language
 * (policies/README.md), to be loaded after the base policy it was learned against:
 *
 *   lists    per scope: the executables of its processes, the files read and written, the
 *            files changed per operation, the other operations; each item commented with
 *            where it was first seen (trace, call, record, the value)
 *   macros   bl_known_process, bl_exec, bl_read, bl_write, bl_change, bl_connect, bl_listen,
 *            bl_other: "the baseline allows this event", one entry per scope
 *            (tool: X / method: M / bucket: B / attribution: ambiguous, where an ambiguous
 *            event is allowed by what any call scope was seen doing); secrets (the base's
 *            sensitive list) are excluded from every allowance
 *   rules    the base's rules below critical whose category the drift rules cover switched off
 *            (override: append, enabled: false); then the drift rules, category "drift": an
 *            event of the class of learn_op.h that its macro does not allow. Reads and other
 *            operations are drift only in processes the baseline knows (bl_known_process): a
 *            new program is one finding, its exec, not one per library it loads.
 * The output depends only on the model, the traces' headers and the base policy's files:
 * the same traces give the same bytes.
 */
#ifndef MW_LEARN_EMIT_H
#define MW_LEARN_EMIT_H

#include <stddef.h>

#include "learn.h"
#include "obs.h"
#include "policy.h"
#include "strbuf.h"

struct learn_out {
	const struct lmodel *m;	   /* sorted */
	struct obs_trace **traces; /* in model order (t1, t2...) */
	size_t n_traces;
	const struct policy *base;
	const struct lbase *lb;
	const char *self; /* the output's name, for the usage comment */
};

/* Appends the policy to sb. Returns 0 or -ENOMEM. */
int learn_emit(struct strbuf *sb, const struct learn_out *o);

/* --- internal to learn_emit.c, learn_values.c and learn_rules.c ---------------------------- */

#define LEARN_LABEL_MAX	  64
#define LEARN_COMMENT_MAX 240

enum bl_macro {
	BM_KNOWN = 0,
	BM_EXEC,
	BM_READ,
	BM_WRITE,
	BM_CHANGE,
	BM_CONNECT,
	BM_LISTEN,
	BM_OTHER,
	BM_DNS,
	BM_COUNT,
};

extern const char *const bl_macro_names[BM_COUNT];

struct emit {
	struct strbuf *sb;
	const struct learn_out *o;
	const struct lmodel *m;
	char (*labels)[LEARN_LABEL_MAX + 16]; /* per scope: "tool.read_file", "startup"... */
	bool have[BM_COUNT];		      /* the macro has an entry */
	int err;			      /* -EINVAL: a value could not be written */
};

/* Where an item was first seen: "t1 call 4 (id 4), record 80: /ws/a.txt (3 times)" (without
 * "t1 " when trace is false). */
void learn_prov(struct strbuf *sb, const struct litem *it, bool trace);
/* "  # <provenance>" after a value. */
void emit_prov_comment(struct emit *e, const struct litem *it);
/* A scalar (plain or quoted). */
void emit_value(struct emit *e, const char *s);
/* "tool: X, " / "method: M, " / "bucket: B, " of a scope; nothing for the server-wide ones. */
void emit_scope_cond(struct emit *e, size_t scope);
bool emit_call_scope(const struct lscope *s);

/* The header comment (traces, identities, base policies, how to use it). */
void learn_emit_head(struct emit *e);
/* bl_exec, bl_connect, bl_listen, bl_dns (learn_values.c). */
void learn_emit_values(struct emit *e);
/* The overrides of the base's rules and the drift rules (learn_rules.c). */
void learn_emit_rules(struct emit *e);

#endif /* MW_LEARN_EMIT_H */
