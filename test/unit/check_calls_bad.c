/*
 * check_calls_bad.c - the MCP channel into calls when the channel is bad: every bad input
 * (gaps, missing ranges, invalid UTF-8, overlong and unbalanced lines, lines that are not
 * JSON-RPC) reported with its stream offset without losing sync, and hostile channels of
 * random fragments. The well-formed channel: check_calls.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls_testlib.h"

START_TEST(gap_inside_a_request)
{
	struct callmodel *cm = t_model(0, 0, true);
	const char *head =
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"na";

	t_frame(cm, CHAN_IN, 0, head, strlen(head), 1 * MS, 0);
	t_gap(cm, CHAN_IN, strlen(head), 5000, 1 * MS);
	/* the next write starts a message: read at once */
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n", 2 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n", 3 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n", 4 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_str_eq(t_call(cm, 1)->id, "7");
	ck_assert_str_eq(t_call(cm, 1)->method, "tools/call");
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_REQUEST_DAMAGED);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 3 * MS);
	ck_assert_str_eq(t_call(cm, 2)->method, "ping");
	ck_assert_uint_eq(t_call(cm, 2)->incomplete, 0);
	ck_assert_uint_eq(strlen(head), 59);
	ck_assert_str_eq(t_note(cm, "gap record"),
			 "stdin offset 59: 5000 bytes were not captured (gap record)");
	callmodel__free(cm);
}
END_TEST

START_TEST(gap_resync_at_newline)
{
	struct callmodel *cm = t_model(0, 0, true);
	const char *tail = "ent\":[]}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n";

	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", 1 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n", 1 * MS);
	t_gap(cm, CHAN_OUT, 0, 100, 2 * MS); /* response 1 lost whole, its newline with it */
	t_frame(cm, CHAN_OUT, 100, tail, strlen(tail), 3 * MS, 3); /* not a write's start */
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_NO_RESPONSE);
	ck_assert_int_eq(t_call(cm, 2)->status, CALL_OK);
	ck_assert_str_eq(t_note(cm, "skipped up to"),
			 "stdout offset 100: 10 bytes after a gap skipped up to the next newline "
			 "(the rest of a message whose start was not captured)");
	callmodel__free(cm);
}
END_TEST

START_TEST(missing_range)
{
	struct callmodel *cm = t_model(0, 0, true);
	const char *r2 = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n";

	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", 1 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n", 1 * MS);
	/* bytes 0..36 (response 1) never arrive */
	t_frame(cm, CHAN_OUT, 37, r2, strlen(r2), 3 * MS, 0);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_NO_RESPONSE);
	ck_assert_int_eq(t_call(cm, 2)->status, CALL_OK);
	ck_assert_str_eq(t_note(cm, "never captured"),
			 "stdout offset 0: 37 bytes of the stream were never captured (no frame "
			 "covers them)");
	callmodel__free(cm);
}
END_TEST

START_TEST(invalid_utf8)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"w\",\"arguments\":{\"path\":\"/work/\xff\xfe.txt\"}}}\n",
	       1 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n", 2 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_str_eq(t_call(cm, 1)->tool, "w");
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_NO_RESPONSE | CI_INVALID_UTF8);
	ck_assert_str_eq(t_note(cm, "UTF-8"), "stdin offset 0: invalid UTF-8 at byte 94 of the "
					      "message; decoded with U+FFFD replacements");
	callmodel__free(cm);
}
END_TEST

START_TEST(overlong_line)
{
	struct callmodel *cm = t_model(0, 1024, true);
	char resp[4096];
	int k = sprintf(resp, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"");

	memset(resp + k, 'y', 3000);
	strcpy(resp + k + 3000, "\"}}\n");
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", 1 * MS);
	t_send(cm, CHAN_OUT, resp, 2 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}\n", 3 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_OK);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 2 * MS);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_RESPONSE_DAMAGED);
	ck_assert_str_eq(t_call(cm, 2)->method, "roots/list"); /* in sync after it */
	ck_assert_uint_eq(strlen(resp), 3046);
	ck_assert_str_eq(t_note(cm, "limit"),
			 "stdout offset 0: message of 3045 bytes is longer "
			 "than the limit of 1024 bytes: only its id and method "
			 "are used");
	callmodel__free(cm);
}
END_TEST

