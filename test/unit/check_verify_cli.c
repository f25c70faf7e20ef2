/*
 * check_verify_cli.c - verify, export and analyze as a user runs them (the do_<verb> functions
 * of the binary), on signed traces from the forge and from synth_trace:
 *   hostile:  a hostname, collector name or signer alg made of terminal escapes and newlines
 *             reaches neither stdout nor stderr raw, in text or JSON; errors stay one line;
 *   warnings: W_LOSS, W_UNKNOWN_TYPE, W_CLOCK_STEP, W_SEAL_GAP and W_SEAL_FLOOD of one trace
 *             are all shown by verify, as text and in --json;
 *   evidence: export --record / --dsse and verify of the excerpt and of the envelope, with
 *             each refusal a one-line error and its exit code (overwrite, Header, seal,
 *             unsealed record, wrong key, another trace's envelope, an envelope given with an
 *             excerpt, an envelope that is a directory);
 *   live:     --progress reports every seal; analyze --verify-before-release from stdin
 *             analyzes only records whose seal verified and says how many it held back;
 *   verdict:  every report format of analyze states the verdict (report_format_names).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "cli_run.h"
#include "synth_trace.h"
#include "trace_testlib.h"

#define POLICY	MW_SOURCE_DIR "/policies/default.yaml"
#define HOSTILE "\x1b]0;owned\x07\x1b[2J\x1b[31mVALID_COMPLETE\nforged line\r\x9b"

Suite *verify_cli_suite(void);

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/mw-vcli-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* dir/name, in one of 16 rotating buffers (enough for one command line). */
static const char *at(const char *name)
{
	static char paths[16][128];
	static int next;
	char *p = paths[next++ % 16];

	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

/* The test key's public half (seed 0x01 x 32) as a minisign-format file: dir/test.pub. */
static const char *test_pub(void)
{
	struct mcpt_pubkey key;
	uint8_t blob[42];
	char b64[64], text[160];
	int n;

	tl_pubkey(1, &key);
	memcpy(blob, "Ed", 2);
	memcpy(blob + 2, key.key_id, 8);
	memcpy(blob + 10, key.pk, 32);
	sodium_bin2base64(b64, sizeof(b64), blob, sizeof(blob), sodium_base64_VARIANT_ORIGINAL);
	static char path[128];

	n = snprintf(text, sizeof(text), "untrusted comment: test key\n%s\n", b64);
	snprintf(path, sizeof(path), "%s/test.pub", dir);
	synth_spew(path, text, (size_t)n);
	return path;
}

static const char *forge_file(struct forge *f, const char *name)
{
	const char *p = at(name);

	synth_spew(p, f->out.p, f->out.len);
	forge_fini(f);
	return p;
}

/* ---- hostile text ---- */

static void hx_host(Mcpt__Header *h, void *ctx)
{
	static Mcpt__Collector c = MCPT__COLLECTOR__INIT;

	(void)ctx;
	h->host->hostname = (ProtobufCBinaryData){strlen(HOSTILE), (uint8_t *)HOSTILE};
	c.name = (char *)HOSTILE;
	c.version = (char *)"1\n2";
	h->collector = &c;
}

static void hx_alg(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->signer->alg = (char *)HOSTILE;
}

static void expect_clean(const struct cli_result *r)
{
	ck_assert_msg(cli_printable(r->out), "stdout: %s", r->out);
	ck_assert_msg(cli_printable(r->err), "stderr: %s", r->err);
	ck_assert_ptr_null(strstr(r->out, "\nforged"));
	ck_assert_ptr_null(strstr(r->err, "\nforged"));
	ck_assert_int_le(cli_lines(r->err), 1);
}

START_TEST(test_hostile_text)
{
	const char *pub = test_pub(), *t;
	struct cli_result r;
	struct forge f;

	forge_init(&f, 1, 0, hx_host, NULL);
	forge_event(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	t = forge_file(&f, "host.mcpt");
	r = cli_run(NULL, "verify", t, "--pubkey", pub, NULL);
	ck_assert_int_eq(r.code, 0);
	expect_clean(&r);
	ck_assert_msg(strstr(r.out, "  host     \"\\x1b]0;owned\\x07"), "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\\nforged line\\r\\x9b\""));
	ck_assert_ptr_nonnull(strstr(r.out, "collector \"\\x1b]0;owned"));
	cli_result_free(&r);
	r = cli_run(NULL, "dump", t, NULL);
	expect_clean(&r);
	cli_result_free(&r);
	r = cli_run(NULL, "export", t, "--record", "1", "-o", at("host.mcpx"), "--pubkey", pub,
		    NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
	for (int json = 0; json < 2; json++) {
		r = cli_run(NULL, "verify", at("host.mcpx"), "--pubkey", pub,
			    json ? "--json" : NULL, NULL);
		ck_assert_int_eq(r.code, 0);
		expect_clean(&r);
		ck_assert_ptr_nonnull(strstr(r.out, "\\x1b]0;owned"));
		cli_result_free(&r);
	}
	forge_init(&f, 1, 0, hx_alg, NULL);
	forge_seal(&f, MCPT_SEAL_FINAL);
	t = forge_file(&f, "alg.mcpt");
	for (int json = 0; json < 2; json++) {
		r = cli_run(NULL, "verify", t, "--pubkey", pub, json ? "--json" : NULL, NULL);
		ck_assert_int_eq(r.code, 1); /* an unknown signer: E_HEADER */
		expect_clean(&r);
		ck_assert_int_eq(cli_lines(r.err), 1);
		ck_assert_ptr_nonnull(strstr(r.err, "alg \"\\x1b]0;owned\\x07\\x1b[2J"));
		if (json) {
			json_t *doc = json_loads(r.out, 0, NULL);

			ck_assert_ptr_nonnull(doc);
			json_decref(doc);
		}
		cli_result_free(&r);
	}
	r = cli_run(NULL, "analyze", t, "--pubkey", pub, "-p", POLICY, NULL);
	ck_assert_int_eq(r.code, 3);
	expect_clean(&r);
	cli_result_free(&r);
}
END_TEST

/* ---- warnings ---- */

static void sx_step(Mcpt__SealStatement *st, void *ctx)
{
	(void)ctx;
	st->clock->realtime_ns += 30000000000ull; /* the wall clock jumps 30 s */
}

START_TEST(test_warnings_shown)
{
	static const char *const codes[] = {"W_LOSS", "W_UNKNOWN_TYPE", "W_CLOCK_STEP",
					    "W_SEAL_GAP", "W_SEAL_FLOOD"};
	const char *pub = test_pub(), *t;
	struct cli_result r;
	struct forge f;
	json_t *doc, *ws;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_record(&f, 1500, (const uint8_t *)"\x08\x01", 2); /* a vendor type */
	f.loss.perf_lost = 7;
	forge_seal(&f, 0);
	forge_event(&f, 1);
	forge_seal_ex(&f, 0, sx_step, NULL, NULL, 64);
	f.now += 25000000000ull; /* 25 s without a seal: heartbeat 10 s + 5 s skew */
	forge_event(&f, 2);
	forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_HEARTBEAT); /* 1 ms later and empty: a flood of one */
	forge_seal(&f, MCPT_SEAL_FINAL);
	t = forge_file(&f, "warn.mcpt");
	r = cli_run(NULL, "verify", t, "--pubkey", pub, NULL);
	ck_assert_int_eq(r.code, 0);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		char needle[40];

		snprintf(needle, sizeof(needle), "  warning %s: ", codes[i]);
		ck_assert_msg(strstr(r.out, needle), "%s missing:\n%s", codes[i], r.out);
	}
	cli_result_free(&r);
	r = cli_run(NULL, "verify", t, "--pubkey", pub, "--json", NULL);
	ck_assert_int_eq(r.code, 0);
	doc = json_loads(r.out, 0, NULL);
	ws = json_object_get(doc, "warnings");
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < json_array_size(ws); j++)
			found |= !strcmp(
				json_string_value(json_object_get(json_array_get(ws, j), "code")),
				codes[i]);
		ck_assert_msg(found, "%s not in %s", codes[i], r.out);
	}
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* ---- evidence ---- */

