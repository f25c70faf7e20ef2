/*
 * check_exec_search.c - failed execs grouped into PATH searches (analyzer/exec_search.c) and
 * what the engine makes of them: a search ended by the exec that found the program is one
 * finding on that exec, carrying the failed attempts; one never ended is one finding on its last
 * attempt at the end of the trace; another program or another thread starts a search of its
 * own; a path without a program name, a name too long and searches past the cap are not held;
 * a search taken or dropped is found no more.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "exec_search.h"
#include "policy_testlib.h"

#define POLICY                                                                                     \
	"version: 1\nrules:\n"                                                                     \
	"- {id: failed, description: d, severity: high, category: c, condition: {op: "             \
	"exec_failed}, message: \"{path} after {attempts}\"}\n"                                    \
	"- {id: ran, description: d, severity: low, category: c, condition: {op: exec}, "          \
	"message: \"{path} after {attempts}\"}\n"

static struct policy *pol;
static struct engine *eng;
static uint64_t n_records;

static void setup(void)
{
	pol = policy_from_text(POLICY);
	ck_assert_ptr_nonnull(pol);
	eng = engine__new(pol, 0);
	ck_assert_ptr_nonnull(eng);
	n_records = 0;
}

static void teardown(void)
{
	engine__free(eng);
	policy__free(pol);
}

static void exec_ev(Mcpt__Event *e, uint32_t tid, const char *path, bool found)
{
	*e = (Mcpt__Event)MCPT__EVENT__INIT;
	e->op = found ? MCPT__OP__OP_EXEC : MCPT__OP__OP_EXEC_FAILED;
	e->pid = e->tid = tid;
	e->seq = n_records + 1;
	e->path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	e->ret = found ? 0 : -2;
}

/* Feeds one exec or failed exec of thread tid to the engine. */
static void feed(uint32_t tid, const char *path, bool found)
{
	Mcpt__Event e;

	exec_ev(&e, tid, path, found);
	ck_assert_int_eq(engine__event(eng, &e, ++n_records), 0);
}

static const struct finding *finish(size_t want)
{
	struct findings *fs;

	ck_assert_int_eq(engine__finish(eng), 0);
	fs = engine__findings(eng);
	ck_assert_uint_eq(fs->n, want);
	findings_sort(fs, ORDER_SEQUENCE);
	return fs->v;
}

START_TEST(search_found)
{
	const struct finding *f;

	feed(100, "/usr/local/bin/foo", false);
	feed(100, "/usr/bin/foo", false);
	ck_assert_uint_eq(engine__findings(eng)->n, 0); /* held while the search goes on */
	feed(100, "/bin/foo", true);
	f = finish(1);
	ck_assert_str_eq(f[0].rule->id, "ran");
	ck_assert_uint_eq(f[0].index, 3);
	ck_assert_uint_eq(f[0].attempts, 2);
	ck_assert_str_eq(f[0].attempted, "/usr/local/bin/foo, /usr/bin/foo");
	ck_assert_str_eq(f[0].message, "/bin/foo after 2");
}
END_TEST

START_TEST(search_never_ends)
{
	const struct finding *f;

	feed(100, "/usr/local/bin/foo", false);
	feed(100, "/usr/bin/foo", false);
	feed(100, "/bin/foo", false);
	f = finish(1);
	ck_assert_str_eq(f[0].rule->id, "failed");
	ck_assert_uint_eq(f[0].index, 3); /* the last attempt */
	ck_assert_uint_eq(f[0].attempts, 3);
	ck_assert_str_eq(f[0].attempted, "/usr/local/bin/foo, /usr/bin/foo, /bin/foo");
	ck_assert_str_eq(f[0].message, "/bin/foo after 3");
}
END_TEST

START_TEST(search_ended_by_another_program)
{
	const struct finding *f;

	feed(100, "/usr/bin/foo", false);
	feed(100, "/bin/foo", false);
	feed(100, "/usr/bin/bar", false); /* foo's search is over, unfound; bar's begins */
	ck_assert_uint_eq(engine__findings(eng)->n, 1);
	feed(100, "/bin/sh", true); /* ends bar's, and is an exec of its own */
	f = finish(3);
	ck_assert_str_eq(f[0].rule->id, "failed");
	ck_assert_uint_eq(f[0].attempts, 2);
	ck_assert_str_eq(f[0].attempted, "/usr/bin/foo, /bin/foo");
	ck_assert_str_eq(f[1].rule->id, "failed");
	ck_assert_uint_eq(f[1].attempts, 1);
	ck_assert_str_eq(f[1].attempted, "/usr/bin/bar");
	ck_assert_str_eq(f[2].rule->id, "ran");
	ck_assert_uint_eq(f[2].attempts, 0);
	ck_assert_ptr_null(f[2].attempted);
}
END_TEST

