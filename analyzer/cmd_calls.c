/*
 * cmd_calls.c - `mcpwitness calls TRACE [--json]`: the two reads of the trace (the call model,
 * then every event attributed and grouped per call) and the verdict's exit code, as analyze.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls_cmd.h"
#include "cmd.h"
#include "log.h"
#include "passes.h"
#include "replay.h"

struct calls_opts {
	const char *trace, *pubkey;
	bool json, no_verify, allow_incomplete, allow_unsigned;
	uint64_t grace_ns;
};

struct calls_run {
	const struct calls_opts *o;
	struct replay *rp;
	struct callmodel *cm;
	struct callsum *sum;
	uint64_t events;
	bool tail_left; /* the model left out records after the last seal (pass_model) */
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness calls TRACE [--json] [options]\n"
	      "  --json                the same as one JSON document\n"
	      "  --cancel-grace MS     how long a cancelled request's window stays open after\n"
	      "                        notifications/cancelled (default 1000)\n"
	      "  -k, --pubkey FILE     trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "  --no-verify           check the trace's structure only, not its signatures\n"
	      "  --allow-incomplete    accept a trace without FINAL seal or with a torn tail\n"
	      "  --allow-unsigned      accept a trace whose header declares no signer\n"
	      "Each call: method, tool, arguments, result and duration, the processes it created\n"
	      "and every event it caused (files, network, processes) with the rule that\n"
	      "attributed it: lineage, window, evidence or ambiguous; then the startup, ambient\n"
	      "and shutdown blocks, and the processes still running when recording stopped.\n"
	      "TRACE may be - (standard input). Exit: 0 fine, 2 usage or input error, 3\n"
	      "verification failed or trace incomplete.\n",
	      out);
}

static int on_record(void *ctx, const struct replay_rec *rr)
{
	struct calls_run *r = ctx;
	struct attribution a;
	struct ev_view v;

	if (!rr->msg || rr->rec->type != MCPT_T_EVENT)
		return 0;
	event_decode(&v, (const Mcpt__Event *)rr->msg);
	callmodel__attribute(r->cm, &v, &a);
	r->events++;
	return callsum__add(r->sum, &v, &a, rr->rec->index);
}

static int read_both(struct calls_run *r, int fd)
{
	struct callmodel_opts co = {.cancel_grace_ns = r->o->grace_ns};
	struct pass_digest first, second;
	uint8_t d1[32], d2[32];
	int rc;

	rc = pass_model(fd, &co, !r->o->no_verify, &r->cm, &r->tail_left, &first, d1);
	if (rc)
		return rc;
	r->sum = callsum__new(callset__count(callmodel__calls(r->cm)));
	if (!r->sum)
		return -ENOMEM;
	rc = pass_second(r->rp, fd, on_record, r, d1, &second, d2);
	if (rc == -ESTALE)
		return rc;
	callmodel__finish(r->cm);
	rc = rc ?: callsum__finish(r->sum);
	if (!rc)
		callsum__sort(r->sum);
	return rc;
}

/* An incomplete trace is shown, then exits 3 unless --allow-incomplete. */
static int exit_code(const struct calls_run *r)
{
	const struct mcpt_report *rep = replay__report(r->rp);
	char msg[REPLAY_MESSAGE_MAX];

	if (!cmd_incomplete(rep, !r->o->no_verify) || r->o->allow_incomplete)
		return MW_EXIT_OK;
	p_err("%s: trace incomplete: %s (--allow-incomplete accepts it)", r->o->trace,
	      replay_message(rep, msg));
	return MW_EXIT_VERIFY;
}

