/*
 * check_calls.c - the MCP channel into calls: reassembly by offset (split, several messages
 * per read, out of order, duplicates, overlaps, gaps, missing ranges), line framing, JSON-RPC
 * pairing (string and number ids, reuse, batches, server requests, responses without
 * requests), cancellation, tasks and protocol eras. Bad input: check_calls_bad.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls_testlib.h"

static const char REQ1[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
			   "{\"name\":\"read_file\",\"arguments\":{\"path\":\"/work/a.txt\"}}}\n";
static const char RESP1[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],"
			    "\"isError\":false}}\n";

START_TEST(split_across_reads)
{
	struct callmodel *cm = t_model(0, 0, true);
	size_t n = strlen(REQ1);

	t_frame(cm, CHAN_IN, 0, REQ1, 10, 1 * MS, 0);
	t_frame(cm, CHAN_IN, 10, REQ1 + 10, 30, 2 * MS, 0);
	t_frame(cm, CHAN_IN, 40, REQ1 + 40, n - 40, 3 * MS, 0);
	t_send(cm, CHAN_OUT, RESP1, 9 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 1);
	ck_assert_uint_eq(t_call(cm, 1)->begin_ts, 3 * MS); /* the frame that completed the line */
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 9 * MS);
	ck_assert_str_eq(t_call(cm, 1)->method, "tools/call");
	ck_assert_str_eq(t_call(cm, 1)->tool, "read_file");
	ck_assert_str_eq(t_call(cm, 1)->args, "{\"path\":\"/work/a.txt\"}");
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_OK);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, 0);
	ck_assert_uint_eq(callset__notes_total(callmodel__calls(cm)), 0);
	callmodel__free(cm);
}
END_TEST

START_TEST(several_in_one_read)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n"
	       "\n"
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n",
	       5 * MS);
	/* answered out of order, both in one write */
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}\n"
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
	       7 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_str_eq(t_call(cm, 1)->method, "ping");
	ck_assert_str_eq(t_call(cm, 2)->method, "tools/list");
	ck_assert_uint_eq(t_call(cm, 1)->begin_ts, 5 * MS);
	ck_assert_uint_eq(t_call(cm, 2)->begin_ts, 5 * MS);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 7 * MS);
	ck_assert_uint_eq(t_call(cm, 2)->end_ts, 7 * MS);
	ck_assert_uint_eq(callset__notes_total(callmodel__calls(cm)), 0);
	callmodel__free(cm);
}
END_TEST

START_TEST(out_of_order_duplicates_overlaps)
{
	struct callmodel *cm = t_model(0, 0, true);
	size_t n = strlen(REQ1);

	t_frame(cm, CHAN_IN, 40, REQ1 + 40, n - 40, 3 * MS, 1); /* the tail first */
	t_frame(cm, CHAN_IN, 0, REQ1, 30, 1 * MS, 0);
	t_frame(cm, CHAN_IN, 0, REQ1, 30, 1 * MS, 0);	    /* a duplicate */
	t_frame(cm, CHAN_IN, 20, REQ1 + 20, 25, 2 * MS, 0); /* overlaps both sides */
	t_frame(cm, CHAN_OUT, 0, RESP1, strlen(RESP1), 9 * MS, 0);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 1);
	ck_assert_str_eq(t_call(cm, 1)->args, "{\"path\":\"/work/a.txt\"}");
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_OK);
	ck_assert_uint_eq(callset__notes_total(callmodel__calls(cm)), 0);
	callmodel__free(cm);
}
END_TEST

START_TEST(big_response_id_last)
{
	struct callmodel *cm = t_model(0, 0, true);
	size_t big = 1u << 20, off = 0;
	char *resp = malloc(big + 200);
	int k;

	ck_assert_ptr_nonnull(resp);
	k = sprintf(resp,
		    "{\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
	memset(resp + k, 'x', big);
	sprintf(resp + k + big, "\"}]},\"id\":\"req-7\"}\n");
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":\"req-7\",\"method\":\"resources/read\","
	       "\"params\":{\"uri\":\"file:///work/big\"}}\n",
	       1 * MS);
	for (size_t len = strlen(resp), i = 0; off < len; i++) { /* 16 KiB chunks, as captured */
		size_t n = len - off < 16384 ? len - off : 16384;

		t_frame(cm, CHAN_OUT, off, resp + off, n, 2 * MS + i, (uint32_t)i);
		off += n;
	}
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 1);
	ck_assert_str_eq(t_call(cm, 1)->id, "\"req-7\"");
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_OK);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 2 * MS + (off - 1) / 16384);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, 0);
	ck_assert_uint_le(strlen(t_call(cm, 1)->result), CALL_SHOW_MAX + 3);
	free(resp);
	callmodel__free(cm);
}
END_TEST

START_TEST(junk_lines)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN, REQ1, 1 * MS);
	t_send(cm, CHAN_OUT, "Server listening on stdio\n", 2 * MS);
	t_send(cm, CHAN_OUT, RESP1, 3 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 1);
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_OK);
	ck_assert_str_eq(t_note(cm, "not JSON"),
			 "stdout offset 0: not JSON, skipped: \"Server listening on stdio\"");
	callmodel__free(cm);
}
END_TEST