static struct synth S;

static void some_events(struct synth *s)
{
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/etc/passwd", NULL, 0, 3);
	ck_assert_int_eq(mcpt_writer__seal(s->w, 0), 0);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/home/u/.ssh/id_rsa", NULL, 0, 3);
	synth_exit(s, SYNTH_PID, SYNTH_PSTART, 0);
}

static void synth_trace(const char *name)
{
	synth_begin(&S, name);
	some_events(&S);
	synth_finish(&S);
}

static void expect_fail(struct cli_result r, int code, const char *needle)
{
	ck_assert_msg(r.code == code, "exit %d, want %d: %s", r.code, code, r.err);
	ck_assert_int_eq(cli_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, needle), "\"%s\" not in %s", needle, r.err);
	cli_result_free(&r);
}

START_TEST(test_export_and_verify)
{
	struct cli_result r;
	char other[96];

	synth_trace("t.mcpt");
	r = cli_run(NULL, "export", S.path, "--record", "4", "-o", at("r4.mcpx"), "--pubkey", S.pub,
		    NULL);
	ck_assert_msg(r.code == 0 && !r.out[0], "%d %s", r.code, r.err);
	cli_result_free(&r);
	r = cli_run(NULL, "verify", at("r4.mcpx"), "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(!strncmp(r.out, "PROVEN: record 4 (type 2) is in seal 1", 38), "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "openat"));
	ck_assert_ptr_nonnull(strstr(r.out, "/home/u/.ssh/id_rsa"));
	cli_result_free(&r);
	r = cli_run(NULL, "verify", at("r4.mcpx"), "--pubkey", S.pub, "--json", NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "\"kind\":\"excerpt\",\"verdict\":\"PROVEN\""));
	cli_result_free(&r);
	expect_fail(cli_run(NULL, "export", S.path, "--record", "4", "-o", at("r4.mcpx"),
			    "--pubkey", S.pub, NULL),
		    2, "refusing to overwrite");
	expect_fail(cli_run(NULL, "export", S.path, "--record", "0", "-o", at("r0.mcpx"),
			    "--pubkey", S.pub, NULL),
		    2, "record 0 is the Header");
	expect_fail(cli_run(NULL, "export", S.path, "--record", "3", "-o", at("r3.mcpx"),
			    "--pubkey", S.pub, NULL),
		    2, "record 3 is a seal");
	expect_fail(cli_run(NULL, "export", S.path, "--record", "99", "-o", at("r99.mcpx"),
			    "--pubkey", S.pub, NULL),
		    2, "no record 99");
	expect_fail(cli_run(NULL, "export", S.path, "--record", "4", "--pubkey", S.pub, NULL), 2,
		    "--record needs -o FILE");
	expect_fail(cli_run(NULL, "export", S.path, "--record", "x4", "-o", at("x"), NULL), 2,
		    "bad record number");
	expect_fail(cli_run(NULL, "verify", at("r4.mcpx"), "--pubkey", test_pub(), NULL), 3,
		    "r4.mcpx: WRONG_KEY");
	snprintf(other, sizeof(other), "%s", S.path);
	synth_begin(&S, "nofinal.mcpt"); /* a trace whose last records no seal covers */
	some_events(&S);
	ck_assert_int_eq(mcpt_writer_flush(S.w), 0);
	mcpt_writer__free(S.w);
	close(S.fd);
	S.w = NULL;
	expect_fail(cli_run(NULL, "export", S.path, "--record", "5", "-o", at("r5.mcpx"),
			    "--pubkey", S.pub, NULL),
		    3, "after the last seal");
	expect_fail(cli_run(NULL, "export", S.path, "--dsse", "--pubkey", S.pub, NULL), 3,
		    "VALID_PREFIX");
	r = cli_run(NULL, "export", other, "--dsse", "-o", at("env.json"), "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
	r = cli_run(NULL, "verify", other, "--pubkey", S.pub, "--envelope", at("env.json"), NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "the FINAL seal of this trace, signature verified"));
	cli_result_free(&r);
	expect_fail(cli_run(NULL, "verify", S.path, "--pubkey", S.pub, "--envelope", at("env.json"),
			    NULL),
		    1, "no FINAL seal to match the envelope");
	expect_fail(cli_run(NULL, "verify", other, "--pubkey", test_pub(), "--envelope",
			    at("env.json"), NULL),
		    1, "no signature in the envelope verifies");
	/* an excerpt carries its record's seal, not the FINAL one: the envelope is refused, not
	 * passed unchecked (exit 0 before) */
	expect_fail(cli_run(NULL, "verify", at("r4.mcpx"), "--pubkey", S.pub, "--envelope",
			    at("env.json"), NULL),
		    2, "r4.mcpx is an excerpt: --envelope checks a whole trace's FINAL seal");
	expect_fail(cli_run(NULL, "verify", other, "--pubkey", S.pub, "--envelope", dir, NULL), 2,
		    "failed to open envelope /tmp/mw-vcli-");
	r = cli_run(NULL, "verify", other, "--pubkey", S.pub, "--envelope", dir, NULL);
	ck_assert_msg(strstr(r.err, ": Is a directory\n"), "%s", r.err);
	cli_result_free(&r);
	/* export's codes are verify's: a trace cut in its preamble is torn (3) wherever the cut
	 * falls; an unknown major version is an input error (2), for both forms */
	{
		size_t len;
		char *buf = synth_slurp(other, &len);

		for (size_t cut = 1; cut <= 8; cut += 7) {
			synth_spew(at("cut.mcpt"), buf, cut);
			expect_fail(cli_run(NULL, "export", at("cut.mcpt"), "--record", "1", "-o",
					    at("cut.mcpx"), "--pubkey", S.pub, NULL),
				    3, "truncated inside the preamble");
			expect_fail(cli_run(NULL, "export", at("cut.mcpt"), "--dsse", "-o",
					    at("cut.json"), "--pubkey", S.pub, NULL),
				    3, "the stream ends before its Header");
		}
		buf[9] ^= 1; /* major version 257 */
		synth_spew(at("v257.mcpt"), buf, len);
		expect_fail(cli_run(NULL, "export", at("v257.mcpt"), "--record", "1", "-o",
				    at("v257.mcpx"), "--pubkey", S.pub, NULL),
			    2, "major version 257 is not supported");
		expect_fail(cli_run(NULL, "export", at("v257.mcpt"), "--dsse", "-o",
				    at("v257.json"), "--pubkey", S.pub, NULL),
			    2, "major version 257 is not supported");
		free(buf);
	}
	synth_spew(at("bad.json"), "{\"payloadType\":", 15);
	expect_fail(cli_run(NULL, "verify", other, "--pubkey", S.pub, "--envelope", at("bad.json"),
			    NULL),
		    2, "bad.json: not a JSON object");
}
END_TEST

