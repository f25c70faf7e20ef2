/*
 * cmd_analyze.c - options of `mcpwitness analyze` (the work is in analyze.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "log.h"

static void usage(FILE *out)
{
	fputs("usage: mcpwitness analyze TRACE [-p POLICY]... [options]\n"
	      "  -p, --policy FILE     policy file; several are merged in order (default: the\n"
	      "                        installed default.yaml)\n"
	      "  -f, --format FORMAT   text (default), json, sarif (SARIF 2.1.0) or html (one\n"
	      "                        self-contained page: the timeline of calls)\n"
	      "  --fail-on SEVERITY    exit 1 when a finding is at least info, low, medium,\n"
	      "                        high or critical (default: never)\n"
	      "  --set NAME=VALUE      define or override a policy variable\n"
	      "  -k, --pubkey FILE     trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "  --no-verify           check the trace's structure only, not its signatures\n"
	      "  --allow-incomplete    accept a trace without FINAL seal or with a torn tail\n"
	      "  --allow-unsigned      accept a trace whose header declares no signer\n"
	      "  --verify-before-release\n"
	      "                        analyze a segment only once its seal verified (for a\n"
	      "                        live pipe: nothing provisional reaches the findings)\n"
	      "  --max-per-rule N      findings kept per rule (default 1000; all are counted)\n"
	      "  --cancel-grace MS     how long a cancelled request's window stays open after\n"
	      "                        notifications/cancelled (default 1000)\n"
	      "Every finding names the call it belongs to and the rule that attributed it\n"
	      "(lineage, window, evidence, ambiguous) or its bucket (startup, ambient, shutdown).\n"
	      "The coverage says whether the trace is whole (no FINAL seal or a torn tail: what\n"
	      "followed is missing), whether events were lost and which processes were still\n"
	      "running after the server exited (killed by the collector then, or unrecorded\n"
	      "from then on).\n"
	      "TRACE may be - (standard input). Exit: 0 fine, 1 findings at or above --fail-on,\n"
	      "2 usage or input error, 3 verification failed or trace incomplete.\n",
	      out);
}

enum {
	OPT_FAIL_ON = 256,
	OPT_SET,
	OPT_NO_VERIFY,
	OPT_ALLOW_INCOMPLETE,
	OPT_ALLOW_UNSIGNED,
	OPT_MAX_PER_RULE,
	OPT_CANCEL_GRACE,
	OPT_VERIFY_BEFORE_RELEASE,
};

static const struct option opts[] = {
	{"policy", required_argument, NULL, 'p'},
	{"format", required_argument, NULL, 'f'},
	{"pubkey", required_argument, NULL, 'k'},
	{"fail-on", required_argument, NULL, OPT_FAIL_ON},
	{"set", required_argument, NULL, OPT_SET},
	{"no-verify", no_argument, NULL, OPT_NO_VERIFY},
	{"allow-incomplete", no_argument, NULL, OPT_ALLOW_INCOMPLETE},
	{"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
	{"max-per-rule", required_argument, NULL, OPT_MAX_PER_RULE},
	{"cancel-grace", required_argument, NULL, OPT_CANCEL_GRACE},
	{"verify-before-release", no_argument, NULL, OPT_VERIFY_BEFORE_RELEASE},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int push_arg(const char ***v, size_t *n, const char *arg)
{
	const char **p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -1;
	*v = p;
	p[(*n)++] = arg;
	return 0;
}

/* --max-per-rule N: decimal digits only (strtoul would take "-1" and wrap), 1 up to what a
 * size_t holds. -1 to go on, or the usage exit code. */
static int parse_max_per_rule(struct analyze_opts *o, const char *arg)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || n == 0 || n > SIZE_MAX)
		return cmd_usage_error("analyze", "bad --max-per-rule \"%s\" (a number from 1)",
				       arg);
	o->max_per_rule = (size_t)n;
	return -1;
}

/* One option into o; returns -1 to go on, or an exit code. */
static int parse_one(struct analyze_opts *o, int opt, char **argv)
{
	switch (opt) {
	case 'p':
		return push_arg(&o->policies, &o->n_policies, optarg) ? MW_EXIT_USAGE : -1;
	case OPT_SET:
		return push_arg(&o->sets, &o->n_sets, optarg) ? MW_EXIT_USAGE : -1;
	case 'f':
		for (int f = 0; f < FORMAT_COUNT; f++) {
			if (strcmp(optarg, report_format_names[f]) == 0) {
				o->format = (enum report_format)f;
				return -1;
			}
		}
		return cmd_usage_error("analyze", "unknown format \"%s\" (text, json, sarif, html)", optarg);
	case 'k':
		o->pubkey = optarg;
		return -1;
	case OPT_FAIL_ON:
		o->fail_on = severity_by_name(optarg);
		return o->fail_on < 0 ? cmd_usage_error("analyze",
							"unknown severity \"%s\" (info, "
							"low, medium, high, critical)",
							optarg)
				      : -1;
	case OPT_NO_VERIFY:
		o->no_verify = true;
		return -1;
	case OPT_ALLOW_INCOMPLETE:
		o->allow_incomplete = true;
		return -1;
	case OPT_ALLOW_UNSIGNED:
		o->allow_unsigned = true;
		return -1;
	case OPT_VERIFY_BEFORE_RELEASE:
		o->verify_before_release = true;
		return -1;
	case OPT_MAX_PER_RULE:
		return parse_max_per_rule(o, optarg);
	case OPT_CANCEL_GRACE:
		return cmd_parse_grace("analyze", optarg, &o->cancel_grace_ns);
	case 'h':
		usage(stdout);
		return MW_EXIT_OK;
	default:
		return cmd_opt_error("analyze", argv, opt);
	}
}

int do_analyze(int argc, char **argv)
{
	struct analyze_opts o = {.fail_on = -1};
	int opt, code = -1;
	struct cmd_parser parser = {"analyze", ":p:f:k:h", opts, (const int[]){'p', OPT_SET, 0}};

	while (code < 0 && (opt = cmd_getopt(&parser, argc, argv)) != -1)
		code = parse_one(&o, opt, argv);
	if (code < 0 && o.no_verify && o.verify_before_release)
		code = cmd_usage_error(
			"analyze", "--verify-before-release needs verification (not --no-verify)");
	if (code < 0 && o.no_verify && o.pubkey)
		code = cmd_usage_error("analyze", "--no-verify and --pubkey together: give one");
	if (code < 0 && optind != argc - 1)
		code = cmd_usage_error("analyze",
				       optind >= argc ? "missing TRACE" : "more than one TRACE");
	if (code < 0) {
		o.trace = argv[optind];
		code = analyze_run(&o, stdout);
	}
	free(o.policies);
	free(o.sets);
	return code;
}
