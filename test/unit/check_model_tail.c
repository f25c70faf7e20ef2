/*
 * check_model_tail.c - records after a trace's last seal cannot move the attribution of sealed
 * findings (passes.c, pass_model's verified_only; analyze.c and calls): a forged request
 * appended after the last seal, stamped inside a sealed call, left the sealed finding
 * "ambiguous" between the genuine call and the forged one, and not marked unproven.
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "internal.h"
#include "synth_trace.h"

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"

static struct synth S;

static const char req1[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
			   "\"params\":{\"name\":\"write_file\",\"arguments\":{}}}\n";
static const char resp1[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n";
static const char req2[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
			   "\"params\":{\"name\":\"forged\",\"arguments\":{}}}\n";

/* The offset of the last frame of the file at path (its FINAL seal). */
static off_t last_frame(const char *path)
{
	size_t len, at = MCPT_PREAMBLE_LEN, last = 0, used;
	char *b = synth_slurp(path, &len);
	uint32_t L;

	while (at < len) {
		ck_assert_int_eq(mcpt_uvarint_get((const uint8_t *)b + at, len - at, &L, &used), 0);
		last = at;
		at += used + L;
	}
	ck_assert_uint_eq(at, len);
	free(b);
	return (off_t)last;
}

/* A sealed call 1 (write_file) that writes /etc/cron.d/x, then after the seal a request 2
 * stamped inside call 1, and no FINAL seal: what a forger appends to a trace cut at a seal. */
static void forged_tail_trace(void)
{
	synth_begin(&S, "t.mcpt");
	synth_stdio(&S, 1, 0, req1, 1000000);
	synth_at(&S, 3000000);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/etc/cron.d/x", "/etc/cron.d/x",
		   O_WRONLY | O_CREAT, 3);
	synth_stdio(&S, 0, 0, resp1, 5000000);
	ck_assert_int_eq(mcpt_writer__seal(S.w, 0), 0);
	synth_stdio(&S, 1, sizeof(req1) - 1, req2, 2000000);
	synth_finish(&S);
	ck_assert_int_eq(truncate(S.path, last_frame(S.path)), 0);
}

static json_t *finding(json_t *doc, const char *rule)
{
	json_t *fs = json_object_get(doc, "findings"), *f;
	size_t i;

	json_array_foreach(fs, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "rule")), rule))
			return f;
	return NULL;
}

START_TEST(forged_tail_moves_no_sealed_attribution)
{
	/* one read (no rule of the default policy reads a call: it starts over in two when its
	 * model took a record after the last seal), and two with segments held back */
	const char *const modes[] = {NULL, "--verify-before-release"};
	struct cli_result r;
	json_error_t je;

	forged_tail_trace();
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		json_t *doc, *f, *a;

		r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--format",
			    "json", "--allow-incomplete", modes[m], NULL);
		ck_assert_msg(r.code == 0, "mode %zu: exit %d: %s", m, r.code, r.err);
		doc = json_loads(r.out, 0, &je);
		ck_assert_msg(doc, "%s", je.text);
		f = finding(doc, "file.persistence-write");
		ck_assert_ptr_nonnull(f);
		ck_assert(json_is_false(json_object_get(f, "unproven")));
		a = json_object_get(f, "call");
		ck_assert_str_eq(json_string_value(json_object_get(a, "rule")), "window");
		ck_assert_str_eq(json_string_value(
					 json_object_get(json_object_get(a, "call"), "id")),
				 "1");
		ck_assert_ptr_nonnull(strstr(r.err, "records after the last seal do not attribute"));
		json_decref(doc);
		cli_result_free(&r);
	}
	/* calls: the forged call is not shown as a call */
	r = cli_run(NULL, "calls", S.path, "--pubkey", S.pub, "--allow-incomplete", "--json", NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	ck_assert_ptr_null(strstr(r.out, "forged"));
	ck_assert_ptr_nonnull(strstr(r.out, "write_file"));
	ck_assert_ptr_nonnull(strstr(r.err, "calls after the last seal are left out"));
	cli_result_free(&r);
	/* without verification nothing is proven: every record is used, as before */
	r = cli_run(NULL, "calls", S.path, "--no-verify", "--allow-incomplete", "--json", NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "forged"));
	cli_result_free(&r);
	synth_cleanup(&S);
}
END_TEST

Suite *model_tail_suite(void);

Suite *model_tail_suite(void)
{
	Suite *s = suite_create("model_tail");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, forged_tail_moves_no_sealed_attribution);
	suite_add_tcase(s, tc);
	return s;
}
