/*
 * check_analyze.c - the analyzer end to end on small signed traces written with the real trace
 * library (synth_trace.c), through the same do_<verb> functions the binary runs.
 *
 * findings: a scenario trace gives exactly the expected findings (rule, severity, pid, path,
 * argv, lineage up to the server), and its benign events (runtime libraries, /dev/null,
 * /proc/self, workspace and temp writes, DNS to the local stub, the server's own launch) none.
 * determinism: two runs give byte-identical text and JSON.
 * exits: --fail-on, tampered / truncated / wrong-key / not-a-trace / missing traces, a broken
 * policy, a trace without FINAL seal read with --no-verify, a malformed Event, a bad
 * --max-per-rule: each a one-line error and the documented exit code; stdin input.
 * dump and verify on the same traces; entry-time records merged with their completion.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "cmd.h"
#include "events.h"
#include "synth_trace.h"
#include "writer_int.h" /* mcpt_writer_flush: a trace cut before its FINAL seal */

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"

/* --- traces --------------------------------------------------------------------------------- */

static const uint8_t sa_lo_dns[16] = {2, 0, 0, 53, 127, 0, 0, 53};
static const uint8_t sa_lo_8080[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
static const uint8_t sa_metadata[16] = {2, 0, 0, 80, 169, 254, 169, 254};
static const uint8_t sa_web[16] = {2, 0, 0x01, 0xbb, 93, 184, 216, 34};
static const uint8_t sun_rel[] = {1, 0, 'd', 'o', 'c', 'k', 'e', 'r', '.', 's', 'o', 'c', 'k', 0};
static const uint8_t sun_docker[] = {1, 0, '/', 'v', 'a', 'r', '/', 'r', 'u', 'n', '/', 'd',
				     'o', 'c', 'k', 'e', 'r', '.', 's', 'o', 'c', 'k', 0};

#define O_WR_CREAT (01 | 0100 | 01000)

/* What benign servers do all day: none of it is a finding. */
static void benign_events(struct synth *s)
{
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/etc/ld.so.cache", NULL, 02000000, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/lib/x86_64-linux-gnu/libc.so.6",
		   "/lib/x86_64-linux-gnu/libc.so.6", 02000000, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/usr/lib/node_modules/x/index.js", NULL, 0, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/proc/self/maps", NULL, 0, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/dev/null", NULL, 02, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "out.txt", "/work/out.txt", O_WR_CREAT, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/tmp/x.tmp", NULL, 02 | 0100, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/work/missing", NULL, 0, -2);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_lo_dns, 16, 0, 0);
}

/* The scenario: a tool call that makes a shell read a key and phone home. */
static void scenario_events(struct synth *s)
{
	benign_events(s);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_lo_8080, 16, 0, 0); /* loopback, low */
	ck_assert_int_eq(mcpt_writer__seal(s->w, 0), 0); /* what follows is another segment */
	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	synth_exec(s, 101, 2000, "/bin/sh", "sh\0-c\0cat .ssh/id_rsa", 21); /* high */
	synth_fork(s, 101, 2000, 102, 3000);
	synth_exec(s, 102, 3000, "/usr/bin/cat", "cat\0.ssh/id_rsa", 16);     /* high */
	synth_open(s, 102, 3000, ".ssh/id_rsa", "/home/u/.ssh/id_rsa", 0, 3); /* critical */
	synth_open(s, 102, 3000, ".aws/credentials", "/home/u/.aws/credentials", 0, -2); /* low */
	synth_exit(s, 102, 3000, 0);
	synth_connect(s, 101, 2000, sa_metadata, 16, -111, 0);		/* critical */
	synth_connect(s, 101, 2000, sa_web, 16, 0, 0);			/* medium */
	synth_open(s, 101, 2000, "/etc/cron.d/x", NULL, O_WR_CREAT, 3); /* high */
	synth_exit(s, 101, 2000, 0);
}

static void make_trace(struct synth *s, const char *name, void (*events)(struct synth *))
{
	synth_begin(s, name);
	events(s);
	synth_finish(s);
}

static struct synth S;

/* The trace `name` of events, analyzed with the default policy as JSON: exit 0, the parsed
 * report (r keeps the run). */