START_TEST(batch)
{
	struct callmodel *cm = t_model(0, 0, true);
	char want[64];
	uint64_t off;

	t_send(cm, CHAN_IN,
	       "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
	       "call\",\"params\":{\"name\":\"a\"}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
	       "call\",\"params\":{\"name\":\"b\"}},"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}]\n",
	       1 * MS);
	t_send(cm, CHAN_OUT,
	       "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}},"
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad\"}}]\n",
	       2 * MS);
	off = t_offset(CHAN_IN);
	t_send(cm, CHAN_IN, "[]\n", 3 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_str_eq(t_call(cm, 1)->tool, "a");
	ck_assert_int_eq(t_call(cm, 1)->status, CALL_ERROR);
	ck_assert_int_eq(t_call(cm, 1)->error_code, -32602);
	ck_assert_int_eq(t_call(cm, 2)->status, CALL_OK);
	ck_assert_uint_eq(callset__session(callmodel__calls(cm))->batches, 3);
	snprintf(want, sizeof(want), "stdin offset %llu: an empty batch", (unsigned long long)off);
	ck_assert_str_eq(t_note(cm, "empty batch"), want);
	callmodel__free(cm);
}
END_TEST

START_TEST(ids)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", 1 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"b\"}\n", 2 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{}}\n", 3 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", 4 * MS);
	/* 1 again, after completion: a new call */
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"c\"}\n", 5 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", 6 * MS);
	/* a response to nothing */
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n", 7 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 3);
	ck_assert_str_eq(t_call(cm, 1)->id, "1");
	ck_assert_str_eq(t_call(cm, 2)->id, "\"1\"");
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 4 * MS);
	ck_assert_uint_eq(t_call(cm, 2)->end_ts, 3 * MS);
	ck_assert_str_eq(t_call(cm, 3)->method, "c");
	ck_assert_uint_eq(t_call(cm, 3)->end_ts, 6 * MS);
	ck_assert_ptr_nonnull(t_note(cm, "response to id 99 without a pending request"));
	ck_assert(!t_has_note(cm, "reused"));
	callmodel__free(cm);
}
END_TEST

/* Attached: a response without a request is a call of its own, from the start of the trace,
 * once per id never seen as a request; a second response stays a note; the checks are capped. */
START_TEST(responses_before_the_attach)
{
	struct callmodel *cm = t_model_attached(1 * MS);
	const struct call *c;
	char line[96];

	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"a\"}\n", 2 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n", 3 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n", 4 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n", 5 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n", 6 * MS);
	for (int i = 0; i < 300; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}\n",
			 1000 + i);
		t_send(cm, CHAN_OUT, line, (uint64_t)(7 + i) * MS);
	}
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_str_eq(t_call(cm, 1)->method, "a");
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 4 * MS);
	c = t_call(cm, 2);
	ck_assert_str_eq(c->id, "7");
	ck_assert_ptr_null(c->method);
	ck_assert_uint_eq(c->incomplete, CI_BEFORE_ATTACH);
	ck_assert_uint_eq(c->begin_ts, 1 * MS);
	ck_assert_uint_eq(c->end_ts, 3 * MS);
	ck_assert_int_eq(c->status, CALL_OK);
	ck_assert_ptr_nonnull(t_note(cm, "response to id 5 without a pending request"));
	ck_assert_ptr_nonnull(t_note(cm, "response to id 7 without a pending request"));
	/* 3 of the 256 checks above; 253 of the 300 become calls, the rest notes */
	ck_assert_uint_eq(t_ncalls(cm), 2 + 253);
	ck_assert_str_eq(t_call(cm, 255)->id, "1252");
	ck_assert_ptr_nonnull(t_note(cm, "response to id 1253 without a pending request"));
	ck_assert_uint_eq(callset__session(callmodel__calls(cm))->first_request_ts, 1 * MS);
	callmodel__free(cm);
}
END_TEST

START_TEST(server_requests)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"tools/call\","
	       "\"params\":{\"name\":\"x\"}}\n",
	       1 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}\n", 2 * MS);
	t_send(cm, CHAN_IN, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"roots\":[]}}\n", 3 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n", 4 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_ncalls(cm), 2);
	ck_assert_int_eq(t_call(cm, 1)->dir, CHAN_IN);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 4 * MS);
	ck_assert_int_eq(t_call(cm, 2)->dir, CHAN_OUT);
	ck_assert_str_eq(t_call(cm, 2)->method, "roots/list");
	ck_assert_uint_eq(t_call(cm, 2)->end_ts, 3 * MS);
	ck_assert_uint_eq(callset__notes_total(callmodel__calls(cm)), 0);
	callmodel__free(cm);
}
END_TEST

