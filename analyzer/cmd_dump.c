/*
 * cmd_dump.c - `mcpwitness dump TRACE [--json] [--pubkey F]`: every record, one a line.
 *
 * Reads the structure only (framing, record types) unless --pubkey is given, in which case
 * the seals are verified too. Whatever was readable is printed; then a structural error
 * (not a trace, torn tail, framing error...) is one line on stderr and exit 2, and with
 * --pubkey a failed verification is exit 3.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dump.h"
#include "log.h"
#include "replay.h"
#include "strbuf.h"

struct dump_ctx {
	bool json;
	uint64_t records;
	struct strbuf line;	  /* the text of a record, kept from one to the next */
	struct strbuf scratch[2]; /* dump_json's */
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness dump TRACE [--json] [--pubkey FILE]\n"
	      "  --json              one JSON object per record (JSON Lines)\n"
	      "  -k, --pubkey FILE   also verify the seals with this public key\n"
	      "TRACE may be - (standard input).\n",
	      out);
}

static int on_record(void *ctx, const struct replay_rec *r)
{
	struct dump_ctx *d = ctx;

	d->records++;
	return d->json ? dump_json(stdout, r, &d->line, d->scratch)
		       : dump_text(stdout, r, &d->line);
}

/* Without a key the framing, hashes, chain and counts are still checked: a trace that fails
 * them (verdict INVALID, no signature involved) is as structurally wrong as a torn one, and so
 * is a stream that ends before its Header. */
static bool structure_bad(const struct mcpt_report *rep, bool verified)
{
	return replay_damaged(rep) || !rep->have_header ||
	       (!verified && rep->verdict == MCPT_INVALID);
}

/* The code that names a structural error: the report's own, unless it only says what is
 * not proven (a torn tail or a missing Header leave E_UNVERIFIED or E_NO_FINAL there). */
static const char *structure_code(const struct mcpt_report *rep)
{
	if (rep->code != MCPT_E_UNVERIFIED && rep->code != MCPT_E_NO_FINAL)
		return mcpt_code_name(rep->code);
	return rep->truncated ? "E_TRUNCATED" : rep->zero_tail ? "E_ZERO_TAIL" : "E_HEADER";
}

static int dump_outcome(const char *trace, const struct mcpt_report *rep, bool verified)
{
	char msg[REPLAY_MESSAGE_MAX];

	/* with a key, a failed verification is 3 whatever broke, a Header that fails its
	 * digest or names another key (then not kept) included */
	if (verified && (rep->verdict == MCPT_INVALID || rep->verdict == MCPT_WRONG_KEY)) {
		p_err("%s: %s: %s", trace, mcpt_report_verdict_name(rep), replay_message(rep, msg));
		return MW_EXIT_VERIFY;
	}
	if (structure_bad(rep, verified)) {
		p_err("%s: %s: %s", trace, structure_code(rep), replay_message(rep, msg));
		return MW_EXIT_USAGE;
	}
	if (verified)
		p_info("%s: %s: %s", trace, mcpt_report_verdict_name(rep),
		       replay_message(rep, msg));
	return MW_EXIT_OK;
}

static int dump_run(const char *trace, const struct replay_opts *ro, bool json)
{
	struct dump_ctx d = {
		.json = json, .line = STRBUF_INIT, .scratch = {STRBUF_INIT, STRBUF_INIT}};
	struct replay *r = replay__new(ro);
	char err[512];
	int fd = -1, rc, code = MW_EXIT_USAGE;

	if (!r) {
		p_err("failed to dump %s: %s", trace, strerror(ENOMEM));
		return MW_EXIT_USAGE;
	}
	fd = replay_open(trace, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		goto cleanup;
	}
	rc = replay__run(r, fd, on_record, &d);
	if (cmd_output_done(stdout, "dump", 0))
		goto cleanup;
	if (rc) {
		p_err("failed to read trace %s: %s", trace, strerror(rc < 0 ? -rc : ENOMEM));
		goto cleanup;
	}
	code = dump_outcome(trace, replay__report(r), ro->key != NULL);
cleanup:
	if (fd > 0)
		close(fd);
	replay__free(r);
	strbuf_fini(&d.line);
	strbuf_fini(&d.scratch[0]);
	strbuf_fini(&d.scratch[1]);
	return code;
}

int do_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"pubkey", required_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct replay_opts ro = {0};
	struct mcpt_pubkey key;
	bool json = false;
	struct cmd_parser parser = {"dump", ":k:h", opts, NULL};
	int opt;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'k':
			if (cmd_load_pubkey(optarg, &key))
				return MW_EXIT_USAGE;
			ro.key = &key;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("dump", argv, opt);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error("dump",
				       optind >= argc ? "missing TRACE" : "more than one TRACE");
	return dump_run(argv[optind], &ro, json);
}