START_TEST(unbalanced_json)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":[1,2}}\n", 1 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\"\n", 2 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n", 3 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"b\",}\n", 4 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 1);
	ck_assert_str_eq(t_call(cm, 1)->method, "b");
	/* "[1,2}": the "}" at byte 55 closes an array */
	ck_assert_str_eq(t_note(cm, "offset 0:"),
			 "stdin offset 0: unbalanced JSON (structure error at byte 55 of 57), "
			 "skipped");
	/* the object never closes: the error is at its end */
	ck_assert_str_eq(t_note(cm, "offset 58:"),
			 "stdin offset 58: unbalanced JSON (structure error at byte 36 of 36), "
			 "skipped");
	ck_assert_ptr_nonnull(t_note(cm, "offset 133: unbalanced JSON"));
	callmodel__free(cm);
}
END_TEST

START_TEST(not_jsonrpc)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"hello\":1}\n42\n{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"a\"}\n", 1 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 0);
	ck_assert_ptr_nonnull(t_note(cm, "stdin offset 0: an object that is not a JSON-RPC"));
	ck_assert_ptr_nonnull(t_note(cm, "stdin offset 12: a value that is not a JSON-RPC"));
	ck_assert_ptr_nonnull(t_note(cm, "stdin offset 15: request \"a\" with an id that is "
					 "neither"));
	callmodel__free(cm);
}
END_TEST

/* Hostile channels: random fragments of JSON-RPC at random offsets, out of order, overlapping,
 * with gaps, in both directions. Nothing may crash or leak (the suite runs under ASan in CI);
 * every call's window is well formed. A fixed seed keeps it reproducible. */
START_TEST(random_frames)
{
	static const char *const bits[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":",
		"1",
		"\"a\"",
		",\"method\":\"tools/call\"",
		",\"params\":{\"name\":\"x\",\"arguments\":{\"p\":\"/w\"}}",
		"}",
		"]",
		"[",
		"\n",
		",\"result\":{\"task\":{\"taskId\":\"t\"}}",
		"\xff\xfe",
		"\\",
		"\"",
		",\"error\":{\"code\":-1}",
		"notifications/cancelled",
		"{\"requestId\":1}",
		"  ",
		"null",
		"0",
		"{",
		":"};
	uint64_t x = 0x9e3779b97f4a7c15ull, off[2] = {0, 0};
	struct callmodel *cm = t_model(5 * MS, 512, true);
	char buf[2048];
	const struct call *c;

	for (int i = 0; i < 3000; i++) {
		size_t n = 0, k;
		int dir;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		dir = (int)(x & 1);
		for (k = 0; k < 1 + (x >> 8) % 12 && n < sizeof(buf) - 200; k++) {
			const char *b =
				bits[(x >> (k * 3 + 12)) % (sizeof(bits) / sizeof(bits[0]))];

			memcpy(buf + n, b, strlen(b));
			n += strlen(b);
		}
		switch ((x >> 40) % 8) {
		case 0: /* a gap */
			t_gap(cm, (enum chan_dir)dir, off[dir], 1 + (x >> 20) % 300,
			      (uint64_t)i * MS);
			off[dir] += 1 + (x >> 20) % 300;
			break;
		case 1: /* from the past: a duplicate or an overlap */
			t_frame(cm, (enum chan_dir)dir, off[dir] > n ? off[dir] - n / 2 : 0, buf, n,
				(uint64_t)i * MS, 1);
			break;
		case 2: /* from the future: out of order, maybe never filled */
			t_frame(cm, (enum chan_dir)dir, off[dir] + 1 + (x >> 24) % 64, buf, n,
				(uint64_t)i * MS, 0);
			break;
		default:
			t_frame(cm, (enum chan_dir)dir, off[dir], buf, n, (uint64_t)i * MS,
				(uint32_t)((x >> 30) & 1));
			off[dir] += n;
		}
	}
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	for (size_t i = 1; (c = callset__get(callmodel__calls(cm), i)); i++)
		ck_assert_uint_ge(c->end_ts, c->begin_ts > 5 * MS ? c->begin_ts - 5 * MS : 0);
	ck_assert_uint_gt(callset__notes_total(callmodel__calls(cm)), 0);
	callmodel__free(cm);
}
END_TEST

Suite *calls_bad_suite(void);
Suite *calls_bad_suite(void)
{
	Suite *s = suite_create("calls_bad");
	TCase *bad = tcase_create("errors");

	tcase_add_test(bad, gap_inside_a_request);
	tcase_add_test(bad, gap_resync_at_newline);
	tcase_add_test(bad, missing_range);
	tcase_add_test(bad, invalid_utf8);
	tcase_add_test(bad, overlong_line);
	tcase_add_test(bad, unbalanced_json);
	tcase_add_test(bad, not_jsonrpc);
	tcase_add_test(bad, random_frames);
	suite_add_tcase(s, bad);
	return s;
}
