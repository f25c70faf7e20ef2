/*
 * findings.h - what the rules found: one struct finding per (rule, event) match, holding
 * everything a report shows (evidence, process and lineage, times, record index) as text that
 * is already escaped, so the event and process table may move on.
 *
 * Memory stays bounded on any trace: at most max_per_rule findings are kept per rule (the
 * first ones in stream order), the rest are only counted, and the counts by severity always
 * cover every match.
 */
#ifndef MW_FINDINGS_H
#define MW_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "event.h"
#include "policy.h"
#include "proctree.h"

#define FINDINGS_PER_RULE_DEFAULT 1000

struct finding_proc {
	uint32_t pid;
	char *exe; /* escaped; "" when unknown */
};

struct finding {
	const struct pol_rule *rule; /* owned by the policy, which outlives the findings */
	size_t rule_index;
	uint64_t index; /* trace record index */
	uint64_t seq, ts;
	uint32_t pid, tid, uid;
	uint64_t pstart;
	char *message;
	/* evidence (escaped text; NULL when the event has none) */
	char op[EV_OP_NAME_MAX];
	char *path, *path_arg, *opened_path, *addr;
	char *dns;    /* the DNS query name, escaped */
	char *detail; /* what a message or loss subject is, escaped */
	unsigned attempts; /* an exec that ended (or was) a PATH search: its failed attempts */
	char *attempted;   /* their paths */
	uint64_t dev, ino;
	bool differs;
	char *exe;   /* of the process, escaped */
	char **argv; /* its argv, each word escaped */
	size_t argc;
	enum ev_result result;
	int err;
	int64_t ret;
	uint32_t flags;
	struct finding_proc *lineage; /* [0] = the process itself, then its ancestors */
	size_t n_lineage;
	bool lineage_truncated;
	bool unproven; /* the record lies after the last verified seal */
	bool has_attr;	/* attributed (a call model was given) */
	struct attribution attr; /* where it belongs; attr.matched is copied into matched */
	char *matched;
};

struct findings {
	struct finding *v;
	size_t n, cap;
	size_t max_per_rule;
	size_t n_rules;
	uint64_t *per_rule;	    /* matches per rule (kept or not) */
	uint64_t by_sev[SEV_COUNT]; /* every match */
	uint64_t total;
	uint64_t dropped;
};

/* n_rules sizes the per-rule counters; max_per_rule 0 = FINDINGS_PER_RULE_DEFAULT. */
int findings_init(struct findings *fs, size_t n_rules, size_t max_per_rule);
void findings_fini(struct findings *fs);

/* Records a match of rule (at rule_index) on the event of subject s, done by process p (may be
 * NULL) whose lineage is taken from pt. Returns 0 (also when only counted) or -ENOMEM. */
int findings_add(struct findings *fs, const struct pol_rule *rule, size_t rule_index,
		 const struct ev_view *v, uint64_t index, const struct eval_subject *s,
		 const struct proc *p, const struct proctree *pt);

enum findings_order {
	ORDER_SEQUENCE, /* (call, sequence, record index, rule id): call order, then stream order */
	ORDER_SEVERITY, /* most severe first, then as ORDER_SEQUENCE */
};
void findings_sort(struct findings *fs, enum findings_order order);

/* The result as text: "success", "failure ENOENT", "pending". */
const char *finding_result(const struct finding *f, char *buf, size_t len);

#endif /* MW_FINDINGS_H */