static json_t *analyze_json(const char *name, void (*events)(struct synth *), struct cli_result *r)
{
	json_t *doc;

	make_trace(&S, name, events);
	*r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f", "json", NULL);
	ck_assert_int_eq(r->code, 0);
	doc = json_loads(r->out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	return doc;
}

static void teardown(void)
{
	synth_cleanup(&S);
}

/* --- findings ------------------------------------------------------------------------------- */

struct want {
	const char *rule, *severity;
	int pid;
	const char *path, *addr, *exe;
	int lineage; /* processes from this one up to the server */
};

static const struct want scenario_findings[] = {
	{"net.connect-loopback", "low", 100, NULL, "127.0.0.1:8080", "/usr/bin/node", 1},
	{"exec.unexpected", "high", 101, NULL, NULL, "/bin/sh", 2},
	{"exec.unexpected", "high", 102, NULL, NULL, "/usr/bin/cat", 3},
	{"file.sensitive-read", "critical", 102, "/home/u/.ssh/id_rsa", NULL, "/usr/bin/cat", 3},
	{"file.sensitive-read-attempt", "low", 102, "/home/u/.aws/credentials", NULL,
	 "/usr/bin/cat", 3},
	{"net.cloud-metadata", "critical", 101, NULL, "169.254.169.254:80", "/bin/sh", 2},
	{"net.connect-unexpected", "medium", 101, NULL, "93.184.216.34:443", "/bin/sh", 2},
	{"file.persistence-write", "high", 101, "/etc/cron.d/x", NULL, "/bin/sh", 2},
};

static const char *jstr(json_t *o, const char *path)
{
	json_t *v = o;
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void check_finding(json_t *f, const struct want *w, int i)
{
	json_t *proc = json_object_get(f, "process"), *lin = json_object_get(proc, "lineage");

	ck_assert_msg(!strcmp(jstr(f, "rule"), w->rule), "finding %d: %s", i, jstr(f, "rule"));
	ck_assert_str_eq(jstr(f, "severity"), w->severity);
	ck_assert_int_eq(json_integer_value(json_object_get(proc, "pid")), w->pid);
	ck_assert_str_eq(jstr(proc, "exe"), w->exe);
	if (w->path)
		ck_assert_str_eq(jstr(f, "evidence.path"), w->path);
	if (w->addr)
		ck_assert_str_eq(jstr(f, "evidence.addr"), w->addr);
	ck_assert_int_eq(json_array_size(lin), w->lineage);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_array_get(lin, w->lineage - 1), "pid")),
		SYNTH_PID);
	ck_assert(json_is_true(json_object_get(proc, "lineage_complete")));
	ck_assert(json_is_false(json_object_get(f, "unproven")));
	ck_assert_ptr_nonnull(jstr(f, "time"));
}

START_TEST(scenario_findings_json)
{
	struct cli_result r;
	json_t *doc, *fs, *f;
	json_error_t je;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--format", "json",
		    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	ck_assert_str_eq(r.err, "");
	doc = json_loads(r.out, 0, &je);
	ck_assert_msg(doc, "%s", je.text);
	ck_assert_str_eq(jstr(doc, "trace.verdict"), "VALID_COMPLETE");
	ck_assert_str_eq(jstr(doc, "trace.id"), "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
	ck_assert_str_eq(jstr(doc, "analyzer.name"), "mcpwitness");
	ck_assert_str_eq(jstr(doc, "variables.home"), "/home/u");
	ck_assert_str_eq(jstr(doc, "variables.workspace"), "/work");
	ck_assert_uint_eq(
		strlen(jstr(json_array_get(json_object_get(doc, "policies"), 0), "blake2b_256")),
		64);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 8);
	for (size_t i = 0; i < 8; i++)
		check_finding(json_array_get(fs, i), &scenario_findings[i], (int)i);
	f = json_array_get(fs, 2); /* cat's exec: argv and lineage exe names */
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(f, "process"), "argv"), 1)),
			 ".ssh/id_rsa");
	ck_assert_str_eq(jstr(f, "message"), "executed /usr/bin/cat");
	f = json_array_get(fs, 3);
	ck_assert_str_eq(jstr(f, "evidence.path_arg"), ".ssh/id_rsa");
	ck_assert_str_eq(jstr(f, "message"), "read /home/u/.ssh/id_rsa");
	ck_assert_str_eq(jstr(json_array_get(fs, 4), "evidence.errno"), "ENOENT");
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(doc, "summary"), "critical")),
		2);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(doc, "summary"), "total")), 8);
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

START_TEST(scenario_text)
{
	struct cli_result r;
	const char *p;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(!strncmp(r.out, "verification: VALID_COMPLETE: ", 30)); /* the verdict first */
	ck_assert_ptr_nonnull(strstr(r.out, "\ntrace: 0f1e2d3c4b5a69788796a5b4c3d2e1f0 analyzed by "
					    "mcpwitness " MW_VERSION "\n"));
	p = strstr(r.out, "\n[");
	ck_assert_ptr_nonnull(p);
	ck_assert(!strncmp(p, "\n[critical] file.sensitive-read: read /home/u/.ssh/id_rsa\n", 58));
	ck_assert_ptr_nonnull(strstr(r.out, "  lineage: 102 /usr/bin/cat < 101 /bin/sh < 100 "
					    "/usr/bin/node (server)\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "(as passed \".ssh/id_rsa\")"));
	ck_assert_ptr_nonnull(strstr(r.out, "2023-11-14T22:13:20.0000"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n8 findings: 2 critical, 3 high, 1 medium, 2 low, "
					    "0 info\n"));
	cli_result_free(&r);
}
END_TEST

START_TEST(benign_is_quiet)
{
	struct cli_result r;

	make_trace(&S, "b.mcpt", benign_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on", "info",
		    NULL);
	ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\n0 findings: 0 critical, 0 high, 0 medium, 0 low, "
					    "0 info\n"));
	ck_assert_ptr_null(strstr(r.out, "\n["));
	cli_result_free(&r);
}
END_TEST

