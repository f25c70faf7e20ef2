/*
 * cli_run.c - see cli_run.h.
 */
#include <check.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "cmd.h"
#include "synth_trace.h"

static int (*verb_fn(const char *verb))(int, char **)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} verbs[] = {{"analyze", do_analyze}, {"dump", do_dump},     {"verify", do_verify},
		     {"export", do_export},   {"keygen", do_keygen}, {"policy", do_policy},
		     {"calls", do_calls},     {"diff", do_diff}};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, verb))
			return verbs[i].fn;
	ck_abort_msg("unknown verb %s", verb);
	return NULL;
}

struct cli_result cli_run(const char *stdin_path, const char *verb, ...)
{
	char *argv[40], outp[] = "/tmp/mw-out-XXXXXX", errp[] = "/tmp/mw-err-XXXXXX";
	int argc = 0, so = dup(1), se = dup(2), si = dup(0), fo, fe, fi;
	struct cli_result r;
	va_list ap;

	argv[argc++] = (char *)verb;
	va_start(ap, verb);
	while (argc < 39 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	fo = mkstemp(outp);
	fe = mkstemp(errp);
	ck_assert(fo >= 0 && fe >= 0 && so >= 0 && se >= 0 && si >= 0);
	fflush(stdout);
	fflush(stderr);
	dup2(fo, 1);
	dup2(fe, 2);
	if (stdin_path) {
		fi = open(stdin_path, O_RDONLY);
		ck_assert_int_ge(fi, 0);
		dup2(fi, 0);
		close(fi);
	}
	optind = 0;
	r.code = verb_fn(verb)(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	dup2(si, 0);
	close(so), close(se), close(si), close(fo), close(fe);
	r.out = synth_slurp(outp, NULL);
	r.err = synth_slurp(errp, NULL);
	unlink(outp);
	unlink(errp);
	if (getenv("MW_TEST_VERBOSE"))
		fprintf(stderr, "--- %s -> %d\n%s--- stderr\n%s", verb, r.code, r.out, r.err);
	return r;
}

void cli_result_free(struct cli_result *r)
{
	free(r->out);
	free(r->err);
}

int cli_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int cli_printable(const char *s)
{
	for (; *s; s++)
		if ((*s < 0x20 && *s != '\n' && *s != '\t') || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}
