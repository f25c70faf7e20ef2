/*
 * check_cli_io.c - the files and streams of the mcpwitness binary itself (run as a user runs it,
 * by fork and exec, so main's own handling of standard output is part of the test):
 *   output:     `policy learn -o` never replaces a trace or policy it reads (by name, hard link
 *               or standard input), a symbolic link, a FIFO or a directory: one line, exit 2,
 *               the file left as it was, no temporary file left behind; a regular file is
 *               replaced;
 *   incomplete: learn and diff --allow-incomplete use the records after the last verified seal
 *               (or of a trace with no seal at all), name the trace and its verdict, warn
 *               that they are unproven, and mark each item seen only there (learn's comments,
 *               diff's text and JSON); without the option such a trace is exit 3;
 *   stdin:      "-" twice is a usage error; "-" with standard input closed is "Bad file
 *               descriptor" for analyze, calls, learn and diff;
 *   stdout:     a full disk is one line with the real cause and exit 2 for analyze, calls,
 *               dump, diff and export --dsse -o -;
 *   probe:      a closed standard input or output is refused (one line, exit 2), a full one
 *               reported once;
 *   options:    an error in main's global options names the option as typed;
 *   usage:      --help and `help` list the global options; `help COMMAND` is COMMAND --help;
 *               no command is one line and exit 2;
 *   not-a-trace: an input error (exit 2) for learn and diff, never "verification failed";
 *   default policy: without -p, one that cannot be read is one line naming it (exit 2).
 *   hugepages:  where THP is "madvise", analyze, calls, diff and policy learn re-execute once
 *               on an 8 MiB trace with glibc's huge-page tunable (one -v line), not on a small
 *               one, and dump, verify and policy check never; GLIBC_TUNABLES already set or a
 *               seccomp filter stops it; the output is the same either way, standard input
 *               included.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "cmd.h" /* MW_DEFAULT_POLICY */
#include "synth_trace.h"
#include "writer_int.h" /* mcpt_writer_flush: a trace cut before its FINAL seal */

#define POLICY	 MW_SOURCE_DIR "/policies/default.yaml"
#define BIN	 MW_BINARY_DIR "/analyzer/mcpwitness"
#define TRACE_ID "0f1e2d3c4b5a69788796a5b4c3d2e1f0" /* synth_trace.c */

Suite *cli_io_suite(void);

static struct synth S;

/* How the binary's standard streams are set up. */
struct io {
	const char *in; /* file on stdin; NULL: /dev/null */
	int closed_in;	/* stdin closed */
	int closed_out; /* stdout closed */
	int full_out;	/* stdout is /dev/full */
	int seccomp;	/* under a seccomp filter that allows everything */
};

static void child(const struct io *io, char **argv, int out, int err)
{
	int in = io->in ? open(io->in, O_RDONLY) : open("/dev/null", O_RDONLY);

	if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(99);
	if (io->closed_in)
		close(0);
	if (io->closed_out)
		close(1);
	if (io->seccomp) {
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = {.len = 1, .filter = &allow};

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(97);
	}
	execv(BIN, argv);
	_exit(98);
}

/* Runs mcpwitness with global option opt (unless NULL) and the arguments in ap
 * (NULL-terminated). */
static struct cli_result mw_va(const struct io *io, const char *opt, va_list ap)
{
	char *argv[40], outp[] = "/tmp/mw-out-XXXXXX", errp[] = "/tmp/mw-err-XXXXXX";
	int argc = 0, fo = mkstemp(outp), fe = mkstemp(errp), status;
	struct cli_result r;
	pid_t pid;