START_TEST(deterministic)
{
	static const char *const formats[] = {"text", "json"};

	make_trace(&S, "t.mcpt", scenario_events);
	for (int i = 0; i < 2; i++) {
		struct cli_result a, b;

		a = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f",
			    formats[i], NULL);
		/* the analyst's environment never enters the analysis */
		setenv("HOME", "/root-of-someone-else", 1);
		setenv("USER", "mallory", 1);
		setenv("TMPDIR", "/var/elsewhere", 1);
		setenv("TZ", "Asia/Tokyo", 1);
		b = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f",
			    formats[i], NULL);

		ck_assert_int_eq(a.code, b.code);
		ck_assert_str_eq(a.out, b.out);
		cli_result_free(&a);
		cli_result_free(&b);
	}
}
END_TEST

START_TEST(fail_on)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on",
		    "critical", NULL);
	ck_assert_int_eq(r.code, 1);
	cli_result_free(&r);
	make_trace(&S, "b.mcpt", benign_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on", "low",
		    NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "--fail-on", "severe", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: analyze: unknown severity \"severe\" (info, low, "
				"medium, high, critical); see 'mcpwitness analyze --help'\n");
	cli_result_free(&r);
}
END_TEST

/* --- bad inputs ----------------------------------------------------------------------------- */

static void flip_in_file(const char *path, const char *needle)
{
	size_t len;
	char *buf = synth_slurp(path, &len), *p = memmem(buf, len, needle, strlen(needle));

	ck_assert_ptr_nonnull(p);
	p[1] ^= 0x20;
	synth_spew(path, buf, len);
	free(buf);
}

static void cut_file(const char *path, size_t drop)
{
	size_t len;
	char *buf = synth_slurp(path, &len);

	ck_assert_uint_gt(len, drop);
	synth_spew(path, buf, len - drop);
	free(buf);
}

/* analyze with the key refuses S's trace as INVALID: one line, no report, exit 3. */
static void expect_invalid(void)
{
	struct cli_result r =
		cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, NULL);

	ck_assert_int_eq(r.code, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "verification failed: INVALID"), "%s", r.err);
	cli_result_free(&r);
}

START_TEST(tampered)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	flip_in_file(S.path, "/home/u/.ssh/id_rsa");
	expect_invalid();
	/* holding segments back, the header's own segment bad: the same one line, no warning
	 * about variables the header (never released) would have given */
	make_trace(&S, "t.mcpt", scenario_events);
	flip_in_file(S.path, "/proc/self/maps");
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub,
		    "--verify-before-release", NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(cli_lines(r.err) == 1, "%s", r.err);
	ck_assert_msg(strstr(r.err, "verification failed: INVALID"), "%s", r.err);
	cli_result_free(&r);
	make_trace(&S, "t.mcpt", scenario_events);
	flip_in_file(S.path, "/home/u/.ssh/id_rsa");
	r = cli_run(NULL, "verify", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 1);
	cli_result_free(&r);
	/* without verification the hashes and the chain are still checked: a segment root that
	 * does not hold is a structural error (exit 2, one line, no report), --allow-incomplete
	 * or not, for analyze as for calls */
	for (int i = 0; i < 3; i++) {
		if (i < 2)
			r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify",
				    i ? "--allow-incomplete" : NULL, NULL);
		else
			r = cli_run(NULL, "calls", S.path, "--no-verify", "--allow-incomplete",
				    NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.out, "");
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, "failed to read trace ") &&
				      strstr(r.err, "t.mcpt: E_SEAL_ROOT: "),
			      "%s", r.err);
		cli_result_free(&r);
	}
	/* dump without a key checks the hashes too: a segment root that does not hold is a
	 * structural error (exit 2), with the key a failed verification (exit 3) */
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "t.mcpt: E_SEAL_ROOT: "), "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "id_rsa")); /* what was readable is printed */
	cli_result_free(&r);
	r = cli_run(NULL, "dump", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "t.mcpt: INVALID: "), "%s", r.err);
	cli_result_free(&r);
}
END_TEST

/* A stream that ends before its Header has nothing --allow-incomplete could accept (no key
 * to check, no event): exit 3, one line, no report, no baseline; bytes after the FINAL seal
 * are bytes no collector writes: read without a key, a structural error (exit 2). */
/* r ran on a trace cut before its Header: refused as incomplete whatever the options. */
static void expect_before_header(struct cli_result *r)
{
	ck_assert_int_eq(r->code, 3);
	ck_assert_str_eq(r->out, "");
	ck_assert_int_eq(cli_lines(r->err), 1);
	ck_assert_msg(strstr(r->err, "the stream ends before its Header") &&
			      strstr(r->err, "even with --allow-incomplete"),
		      "%s", r->err);
	cli_result_free(r);
}

