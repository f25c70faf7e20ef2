/*
 * cmd_export.c - `mcpwitness export TRACE (--record N -o FILE | --dsse [-o FILE])`: evidence
 * for a ticket (TRACE-FORMAT.md 4.12). --record writes an excerpt proving that record N was in
 * the signed trace (proto/EXCERPT.md; `mcpwitness verify FILE` checks it with the public key
 * alone); --dsse writes the FINAL seal as a DSSE JSON envelope. Both are verified before they
 * are written, so what lands in a ticket always verifies. Files are created, never overwritten.
 * Exit: 0 written, 2 usage or input error, 3 the record or the trace does not verify.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "replay.h"

struct export_opts {
	const char *trace, *out, *pubkey;
	bool dsse, have_record;
	uint64_t record;
	struct mcpt_verify_opts vo;
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness export TRACE --record N -o FILE [options]\n"
	      "       mcpwitness export TRACE --dsse [-o FILE] [options]\n"
	      "  --record N          an excerpt proving record N was in the signed trace\n"
	      "                      (header, its seal, its chunk, the Merkle audit path)\n"
	      "  --dsse              the FINAL seal as a DSSE JSON envelope (default: stdout)\n"
	      "  -o, --output FILE   write to FILE, a new file (- = standard output)\n"
	      "  -k, --pubkey FILE   trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "  --allow-unsigned    accept a trace whose header declares no signer\n"
	      "TRACE may be - (standard input). Exit: 0 written, 2 usage or input error,\n"
	      "3 the record or the trace does not verify.\n",
	      out);
}

/* Writes all of p to path (created, 0644, never over an existing file) or stdout for "-". */
static int write_out(const char *path, const void *p, size_t n)
{
	int fd = strcmp(path, "-")
			 ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)
			 : 1;
	int err;

	if (fd < 0) {
		err = errno;
		p_err("failed to create %s: %s%s", path, strerror(err),
		      err == EEXIST ? " (refusing to overwrite an existing file)" : "");
		return MW_EXIT_USAGE;
	}
	err = -mcpt_write_all(fd, p, n);
	if (fd != 1 && close(fd) && !err)
		err = errno;
	if (err) {
		p_err("failed to write %s: %s", path, strerror(err));
		if (fd != 1)
			unlink(path);
		return MW_EXIT_USAGE;
	}
	return MW_EXIT_OK;
}

/* Whether the file on fd (when it can be read at an offset) is not a trace this reader can
 * read (another format, an unknown major version): then an export failure is an input error,
 * as verify's UNSUPPORTED is, not a failed verification. A trace cut inside its preamble is
 * a torn trace like any other. */
static bool not_a_trace(int fd)
{
	uint8_t b[MCPT_PREAMBLE_LEN];
	ssize_t n = pread(fd, b, sizeof(b), 0);
	size_t m = n < MCPT_MAGIC_LEN ? (size_t)(n < 0 ? 0 : n) : MCPT_MAGIC_LEN;

	if (n < 0)
		return false;
	if (n == 0 || memcmp(b, MCPT_MAGIC, m) != 0)
		return true;
	/* the major version, little endian, right after the magic */
	return n >= MCPT_MAGIC_LEN + 2 && (b[8] | b[9] << 8) != MCPT_FORMAT_MAJOR;
}

static int export_record(const struct export_opts *o, int fd)
{
	char err[512] = "";
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = mcpt_excerpt_export(fd, o->record, &o->vo, &buf, &len, err, sizeof(err));

	if (rc) {
		p_err("failed to export record %llu of %s: %s", (unsigned long long)o->record,
		      o->trace, err[0] ? err : strerror(-rc));
		if (rc == -EBADMSG && not_a_trace(fd))
			return MW_EXIT_USAGE;
		return rc == -EBADMSG || rc == -ENODATA || rc == -EFBIG ? MW_EXIT_VERIFY
									: MW_EXIT_USAGE;
	}
	rc = write_out(o->out, buf, len);
	free(buf);
	if (!rc)
		p_info("%s: excerpt of record %llu written (%zu bytes)", o->out,
		       (unsigned long long)o->record, len);
	return rc;
}