	argv[argc++] = (char *)"mcpwitness";
	if (opt)
		argv[argc++] = (char *)opt;
	while (argc < 39 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	argv[argc] = NULL;
	ck_assert(fo >= 0 && fe >= 0);
	if (io->full_out) {
		close(fo);
		fo = open("/dev/full", O_WRONLY);
		ck_assert_int_ge(fo, 0);
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child(io, argv, fo, fe);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	r.code = WEXITSTATUS(status);
	ck_assert_msg(r.code < 97, "could not run %s", BIN);
	close(fo), close(fe);
	r.out = synth_slurp(io->full_out ? "/dev/null" : outp, NULL);
	r.err = synth_slurp(errp, NULL);
	unlink(outp);
	unlink(errp);
	return r;
}

/* Runs mcpwitness with the arguments that follow (NULL-terminated). */
static struct cli_result mw(const struct io *io, ...)
{
	struct cli_result r;
	va_list ap;

	va_start(ap, io);
	r = mw_va(io, NULL, ap);
	va_end(ap);
	return r;
}

static const struct io plain;

/* S.dir/name, in one of 8 rotating buffers. */
static const char *at(const char *name)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 128, "%s/%s", S.dir, name);
	return p;
}

static void expect(struct cli_result r, int code, const char *needle)
{
	ck_assert_msg(r.code == code, "exit %d, want %d: %s", r.code, code, r.err);
	ck_assert_msg(cli_lines(r.err) == 1, "not one line: %s", r.err);
	ck_assert_msg(strstr(r.err, needle), "\"%s\" not in %s", needle, r.err);
	cli_result_free(&r);
}

/* --- traces ------------------------------------------------------------------------------- */

static void server_start(struct synth *s)
{
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/etc/hosts", NULL, 0, 3);
}

/* What the baseline never did: a child running curl. */
static void curl(struct synth *s)
{
	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	synth_exec(s, 101, 2000, "/usr/bin/curl", "curl\0http://example.com/", 24);
	synth_exit(s, 101, 2000, 0);
}

static void complete_trace(const char *name)
{
	synth_begin(&S, name);
	server_start(&S);
	synth_finish(&S);
}

/* The server's start sealed (seals = 1) or not (0), then curl, and no FINAL seal. */
static void cut_trace(const char *name, int seals)
{
	synth_begin(&S, name);
	server_start(&S);
	if (seals)
		ck_assert_int_eq(mcpt_writer__seal(S.w, 0), 0);
	curl(&S);
	ck_assert_int_eq(mcpt_writer_flush(S.w), 0); /* the collector killed */
	mcpt_writer__free(S.w);
	S.w = NULL;
	close(S.fd);
}

static void teardown(void)
{
	synth_cleanup(&S);
}

/* --- output ------------------------------------------------------------------------------- */