START_TEST(before_header_and_trailing)
{
	struct cli_result r;
	char baseline[160];
	size_t len;
	char *buf;

	make_trace(&S, "t.mcpt", scenario_events);
	buf = synth_slurp(S.path, &len);
	synth_spew(S.path, buf, 200);
	for (int verify = 0; verify < 2; verify++) {
		const char *how = verify ? "-k" : "--no-verify", *key = verify ? S.pub : NULL;

		r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--allow-incomplete", how, key,
			    NULL);
		expect_before_header(&r);
		r = cli_run(NULL, "calls", S.path, "--allow-incomplete", how, key, NULL);
		expect_before_header(&r);
	}
	snprintf(baseline, sizeof(baseline), "%s/bl.yaml", S.dir);
	r = cli_run(NULL, "policy", "learn", S.path, "-k", S.pub, "-p", POLICY, "-o", baseline,
		    "--allow-incomplete", NULL);
	expect_before_header(&r);
	ck_assert_int_eq(access(baseline, F_OK), -1);
	/* the whole trace again, and one byte more */
	buf = realloc(buf, len + 1);
	ck_assert_ptr_nonnull(buf);
	buf[len] = 'X';
	synth_spew(S.path, buf, len + 1);
	free(buf);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", "--allow-incomplete",
		    NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "t.mcpt: E_TRAILING: "), "%s", r.err);
	cli_result_free(&r);
}
END_TEST

/* The record index of the first Event whose dump line holds needle. */
static uint64_t event_index(const char *path, const char *needle)
{
	struct cli_result r = cli_run(NULL, "dump", path, NULL);
	char *line = strstr(r.out, needle), *start;
	uint64_t index;

	ck_assert_ptr_nonnull(line);
	for (start = line; start > r.out && start[-1] != '\n'; start--)
		;
	ck_assert(strstr(start, " event ") < line);
	index = strtoull(start, NULL, 10);
	cli_result_free(&r);
	return index;
}

/* The tag of the sensitive read's uid made "80 00": field 0 in a non-minimal tag, which
 * protobuf-c unpacks (as an unknown field) but cannot read back once packed again. */
static void bend_uid_tag(uint8_t *body, size_t len)
{
	static const char uid_1000[] = "\x80\x01\xe8\x07"; /* field 16 (uid), varint 1000 */
	uint8_t *p = memmem(body, len, uid_1000, 4);

	ck_assert_ptr_nonnull(p);
	p[1] = 0;
}

/* scenario_events with the sensitive read malformed, as the collector would have written it:
 * hashed and signed like every record, so the trace verifies. */
static void malformed_scenario(struct synth *s)
{
	benign_events(s);
	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 102, 3000);
	s->bend = bend_uid_tag;
	synth_open(s, 102, 3000, ".ssh/id_rsa", "/home/u/.ssh/id_rsa", 0, 3);
	synth_exit(s, 102, 3000, 0);
}

START_TEST(malformed_event)
{
	uint64_t index;
	struct cli_result r;
	char want[96];

	make_trace(&S, "t.mcpt", malformed_scenario);
	index = event_index(S.path, "abs=\"/home/u/.ssh/id_rsa\"");
	r = cli_run(NULL, "verify", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
	/* verified or not: one line naming the record, an input error; the same with two reads */
	snprintf(want, sizeof(want), "t.mcpt: record %llu is malformed", (unsigned long long)index);
	for (int i = 0; i < 4; i++) {
		bool html = i & 1, verify = i & 2;

		r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "-f", html ? "html" : "text",
			    verify ? "--pubkey" : "--no-verify", verify ? S.pub : NULL, NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.out, "");
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, want), "%s", r.err);
		ck_assert_ptr_null(strstr(r.err, "allocate"));
		cli_result_free(&r);
	}
}
END_TEST

/* Without a key nothing is verified, but a missing FINAL seal is still an incomplete trace. */
START_TEST(no_final_without_verify)
{
	struct cli_result r;

	synth_begin(&S, "n.mcpt");
	scenario_events(&S);
	ck_assert_int_eq(mcpt_writer_flush(S.w), 0); /* the collector killed: no FINAL seal */
	mcpt_writer__free(S.w);
	S.w = NULL;
	close(S.fd);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert(!strncmp(r.out, "verification: NOT VERIFIED (--no-verify)", 40));
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "n.mcpt: trace incomplete: "), "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "no FINAL seal"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", "--allow-incomplete",
		    NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.err, "");
	cli_result_free(&r);
	/* the same trace complete: --no-verify exits 0 */
	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.err, "");
	cli_result_free(&r);
}
END_TEST

