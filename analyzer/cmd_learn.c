/*
 * cmd_learn.c - `mcpwitness policy learn TRACE... -o BASELINE`: reads verified traces into a
 * baseline model (learn.h) and writes it as a policy (learn_emit.h).
 *
 * Nothing partial is passed off as complete: the policy is written to a temporary file next to
 * the output, loaded and compiled again after the base policy exactly as analyze would load
 * the pair, and only then renamed over the output. Any failure leaves the output untouched.
 * The output is replaced only when it is a regular file and none of the inputs: rename() would
 * otherwise replace the trace or policy learned from, turn a device node into a file, or put a
 * file where a symbolic link was (not where it points).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "learn_base.h"
#include "learn_emit.h"
#include "log.h"

struct learn_args {
	const char *output;
	struct learn_common c;
	char **traces;
	size_t n_traces;
};

static void usage(FILE *out)
{
	fputs("usage: mcpwitness policy learn TRACE... -o BASELINE [-p POLICY]... [--pubkey F]\n"
	      "                               [--allow-incomplete]\n"
	      "Writes a policy that allows, per tool, per method, at startup, between calls and\n"
	      "at shutdown, exactly what the traces show the server doing; anything else is a\n"
	      "finding of category drift. Use it after the base policy:\n"
	      "  mcpwitness analyze TRACE -p default.yaml -p BASELINE\n"
	      "  -o, --output FILE       the baseline to write (replaced only when complete)\n"
	      "  -p, --policy POLICY     the base policy it is learned against, as analyze -p\n"
	      "                          (default: the installed default.yaml); its\n"
	      "                          sensitive_paths are never learned\n"
	      "  -k, --pubkey F         the trusted public key (default " MW_DEFAULT_PUBKEY ")\n"
	      "      --allow-incomplete  accept a trace that is a valid prefix (no FINAL seal):\n"
	      "                          its records after the last verified seal are learned\n"
	      "                          unproven\n"
	      "Exit 0 written, 2 usage or input error, 3 a trace failed verification or is\n"
	      "incomplete.\n",
	      out);
}

static int parse(int argc, char **argv, struct learn_args *a)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"policy", required_argument, NULL, 'p'},
		{"pubkey", required_argument, NULL, 'k'},
		{"allow-incomplete", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cmd_parser parser = {"policy learn", ":o:p:k:h", opts, (const int[]){'p', 0}};
	int opt, rc;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			rc = learn_common_opt(&a->c, opt, optarg, "policy learn");
			if (rc >= 0)
				return rc ? rc : cmd_opt_error("policy learn", argv, opt);
		}
	}
	if (optind >= argc)
		return cmd_usage_error("policy learn", "missing TRACE");
	if (!a->output || !*a->output || !strcmp(a->output, "-"))
		return cmd_usage_error("policy learn", "missing -o BASELINE (a file)");
	a->traces = argv + optind;
	a->n_traces = (size_t)(argc - optind);
	rc = cmd_check_stdin_once("policy learn", a->traces, a->n_traces, NULL);
	return rc ? rc : -1;
}

/* Whether path ("-": standard input) is the file of st. */
static bool same_file(const char *path, const struct stat *st)
{
	struct stat in;

	if (strcmp(path, "-") ? stat(path, &in) : fstat(0, &in))
		return false;
	return in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

/* The output may be replaced: absent, or a regular file (not a symbolic link) that is none of
 * the traces and policies read. 0, or MW_EXIT_USAGE after one line. */
static int check_output(const struct learn_args *a)
{
	static char dflt[] = MW_DEFAULT_POLICY;
	char *const *pols = a->c.n_policies ? a->c.policies : (char *const[]){dflt};
	size_t n_pols = a->c.n_policies ? a->c.n_policies : 1;
	const char *why = NULL, *input = "";
	struct stat st;

	if (lstat(a->output, &st)) {
		if (errno == ENOENT)
			return MW_EXIT_OK;
		p_err("failed to write %s: %s", a->output, strerror(errno));
		return MW_EXIT_USAGE;
	}
	if (S_ISLNK(st.st_mode))
		why = "it is a symbolic link";
	else if (!S_ISREG(st.st_mode))
		why = "it is not a regular file";
	for (size_t i = 0; !why && i < a->n_traces; i++)
		if (same_file(a->traces[i], &st)) {
			why = "it is the trace ";
			input = strcmp(a->traces[i], "-") ? a->traces[i] : "on standard input";
		}
	for (size_t i = 0; !why && i < n_pols; i++)
		if (same_file(pols[i], &st)) {
			why = "it is the base policy ";
			input = pols[i];
		}
	if (!why)
		return MW_EXIT_OK;
	p_err("refusing to write %s: %s%s", a->output, why, input);
	return MW_EXIT_USAGE;
}

/* Writes sb to a new temporary file next to path; its name into tmp. */
static int write_tmp(const char *path, const struct strbuf *sb, struct strbuf *tmp)
{
	const char *data = strbuf_str(sb) ?: "";
	int fd, err;

	strbuf_printf(tmp, "%s.XXXXXX", path);
	if (strbuf_error(tmp))
		return -ENOMEM;
	fd = mkstemp(tmp->buf);
	if (fd < 0) {
		err = -errno;
		p_err("failed to write %s: cannot create the file it is written to first, "
		      "%s.XXXXXX: %s",
		      path, path, strerror(-err));
		return -EALREADY; /* reported */
	}
	if ((err = mcpt_write_all(fd, data, sb->len))) {
		close(fd);
		unlink(tmp->buf);
		return err;
	}
	if (fchmod(fd, 0644) || fsync(fd) || close(fd)) {
		unlink(tmp->buf);
		return -errno;
	}
	return 0;
}

/* The written file, after the base, compiles as analyze would load it. */
static int check_written(const struct learn_args *a, const char *tmp)
{
	char *files[LEARN_POLICIES_MAX + 1];
	struct lbase lb;
	struct policy *p = NULL;
	size_t n = 0;
	int rc;

	for (; n < a->c.n_policies; n++)
		files[n] = a->c.policies[n];
	static char dflt[] = MW_DEFAULT_POLICY;

	if (!n) /* the installed default, as learn_base_load reads it */
		files[n++] = dflt;
	files[n++] = (char *)tmp;
	rc = learn_base_load(&p, &lb, files, n);
	learn_base_fini(p, &lb);
	return rc;
}

static int emit_and_write(const struct learn_args *a, struct lmodel *m, struct obs_trace *ts,
			  const struct policy *base, const struct lbase *lb)
{
	struct obs_trace **tp = calloc(a->n_traces, sizeof(*tp));
	struct learn_out lo = {.m = m,
			       .traces = tp,
			       .n_traces = a->n_traces,
			       .base = base,
			       .lb = lb,
			       .self = a->output};
	struct strbuf sb = STRBUF_INIT, tmp = STRBUF_INIT;
	int rc = tp ? lmodel__sort(m) : -ENOMEM;

	for (size_t i = 0; tp && i < a->n_traces; i++)
		tp[i] = &ts[i];
	rc = rc ?: learn_emit(&sb, &lo);
	if (rc) {
		p_err("failed to write %s: %s", a->output,
		      rc == -EINVAL ? "a learned value cannot be written" : strerror(-rc));
		rc = MW_EXIT_USAGE;
		goto cleanup;
	}
	rc = write_tmp(a->output, &sb, &tmp);
	if (rc) {
		if (rc != -EALREADY)
			p_err("failed to write %s: %s", a->output, strerror(-rc));
		rc = MW_EXIT_USAGE;
		goto cleanup;
	}
	if (check_written(a, tmp.buf)) {
		p_err("failed to write %s: the learned policy does not compile (a bug; kept as %s)",
		      a->output, tmp.buf);
		rc = MW_EXIT_USAGE;
		goto cleanup;
	}
	if ((rc = check_output(a))) { /* again: it may have changed while the traces were read */
		unlink(tmp.buf);
		goto cleanup;
	}
	if (rename(tmp.buf, a->output)) {
		p_err("failed to write %s: %s", a->output, strerror(errno));
		unlink(tmp.buf);
		rc = MW_EXIT_USAGE;
	}
cleanup:
	strbuf_fini(&sb);
	strbuf_fini(&tmp);
	free(tp);
	return rc;
}

static int learn(struct learn_args *a)
{
	struct obs_trace *ts = calloc(a->n_traces, sizeof(*ts));
	struct policy *base = NULL;
	struct lmodel *m = NULL;
	struct lbase lb;
	int rc;

	memset(&lb, 0, sizeof(lb));
	if ((rc = check_output(a))) { /* before anything is read */
		free(ts);
		return rc;
	}
	if (!ts) {
		p_err("failed to learn: %s", strerror(ENOMEM));
		return MW_EXIT_USAGE;
	}
	rc = learn_base_load(&base, &lb, a->c.policies, a->c.n_policies);
	if (!rc && !(m = lmodel__new(&lb, NULL))) {
		p_err("failed to learn: %s", strerror(ENOMEM));
		rc = MW_EXIT_USAGE;
	}
	rc = rc ?: learn_read_traces(m, ts, a->traces, a->n_traces, &a->c.obs);
	rc = rc ?: emit_and_write(a, m, ts, base, &lb);
	for (size_t i = 0; i < a->n_traces; i++)
		obs_fini(&ts[i]);
	free(ts);
	lmodel__free(m);
	learn_base_fini(base, &lb);
	return rc;
}

int do_policy_learn(int argc, char **argv)
{
	struct learn_args a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = parse(argc, argv, &a);
	return rc >= 0 ? rc : learn(&a);
}
