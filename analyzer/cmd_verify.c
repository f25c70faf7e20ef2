/*
 * cmd_verify.c - `mcpwitness verify TRACE [--pubkey F] [--json]`: checks every seal with the
 * pinned public key and says exactly what holds; the exit code is the verdict's
 * (TRACE-FORMAT.md 4.11: 0 complete, 1 invalid, 3 wrong key or unsigned, 4 unsupported,
 * 5 valid prefix; 2 usage or I/O).
 *
 * The same command checks an excerpt (proto/EXCERPT.md, recognised by its magic in a regular
 * file; verify_excerpt.c) and, with --envelope, a DSSE envelope of the FINAL seal against the
 * key and the trace. Reading is streaming, so `verify -` follows a collector writing into a
 * pipe; --progress reports each seal as it verifies (records up to it are no longer
 * provisional).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"
#include "verify_excerpt.h"

#define ENVELOPE_MAX (1u << 20)

struct verify_opts {
	const char *trace, *envelope;
	bool json, progress;
	struct replay_opts ro;
};

struct verify_run {
	const struct verify_opts *o;
	struct mcpt_dsse_info env;
	bool final_matches, final_seen;
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness verify TRACE|EXCERPT [--pubkey FILE] [options]\n"
	      "  -k, --pubkey FILE   trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "  --json              the report as one JSON object\n"
	      "  --allow-unsigned    accept a trace whose header declares no signer\n"
	      "  --envelope FILE     also check a DSSE envelope (export --dsse) against the key\n"
	      "                      and the trace's FINAL seal (exit 1 if it does not match;\n"
	      "                      with --json the outcome is the exit code and stderr;\n"
	      "                      not with an excerpt, which has no FINAL seal to match)\n"
	      "  --progress          one line on stderr per seal as it verifies (live input)\n"
	      "TRACE may be - (standard input, e.g. a pipe the collector writes into). A file\n"
	      "made by 'mcpwitness export --record' is checked as an excerpt.\n"
	      "Exit: 0 complete (excerpt: proven), 1 invalid, 2 usage or I/O, 3 wrong key or\n"
	      "unsigned, 4 unsupported, 5 valid prefix only.\n",
	      out);
}

/* The FINAL seal against the envelope: the same signed statement and signature. */
static void match_final(struct verify_run *v, const struct replay_rec *r)
{
	const Mcpt__Seal *s = (const Mcpt__Seal *)r->msg;

	if (!s || !r->statement || !(r->statement->flags & MCPT_SEAL_FINAL))
		return;
	v->final_seen = true;
	v->final_matches = s->statement.len == v->env.statement_len &&
			   !memcmp(s->statement.data, v->env.statement, s->statement.len) &&
			   s->signature.len == sizeof(v->env.signature) &&
			   !memcmp(s->signature.data, v->env.signature, sizeof(v->env.signature));
}

static int on_record(void *ctx, const struct replay_rec *r)
{
	struct verify_run *v = ctx;

	if (r->rec->type != MCPT_T_SEAL || r->rec->provisional)
		return 0;
	if (v->o->envelope)
		match_final(v, r);
	if (v->o->progress && r->statement)
		fprintf(stderr, "mcpwitness: %s: seal %llu verified: records through %llu proven\n",
			v->o->trace, (unsigned long long)r->statement->seal_index,
			(unsigned long long)r->rec->index);
	return 0;
}

/* Opens the envelope: a file, or a pipe (a process substitution), never a directory. */
static FILE *open_envelope(const char *path)
{
	FILE *f = fopen(path, "re");
	struct stat st;

	if (f && !fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		f = NULL;
		errno = EISDIR;
	}
	if (!f)
		p_err("failed to open envelope %s: %s", path, strerror(errno));
	return f;
}

static int load_envelope(struct verify_run *v)
{
	char err[256] = "", *json;
	size_t len = 0;
	FILE *f = open_envelope(v->o->envelope);
	int rc, rerr = 0;

	if (!f)
		return MW_EXIT_USAGE;
	json = malloc(ENVELOPE_MAX + 1);
	if (json)
		len = fread(json, 1, ENVELOPE_MAX + 1, f);
	if (json && ferror(f))
		rerr = errno;
	fclose(f);
	if (!json || len > ENVELOPE_MAX || rerr) {
		p_err("failed to read envelope %s: %s", v->o->envelope,
		      !json  ? strerror(ENOMEM)
		      : rerr ? strerror(rerr)
			     : "larger than 1 MiB");
		free(json);
		return MW_EXIT_USAGE;
	}
	rc = mcpt_dsse_check(json, len, v->o->ro.key, &v->env, err, sizeof(err));
	free(json);
	if (!rc)
		return MW_EXIT_OK;
	p_err("envelope %s: %s", v->o->envelope, err[0] ? err : strerror(-rc));
	return rc == -EKEYREJECTED ? mcpt_verdict_exit_code(MCPT_INVALID) : MW_EXIT_USAGE;
}