/* The entries of S.dir. */
static int entries(void)
{
	char cmd[160];
	FILE *p;
	int n = 0, c;

	snprintf(cmd, sizeof(cmd), "ls -A '%s'", S.dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while ((c = fgetc(p)) != EOF)
		n += c == '\n';
	pclose(p);
	return n;
}

static void same_bytes(const char *path, const char *want, size_t want_len)
{
	size_t len;
	char *got = synth_slurp(path, &len);

	ck_assert_uint_eq(len, want_len);
	ck_assert(!memcmp(got, want, len));
	free(got);
}

START_TEST(learn_output_refused)
{
	char *trace, *policy, want[256];
	size_t trace_len, policy_len;
	struct stat st;
	int n;

	complete_trace("t.mcpt");
	trace = synth_slurp(S.path, &trace_len);
	policy = synth_slurp(POLICY, &policy_len);
	synth_spew(at("x.yaml"), policy, policy_len);
	ck_assert_int_eq(link(S.path, at("h.mcpt")), 0);
	ck_assert_int_eq(symlink("x.yaml", at("l.yaml")), 0);
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(mkdir(at("d"), 0700), 0);
	n = entries();

	/* a place no file can be made beside (/proc): said so, not "No such file" of the output */
	expect(mw(&plain, "policy", "learn", S.path, "-o", "/proc/version", "-k", S.pub, "-p",
		  POLICY, NULL),
	       2,
	       "failed to write /proc/version: cannot create the file it is written to first, "
	       "/proc/version.XXXXXX: No such file or directory");
	snprintf(want, sizeof(want), "refusing to write %s: it is the trace %s", S.path, S.path);
	expect(mw(&plain, "policy", "learn", S.path, "-o", S.path, "-k", S.pub, "-p", POLICY, NULL),
	       2, want);
	snprintf(want, sizeof(want), "refusing to write %s: it is the trace %s", at("h.mcpt"),
		 S.path);
	expect(mw(&plain, "policy", "learn", S.path, "-o", at("h.mcpt"), "-k", S.pub, "-p", POLICY,
		  NULL),
	       2, want);
	expect(mw(&(struct io){.in = S.path}, "policy", "learn", "-", "-o", S.path, "-k", S.pub,
		  "-p", POLICY, NULL),
	       2, "it is the trace on standard input");
	snprintf(want, sizeof(want), "refusing to write %s: it is the base policy %s", at("x.yaml"),
		 at("x.yaml"));
	expect(mw(&plain, "policy", "learn", S.path, "-p", at("x.yaml"), "-o", at("x.yaml"), "-k",
		  S.pub, NULL),
	       2, want);
	expect(mw(&plain, "policy", "learn", S.path, "-p", at("x.yaml"), "-o", at("l.yaml"), "-k",
		  S.pub, NULL),
	       2, "l.yaml: it is a symbolic link");
	expect(mw(&plain, "policy", "learn", S.path, "-p", POLICY, "-o", at("fifo"), "-k", S.pub,
		  NULL),
	       2, "fifo: it is not a regular file");
	expect(mw(&plain, "policy", "learn", S.path, "-p", POLICY, "-o", at("d"), "-k", S.pub,
		  NULL),
	       2, "d: it is not a regular file");
	/* all as they were, and no temporary file left */
	same_bytes(S.path, trace, trace_len);
	same_bytes(at("x.yaml"), policy, policy_len);
	ck_assert_int_eq(lstat(at("l.yaml"), &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(lstat(at("fifo"), &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(entries(), n);
	/* a regular file is replaced, whole */
	for (int i = 0; i < 2; i++) {
		struct cli_result r = mw(&plain, "policy", "learn", S.path, "-p", POLICY, "-o",
					 at("bl.yaml"), "-k", S.pub, NULL);

		ck_assert_msg(r.code == 0, "%s", r.err);
		cli_result_free(&r);
		ck_assert_int_eq(lstat(at("bl.yaml"), &st), 0);
		ck_assert(S_ISREG(st.st_mode));
	}
	ck_assert_int_eq(entries(), n + 1);
	free(trace);
	free(policy);
}
END_TEST

/* --- incomplete traces -------------------------------------------------------------------- */

#define UNPROVEN "[unproven: after the last verified seal]"

START_TEST(incomplete_used_unproven)
{
	char base[128];
	struct cli_result r;
	char *bl;

	complete_trace("b.mcpt");
	snprintf(base, sizeof(base), "%s", S.path);
	for (int seals = 0; seals < 2; seals++) {
		cut_trace(seals ? "sealed.mcpt" : "unsealed.mcpt", seals);
		expect(mw(&plain, "diff", "-k", S.pub, "-p", POLICY, base, "--", S.path, NULL), 3,
		       "trace incomplete: ");
		r = mw(&plain, "diff", "-k", S.pub, "-p", POLICY, "--allow-incomplete", base, "--",
		       S.path, NULL);
		ck_assert_msg(r.code == 1, "exit %d: %s", r.code, r.err); /* curl is new */
		/* the verdict as verify names it: no seal at all is UNVERIFIED */
		ck_assert_msg(strstr(r.out, seals ? "\nthis:     trace " TRACE_ID
						    ", VALID_PREFIX, 0 calls, "
						  : "\nthis:     trace " TRACE_ID
						    ", UNVERIFIED, 0 calls, "),
			      "%s", r.out);
		ck_assert_msg(strstr(r.out, "/usr/bin/curl"), "%s", r.out);
		ck_assert_msg(strstr(r.out, "+ processes exec /usr/bin/curl: curl *  (record ") &&
				      strstr(r.out, " " UNPROVEN ": \"curl\""),
			      "%s", r.out);
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, "used unproven (--allow-incomplete)"), "%s", r.err);
		cli_result_free(&r);
		r = mw(&plain, "diff", "-k", S.pub, "-p", POLICY, "--allow-incomplete", "--json",
		       base, "--", S.path, NULL);
		ck_assert_msg(strstr(r.out, "\"trace\": {\n    \"trace_id\": \"" TRACE_ID "\""),
			      "%s", r.out);
		ck_assert_msg(strstr(r.out, "\"unproven\": true"), "%s", r.out);
		cli_result_free(&r);
		expect(mw(&plain, "policy", "learn", S.path, "-o", at("bl.yaml"), "-k", S.pub, "-p",
			  POLICY, NULL),
		       3, "trace incomplete: ");
		r = mw(&plain, "policy", "learn", S.path, "-o", at("bl.yaml"), "-k", S.pub, "-p",
		       POLICY, "--allow-incomplete", NULL);
		ck_assert_msg(r.code == 0, "%s", r.err);
		cli_result_free(&r);
		bl = synth_slurp(at("bl.yaml"), NULL);
		ck_assert_ptr_nonnull(strstr(bl, seals ? "# t1: trace " TRACE_ID ", VALID_PREFIX"
						       : "# t1: trace " TRACE_ID ", UNVERIFIED"));
		ck_assert_ptr_nonnull(strstr(bl, "/usr/bin/curl"));
		/* each item says whether a verified seal covers where it was seen: the server's
		 * start only when sealed, curl never */
		ck_assert_ptr_nonnull(strstr(bl, seals ? "- /usr/bin/curl  # t1, record 5 " UNPROVEN
						       : "- /usr/bin/curl  # t1, record 4 " UNPROVEN));
		ck_assert_ptr_nonnull(strstr(bl, seals ? "- /etc/hosts  # t1, record 2: "
						       : "- /etc/hosts  # t1, record 2 " UNPROVEN));
		ck_assert_ptr_nonnull(strstr(bl, seals ? "- /usr/bin/node  # t1, record 2: "
						       : "- /usr/bin/node  # t1, record 2 " UNPROVEN));
		free(bl);
	}
}
END_TEST

/* --- standard input and output ------------------------------------------------------------ */

START_TEST(stdin_twice_or_closed)
{
	const struct io closed = {.closed_in = 1};

	complete_trace("t.mcpt");
	expect(mw(&(struct io){.in = S.path}, "diff", "-k", S.pub, "-p", POLICY, "-", "--", "-",
		  NULL),
	       2, "diff: standard input (-) given twice");
	expect(mw(&(struct io){.in = S.path}, "policy", "learn", "-", "-", "-o", at("bl.yaml"),
		  "-k", S.pub, "-p", POLICY, NULL),
	       2, "policy learn: standard input (-) given twice");
	expect(mw(&closed, "analyze", "-", "-k", S.pub, "-p", POLICY, NULL), 2,
	       "failed to open trace -: Bad file descriptor");
	expect(mw(&closed, "calls", "-", "-k", S.pub, NULL), 2,
	       "failed to open trace -: Bad file descriptor");
	expect(mw(&closed, "diff", "-k", S.pub, "-p", POLICY, S.path, "--", "-", NULL), 2,
	       "failed to open trace -: Bad file descriptor");
	expect(mw(&closed, "policy", "learn", "-", "-o", at("bl.yaml"), "-k", S.pub, "-p", POLICY,
		  NULL),
	       2, "failed to open trace -: Bad file descriptor");
}
END_TEST

START_TEST(stdout_full)
{
	const struct io full = {.full_out = 1};

	complete_trace("t.mcpt");
	expect(mw(&full, "analyze", S.path, "-k", S.pub, "-p", POLICY, NULL), 2,
	       "mcpwitness: failed to write the report: No space left on device\n");
	expect(mw(&full, "analyze", S.path, "-k", S.pub, "-p", POLICY, "-f", "json", NULL), 2,
	       "mcpwitness: failed to write the report: No space left on device\n");
	expect(mw(&full, "calls", S.path, "-k", S.pub, NULL), 2,
	       "mcpwitness: failed to write the calls: No space left on device\n");
	expect(mw(&full, "dump", S.path, NULL), 2,
	       "mcpwitness: failed to write the dump: No space left on device\n");
	expect(mw(&full, "diff", "-k", S.pub, "-p", POLICY, S.path, "--", S.path, NULL), 2,
	       "mcpwitness: failed to write the diff: No space left on device\n");
	expect(mw(&full, "export", S.path, "--dsse", "-o", "-", "--pubkey", S.pub, NULL), 2,
	       ": No space left on device\n");
	/* keygen: all or nothing, so that the retry is not refused by a pair whose id was lost */
	expect(mw(&full, "keygen", "-o", at("k"), NULL), 2,
	       "mcpwitness: failed to write the key id: No space left on device; the key pair");
	ck_assert_int_eq(access(at("k/signing.key"), F_OK), -1);
	ck_assert_int_eq(access(at("k/signing.pub"), F_OK), -1);
	expect(mw(&full, "--help", NULL), 2,
	       "mcpwitness: failed to write the output: No space left on device\n");
	expect(mw(&full, "--version", NULL), 2,
	       "mcpwitness: failed to write the output: No space left on device\n");
}
END_TEST

/* probe's channel is its standard input and output: a closed one is refused before its
 * signalfd could take the descriptor; a full one is reported once (not again by main). */
START_TEST(probe_stdio)
{
	expect(mw(&(struct io){.closed_in = 1}, "probe", "--pubkey", "K", "-o", "/tmp", NULL), 2,
	       "mcpwitness: probe: standard input is not open: Bad file descriptor\n");
	expect(mw(&(struct io){.closed_out = 1}, "probe", "-o", "/tmp", NULL), 2,
	       "mcpwitness: probe: standard output is not open: Bad file descriptor\n");
	expect(mw(&(struct io){.full_out = 1}, "probe", "-o", "/tmp", NULL), 2,
	       "mcpwitness: failed to write an event line: No space left on device\n");
}
END_TEST

/* The global -q and -v contradict each other: refused, not one silently winning. */
START_TEST(quiet_and_verbose)
{
	expect(mw(&plain, "-q", "-v", "verify", "t.mcpt", NULL), 2,
	       "mcpwitness: -q and -v together: give one; see 'mcpwitness --help'\n");
	expect(mw(&plain, "-v", "-q", "verify", "t.mcpt", NULL), 2,
	       "mcpwitness: -q and -v together: give one; see 'mcpwitness --help'\n");
}
END_TEST

/* main's own options are named as typed, as a verb's are (cmd_opt_error). */
START_TEST(global_option_errors)
{
	expect(mw(&plain, "--help=1", NULL), 2,
	       "mcpwitness: option --help takes no value; see 'mcpwitness --help'\n");
	expect(mw(&plain, "--ver", "verify", NULL), 2,
	       "mcpwitness: ambiguous option --ver (--version, --verbose); see 'mcpwitness "
	       "--help'\n");
	expect(mw(&plain, "-vZ", "verify", NULL), 2,
	       "mcpwitness: unknown option -Z; see 'mcpwitness --help'\n");
}
END_TEST

/* The usage lists the global options; `help [COMMAND [SUBCOMMAND]]` prints it or what
 * COMMAND --help prints; no command at all is one line, not the usage on stderr. */
START_TEST(usage_and_help)
{
	struct cli_result usage = mw(&plain, "--help", NULL), r;
	static const char *const global[] = {"[-v|-q] COMMAND", "-v, --verbose", "-q, --quiet",
					     "-h, --help", "-V, --version", "help [COMMAND]"};

	ck_assert_int_eq(usage.code, 0);
	for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		ck_assert_msg(strstr(usage.out, global[i]), "no %s in %s", global[i], usage.out);
	r = mw(&plain, "help", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.out, usage.out);
	cli_result_free(&r);
	r = mw(&plain, "help", "--help", NULL);
	ck_assert_str_eq(r.out, usage.out);
	cli_result_free(&r);
	cli_result_free(&usage);
	for (int i = 0; i < 2; i++) {
		struct cli_result want = i ? mw(&plain, "policy", "learn", "--help", NULL)
					   : mw(&plain, "analyze", "--help", NULL);

		r = i ? mw(&plain, "help", "policy", "learn", NULL)
		      : mw(&plain, "help", "analyze", NULL);
		ck_assert_int_eq(r.code, 0);
		ck_assert_str_eq(r.err, "");
		ck_assert_str_eq(r.out, want.out);
		cli_result_free(&r);
		cli_result_free(&want);
	}
	expect(mw(&plain, "help", "nope", NULL), 2,
	       "mcpwitness: unknown command \"nope\"; see 'mcpwitness --help'\n");
	for (int i = 0; i < 2; i++) {
		r = mw(&plain, i ? "-v" : NULL, NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.out, "");
		ck_assert_str_eq(r.err, "mcpwitness: missing command; see 'mcpwitness --help'\n");
		cli_result_free(&r);
	}
}
END_TEST

START_TEST(not_a_trace)
{
	char want[160];

	complete_trace("t.mcpt");
	synth_spew(at("empty"), "", 0);
	snprintf(want, sizeof(want),
		 "mcpwitness: failed to read trace %s: empty file: not a trace\n", at("empty"));
	expect(mw(&plain, "diff", "-k", S.pub, "-p", POLICY, S.path, "--", at("empty"), NULL), 2,
	       want);
	expect(mw(&plain, "policy", "learn", at("empty"), "-o", at("bl.yaml"), "-k", S.pub, "-p",
		  POLICY, NULL),
	       2, want);
	expect(mw(&plain, "analyze", at("empty"), "--no-verify", "-p", POLICY, NULL), 2, want);
}
END_TEST

/* Without -p, analyze, diff and policy learn read the installed default policy; one that
 * cannot be read is one line naming it and why, exit 2 (not the loader's line and a second). */
START_TEST(default_policy_unreadable)
{
	char want[256];
	struct cli_result r;

	complete_trace("t.mcpt");
	if (access(MW_DEFAULT_POLICY, R_OK) == 0) { /* installed on this machine: it is used */
		r = mw(&plain, "analyze", S.path, "-k", S.pub, NULL);
		ck_assert_msg(r.code == 0 || r.code == 1, "%s", r.err);
		cli_result_free(&r);
		return;
	}
	snprintf(want, sizeof(want),
		 "mcpwitness: no -p POLICY given, and the default policy %s cannot be read: %s\n",
		 MW_DEFAULT_POLICY, strerror(errno));
	expect(mw(&plain, "analyze", S.path, "-k", S.pub, NULL), 2, want);
	expect(mw(&plain, "diff", "-k", S.pub, S.path, "--", S.path, NULL), 2, want);
	expect(mw(&plain, "policy", "learn", S.path, "-k", S.pub, "-o", at("bl.yaml"), NULL), 2,
	       want);
}
END_TEST

/* --- huge pages --------------------------------------------------------------------------- */

#define REEXEC "re-executing with GLIBC_TUNABLES=glibc.malloc.hugetlb=1"

/* Whether this host gives huge pages only on request, where the re-execution happens. */
static int thp_madvise(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char mode[128] = "";
	int got = f && fgets(mode, sizeof(mode), f) != NULL;

	if (f)
		fclose(f);
	return got && strstr(mode, "[madvise]") != NULL;
}

/* How many times the re-execution line is in r's stderr. */
static int reexecs(const struct cli_result *r)
{
	int n = 0;

	for (const char *p = r->err; (p = strstr(p, REEXEC)); p++)
		n++;
	return n;
}

/* Runs the same command with GLIBC_TUNABLES unset and set empty: exit code and stdout equal,
 * the re-execution line once in the first when `reexec` (and THP is "madvise"), never in the
 * second. */
static void same_both_ways(const struct io *io, int reexec, ...)
{
	struct cli_result r[2];
	va_list ap;

	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(i ? setenv("GLIBC_TUNABLES", "", 1) : unsetenv("GLIBC_TUNABLES"),
				 0);
		va_start(ap, reexec);
		r[i] = mw_va(io, "-v", ap);
		va_end(ap);
	}
	ck_assert_int_eq(unsetenv("GLIBC_TUNABLES"), 0);
	ck_assert_msg(reexecs(&r[0]) == (reexec && thp_madvise()), "%s", r[0].err);
	ck_assert_msg(reexecs(&r[1]) == 0, "%s", r[1].err);
	ck_assert_int_eq(r[0].code, r[1].code);
	ck_assert_str_eq(r[0].out, r[1].out);
	cli_result_free(&r[0]);
	cli_result_free(&r[1]);
}

/* A trace of at least 8 MiB, the input from which the re-execution pays (hugepages.c): the
 * server's start, then opens of distinct 200-byte paths. */
static void large_trace(const char *name)
{
	char path[256];
	struct stat st;
	int i = 0;

	synth_begin(&S, name);
	server_start(&S);
	do {
		for (int k = 0; k < 4096; k++, i++) {
			snprintf(path, sizeof(path), "/work/%0190d.txt", i);
			synth_open(&S, SYNTH_PID, SYNTH_PSTART, path, NULL, 0, 3);
		}
		ck_assert_int_eq(fstat(S.fd, &st), 0);
	} while (st.st_size < (8 << 20));
	synth_finish(&S);
}

START_TEST(huge_pages_reexec)
{
	large_trace("big.mcpt");
	same_both_ways(&plain, 1, "analyze", S.path, "-k", S.pub, "-p", POLICY, NULL);
	same_both_ways(&(struct io){.in = S.path}, 1, "calls", "-", "-k", S.pub, NULL);
	same_both_ways(&plain, 1, "diff", "-k", S.pub, "-p", POLICY, S.path, "--", S.path, NULL);
	same_both_ways(&plain, 1, "policy", "learn", S.path, "-k", S.pub, "-p", POLICY, "-o",
		       at("bl.yaml"), NULL);
	same_both_ways(&plain, 0, "dump", S.path, NULL);
	same_both_ways(&plain, 0, "verify", S.path, "-k", S.pub, NULL);
	same_both_ways(&plain, 0, "policy", "check", POLICY, NULL);
	/* under seccomp, which might kill an execve */
	same_both_ways(&(struct io){.seccomp = 1}, 0, "analyze", S.path, "-k", S.pub, "-p", POLICY,
		       NULL);
	/* a small trace: not worth an exec */
	complete_trace("t.mcpt");
	same_both_ways(&plain, 0, "analyze", S.path, "-k", S.pub, "-p", POLICY, NULL);
	same_both_ways(&(struct io){.in = S.path}, 0, "calls", "-", "-k", S.pub, NULL);
}
END_TEST

Suite *cli_io_suite(void)
{
	Suite *s = suite_create("cli_io");
	TCase *files = tcase_create("files"), *streams = tcase_create("streams");
	TCase *hugepages = tcase_create("hugepages");

	tcase_add_checked_fixture(files, NULL, teardown);
	tcase_add_checked_fixture(streams, NULL, teardown);
	tcase_add_test(files, learn_output_refused);
	tcase_add_test(files, incomplete_used_unproven);
	tcase_add_test(files, not_a_trace);
	tcase_add_test(files, default_policy_unreadable);
	tcase_add_test(streams, stdin_twice_or_closed);
	tcase_add_test(streams, stdout_full);
	tcase_add_test(streams, probe_stdio);
	tcase_add_test(streams, quiet_and_verbose);
	tcase_add_test(streams, global_option_errors);
	tcase_add_test(streams, usage_and_help);
	tcase_add_checked_fixture(hugepages, NULL, teardown);
	tcase_add_test(hugepages, huge_pages_reexec);
	suite_add_tcase(s, files);
	suite_add_tcase(s, hugepages);
	suite_add_tcase(s, streams);
	return s;
}
