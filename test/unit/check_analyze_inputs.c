/*
 * check_analyze_inputs.c - the analyzer's commands on inputs they must refuse, each with a
 * one-line error and the documented exit code, and nothing passed off as a report: a tampered,
 * truncated or wrongly keyed trace, bytes before the Header or after the FINAL seal, a
 * malformed Event in a trace that verifies, a trace without its FINAL seal read with
 * --no-verify, not a trace at all, a broken policy, usage errors, an option given twice and
 * option errors named as typed.
 * The traces are analyze_fixture.c's.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze_fixture.h"
#include "writer_int.h" /* mcpt_writer_flush: a trace cut before its FINAL seal */

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

/* Bytes after the FINAL seal are an input error (2) only where the seals are not verified
 * (--no-verify, dump without --pubkey); verified, the trace is INVALID (3), as verify says. */
static void expect_trailing(const char *path, const char *pub)
{
	static const char *const runs[][7] = {
		{"2", "analyze", "-p", POLICY, "--no-verify", NULL},
		{"3", "analyze", "-p", POLICY, "-k", "PUB", NULL},
		{"2", "calls", "--no-verify", NULL},
		{"3", "calls", "-k", "PUB", NULL},
		{"2", "dump", NULL},
		{"3", "dump", "-k", "PUB", NULL},
	};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const char *a[5] = {NULL};

		for (int j = 0; j < 5 && runs[i][j + 2]; j++)
			a[j] = strcmp(runs[i][j + 2], "PUB") ? runs[i][j + 2] : pub;
		r = cli_run(NULL, runs[i][1], path, a[0], a[1], a[2], a[3], a[4], NULL);
		ck_assert_msg(r.code == atoi(runs[i][0]), "%s: exit %d: %s", runs[i][1], r.code,
			      r.err);
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, r.code == 3 ? ": INVALID: " : ": E_TRAILING: "), "%s",
			      r.err);
		if (strcmp(runs[i][1], "dump"))
			ck_assert_str_eq(r.out, "");
		cli_result_free(&r);
	}
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
	expect_trailing(S.path, S.pub);
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
	ck_assert_ptr_nonnull(strstr(r.out, "\ncoverage: INCOMPLETE: the trace ends before its "
					    "FINAL seal; what followed is missing\n"));
	cli_result_free(&r);
	/* the same trace complete: --no-verify exits 0 */
	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_ptr_nonnull(strstr(r.out, "\ncoverage: complete (no events lost)\n"));
	cli_result_free(&r);
}
END_TEST

#define TORN                                                                                       \
	"the trace is torn before its FINAL seal (it ends inside a record); what followed is "     \
	"missing"

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
	/* what followed the cut was never read: the coverage cannot be complete */
	ck_assert(json_is_false(json_object_get(json_object_get(doc, "coverage"), "complete")));
	ck_assert_str_eq(jstr(doc, "coverage.trace_incomplete"), TORN);
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
	ck_assert_ptr_nonnull(strstr(r.out, "\ncoverage: INCOMPLETE: " TORN "\n"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--allow-incomplete",
		    "-f", "sarif", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"text\": \"" TORN "\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"complete\": false"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--allow-incomplete",
		    "-f", "html", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "coverage: INCOMPLETE: " TORN "</p>"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--no-verify", NULL); /* torn: still 3 */
	ck_assert_int_eq(r.code, 3);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.out, "\ncoverage: INCOMPLETE: " TORN "\n"));
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

/* Each option error names what the user typed: a long option by its name whatever getopt_long
 * left in optopt (its val), a short one by its letter, a control byte escaped. */
START_TEST(option_errors)
{
	static const char *const bad[][6] = {
		{"calls", "x", "--help=1", NULL, NULL, "option --help takes no value"},
		{"analyze", "x", "--no-verify=1", NULL, NULL, "option --no-verify takes no value"},
		{"verify", "x", "--json=yes", NULL, NULL, "option --json takes no value"},
		{"verify", "x", "--js=yes", NULL, NULL, "option --json takes no value"},
		{"analyze", "x", "--allow", NULL, NULL,
		 "ambiguous option --allow (--allow-incomplete, --allow-unsigned)"},
		{"dump", "--format", "x", NULL, NULL, "unknown option --format"},
		{"dump", "x", "--zz=1", NULL, NULL, "unknown option --zz"},
		{"dump", "x", "--pub", NULL, NULL, "option --pubkey needs a value"},
		{"analyze", "x", "-Zp", "p.yaml", NULL, "unknown option -Z"},
		{"analyze", "x", "-k", "--allow", "-Zp", "unknown option -Z"},
		{"verify", "x", "--json", "-Zj", NULL, "unknown option -Z"},
		{"analyze", "x", "--no-verify", "-Z", NULL, "unknown option -Z"},
		{"analyze", "x", "--pubkey=k", "-p", NULL, "option -p needs a value"},
		{"analyze", "x", "-\x02", NULL, NULL, "unknown option -\\x02"},
		{"analyze", "x", "--\x1b[1m", NULL, NULL, "unknown option --\\x1b[1m"},
		/* --json has no short form: -j is no more accepted than documented */
		{"dump", "x", "-j", NULL, NULL, "unknown option -j"},
		{"calls", "-j", "x", NULL, NULL, "unknown option -j"},
	};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const *a = bad[i];
		char want[160];

		r = cli_run(NULL, a[0], a[1], a[2], a[3], a[4], NULL);
		snprintf(want, sizeof(want), "mcpwitness: %s: %s; see 'mcpwitness %s --help'\n",
			 a[0], a[5], a[0]);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(r.out, "");
		cli_result_free(&r);
	}
}
END_TEST

Suite *analyze_inputs_suite(void);

Suite *analyze_inputs_suite(void)
{
	Suite *s = suite_create("analyze_inputs");
	TCase *bad = tcase_create("errors");

	tcase_add_checked_fixture(bad, NULL, analyze_teardown);
	tcase_add_test(bad, tampered);
	tcase_add_test(bad, truncated);
	tcase_add_test(bad, before_header_and_trailing);
	tcase_add_test(bad, wrong_key);
	tcase_add_test(bad, not_a_trace);
	tcase_add_test(bad, malformed_event);
	tcase_add_test(bad, no_final_without_verify);
	tcase_add_test(bad, bad_policy);
	tcase_add_test(bad, usage_errors);
	tcase_add_test(bad, repeated_options);
	tcase_add_test(bad, option_errors);
	suite_add_tcase(s, bad);
	return s;
}