/* The envelope's line in the text report, and its effect on the exit code. */
static int envelope_outcome(struct verify_run *v, int code, bool json)
{
	if (!json)
		printf("  envelope %s: %s\n", v->o->envelope,
		       v->final_matches ? "the FINAL seal of this trace, signature verified"
					: "does NOT match this trace's FINAL seal");
	if (v->final_matches)
		return code;
	if (v->final_seen) /* otherwise the verdict line has said why there is none */
		p_err("envelope %s: differs from the trace's FINAL seal", v->o->envelope);
	return mcpt_verdict_exit_code(MCPT_INVALID);
}

static void print_text(const struct mcpt_report *rep, const Mcpt__Header *h)
{
	struct strbuf sb = STRBUF_INIT;

	mcpt_report_print(stdout, rep);
	trace_provenance(&sb, h);
	if (strbuf_str(&sb))
		fputs(strbuf_str(&sb), stdout);
	strbuf_fini(&sb);
}

static int verify_trace(struct verify_run *v, int fd)
{
	const struct verify_opts *o = v->o;
	struct replay *r = replay__new(&o->ro);
	const struct mcpt_report *rep;
	char msg[REPLAY_MESSAGE_MAX];
	int rc, code = MW_EXIT_USAGE;

	if (!r) {
		p_err("failed to verify %s: %s", o->trace, strerror(ENOMEM));
		return MW_EXIT_USAGE;
	}
	rc = replay__run(r, fd, on_record, v);
	rep = replay__report(r);
	if (rc < 0) {
		p_err("failed to read trace %s: %s", o->trace, strerror(-rc));
		goto cleanup;
	}
	if (o->json) {
		mcpt_report_print_json(stdout, rep);
		fputc('\n', stdout);
	} else {
		print_text(rep, replay__header(r));
	}
	code = mcpt_verdict_exit_code(rep->verdict);
	if (rep->verdict != MCPT_VALID_COMPLETE)
		p_err("%s: %s: %s%s", o->trace, mcpt_report_verdict_name(rep),
		      replay_message(rep, msg),
		      o->envelope ? " (so no FINAL seal to match the envelope)" : "");
	if (o->envelope)
		code = envelope_outcome(v, code, o->json);
cleanup:
	replay__free(r);
	return code;
}

static int verify_run(const struct verify_opts *o)
{
	struct verify_run v = {.o = o};
	char err[512];
	int fd, probe, code;

	fd = replay_open(o->trace, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		return MW_EXIT_USAGE;
	}
	probe = verify_excerpt_probe(o->trace, fd);
	if (probe < 0)
		code = MW_EXIT_USAGE;
	else if (probe == 1 && o->envelope) /* it carries its record's seal, not the FINAL one */
		code = cmd_usage_error("verify",
				       "%s is an excerpt: --envelope checks a whole trace's FINAL "
				       "seal, not an excerpt",
				       o->trace);
	else if (probe == 1)
		code = verify_excerpt(o->trace, fd, o->ro.key, o->ro.allow_unsigned, o->json);
	else if (!o->envelope || !(code = load_envelope(&v)))
		code = verify_trace(&v, fd);
	if (fd > 0)
		close(fd);
	mcpt_dsse_info__fini(&v.env);
	return code;
}

enum { OPT_JSON = 256, OPT_ALLOW_UNSIGNED, OPT_ENVELOPE, OPT_PROGRESS };

int do_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pubkey", required_argument, NULL, 'k'},
		{"json", no_argument, NULL, OPT_JSON},
		{"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
		{"envelope", required_argument, NULL, OPT_ENVELOPE},
		{"progress", no_argument, NULL, OPT_PROGRESS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *pubkey = MW_DEFAULT_PUBKEY;
	struct verify_opts o = {0};
	struct mcpt_pubkey key;
	struct cmd_parser parser = {"verify", ":k:h", opts, NULL};
	int opt;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'k':
			pubkey = optarg;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_ALLOW_UNSIGNED:
			o.ro.allow_unsigned = true;
			break;
		case OPT_ENVELOPE:
			o.envelope = optarg;
			break;
		case OPT_PROGRESS:
			o.progress = true;
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
	o.ro.key = &key;
	o.trace = argv[optind];
	return verify_run(&o);
}
