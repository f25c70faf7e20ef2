/*
 * check_attribute.c - each attribution rule on a hand-made model: lineage (for a process's
 * whole life, daemons included), window (threads of the server too), evidence (paths, a
 * connect's address, an exec's argv; the most specific argument wins), ambiguous (every
 * candidate named), the startup / ambient / shutdown buckets; and explicit marks: matched
 * by id or tool, widening windows, disagreeing, naming no request, malformed, and the only
 * source of calls when the channel was not captured.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "calls_testlib.h"

static void request(struct callmodel *cm, int id, const char *tool, const char *args, uint64_t ts)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"%s\",\"arguments\":%s}}\n",
		 id, tool, args);
	t_send(cm, CHAN_IN, buf, ts);
}

static void response(struct callmodel *cm, int id, uint64_t ts)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[]}}\n",
		 id);
	t_send(cm, CHAN_OUT, buf, ts);
}

START_TEST(lineage_window_buckets)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct attribution a;

	request(cm, 1, "run", "{\"command\":\"sleep 1 &\"}", 10 * MS);
	t_fork(cm, T_SERVER, 200, 12 * MS, false);
	t_exec(cm, 200, "/bin/sh", "sh\0-c\0sleep 1 &", 16, 13 * MS);
	t_fork(cm, 200, 201, 14 * MS, false);	       /* the daemon */
	t_fork(cm, T_SERVER, T_SERVER, 15 * MS, true); /* a thread of the server */
	response(cm, 1, 20 * MS);
	request(cm, 2, "echo", "{\"text\":\"hi\"}", 30 * MS);
	response(cm, 2, 31 * MS);
	t_exit(cm, T_SERVER, 50 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);

	t_open(cm, T_SERVER, T_SERVER, "/usr/lib/x.so", 5 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_BUCKET);
	ck_assert_int_eq(a.bucket, BUCKET_STARTUP);
	t_open(cm, T_SERVER, T_SERVER + 1, "/tmp/t", 15 * MS, &a); /* a thread: window */
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, 200, 200, "/etc/passwd", 13 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_LINEAGE);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, 201, 201, "/home/u/.ssh/id_rsa", 40 * MS, &a); /* after the response */
	ck_assert_int_eq(a.rule, ATTR_LINEAGE);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, T_SERVER, T_SERVER, "/tmp/idle", 25 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_BUCKET);
	ck_assert_int_eq(a.bucket, BUCKET_AMBIENT);
	ck_assert_uint_eq(a.order, 3); /* between call 1 (2) and call 2 (4) */
	t_open(cm, T_SERVER, T_SERVER, "/tmp/late", 60 * MS, &a);
	ck_assert_int_eq(a.bucket, BUCKET_SHUTDOWN);
	t_open(cm, 201, 201, "/tmp/daemon-late", 70 * MS, &a); /* lineage wins over buckets */
	ck_assert_int_eq(a.rule, ATTR_LINEAGE);
	callmodel__free(cm);
}
END_TEST

START_TEST(evidence_and_ambiguous)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct attribution a;
	static const uint8_t lo8080[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
	static const uint8_t other[16] = {2, 0, 0, 80, 10, 1, 2, 3};

	request(cm, 1, "write", "{\"path\":\"/work/a.txt\",\"url\":\"http://127.0.0.1:8080/x\"}",
		10 * MS);
	request(cm, 2, "write", "{\"path\":\"/work/b.txt\",\"dir\":\"/work\"}", 12 * MS);
	t_fork(cm, T_SERVER, 300, 15 * MS, false); /* both open: exec argv decides */
	t_exec(cm, 300, "/bin/cat", "cat\0/work/a.txt", 16, 15 * MS);
	t_fork(cm, T_SERVER, 301, 16 * MS, false); /* nothing to decide by */
	t_exec(cm, 301, "/bin/true", "true", 5, 16 * MS);
	response(cm, 2, 28 * MS);
	response(cm, 1, 30 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);

	/* the atomic write of b: /work/b.txt names it better than /work does */
	t_open(cm, T_SERVER, T_SERVER + 3, "/work/b.txt.tmp-123", 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 2);
	ck_assert_str_eq(a.matched, "/work/b.txt");
	t_open(cm, T_SERVER, T_SERVER, "/etc/hosts", 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_AMBIGUOUS);
	ck_assert_uint_eq(a.n_cand, 2);
	ck_assert_uint_eq(a.cand[0], 1);
	ck_assert_uint_eq(a.cand[1], 2);
	ck_assert_uint_eq(a.order, 2);
	t_open(cm, T_SERVER, T_SERVER, "/work", 20 * MS, &a); /* only call 2 names /work */
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 2);
	t_open(cm, T_SERVER, T_SERVER, "/work/a.txt2", 20 * MS, &a); /* not a.txt */
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 2);
	t_connect(cm, T_SERVER, lo8080, 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 1);
	ck_assert_str_eq(a.matched, "http://127.0.0.1:8080/x");
	t_connect(cm, T_SERVER, other, 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_AMBIGUOUS);
	/* cat was bound by its argv, for good */
	t_open(cm, 300, 300, "/lib/libc.so.6", 40 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 1);
	ck_assert_str_eq(a.matched, "/work/a.txt");
	/* true keeps both candidates: each event decides for itself */
	t_open(cm, 301, 301, "/work/b.txt", 40 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 2);
	t_open(cm, 301, 301, "/lib/libc.so.6", 40 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_AMBIGUOUS);
	ck_assert_uint_eq(a.n_cand_total, 2);
	callmodel__free(cm);
}
END_TEST

