/*
 * main.c - mcpwitness, the unprivileged analyzer: global options, then one subcommand from the
 * table (bpftool style). Everything else lives in mw_analyzer.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "hugepages.h"
#include "log.h"
#include "probe.h"

static int do_help(int argc, char **argv);
static void cmd_print_usage(FILE *out);

static const struct cmd cmds[] = {
	{"keygen", do_keygen, "keygen -o DIR                    create a signing key pair"},
	{"verify", do_verify,
	 "verify TRACE [--pubkey F]        check every seal of a trace (or an excerpt)"},
	{"export", do_export,
	 "export TRACE --record N -o F     excerpt proving one record was in the trace\n"
	 "  mcpwitness export TRACE --dsse [-o F]       the FINAL seal as a DSSE envelope"},
	{"dump", do_dump, "dump TRACE [--json]              every record, one a line"},
	{"calls", do_calls, "calls TRACE [--json]             every request, what it did, and why"},
	{"analyze", do_analyze, "analyze TRACE [-p POLICY]...     findings of policies on a trace"},
	{"policy", do_policy,
	 "policy check POLICY...           parse and compile policies\n"
	 "  mcpwitness policy learn TRACE... -o F       a baseline policy of what the traces show"},
	{"diff", do_diff,
	 "diff BASELINE_TRACE... -- TRACE  what a trace does that its baseline did not"},
	{"probe", do_probe, "probe [--backend ebpf]           mcpfz-probe sidecar for fuzzers"},
	{"help", do_help, "help [COMMAND]                   this list, or the options of COMMAND"},
	{NULL, NULL, NULL},
};

static void cmd_print_usage(FILE *out)
{
	fputs("usage: mcpwitness [-v|-q] COMMAND [ARGS]\n"
	      "       mcpwitness -h|--help|-V|--version\n\n"
	      "  -v, --verbose   more diagnostics on stderr (repeatable)\n"
	      "  -q, --quiet     errors only on stderr, no warnings (not with -v)\n"
	      "  -h, --help      this list of commands\n"
	      "  -V, --version   the version\n\n",
	      out);
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(out, "  mcpwitness %s\n", c->summary);
	fputs("\nTRACE may be - (standard input). 'mcpwitness COMMAND --help' for options.\n"
	      "Exit: 0 fine, 1 findings at or above --fail-on, 2 usage or input error,\n"
	      "3 verification failed (verify: 0 complete, 1 invalid, 3 wrong key, 4 unsupported,\n"
	      "5 valid prefix only).\n",
	      out);
}

/* `help`: the usage; `help COMMAND [SUBCOMMAND]`: what `COMMAND [SUBCOMMAND] --help` prints. */
static int do_help(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cmd_parser parser = {"help", ":h", opts, NULL};
	char *args[4];
	int opt, n;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		if (opt != 'h')
			return cmd_opt_error("help", argv, opt);
		argc = optind; /* help --help: the usage */
		break;
	}
	n = argc - optind;
	if (n == 0) {
		cmd_print_usage(stdout);
		return MW_EXIT_OK;
	}
	if (n > 2)
		return cmd_usage_error("help", "unexpected argument \"%s\"", argv[optind + 2]);
	for (int i = 0; i < n; i++)
		args[i] = argv[optind + i];
	args[n] = (char *)"--help";
	args[n + 1] = NULL;
	return cmd_select(cmds, n + 1, args, "");
}

/* Data that could not be written (full disk, closed pipe) must not exit 0. */
static int close_stdout(int code)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return code;
	p_err("failed to write the output: %s", strerror(errno));
	return code == MW_EXIT_OK || code == MW_EXIT_FINDINGS ? MW_EXIT_USAGE : code;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	struct cmd_parser parser = {"", "+:hVvq", opts, NULL};
	int opt, level = LOG_WARN, verbose = 0;
	bool quiet = false;

	opterr = 0;
	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'h':
			cmd_print_usage(stdout);
			return close_stdout(MW_EXIT_OK);
		case 'V':
			printf("mcpwitness %s\n", MW_VERSION);
			return close_stdout(MW_EXIT_OK);
		case 'v':
			verbose++;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return cmd_opt_error("", argv, opt);
		}
	}
	if (quiet && verbose)
		return cmd_usage_error("", "-q and -v together: give one");
	log_set_level(quiet ? LOG_QUIET : level + verbose);
	if (optind >= argc)
		return cmd_usage_error("", "missing command");
	hugepages_reexec(argv, argc - optind, argv + optind);
	return close_stdout(cmd_select(cmds, argc - optind, argv + optind, ""));
}