START_TEST(truncated)
{
	struct cli_result r;
	json_t *doc, *fs;

	make_trace(&S, "t.mcpt", scenario_events);
	cut_file(S.path, 7); /* inside the FINAL seal: a torn tail */
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f", "json", NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "trace incomplete"), "%s", r.err);
	doc = json_loads(r.out, 0, NULL); /* the report is still there, verdict on top */
	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(jstr(doc, "trace.verdict"), "VALID_PREFIX");
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 8);
	/* the loopback connect lies before the first seal; the rest after it */
	ck_assert(json_is_false(json_object_get(json_array_get(fs, 0), "unproven")));
	ck_assert(json_is_true(json_object_get(json_array_get(fs, 1), "unproven")));
	json_decref(doc);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--allow-incomplete",
		    NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "[unproven: after the last verified seal]"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL); /* torn: still 3 */
	ck_assert_int_eq(r.code, 3);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "verify", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 5);
	cli_result_free(&r);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
}
END_TEST

/* A trace of the server's one event e (pid, tid and pstart set here), analyzed with the
 * default policy as JSON: the parsed report (r keeps the run). */
static json_t *analyze_one(Mcpt__Event *e, struct cli_result *r)
{
	json_t *doc;

	synth_begin(&S, "t.mcpt");
	e->pid = e->tid = SYNTH_PID;
	e->pstart = SYNTH_PSTART;
	synth_event(&S, e);
	synth_finish(&S);
	*r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f", "json", NULL);
	doc = json_loads(r->out, 0, NULL);
	ck_assert_msg(doc, "%s", r->err);
	return doc;
}

/* A write that lands on a persistence file through a symlink (path in the workspace, opened
 * path ~/.bashrc) is the persistence write it is. */
START_TEST(persistence_through_a_symlink)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 01101, 0644}; /* O_WRONLY | O_CREAT | O_TRUNC */
	struct cli_result r;
	json_t *doc, *f;

	e.op = MCPT__OP__OP_OPENAT;
	e.ret = 3;
	e.path = (ProtobufCBinaryData){9, (uint8_t *)"cache.tmp"};
	e.abs_path = (ProtobufCBinaryData){15, (uint8_t *)"/work/cache.tmp"};
	e.opened_path = (ProtobufCBinaryData){15, (uint8_t *)"/home/u/.bashrc"};
	e.args = args;
	e.n_args = 3;
	doc = analyze_one(&e, &r);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "findings")), 1);
	f = json_array_get(json_object_get(doc, "findings"), 0);
	ck_assert_str_eq(jstr(f, "rule"), "file.persistence-write");
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* A datagram (or a TCP fast open) sent to the metadata address needs no connect: the same
 * critical finding. */
START_TEST(metadata_without_connect)
{
	static const uint8_t sa[16] = {2, 0, 0, 80, 169, 254, 169, 254}; /* AF_INET, port 80 */
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4] = {5, 3, 0x20000000 /* MSG_FASTOPEN */, sizeof(sa)};
	struct cli_result r;
	json_t *doc, *f;

	e.op = MCPT__OP__OP_SENDTO;
	e.ret = 3;
	e.data = (ProtobufCBinaryData){sizeof(sa), (uint8_t *)sa};
	e.args = args;
	e.n_args = 4;
	doc = analyze_one(&e, &r);
	ck_assert_int_ge(json_array_size(json_object_get(doc, "findings")), 1);
	f = json_array_get(json_object_get(doc, "findings"), 0);
	ck_assert_str_eq(jstr(f, "rule"), "net.cloud-metadata");
	ck_assert_str_eq(jstr(f, "message"), "sendto to 169.254.169.254:80");
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

START_TEST(wrong_key)
{
	struct synth other = {0};
	struct cli_result r;

	make_trace(&S, "t.mcpt", benign_events);
	make_trace(&other, "o.mcpt", benign_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", other.pub, NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "WRONG_KEY"), "%s", r.err);
	cli_result_free(&r);
	r = cli_run(NULL, "verify", S.path, "--pubkey", other.pub, NULL);
	ck_assert_int_eq(r.code, 3);
	cli_result_free(&r);
	/* dump with the wrong key: a failed verification too (the Header is not kept) */
	r = cli_run(NULL, "dump", S.path, "--pubkey", other.pub, NULL);
	ck_assert_int_eq(r.code, 3);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "WRONG_KEY"), "%s", r.err);
	cli_result_free(&r);
	synth_cleanup(&other);
}
END_TEST

START_TEST(not_a_trace)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", benign_events);
	/* not a trace is an input error (2), verified or not, and no verification failed */
	for (int verify = 0; verify < 2; verify++) {
		r = cli_run(NULL, "analyze", POLICY, "-p", POLICY,
			    verify ? "--pubkey" : "--no-verify", verify ? S.pub : NULL, NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.out, "");
		ck_assert_str_eq(r.err, "mcpwitness: failed to read trace " POLICY
					": not a trace: wrong magic\n");
		cli_result_free(&r);
	}
	synth_spew(S.path, "", 0);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "t.mcpt: empty file: not a trace"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "verification"));
	cli_result_free(&r);
	/* a stream that ends before its Header: dump says so (exit 2), nothing on stdout */
	synth_spew(S.path, "\x89MCPT\r\n\x1a\x01\x00\x00\x00", 12);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, "t.mcpt: E_HEADER: the stream ends before its Header"), "%s",
		      r.err);
	cli_result_free(&r);
	r = cli_run(NULL, "dump", POLICY, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "verify", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 4);
	cli_result_free(&r);
	/* export too: an input error, not a failed verification */
	r = cli_run(NULL, "export", POLICY, "--dsse", "--pubkey", S.pub, "-o", "-", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "export", POLICY, "--record", "3", "--pubkey", S.pub, "-o", "-", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", "/nonexistent/t.mcpt", "-p", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: failed to open trace /nonexistent/t.mcpt: No such "
				"file or directory\n");
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", "/nonexistent.pub", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "dump", S.dir, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_msg(strstr(r.err, "Is a directory"), "%s", r.err);
	cli_result_free(&r);
}
END_TEST