START_TEST(tilde_and_commands)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct attribution a;

	request(cm, 1, "read", "{\"path\":\"~/.ssh/id_rsa\"}", 10 * MS);
	request(cm, 2, "shell", "{\"command\":\"cat /etc/passwd | wc -l\"}", 11 * MS);
	response(cm, 1, 30 * MS);
	response(cm, 2, 30 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	t_open(cm, T_SERVER, T_SERVER, "/home/u/.ssh/id_rsa", 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, T_SERVER, T_SERVER, "/etc/passwd", 20 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_EVIDENCE);
	ck_assert_uint_eq(a.call, 2);
	callmodel__free(cm);
}
END_TEST

START_TEST(marks_match_and_widen)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct attribution a;
	const struct call *c;

	t_mark(cm, "{\"op\":\"scope\",\"pgid\":1234,\"generation\":1}", 1 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":\"1\",\"tool\":\"run\"}",
	       9 * MS);
	request(cm, 1, "run", "{}", 10 * MS);
	response(cm, 1, 20 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":\"1\"}", 25 * MS);
	/* matched by tool: the client's own call ids */
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":\"c-2\",\"tool\":\"echo\"}",
	       29 * MS);
	request(cm, 7, "echo", "{}", 30 * MS);
	response(cm, 7, 31 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":\"c-2\"}", 32 * MS);
	/* a forged mark: says call 9 began long after the request was read */
	request(cm, 9, "run", "{}", 40 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":9}", 900 * MS);
	response(cm, 9, 950 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":9}", 960 * MS);
	/* names nothing; malformed; end without begin; begin without end */
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":\"ghost\",\"tool\":\"x\"}",
	       970 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":\"ghost\"}", 971 * MS);
	t_mark(cm, "not json", 972 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"middle\",\"call_id\":\"1\"}", 973 * MS);
	t_mark(cm, "{\"op\":\"dance\"}", 974 * MS);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":\"zz\"}", 975 * MS);
	t_mark(cm, "{\"op\":\"shutdown\"}", 990 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);

	c = callset__get(callmodel__calls(cm), 1);
	ck_assert(c->marked && !c->mark_disagrees);
	ck_assert_uint_eq(c->mark_begin, 9 * MS);
	ck_assert_uint_eq(c->mark_end, 25 * MS);
	ck_assert_str_eq(callset__get(callmodel__calls(cm), 2)->mark_call_id, "c-2");
	ck_assert(callset__get(callmodel__calls(cm), 3)->mark_disagrees);
	t_open(cm, T_SERVER, T_SERVER, "/tmp/x", 22 * MS, &a); /* after the response, in the mark */
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, T_SERVER, T_SERVER, "/tmp/x", 995 * MS, &a);
	ck_assert_int_eq(a.bucket, BUCKET_SHUTDOWN);
	ck_assert_uint_eq(markset__n_scopes(callmodel__marks(cm)), 1);
	ck_assert_int_eq(markset__scope(callmodel__marks(cm), 0)->pgid, 1234);
	ck_assert_ptr_nonnull(t_note(cm, "call 3 (id 9, tool run): its window disagrees with its "
					 "marks (call_id 9): the request was read before the "
					 "begin mark (forged or misplaced mark)"));
	ck_assert_ptr_nonnull(t_note(cm, "mark call_id ghost, tool x names no request"));
	ck_assert_ptr_nonnull(t_note(cm, ": not JSON: skipped"));
	ck_assert_ptr_nonnull(t_note(cm, "mark without a phase begin or end"));
	ck_assert_ptr_nonnull(t_note(cm, "unknown op \"dance\""));
	ck_assert_ptr_nonnull(t_note(cm, "end mark of call_id zz without a begin mark"));
	callmodel__free(cm);
}
END_TEST

START_TEST(marks_without_channel)
{
	struct callmodel *cm = t_model(0, 0, false);
	struct attribution a;
	const struct call *c;

	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":\"a\",\"tool\":\"fetch\"}",
	       10 * MS);
	t_fork(cm, T_SERVER, 400, 11 * MS, false);
	t_mark(cm, "{\"op\":\"mark\",\"phase\":\"end\",\"call_id\":\"a\"}", 20 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert(!callmodel__channel_captured(cm));
	c = callset__get(callmodel__calls(cm), 1);
	ck_assert_ptr_nonnull(c);
	ck_assert(c->from_mark);
	ck_assert_str_eq(c->tool, "fetch");
	ck_assert_uint_eq(c->incomplete, 0);
	t_open(cm, 400, 400, "/x", 30 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_LINEAGE);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, T_SERVER, T_SERVER, "/y", 15 * MS, &a);
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	callmodel__free(cm);
}
END_TEST