START_TEST(searches_per_thread)
{
	const struct finding *f;

	feed(100, "/usr/bin/foo", false);
	feed(200, "/usr/bin/foo", false);
	feed(100, "/bin/foo", false);
	f = finish(2);
	for (int i = 0; i < 2; i++)
		ck_assert_str_eq(f[i].rule->id, "failed");
	ck_assert_uint_eq(f[0].tid + f[1].tid, 300);
	ck_assert_uint_eq(f[0].tid == 100 ? f[0].attempts : f[1].attempts, 2);
	ck_assert_uint_eq(f[0].tid == 200 ? f[0].attempts : f[1].attempts, 1);
}
END_TEST

/* The module alone: what it refuses to hold, and its cap. */
START_TEST(not_held)
{
	struct exec_searches s = {0};
	struct exec_search done;
	char name[300], path[320];
	struct ev_view v;
	Mcpt__Event e;

	exec_ev(&e, 1, "/usr/bin/", false);
	event_decode(&v, &e);
	ck_assert_int_eq(exec_search_start(&s, &v, 1), 1); /* no program name */
	memset(name, 'x', 256);
	name[256] = '\0';
	snprintf(path, sizeof(path), "/bin/%s", name);
	exec_ev(&e, 1, path, false);
	event_decode(&v, &e);
	ck_assert_int_eq(exec_search_start(&s, &v, 1), 1); /* a name longer than kept */
	name[255] = '\0';
	snprintf(path, sizeof(path), "/bin/%s", name);
	exec_ev(&e, 1, path, false);
	event_decode(&v, &e);
	ck_assert_int_eq(exec_search_start(&s, &v, 1), 0);
	ck_assert_uint_eq(s.n, 1);
	for (uint32_t tid = 2; tid <= EXEC_SEARCH_MAX; tid++) {
		exec_ev(&e, tid, "/bin/foo", false);
		event_decode(&v, &e);
		ck_assert_int_eq(exec_search_start(&s, &v, tid), 0);
	}
	exec_ev(&e, 9999, "/bin/foo", false);
	event_decode(&v, &e);
	ck_assert_int_eq(exec_search_start(&s, &v, 9999), 1); /* past the cap */
	ck_assert_ptr_null(exec_search_find(&s, &v));
	exec_ev(&e, 2, "/usr/bin/foo", true);
	event_decode(&v, &e);
	ck_assert_ptr_nonnull(exec_search_find(&s, &v));
	ck_assert(exec_search_same(exec_search_find(&s, &v), &v));
	exec_search_take(&s, exec_search_find(&s, &v), &done);
	ck_assert_uint_eq(done.tid, 2);
	ck_assert_uint_eq(s.n, EXEC_SEARCH_MAX - 1);
	ck_assert_ptr_null(exec_search_find(&s, &v));
	exec_search_fini(&done);
	exec_ev(&e, 3, "/bin/foo", true);
	event_decode(&v, &e);
	exec_search_drop(&s, exec_search_find(&s, &v));
	ck_assert_uint_eq(s.n, EXEC_SEARCH_MAX - 2);
	ck_assert_ptr_null(exec_search_find(&s, &v));
	exec_searches_fini(&s);
	ck_assert_uint_eq(s.n, 0);
}
END_TEST

Suite *exec_search_suite(void);

Suite *exec_search_suite(void)
{
	Suite *s = suite_create("exec_search");
	TCase *tc = tcase_create("engine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, search_found);
	tcase_add_test(tc, search_never_ends);
	tcase_add_test(tc, search_ended_by_another_program);
	tcase_add_test(tc, searches_per_thread);
	suite_add_tcase(s, tc);
	tc = tcase_create("module");
	tcase_add_test(tc, not_held);
	suite_add_tcase(s, tc);
	return s;
}