START_TEST(bad_policy)
{
	char pol[128];
	struct cli_result r;

	make_trace(&S, "t.mcpt", benign_events);
	snprintf(pol, sizeof(pol), "%s/bad.yaml", S.dir);
	synth_spew(pol, "version: 1\nrules:\n- id: x\n  sevrity: high\n", 42);
	r = cli_run(NULL, "analyze", S.path, "-p", pol, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert(strstr(r.err, "/bad.yaml:4:3: unknown rule key \"sevrity\" (did you mean "
				"\"severity\"?)\n"));
	cli_result_free(&r);
	r = cli_run(NULL, "policy", "check", pol, NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "policy", "check", POLICY, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(!strncmp(r.out, "1 file ok:", 10));
	cli_result_free(&r);
}
END_TEST

START_TEST(from_stdin)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(S.path, "analyze", "-", "-p", POLICY, "--pubkey", S.pub, "--fail-on", "high",
		    NULL);
	ck_assert_int_eq(r.code, 1);
	ck_assert_ptr_nonnull(strstr(r.out, "\n8 findings:"));
	cli_result_free(&r);
	r = cli_run(S.path, "dump", "-", "--json", NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
}
END_TEST

/* Every rule of the default policy not in the scenario, and what launching looks like. */
static void more_events(struct synth *s)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t uid[3] = {1000, 1000, 1000}, creat_mode[1] = {0600}, open_flags[2] = {0, 0};
	int64_t uring_connect[2] = {16 /* IORING_OP_CONNECT */, 5};

	e.op = MCPT__OP__OP_SETRESUID; /* the collector dropping privileges before the exec */
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.args = uid, e.n_args = 3;
	synth_event(s, &e);
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/env", "env\0node", 9); /* launch */
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node", 5);	/* launch */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_OPEN; /* legacy open(2): flags first */
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART, e.ret = 3;
	e.path = (ProtobufCBinaryData){24, (uint8_t *)"/home/u/.aws/credentials"};
	e.args = open_flags, e.n_args = 2;
	synth_event(s, &e);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_CREAT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART, e.ret = 4;
	e.path = (ProtobufCBinaryData){28, (uint8_t *)"/home/u/.ssh/authorized_keys"};
	e.args = creat_mode, e.n_args = 1;
	synth_event(s, &e);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, 0, MW_F_TAMPERED);
	/* the docker socket through a relative name: the peer the kernel holds names it */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_CONNECT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.data = (ProtobufCBinaryData){sizeof(sun_rel), (uint8_t *)sun_rel};
	e.data2 = (ProtobufCBinaryData){sizeof(sun_docker), (uint8_t *)sun_docker};
	synth_event(s, &e);
	/* an io_uring connect whose address the collector could not read (its page not mapped
	 * when the request was submitted, on a kernel that copies it only when it runs) */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_IO_URING_SUBMIT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.args = uring_connect, e.n_args = 2;
	e.flags = MW_F_UNCHECKED | MW_F_FAULT;
	synth_event(s, &e);
}

START_TEST(default_rules)
{
	static const char *const want[] = {
		"file.sensitive-read",	  "file.sensitive-write",  "evasion.tampered-argument",
		"net.connect-unexpected", "net.privileged-socket", "evasion.io-uring-unchecked"};
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("m.mcpt", more_events, &r);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 6);
	for (size_t i = 0; i < 6; i++)
		ck_assert_str_eq(jstr(json_array_get(fs, i), "rule"), want[i]);
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* --set overrides the header's variables; several -p files merge; the fixture's shell rule uses
 * launch. */
