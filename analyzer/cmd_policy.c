/*
 * cmd_policy.c - `mcpwitness policy check POLICY...`: parses and compiles policies as analyze
 * would (several files merge in order), reports every error as file:line:column: reason, and
 * prints one summary line per file set on success.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "policy.h"

static void usage(FILE *out)
{
	fputs("usage: mcpwitness policy check POLICY... [--set NAME=VALUE]...\n"
	      "       mcpwitness policy learn TRACE... -o BASELINE [-p POLICY]... (see --help)\n"
	      "Parses and compiles the policies (merged in order, as analyze -p does); every\n"
	      "error is reported as file:line:column: reason. Exit 0 when they compile, 2 if "
	      "not.\n",
	      out);
}

static int check_files(char **files, int n, char **sets, int n_sets)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	char err[256];
	int rc = 0, code = MW_EXIT_USAGE;

	if (!p || !vs) {
		p_err("failed to check policies: out of memory");
		goto cleanup;
	}
	for (int i = 0; i < n_sets; i++) {
		if (vars__set_arg(vs, sets[i], err, sizeof(err))) {
			p_err("%s", err);
			goto cleanup;
		}
	}
	for (int i = 0; i < n; i++)
		if (policy__load_file(p, files[i], &d))
			rc = -1;
	if (policy__compile(p, vs, false, &d)) /* also after load errors: report them all */
		rc = -1;
	diag_print(&d, stderr, "mcpwitness: ");
	if (rc == 0) {
		printf("%d file%s ok: %zu lists, %zu macros, %zu rules (%zu enabled)\n", n,
		       n == 1 ? "" : "s", p->n_lists, p->n_macros, p->n_rules,
		       policy__enabled_rules(p));
		code = MW_EXIT_OK;
	}
cleanup:
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
	return code;
}

static int do_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"set", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *sets[64];
	struct cmd_parser parser = {"policy check", ":h", opts, (const int[]){'s', 0}};
	int opt, n_sets = 0;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 's':
			if (n_sets == 64)
				return cmd_usage_error("policy check", "too many --set");
			sets[n_sets++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("policy check", argv, opt);
		}
	}
	if (optind >= argc)
		return cmd_usage_error("policy check", "missing POLICY");
	return check_files(argv + optind, argc - optind, sets, n_sets);
}

int do_policy(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{"check", do_check, NULL},
		{"learn", do_policy_learn, NULL},
		{NULL, NULL, NULL},
	};

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return MW_EXIT_OK;
	}
	return cmd_select(cmds, argc - 1, argv + 1, "policy");
}