START_TEST(cancellation)
{
	struct callmodel *cm = t_model(200 * MS, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	       "\"params\":{\"name\":\"slow\"}}\n",
	       1 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
	       "\"params\":{\"name\":\"slow\"}}\n",
	       2 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	       "\"params\":{\"requestId\":5,\"reason\":\"user\"}}\n",
	       10 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	       "\"params\":{\"requestId\":6}}\n",
	       20 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n", 25 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	       "\"params\":{\"requestId\":42}}\n",
	       30 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	/* never answered: cancellation + grace */
	ck_assert(t_call(cm, 1)->cancelled);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 210 * MS);
	ck_assert_int_eq(t_call(cm, 1)->end_how, END_CANCELLED);
	ck_assert_uint_eq(t_call(cm, 1)->incomplete, CI_NO_RESPONSE);
	/* answered within the grace period: the response ends it */
	ck_assert_uint_eq(t_call(cm, 2)->end_ts, 25 * MS);
	ck_assert_int_eq(t_call(cm, 2)->end_how, END_RESPONSE);
	ck_assert_ptr_nonnull(t_note(cm, "notifications/cancelled for request id 42"));
	callmodel__free(cm);
}
END_TEST

START_TEST(tasks)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"batch\",\"task\":{\"ttl\":60000}}}\n",
	       1 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"taskId\":"
	       "\"t-1\",\"status\":\"working\"}}}\n",
	       2 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"batch\",\"task\":{}}}\n",
	       3 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"task\":{\"taskId\":"
	       "\"t-2\",\"status\":\"working\"}}}\n",
	       4 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\","
	       "\"params\":{\"taskId\":\"t-1\",\"status\":\"input_required\"}}\n",
	       5 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\","
	       "\"params\":{\"taskId\":\"t-1\",\"status\":\"completed\"}}\n",
	       50 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\","
	       "\"params\":{\"taskId\":\"t-2\"}}\n",
	       60 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"taskId\":\"t-2\","
	       "\"status\":\"failed\"}}\n",
	       70 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"batch\",\"task\":{}}}\n",
	       80 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"task\":{\"taskId\":"
	       "\"t-4\",\"status\":\"working\"}}}\n",
	       81 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/result\","
	       "\"params\":{\"taskId\":\"t-4\"}}\n",
	       82 * MS);
	t_send(cm, CHAN_OUT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}\n",
	       90 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"batch\",\"task\":{}}}\n",
	       100 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"task\":{\"taskId\":"
	       "\"t-6\",\"status\":\"working\"}}}\n",
	       101 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(t_call(cm, 1)->end_ts, 50 * MS); /* notifications/tasks/status */
	ck_assert_int_eq(t_call(cm, 1)->end_how, END_TASK);
	ck_assert_str_eq(t_call(cm, 1)->task_status, "completed");
	ck_assert_uint_eq(t_call(cm, 2)->end_ts, 70 * MS);   /* tasks/get said failed */
	ck_assert_uint_eq(t_call(cm, 3)->end_ts, 70 * MS);   /* tasks/get itself */
	ck_assert_uint_eq(t_call(cm, 4)->end_ts, 90 * MS);   /* tasks/result answered */
	ck_assert_uint_eq(t_call(cm, 6)->end_ts, CALL_OPEN); /* never finished */
	ck_assert_uint_eq(t_call(cm, 6)->incomplete, CI_TASK_OPEN);
	callmodel__free(cm);
}
END_TEST

START_TEST(eras)
{
	struct callmodel *cm = t_model(0, 0, true);
	const struct call_session *s;

	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
	       "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}\n",
	       1 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	s = callset__session(callmodel__calls(cm));
	ck_assert(s->initialize_seen);
	ck_assert_str_eq(s->protocol, "2025-11-25");
	callmodel__free(cm);

	cm = t_model(0, 0, true);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":"
	       "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	       "\"2026-07-28\"}}}\n",
	       1 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	       "{\"name\":\"x\",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	       "\"2026-07-28\"}}}\n",
	       2 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	s = callset__session(callmodel__calls(cm));
	ck_assert(!s->initialize_seen);
	ck_assert(s->discover_seen && s->per_request_meta);
	ck_assert_str_eq(s->protocol, "2026-07-28");
	ck_assert_uint_eq(s->first_request_ts, 1 * MS);
	ck_assert_str_eq(t_call(cm, 2)->tool, "x");
	callmodel__free(cm);
}
END_TEST

Suite *calls_suite(void);
Suite *calls_suite(void)
{
	Suite *s = suite_create("calls");
	TCase *core = tcase_create("core");

	tcase_add_test(core, split_across_reads);
	tcase_add_test(core, several_in_one_read);
	tcase_add_test(core, out_of_order_duplicates_overlaps);
	tcase_add_test(core, big_response_id_last);
	tcase_add_test(core, junk_lines);
	tcase_add_test(core, batch);
	tcase_add_test(core, ids);
	tcase_add_test(core, server_requests);
	tcase_add_test(core, responses_before_the_attach);
	tcase_add_test(core, cancellation);
	tcase_add_test(core, tasks);
	tcase_add_test(core, eras);
	suite_add_tcase(s, core);
	return s;
}