static int export_dsse(const struct export_opts *o, int fd)
{
	char msg[REPLAY_MESSAGE_MAX], *json = NULL;
	struct mcpt_report rep;
	int rc = mcpt_dsse_export(fd, &o->vo, &rep, &json);
	bool not_a_trace = rc == -EBADMSG && rep.verdict == MCPT_UNSUPPORTED;

	if (rc == -EBADMSG)
		p_err("failed to export the FINAL seal of %s: %s: %s", o->trace,
		      mcpt_report_verdict_name(&rep), replay_message(&rep, msg));
	else if (rc)
		p_err("failed to export the FINAL seal of %s: %s", o->trace, strerror(-rc));
	mcpt_report__fini(&rep);
	if (rc) /* not a trace is an input error, as for the other commands */
		return rc == -EBADMSG && !not_a_trace ? MW_EXIT_VERIFY : MW_EXIT_USAGE;
	rc = strcmp(o->out, "-") ? write_out(o->out, json, strlen(json)) : MW_EXIT_OK;
	if (!strcmp(o->out, "-"))
		printf("%s\n", json);
	free(json);
	return rc;
}

static int export_run(struct export_opts *o)
{
	struct mcpt_pubkey key;
	char err[512];
	int fd, code;

	if (cmd_load_pubkey(o->pubkey, &key))
		return MW_EXIT_USAGE;
	o->vo.key = &key;
	fd = replay_open(o->trace, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		return MW_EXIT_USAGE;
	}
	code = o->dsse ? export_dsse(o, fd) : export_record(o, fd);
	if (fd > 0)
		close(fd);
	return code;
}

static int parse_record(struct export_opts *o, const char *arg)
{
	char *end;

	errno = 0;
	o->record = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-')
		return cmd_usage_error("export", "bad record number \"%s\"", arg);
	o->have_record = true;
	return -1;
}

enum { OPT_RECORD = 256, OPT_DSSE, OPT_ALLOW_UNSIGNED };

/* One option into o; returns -1 to go on, or an exit code. */
static int parse_one(struct export_opts *o, int opt, char **argv)
{
	switch (opt) {
	case OPT_RECORD:
		return parse_record(o, optarg);
	case OPT_DSSE:
		o->dsse = true;
		return -1;
	case 'o':
		o->out = optarg;
		return -1;
	case 'k':
		o->pubkey = optarg;
		return -1;
	case OPT_ALLOW_UNSIGNED:
		o->vo.allow_unsigned = true;
		return -1;
	case 'h':
		usage(stdout);
		return MW_EXIT_OK;
	default:
		return cmd_opt_error("export", argv, opt);
	}
}

int do_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{"record", required_argument, NULL, OPT_RECORD},
		{"dsse", no_argument, NULL, OPT_DSSE},
		{"output", required_argument, NULL, 'o'},
		{"pubkey", required_argument, NULL, 'k'},
		{"allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct export_opts o = {.pubkey = MW_DEFAULT_PUBKEY};
	struct cmd_parser parser = {"export", ":o:k:h", opts, NULL};
	int opt, code = -1;

	while (code < 0 && (opt = cmd_getopt(&parser, argc, argv)) != -1)
		code = parse_one(&o, opt, argv);
	if (code >= 0)
		return code;
	if (optind != argc - 1)
		return cmd_usage_error("export",
				       optind >= argc ? "missing TRACE" : "more than one TRACE");
	if (o.dsse == o.have_record)
		return cmd_usage_error("export", "give exactly one of --record N and --dsse");
	if (o.have_record && !o.out)
		return cmd_usage_error("export", "--record needs -o FILE (an excerpt is binary)");
	if (!o.out)
		o.out = "-";
	o.trace = argv[optind];
	return export_run(&o);
}
