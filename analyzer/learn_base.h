/*
 * learn_base.h - what `policy learn` and `diff` share before they compare or write anything:
 * the base policy a baseline is learned against (its secrets are never learned), and the
 * reading of several verified traces into one model.
 */
#ifndef MW_LEARN_BASE_H
#define MW_LEARN_BASE_H

#include <stddef.h>

#include "learn.h"
#include "obs.h"
#include "policy.h"

/* The options learn and diff share: -p POLICY..., --pubkey, --allow-incomplete. */
#define LEARN_POLICIES_MAX 16

struct learn_common {
	char *policies[LEARN_POLICIES_MAX];
	size_t n_policies;
	struct obs_opts obs;
};

/* Handles getopt's opt when it is one of the shared options ('p', 'k', 'i'): returns -1 when
 * handled, the usage exit code after an error, or 0 when opt is not one of them. */
int learn_common_opt(struct learn_common *c, int opt, const char *arg, const char *verb);

/* The list of the base policy whose paths are secrets. */
#define LEARN_SECRET_LIST "sensitive_paths"

/* Loads and compiles the base policy files (the installed default.yaml when n is 0) and
 * fills lb from it (lb->secrets owned by lb: learn_base_fini). Returns 0, or MW_EXIT_USAGE
 * after the errors on stderr. */
int learn_base_load(struct policy **out, struct lbase *lb, char *const *files, size_t n);
void learn_base_fini(struct policy *p, struct lbase *lb);

/* Reads paths[0..n) into m, in order, each into ts[i] (zeroed by the caller; obs_fini each,
 * also after a failure). Returns 0, or the exit code after one line on stderr naming the
 * trace. */
int learn_read_traces(struct lmodel *m, struct obs_trace *ts, char *const *paths, size_t n,
		      const struct obs_opts *o);

#endif /* MW_LEARN_BASE_H */
