/*
 * cmd_verify.c - `mcpwitness verify TRACE [--pubkey F] [--json]`: checks every seal with the
 * pinned public key and says exactly what holds; the exit code is the verdict's
 * (TRACE-FORMAT.md 4.11: 0 complete, 1 invalid, 3 wrong key or unsigned, 4 unsupported,
 * 5 valid prefix; 2 usage or I/O).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "replay.h"

static void usage(FILE *out)
{
	fputs("usage: mcpwitness verify TRACE [--pubkey FILE] [--json] [--allow-unsigned]\n"
	      "  -k, --pubkey FILE   trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "  --json              the report as one JSON object\n"
	      "  --allow-unsigned    accept a trace whose header declares no signer\n"
	      "TRACE may be - (standard input).\n",
	      out);
}

static int ignore_record(void *ctx, const struct replay_rec *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static int verify_run(const char *trace, const struct replay_opts *ro, bool json)
{
	struct replay *r = replay__new(ro);
	const struct mcpt_report *rep;
	char err[512], msg[REPLAY_MESSAGE_MAX];
	int fd, rc, code = MW_EXIT_USAGE;

	if (!r) {
		p_err("failed to verify %s: %s", trace, strerror(ENOMEM));
		return MW_EXIT_USAGE;
	}
	fd = replay_open(trace, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		goto cleanup;
	}
	rc = replay__run(r, fd, ignore_record, NULL);
	rep = replay__report(r);
	if (rc < 0) {
		p_err("failed to read trace %s: %s", trace, strerror(-rc));
		goto cleanup;
	}
	if (json) {
		mcpt_report_print_json(stdout, rep);
		fputc('\n', stdout);
	} else {
		mcpt_report_print(stdout, rep);
	}
	code = mcpt_verdict_exit_code(rep->verdict);
	if (rep->verdict != MCPT_VALID_COMPLETE)
		p_err("%s: %s: %s", trace, mcpt_verdict_name(rep->verdict),
		      replay_message(rep, msg));
cleanup:
	if (fd > 0)
		close(fd);
	replay__free(r);
	return code;
}

int do_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pubkey", required_argument, NULL, 'k'},
		{"json", no_argument, NULL, 'j'},
		{"allow-unsigned", no_argument, NULL, 'U'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *pubkey = MW_DEFAULT_PUBKEY;
	struct replay_opts ro = {0};
	struct mcpt_pubkey key;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, ":k:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'k':
			pubkey = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'U':
			ro.allow_unsigned = true;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("verify", argv, opt);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("verify",
				       optind >= argc ? "missing TRACE" : "more than one TRACE");
	if (cmd_load_pubkey(pubkey, &key))
		return MW_EXIT_USAGE;
	ro.key = &key;
	return verify_run(argv[optind], &ro, json);
}
