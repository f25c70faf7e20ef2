/*
 * check_callsum.c - the per-call effect lists of `mcpwitness calls`: an entry-time record
 * (a syscall that may block) is not an effect of its own when its completion follows on the
 * same thread; it is listed as pending when the thread moves on without completing it or when
 * the trace ends; identical effects are counted, not repeated; threads' forks are not effects;
 * an effect listed by many calls keeps one text.
 */
#include <check.h>
#include <string.h>

#include "callsum.h"
#include "events.h"

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){.len = strlen(s), .data = (uint8_t *)s};
}

static const struct attribution WINDOW_1 = {.rule = ATTR_WINDOW, .call = 1};

/* Adds one openat of path by tid (ret, flags) as record index. */
static void add_open(struct callsum *s, uint32_t tid, const char *path, int64_t ret,
		     uint32_t flags, uint64_t index)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 0, 0};
	struct ev_view v;

	e.op = MCPT__OP__OP_OPENAT;
	e.pid = 100, e.tid = tid, e.ret = ret, e.flags = flags, e.ts = index * 1000;
	e.n_args = 3, e.args = args;
	e.path = bin(path);
	e.abs_path = bin(path);
	event_decode(&v, &e);
	ck_assert_int_eq(callsum__add(s, &v, &WINDOW_1, index), 0);
}

static void add_op(struct callsum *s, uint32_t tid, Mcpt__Op op, uint64_t index)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	struct ev_view v;

	e.op = op;
	e.pid = 100, e.tid = tid, e.ts = index * 1000;
	event_decode(&v, &e);
	ck_assert_int_eq(callsum__add(s, &v, &WINDOW_1, index), 0);
}

static const struct callsum_sink *finished(struct callsum *s)
{
	ck_assert_int_eq(callsum__finish(s), 0);
	callsum__sort(s);
	return callsum__call(s, 1);
}

START_TEST(entry_superseded_by_its_completion)
{
	struct callsum *s = callsum__new(1);
	const struct callsum_sink *k;

	add_open(s, 7, "/run/fifo", 0, MW_F_ENTRY, 10);
	add_open(s, 7, "/run/fifo", -2, 0, 11);
	k = finished(s);
	ck_assert_uint_eq(k->n, 1);
	ck_assert_str_eq(k->v[0].text, "openat /run/fifo (read) -> ENOENT");
	ck_assert_uint_eq(k->v[0].count, 1);
	ck_assert_uint_eq(k->v[0].first_record, 11);
	ck_assert_uint_eq(k->events, 1);
	callsum__free(s);
}
END_TEST

START_TEST(entry_listed_pending_when_the_thread_moves_on)
{
	struct callsum *s = callsum__new(1);
	const struct callsum_sink *k;

	add_open(s, 7, "/run/fifo", 0, MW_F_ENTRY, 10);
	add_open(s, 8, "/etc/hosts", 3, 0, 11);	  /* another thread: 7's entry still held */
	add_op(s, 7, MCPT__OP__OP_CHDIR, 12);	  /* 7 moves on: the open never returned */
	add_open(s, 9, "/run/other", 0, MW_F_ENTRY, 13); /* pending when the trace ends */
	k = finished(s);
	ck_assert_uint_eq(k->n, 4);
	ck_assert_str_eq(k->v[0].text, "openat /run/fifo (read) -> pending");
	ck_assert_uint_eq(k->v[0].first_record, 10);
	ck_assert_str_eq(k->v[1].text, "openat /etc/hosts (read)");
	ck_assert_str_eq(k->v[2].text, "openat /run/other (read) -> pending");
	ck_assert_uint_eq(k->v[2].first_record, 13);
	ck_assert_uint_eq(k->v[3].group, CS_PROCESSES);
	callsum__free(s);
}
END_TEST

START_TEST(repeats_counted_threads_not_effects)
{
	struct callsum *s = callsum__new(1);
	const struct callsum_sink *k;
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {101, 101};
	struct ev_view v;

	for (uint64_t i = 0; i < 5; i++) {
		add_open(s, 7, "/etc/passwd", 0, MW_F_ENTRY, 20 + 2 * i);
		add_open(s, 7, "/etc/passwd", 3, 0, 21 + 2 * i);
	}
	e.op = MCPT__OP__OP_FORK; /* a new thread */
	e.pid = 100, e.tid = 7, e.ret = 101;
	e.flags = MW_F_THREAD;
	e.n_args = 2, e.args = args;
	event_decode(&v, &e);
	ck_assert(v.thread);
	ck_assert_int_eq(callsum__add(s, &v, &WINDOW_1, 40), 0);
	k = finished(s);
	ck_assert_uint_eq(k->n, 1);
	ck_assert_uint_eq(k->v[0].count, 5);
	ck_assert_uint_eq(k->v[0].first_record, 21);
	callsum__free(s);
}
END_TEST

START_TEST(many_threads_blocked_at_once)
{
	struct callsum *s = callsum__new(1);
	const struct callsum_sink *k;

	for (uint32_t t = 0; t < 1000; t++) /* more than are held: the oldest are listed early */
		add_open(s, 1000 + t, "/run/fifo", 0, MW_F_ENTRY, t);
	k = finished(s);
	ck_assert_uint_eq(k->n, 1);
	ck_assert_uint_eq(k->v[0].count, 1000);
	ck_assert_uint_eq(k->v[0].first_record, 0);
	callsum__free(s);
}
END_TEST

/* The same effect in two calls is one text, kept once; another group or text is another
 * entry. */
START_TEST(texts_shared_between_calls)
{
	static const struct attribution call2 = {.rule = ATTR_WINDOW, .call = 2};
	struct callsum *s = callsum__new(2);
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 0, 0};
	const struct callsum_sink *k1, *k2;
	struct ev_view v;

	add_open(s, 7, "/etc/hosts", 3, 0, 10);
	add_open(s, 7, "/etc/passwd", 3, 0, 11);
	e.op = MCPT__OP__OP_OPENAT;
	e.pid = 100, e.tid = 8, e.ret = 3, e.ts = 12000;
	e.n_args = 3, e.args = args;
	e.path = bin("/etc/passwd");
	e.abs_path = bin("/etc/passwd");
	event_decode(&v, &e);
	ck_assert_int_eq(callsum__add(s, &v, &call2, 12), 0);
	k1 = finished(s);
	k2 = callsum__call(s, 2);
	ck_assert_uint_eq(k1->n, 2);
	ck_assert_uint_eq(k2->n, 1);
	ck_assert_str_eq(k2->v[0].text, "openat /etc/passwd (read)");
	ck_assert_ptr_eq(k2->v[0].text, k1->v[1].text);
	ck_assert_ptr_ne(k1->v[0].text, k1->v[1].text);
	callsum__free(s);
}
END_TEST

Suite *callsum_suite(void);

Suite *callsum_suite(void)
{
	Suite *s = suite_create("callsum");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, entry_superseded_by_its_completion);
	tcase_add_test(tc, entry_listed_pending_when_the_thread_moves_on);
	tcase_add_test(tc, repeats_counted_threads_not_effects);
	tcase_add_test(tc, many_threads_blocked_at_once);
	tcase_add_test(tc, texts_shared_between_calls);
	suite_add_tcase(s, tc);
	return s;
}