static int report(struct calls_run *r)
{
	struct calls_view v = {
		.trace = r->o->trace,
		.hdr = replay__header(r->rp),
		.rep = replay__report(r->rp),
		.verified = !r->o->no_verify,
		.cm = r->cm,
		.sum = r->sum,
		.events = r->events,
	};
	int rc = cmd_refuse(r->o->trace, v.rep, v.verified); /* before anything is printed */

	if (rc)
		return rc;
	rc = r->o->json ? report_calls_json(stdout, &v) : report_calls_text(stdout, &v);
	if (cmd_output_done(stdout, "calls", rc))
		return MW_EXIT_USAGE;
	return exit_code(r);
}

static int calls_run(const struct calls_opts *o)
{
	struct replay_opts ro = {.allow_unsigned = o->allow_unsigned};
	struct calls_run r = {.o = o};
	struct mcpt_pubkey key;
	char err[512];
	int fd = -1, rc, code = cmd_check_stdin(o->trace);

	if (code)
		return code;
	code = MW_EXIT_USAGE;
	if (!o->no_verify) {
		if (cmd_load_pubkey(o->pubkey ? o->pubkey : MW_DEFAULT_PUBKEY, &key))
			return MW_EXIT_USAGE;
		ro.key = &key;
	}
	r.rp = replay__new(&ro);
	fd = r.rp ? pass_open(o->trace, err, sizeof(err)) : -ENOMEM;
	if (fd < 0) {
		p_err("%s", fd == -ENOMEM ? "out of memory" : err);
		goto cleanup;
	}
	rc = read_both(&r, fd);
	if (rc) {
		p_err("failed to read the calls of %s: %s", o->trace,
		      rc == -ESTALE ? "the trace changed while it was read"
				    : strerror(rc < 0 ? -rc : EIO));
		goto cleanup;
	}
	if (r.tail_left)
		p_warn("%s: calls after the last seal are left out: no seal proves them",
		       o->trace);
	code = report(&r);
cleanup:
	if (fd > 0)
		close(fd);
	callsum__free(r.sum);
	callmodel__free(r.cm);
	replay__free(r.rp);
	return code;
}

enum { OPT_GRACE = 256, OPT_NO_VERIFY, OPT_ALLOW_INCOMPLETE, OPT_ALLOW_UNSIGNED };

/* A duration in milliseconds (0..1 day). */
int cmd_parse_grace(const char *verb, const char *arg, uint64_t *ns)
{
	char *end;
	unsigned long ms = strtoul(arg, &end, 10);

	if (!*arg || *end || *arg == '-' || ms > 86400000ul)
		return cmd_usage_error(
			verb, "bad --cancel-grace \"%s\" (milliseconds, 0..86400000)", arg);
	*ns = ms ? (uint64_t)ms * 1000000ull : 1; /* 0 ms: closes at the cancellation */
	return -1;
}

int do_calls(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"pubkey", required_argument, NULL, 'k'},
		{"cancel-grace", required_argument, NULL, OPT_GRACE},
		{"no-verify", no_argument, NULL, OPT_NO_VERIFY},
		{"allow-incomplete", no_argument, NULL, OPT_ALLOW_INCOMPLETE},
		{"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct calls_opts o = {0};
	int opt, code = -1;
	struct cmd_parser parser = {"calls", ":k:h", opts, NULL};

	while (code < 0 && (opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'j':
			o.json = true;
			break;
		case 'k':
			o.pubkey = optarg;
			break;
		case OPT_GRACE:
			code = cmd_parse_grace("calls", optarg, &o.grace_ns);
			break;
		case OPT_NO_VERIFY:
			o.no_verify = true;
			break;
		case OPT_ALLOW_INCOMPLETE:
			o.allow_incomplete = true;
			break;
		case OPT_ALLOW_UNSIGNED:
			o.allow_unsigned = true;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("calls", argv, opt);
		}
	}
	if (code >= 0)
		return code;
	if (o.no_verify && o.pubkey)
		return cmd_usage_error("calls", "--no-verify and --pubkey together: give one");
	if (optind != argc - 1)
		return cmd_usage_error("calls",
				       optind >= argc ? "missing TRACE" : "more than one TRACE");
	o.trace = argv[optind];
	return calls_run(&o);
}