START_TEST(set_variables)
{
	static const char *fixture = MW_SOURCE_DIR "/test/fixtures/policies/all-forms.yaml";
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", fixture, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(
		strstr(r.out, "[critical] t.secret-read: secret /home/u/.ssh/id_rsa"));
	ck_assert_ptr_nonnull(strstr(r.out, "[high] t.shell: a shell was executed"));
	ck_assert_ptr_nonnull(strstr(r.out, "[medium] t.connect: connection outside loopback"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", fixture, "--pubkey", S.pub, "--set",
		    "home=/else", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "secret /home/u/.ssh/id_rsa"));
	ck_assert_ptr_nonnull(strstr(r.out, "secret /home/u/.aws/credentials"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "-p",
		    MW_SOURCE_DIR "/test/fixtures/policies/site-example.yaml", "--pubkey", S.pub,
		    "-f", "json", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "net.connect-loopback")); /* disabled by the site */
	ck_assert_ptr_nonnull(strstr(r.out, "site-example.yaml"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--set", "bad-name=1", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
}
END_TEST

/* --- dump, entry records, keygen ------------------------------------------------------------ */

START_TEST(dump_text_and_json)
{
	struct cli_result r;
	char *line, *save = NULL;
	int n = 0;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(
		!strncmp(r.out, "0 header trace=0f1e2d3c4b5a69788796a5b4c3d2e1f0 format=1.0 ", 58));
	ck_assert_ptr_nonnull(strstr(r.out, "\n  target pid=100 uid=1000 gid=1000 user=\"u\" "
					    "home=\"/home/u\" cwd=\"/work\""));
	ck_assert_ptr_nonnull(strstr(r.out, " 102/102 openat ret=3 path=\".ssh/id_rsa\" "
					    "abs=\"/home/u/.ssh/id_rsa\""));
	ck_assert_ptr_nonnull(strstr(r.out, " 101/101 exec path=\"/bin/sh\" argv=[\"sh\" \"-c\" "
					    "\"cat .ssh/id_rsa\"]"));
	ck_assert_ptr_nonnull(strstr(r.out, " 101/101 connect ret=-111 ECONNREFUSED fd=5 "
					    "addr=169.254.169.254:80"));
	ck_assert_ptr_nonnull(strstr(r.out, " seal #1 records="));
	ck_assert_ptr_nonnull(strstr(r.out, " final end=END_CLEAN"));
	cli_result_free(&r);

	r = cli_run(NULL, "dump", S.path, "--json", "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_msg(o, "not JSON: %s", line);
		ck_assert_int_eq(json_integer_value(json_object_get(o, "index")), n++);
		json_decref(o);
	}
	ck_assert_int_eq(n, 25); /* the header, 22 events, 2 seals */
	cli_result_free(&r);
}
END_TEST

static void entry_events(struct synth *s)
{
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, 0, MW_F_ENTRY);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, -110, 0); /* its completion */
	synth_connect(s, 7, 70, sa_metadata, 16, 0, MW_F_ENTRY);	/* never completes */
	synth_exit(s, SYNTH_PID, SYNTH_PSTART, 0);
}

START_TEST(entry_records)
{
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("e.mcpt", entry_events, &r);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 2);
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "rule"), "net.connect-unexpected");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "evidence.errno"), "ETIMEDOUT");
	ck_assert_str_eq(jstr(json_array_get(fs, 1), "rule"), "net.cloud-metadata");
	ck_assert_str_eq(jstr(json_array_get(fs, 1), "evidence.result"), "pending");
	/* pid 7 never forked from the server: its lineage cannot reach it */
	ck_assert(json_is_false(json_object_get(json_object_get(json_array_get(fs, 1), "process"),
						"lineage_complete")));
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* An attached server's child made a syscall of the x32 ABI (a foreign_abi record, made at
 * entry by the collector's foreign-ABI recorder): dump shows no result, the default policy
 * reports it high with its name, calls lists it. */
static void foreign_abi_events(struct synth *s)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {39, MW_ABI_X32};

	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	e.op = MCPT__OP__OP_FOREIGN_ABI;
	e.pid = e.tid = 101;
	e.pstart = 2000;
	e.args = args;
	e.n_args = 2;
	synth_event(s, &e);
	synth_exit(s, 101, 2000, 0);
}

START_TEST(foreign_abi_record)
{
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("f.mcpt", foreign_abi_events, &r);
	cli_result_free(&r);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, " 101/101 foreign_abi args=39,2 seq="), "%s", r.out);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 1);
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "rule"), "evasion.foreign-abi");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "severity"), "high");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "message"),
			 "syscall 39 (getpid) of the x32 ABI, not recorded");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "evidence.result"), "pending");
	json_decref(doc);
	cli_result_free(&r);

	r = cli_run(NULL, "calls", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "    foreign_abi: syscall 39 (getpid) of the x32 ABI, not "
				    "recorded [bucket] pid 101 record "),
		      "%s", r.out);
	cli_result_free(&r);
}
END_TEST