/* ---- live ---- */

START_TEST(test_progress_and_release)
{
	struct cli_result r;
	json_t *doc;
	char cut[128];
	size_t len;
	char *buf;

	synth_trace("t.mcpt");
	r = cli_run(S.path, "verify", "-", "--pubkey", S.pub, "--progress", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "-: seal 0 verified: records through 3 proven"));
	ck_assert_ptr_nonnull(strstr(r.err, "-: seal 1 verified: records through 6 proven"));
	ck_assert_int_eq(cli_lines(r.err), 2);
	cli_result_free(&r);
	/* torn inside the FINAL seal: records 4 and 5 are provisional, and the sensitive read is
	 * record 4; without holding it is a finding marked unproven, held back it is no finding */
	buf = synth_slurp(S.path, &len);
	snprintf(cut, sizeof(cut), "%s", at("cut.mcpt"));
	synth_spew(cut, buf, len - 5);
	free(buf);
	r = cli_run(cut, "analyze", "-", "--pubkey", S.pub, "-p", POLICY, "--allow-incomplete",
		    "-f", "json", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"unproven\": true"));
	ck_assert_ptr_nonnull(strstr(r.out, "id_rsa"));
	cli_result_free(&r);
	r = cli_run(cut, "analyze", "-", "--pubkey", S.pub, "-p", POLICY, "--allow-incomplete",
		    "--verify-before-release", "-f", "json", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "id_rsa"));
	doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert(json_is_true(
		json_object_get(json_object_get(doc, "trace"), "verify_before_release")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "trace"),
							    "records_not_released")),
			 2);
	json_decref(doc);
	cli_result_free(&r);
	r = cli_run(cut, "analyze", "-", "--pubkey", S.pub, "-p", POLICY, "--allow-incomplete",
		    "--verify-before-release", NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "(--verify-before-release); 2 not released"));
	cli_result_free(&r);
	expect_fail(cli_run(NULL, "analyze", S.path, "--no-verify", "--verify-before-release", "-p",
			    POLICY, NULL),
		    2, "--verify-before-release needs verification");
}
END_TEST

