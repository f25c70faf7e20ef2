/*
 * learn_base.c - the base policy of a baseline and the reading of its traces (see
 * learn_base.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "learn_base.h"
#include "log.h"

/* The list's literal items, with the lists it includes, in order; depth bounds a cycle that
 * the loader already refuses. */
static int flatten(struct lbase *lb, const struct pol_list *l, int depth)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct pol_value *v = &l->items[i];
		char **s;

		if (v->ref) {
			int err = depth < 16 ? flatten(lb, v->ref, depth + 1) : 0;

			if (err)
				return err;
			continue;
		}
		s = realloc(lb->secrets, (lb->n_secrets + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		lb->secrets = s;
		if (!(s[lb->n_secrets] = strndup(v->str, v->len)))
			return -ENOMEM;
		lb->n_secrets++;
	}
	return 0;
}

int learn_common_opt(struct learn_common *c, int opt, const char *arg, const char *verb)
{
	switch (opt) {
	case 'p':
		if (c->n_policies == LEARN_POLICIES_MAX)
			return cmd_usage_error(verb, "too many -p");
		c->policies[c->n_policies++] = (char *)arg;
		return -1;
	case 'k':
		c->obs.pubkey = arg;
		return -1;
	case 'i':
		c->obs.allow_incomplete = true;
		return -1;
	default:
		return 0;
	}
}

int learn_base_load(struct policy **out, struct lbase *lb, char *const *files, size_t n)
{
	static char dflt[] = MW_DEFAULT_POLICY;
	char *const dflts[] = {dflt};
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	const struct pol_list *l;
	struct diag d = {0};
	int rc = p && vs ? 0 : -ENOMEM;

	memset(lb, 0, sizeof(*lb));
	if (!n) {
		files = dflts;
		n = 1;
		if (!rc && cmd_default_policy_readable())
			rc = -ENOENT;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = policy__load_file(p, files[i], &d);
	rc = rc ?: policy__compile(p, vs, false, &d);
	diag_print(&d, stderr, "mcpwitness: ");
	diag_fini(&d);
	vars__free(vs);
	if (!rc && (l = policy_find_list(p, LEARN_SECRET_LIST))) {
		lb->secret_list = LEARN_SECRET_LIST;
		rc = flatten(lb, l, 0);
	}
	if (rc) {
		if (rc == -ENOMEM)
			p_err("failed to load the base policy: %s", strerror(ENOMEM));
		learn_base_fini(p, lb);
		return MW_EXIT_USAGE;
	}
	*out = p;
	return 0;
}

void learn_base_fini(struct policy *p, struct lbase *lb)
{
	policy__free(p);
	for (size_t i = 0; lb && i < lb->n_secrets; i++)
		free(lb->secrets[i]);
	if (lb) {
		free(lb->secrets);
		memset(lb, 0, sizeof(*lb));
	}
}

int learn_read_traces(struct lmodel *m, struct obs_trace *ts, char *const *paths, size_t n,
		      const struct obs_opts *o)
{
	for (size_t i = 0; i < n; i++) {
		int rc = obs_read(&ts[i], paths[i], o, &lmodel_obs_ops, m);

		if (rc)
			return rc;
		rc = lmodel__trace_end(m, &ts[i]);
		if (rc) {
			p_err("failed to read %s: %s", paths[i], strerror(-rc));
			return MW_EXIT_USAGE;
		}
	}
	return 0;
}