START_TEST(keygen)
{
	struct cli_result r;
	char dir[64] = "/tmp/mw-keygen-XXXXXX", sub[96], cmd[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/keys", dir);
	r = cli_run(NULL, "keygen", "-o", sub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(strlen(r.out), 17);
	ck_assert_uint_eq(strspn(r.out, "0123456789abcdef"), 16);
	cli_result_free(&r);
	r = cli_run(NULL, "keygen", "-o", sub, NULL); /* never overwrites */
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "keygen", NULL);
	ck_assert_int_eq(r.code, 2);
	cli_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* An option that takes a value, given twice, is refused: the second would silently replace
 * the first (a second --fail-on loosening a gate). Short and long forms are one option; the
 * options that add (-p, --set) may repeat. (The global -q with -v: check_cli_io.) */
START_TEST(repeated_options)
{
	static const char *const twice[][8] = {
		{"analyze", "t.mcpt", "--fail-on", "high", "--fail-on", "critical", NULL},
		{"analyze", "t.mcpt", "-k", "a", "--pubkey=b", NULL},
		{"analyze", "t.mcpt", "-fjson", "--format", "text", NULL},
		{"export", "t.mcpt", "--record", "3", "--record=5", NULL},
		{"policy", "learn", "t.mcpt", "-o", "a", "-o", "b", NULL},
	};
	static const char *const name[] = {"--fail-on", "--pubkey", "--format", "--record",
					   "--output"};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(twice) / sizeof(twice[0]); i++) {
		const char *const *a = twice[i];
		char want[96];

		r = cli_run(NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
		ck_assert_int_eq(r.code, 2);
		ck_assert_int_eq(cli_lines(r.err), 1);
		snprintf(want, sizeof(want), ": option %s given twice (give it once); see",
			 name[i]);
		ck_assert_msg(strstr(r.err, want), "%s", r.err);
		cli_result_free(&r);
	}
	for (int calls = 0; calls < 2; calls++) { /* a key given, and not used: refused too */
		r = cli_run(NULL, calls ? "calls" : "analyze", "t.mcpt", "--no-verify", "-k", "a",
			    NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, ": --no-verify and --pubkey together: give one"), "%s",
			      r.err);
		cli_result_free(&r);
	}
	r = cli_run(NULL, "policy", "check", "--set", "a=1", "--set", "b=2", POLICY, NULL);
	ck_assert_msg(r.code == 0, "%s", r.err);
	cli_result_free(&r);
}
END_TEST

START_TEST(usage_errors)
{
	struct cli_result r;

	r = cli_run(NULL, "analyze", "a", "b", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: analyze: more than one TRACE; see 'mcpwitness "
				"analyze --help'\n");
	cli_result_free(&r);
	r = cli_run(NULL, "dump", "--format", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: dump: unknown option --format; see 'mcpwitness dump "
				"--help'\n");
	cli_result_free(&r);
	r = cli_run(NULL, "verify", "x", "--pubkey", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: verify: option --pubkey needs a value; see "
				"'mcpwitness verify --help'\n");
	cli_result_free(&r);
	r = cli_run(NULL, "policy", "lint", NULL);
	ck_assert_int_eq(r.code, 2);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", "--help", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(!strncmp(r.out, "usage: mcpwitness analyze", 25));
	cli_result_free(&r);
	/* strtoul would take "-1" and a number past 2^64 as "unlimited" */
	static const char *const bad_max[] = {"-1", "99999999999999999999", "0", " 5", "+5", "5x",
					      ""};

	for (size_t i = 0; i < sizeof(bad_max) / sizeof(bad_max[0]); i++) {
		char want[128];

		r = cli_run(NULL, "analyze", "t.mcpt", "--max-per-rule", bad_max[i], NULL);
		ck_assert_int_eq(r.code, 2);
		snprintf(want, sizeof(want), "bad --max-per-rule \"%s\" (a number from 1)",
			 bad_max[i]);
		ck_assert_msg(strstr(r.err, want), "%s", r.err);
		ck_assert_int_eq(cli_lines(r.err), 1);
		cli_result_free(&r);
	}
}
END_TEST

Suite *analyze_suite(void);

Suite *analyze_suite(void)
{
	Suite *s = suite_create("analyze");
	TCase *fnd = tcase_create("findings"), *bad = tcase_create("errors"),
	      *oth = tcase_create("other");

	tcase_add_checked_fixture(fnd, NULL, teardown);
	tcase_add_checked_fixture(bad, NULL, teardown);
	tcase_add_checked_fixture(oth, NULL, teardown);
	tcase_add_test(fnd, scenario_findings_json);
	tcase_add_test(fnd, scenario_text);
	tcase_add_test(fnd, benign_is_quiet);
	tcase_add_test(fnd, deterministic);
	tcase_add_test(fnd, fail_on);
	tcase_add_test(fnd, entry_records);
	tcase_add_test(fnd, foreign_abi_record);
	tcase_add_test(fnd, default_rules);
	tcase_add_test(fnd, set_variables);
	tcase_add_test(bad, tampered);
	tcase_add_test(bad, truncated);
	tcase_add_test(bad, before_header_and_trailing);
	tcase_add_test(bad, wrong_key);
	tcase_add_test(bad, not_a_trace);
	tcase_add_test(bad, persistence_through_a_symlink);
	tcase_add_test(bad, metadata_without_connect);
	tcase_add_test(bad, malformed_event);
	tcase_add_test(bad, no_final_without_verify);
	tcase_add_test(bad, bad_policy);
	tcase_add_test(bad, usage_errors);
	tcase_add_test(bad, repeated_options);
	tcase_add_test(oth, from_stdin);
	tcase_add_test(oth, dump_text_and_json);
	tcase_add_test(oth, keygen);
	suite_add_tcase(s, fnd);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, oth);
	return s;
}