/* ---- the verdict in every report format ---- */

START_TEST(test_verdict_every_format)
{
	char cut[128];
	size_t len;
	char *buf;

	synth_trace("t.mcpt");
	buf = synth_slurp(S.path, &len);
	snprintf(cut, sizeof(cut), "%s", at("cut.mcpt"));
	synth_spew(cut, buf, len - 5);
	free(buf);
	for (int f = 0; f < FORMAT_COUNT; f++) {
		const char *name = report_format_names[f];
		struct cli_result r;

		ck_assert_ptr_nonnull(name);
		r = cli_run(NULL, "analyze", S.path, "--pubkey", S.pub, "-p", POLICY, "-f", name,
			    NULL);
		ck_assert_int_eq(r.code, 0);
		ck_assert_msg(strstr(r.out, "VALID_COMPLETE") &&
				      strstr(r.out, "all 7 records verified (2 seals)"),
			      "format %s: %s", name, r.out);
		cli_result_free(&r);
		r = cli_run(NULL, "analyze", cut, "--pubkey", S.pub, "-p", POLICY, "-f", name,
			    "--allow-incomplete", NULL);
		ck_assert_msg(strstr(r.out, "VALID_PREFIX") &&
				      strstr(r.out, "verified through record 3"),
			      "format %s: %s", name, r.out);
		cli_result_free(&r);
		r = cli_run(NULL, "analyze", cut, "-p", POLICY, "-f", name, "--no-verify",
			    "--allow-incomplete", NULL);
		ck_assert_msg(strstr(r.out, "NOT VERIFIED (--no-verify)"), "format %s: %s", name,
			      r.out);
		cli_result_free(&r);
	}
}
END_TEST

static void synth_teardown(void)
{
	synth_cleanup(&S);
	teardown();
}

Suite *verify_cli_suite(void)
{
	Suite *s = suite_create("verify_cli");
	TCase *tc = tcase_create("verify");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_hostile_text);
	tcase_add_test(tc, test_warnings_shown);
	suite_add_tcase(s, tc);
	tc = tcase_create("evidence");
	tcase_add_checked_fixture(tc, setup, synth_teardown);
	tcase_add_test(tc, test_export_and_verify);
	tcase_add_test(tc, test_progress_and_release);
	tcase_add_test(tc, test_verdict_every_format);
	suite_add_tcase(s, tc);
	return s;
}