START_TEST(cancelled_window)
{
	struct callmodel *cm = t_model(100 * MS, 0, true);
	struct attribution a;

	request(cm, 1, "slow", "{}", 10 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	       "\"params\":{\"requestId\":1}}\n",
	       20 * MS);
	request(cm, 2, "other", "{}", 500 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	t_open(cm, T_SERVER, T_SERVER, "/a", 110 * MS, &a); /* within the grace */
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	ck_assert_uint_eq(a.call, 1);
	t_open(cm, T_SERVER, T_SERVER, "/b", 130 * MS, &a); /* after it */
	ck_assert_int_eq(a.bucket, BUCKET_AMBIENT);
	t_open(cm, T_SERVER, T_SERVER, "/c", 600 * MS, &a); /* call 2 never answered */
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	ck_assert_uint_eq(a.call, 2);
	callmodel__free(cm);
}
END_TEST

/* End-of-file on stdin (the collector's empty READ frame marked last) starts the shutdown
 * bucket, before the server's exit; a call still open then keeps its events. */
START_TEST(stdin_eof_starts_shutdown)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct attribution a;

	request(cm, 1, "echo", "{}", 10 * MS);
	response(cm, 1, 11 * MS);
	request(cm, 2, "slow", "{}", 20 * MS);
	t_frame(cm, CHAN_IN, t_offset(CHAN_IN), "", 0, 30 * MS, 0); /* EOF */
	t_frame(cm, CHAN_IN, t_offset(CHAN_IN), "", 0, 35 * MS, 0); /* a repeat: the first wins */
	response(cm, 2, 40 * MS);
	t_exit(cm, T_SERVER, 80 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_uint_eq(callmodel__shutdown_ts(cm), 30 * MS);
	ck_assert_uint_eq(callset__count(callmodel__calls(cm)), 2);
	ck_assert(!t_has_note(cm, "ends inside"));

	t_open(cm, T_SERVER, T_SERVER, "/tmp/idle", 15 * MS, &a);
	ck_assert_int_eq(a.bucket, BUCKET_AMBIENT);
	t_open(cm, T_SERVER, T_SERVER, "/tmp/work", 32 * MS, &a); /* call 2 still open */
	ck_assert_int_eq(a.rule, ATTR_WINDOW);
	ck_assert_uint_eq(a.call, 2);
	t_open(cm, T_SERVER, T_SERVER, "/tmp/flush", 50 * MS, &a); /* before the exit */
	ck_assert_int_eq(a.rule, ATTR_BUCKET);
	ck_assert_int_eq(a.bucket, BUCKET_SHUTDOWN);
	callmodel__free(cm);
}
END_TEST

START_TEST(losses_make_calls_incomplete)
{
	struct callmodel *cm = t_model(0, 0, true);
	Mcpt__Loss l = MCPT__LOSS__INIT;
	struct attribution a;

	request(cm, 1, "a", "{}", 10 * MS);
	response(cm, 1, 20 * MS);
	request(cm, 2, "b", "{}", 30 * MS);
	response(cm, 2, 40 * MS);
	l.first_seq = 2;
	l.last_seq = 3;
	l.delta = 2;
	ck_assert_int_eq(callmodel__loss(cm, &l), 0);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	t_open(cm, T_SERVER, T_SERVER, "/a", 31 * MS, &a); /* seq 1 */
	t_open(cm, T_SERVER, T_SERVER, "/b", 33 * MS, &a); /* seq 2: the lost ones were between */
	t_open(cm, T_SERVER, T_SERVER, "/c", 34 * MS, &a);
	t_open(cm, T_SERVER, T_SERVER, "/d", 35 * MS, &a); /* seq 4 */
	callmodel__finish(cm);
	ck_assert_uint_eq(callset__get(callmodel__calls(cm), 1)->incomplete, 0);
	ck_assert_uint_eq(callset__get(callmodel__calls(cm), 2)->incomplete, CI_EVENTS_LOST);
	callmodel__free(cm);
}
END_TEST

Suite *attribute_suite(void);
Suite *attribute_suite(void)
{
	Suite *s = suite_create("attribute");
	TCase *rules = tcase_create("rules"), *marks = tcase_create("marks");

	tcase_add_test(rules, lineage_window_buckets);
	tcase_add_test(rules, evidence_and_ambiguous);
	tcase_add_test(rules, tilde_and_commands);
	tcase_add_test(rules, cancelled_window);
	tcase_add_test(rules, losses_make_calls_incomplete);
	tcase_add_test(rules, stdin_eof_starts_shutdown);
	tcase_add_test(marks, marks_match_and_widen);
	tcase_add_test(marks, marks_without_channel);
	suite_add_tcase(s, rules);
	suite_add_tcase(s, marks);
	return s;
}
