/*
 * cmd_diff.c - `mcpwitness diff BASELINE_TRACE... -- TRACE [--json]`: reads the baseline
 * traces into one model, the trace into another with the baseline as reference, and reports
 * what is new and what is gone (diff.h).
 *
 * Exit: 0 nothing new, 1 something new or a sequence drift (what is gone alone is not drift),
 * 2 usage or input error, 3 a trace failed verification or is incomplete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "diff.h"
#include "learn_base.h"
#include "log.h"

struct diff_args {
	struct learn_common c;
	bool json;
	char **base;
	size_t n_base;
	char *trace;
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness diff [OPTIONS] BASELINE_TRACE... -- TRACE\n"
	      "Per tool, per method, at startup, between calls and at shutdown: the files,\n"
	      "network, processes and other operations TRACE shows that the baseline traces\n"
	      "never did (+), what they did that it no longer does (-), new edges of the\n"
	      "tool-call graph, and sequence drift: a never-seen step from a tool that neither\n"
	      "read a secret nor sent data to one that did.\n"
	      "      --json             one JSON document\n"
	      "  -p, --policy POLICY    the base policy whose sensitive_paths are secrets\n"
	      "                         (default: the installed default.yaml)\n"
	      "  -k, --pubkey F         the trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "      --allow-incomplete  accept traces that are a valid prefix (no FINAL seal):\n"
	      "                          their records after the last verified seal are used\n"
	      "                          unproven\n"
	      "Options go before --. Exit 0 nothing new, 1 something new or a sequence drift,\n"
	      "2 usage or input error, 3 a trace failed verification or is incomplete.\n",
	      out);
}

static int parse(int argc, char **argv, struct diff_args *a)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"policy", required_argument, NULL, 'p'},
		{"pubkey", required_argument, NULL, 'k'},
		{"allow-incomplete", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cmd_parser parser = {"diff", ":p:k:h", opts, (const int[]){'p', 0}};
	int opt, rc, sep = argc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	while ((opt = cmd_getopt(&parser, sep, argv)) != -1) {
		switch (opt) {
		case 'j':
			a->json = true;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			rc = learn_common_opt(&a->c, opt, optarg, "diff");
			if (rc >= 0)
				return rc ? rc : cmd_opt_error("diff", argv, opt);
		}
	}
	if (sep == argc)
		return cmd_usage_error("diff", "missing -- TRACE after the baseline traces");
	if (optind >= sep)
		return cmd_usage_error("diff", "missing BASELINE_TRACE");
	if (argc - sep != 2)
		return cmd_usage_error("diff", "exactly one TRACE after --");
	a->base = argv + optind;
	a->n_base = (size_t)(sep - optind);
	a->trace = argv[sep + 1];
	rc = cmd_check_stdin_once("diff", a->base, a->n_base, a->trace);
	return rc ? rc : -1;
}

static int report(const struct diff_args *a, const struct lmodel *ref, const struct lmodel *cur,
		  struct obs_trace *bt, struct obs_trace *t)
{
	struct diff_input in = {.base = bt, .n_base = a->n_base, .trace = t};
	struct diff d;
	int err = diff_compute(&d, ref, cur, t);

	if (!err)
		err = a->json ? diff_report_json(stdout, &d, &in)
			      : diff_report_text(stdout, &d, &in);
	if (cmd_output_done(stdout, "diff", err))
		err = MW_EXIT_USAGE;
	else
		err = d.n_new || d.n_seq ? MW_EXIT_FINDINGS : MW_EXIT_OK;
	diff_fini(&d);
	return err;
}

static int run(const struct diff_args *a)
{
	struct obs_trace *bt = calloc(a->n_base, sizeof(*bt)), t;
	struct lmodel *ref = NULL, *cur = NULL;
	struct policy *base = NULL;
	struct lbase lb;
	int rc;

	memset(&t, 0, sizeof(t));
	memset(&lb, 0, sizeof(lb));
	rc = bt ? learn_base_load(&base, &lb, a->c.policies, a->c.n_policies) : -ENOMEM;
	if (!rc && (!(ref = lmodel__new(&lb, NULL)) || !(cur = lmodel__new(&lb, ref))))
		rc = -ENOMEM;
	if (rc == -ENOMEM) {
		p_err("failed to diff: %s", strerror(ENOMEM));
		rc = MW_EXIT_USAGE;
	}
	rc = rc ?: learn_read_traces(ref, bt, a->base, a->n_base, &a->c.obs);
	rc = rc ?: learn_read_traces(cur, &t, &a->trace, 1, &a->c.obs);
	if (!rc && (lmodel__sort(ref) || lmodel__sort(cur))) {
		p_err("failed to diff: %s", strerror(ENOMEM));
		rc = MW_EXIT_USAGE;
	}
	rc = rc ?: report(a, ref, cur, bt, &t);
	for (size_t i = 0; bt && i < a->n_base; i++)
		obs_fini(&bt[i]);
	obs_fini(&t);
	free(bt);
	lmodel__free(cur);
	lmodel__free(ref);
	learn_base_fini(base, &lb);
	return rc;
}

int do_diff(int argc, char **argv)
{
	struct diff_args a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = parse(argc, argv, &a);
	return rc >= 0 ? rc : run(&a);
}
