/*
 * check_forktask.c - forks that define their child's task (trace.proto Event child_task,
 * Header.incompatible_features bit 3; proto/writer_tt.c mcpt_wtt_fork, proto/valtab.c):
 *   writer:  with opts.fork_task a successful fork gets child_task and its child's records
 *            name the task by reference from the first one (no TaskDef of their own), with the
 *            id after the fork's own TaskDef; a failed fork, a child whose credentials changed,
 *            a fork whose chunk closes after it, a task already defined, a full table and a
 *            writer without the option define nothing; the Header carries bit 3 only with it;
 *   round:   such a trace verifies VALID_COMPLETE and every event, streamed, held, through an
 *            excerpt of it, or delivered by a read that skips the forks' kind of Event
 *            (opts.want_event), resolves to exactly the task given to the writer;
 *   hostile: the reader's table refuses child_task on anything but a fork naming its child
 *            (op, ret, each arg) and past 1024 tasks, leaving the event as it was; through
 *            the verifier each is an INVALID segment naming the record; child_task without
 *            bit 3 is refused the same way (a Header with bit 3 but not bit 1: check_trace_bad.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *forktask_suite(void);

#define PARENT 4000u
#define BOOT   71234567890123ull
#define LIB    "/usr/lib/x86_64-linux-gnu/libc.so.6"

static void parent_task(Mcpt__Event *e)
{
	e->pid = e->tid = PARENT;
	e->pstart = BOOT;
	e->uid = e->gid = 1000;
}

/* The child of fork n: its own pid, its parent's credentials. */
static void child_task(Mcpt__Event *e, unsigned n)
{
	e->pid = e->tid = PARENT + 1 + n;
	e->pstart = BOOT + 1000 * (n + 1);
	e->uid = e->gid = 1000;
}

/* A fork by the parent of child n (args as the collector writes them). */
static void fork_of(Mcpt__Event *e, int64_t args[4], unsigned n)
{
	Mcpt__Event c = MCPT__EVENT__INIT;

	child_task(&c, n);
	parent_task(e);
	e->op = MCPT__OP__OP_FORK;
	e->ret = c.pid;
	args[0] = c.pid;
	args[1] = c.tid;
	args[2] = (int64_t)c.pstart;
	args[3] = 17;
	e->args = args;
	e->n_args = 4;
}

static void child_open(Mcpt__Event *e, unsigned n)
{
	child_task(e, n);
	e->op = MCPT__OP__OP_OPENAT;
	e->ret = 3;
	e->path = (ProtobufCBinaryData){strlen(LIB), (uint8_t *)LIB};
}

static void open_tab(struct tl_tab *f, uint32_t chunk_records, bool fork_task)
{
	struct mcpt_writer_opts wo = {.task_table = true, .ts_delta = true, .fork_task = fork_task};

	tl_tab_open_opts(f, chunk_records, 4096, wo, BOOT);
}

static unsigned count_type(const struct tl_bytes *t, uint32_t type)
{
	static struct tl_frame fr[256];
	size_t n = tl_frames(t->p, t->len, fr, 256);
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += fr[i].type == type;
	return k;
}

START_TEST(test_fork_defines_child)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4];

	open_tab(&f, 64, true);
	parent_task(&e);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* the parent, met once: inline */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	fork_of(&e, args, 0);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* the parent's TaskDef (id 1) */
	ck_assert_uint_eq(e.task_ref, 1);
	ck_assert(e.child_task); /* and the child's task, id 2, with no record */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	child_open(&e, 0);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* met first: named at once */
	ck_assert_uint_eq(e.task_ref, 2);
	ck_assert(!(e.pid | e.tid | e.pstart | e.uid | e.gid));
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	child_open(&e, 0);
	e.uid = 0; /* after a setuid: another task */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, PARENT + 1);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	fork_of(&e, args, 1);
	e.ret = -11; /* EAGAIN: no child */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert(!e.child_task);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	fork_of(&e, args, 0); /* the same child again: defined already */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert(!e.child_task);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	child_open(&e, 0);
	e.child_task = true; /* a flag is the writer's to set */
	ck_assert_int_eq(mcpt_writer__event_refs(f.w, &e), -EINVAL);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t),
			  MCPT_FEAT_TASK_TABLE | MCPT_FEAT_TS_DELTA | MCPT_FEAT_FORK_TASK);
	ck_assert_uint_eq(count_type(&t, MCPT_T_TASK_DEF), 1);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_without_option)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4];

	open_tab(&f, 64, false);
	fork_of(&e, args, 0);
	tl_tab_put(&f, &e);
	ck_assert(!e.child_task);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	child_open(&e, 0);
	tl_tab_put(&f, &e);
	ck_assert_uint_eq(e.task_ref, 0);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_TASK_TABLE | MCPT_FEAT_TS_DELTA);
	tl_bytes_free(&t);
}
END_TEST

/* A fork that is its chunk's last record defines nothing for the next chunk. */
START_TEST(test_chunk_boundary)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4];

	open_tab(&f, 2, true);
	fork_of(&e, args, 0); /* record 1: opens chunk 1 */
	tl_tab_put(&f, &e);
	ck_assert(e.child_task);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	fork_of(&e, args, 1); /* record 2: closes it */
	tl_tab_put(&f, &e);
	ck_assert(e.child_task);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	child_open(&e, 1); /* chunk 2: the table is empty again */
	tl_tab_put(&f, &e);
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, PARENT + 2);
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

/* 1024 tasks defined in a chunk (the parent's TaskDef and 1023 children): a fork then defines
 * no more. */
START_TEST(test_bound)
{
	struct tl_tab f;
	struct tl_bytes t;
	int64_t args[4];
	unsigned i;

	open_tab(&f, 4096, true);
	for (i = 0; i < MCPT_VT_MAX_TASKS + 1; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		fork_of(&e, args, i);
		tl_tab_put(&f, &e);
		ck_assert_msg(e.child_task == (i < MCPT_VT_MAX_TASKS - 1), "fork %u", i);
	}
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

/* ---- round ---- */

#define ROUND_FORKS 12
#define ROUND_EVENTS (ROUND_FORKS * 4)

/* Fork i, then its child's exec-like open, an open and a parent's open: events 4i..4i+3. */
static void round_trace(struct tl_bytes *t, uint32_t chunk_records)
{
	struct tl_tab f;
	unsigned i;

	open_tab(&f, chunk_records, true);
	for (i = 0; i < ROUND_FORKS; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;
		int64_t args[4];

		fork_of(&e, args, i);
		tl_tab_put(&f, &e);
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		child_open(&e, i);
		tl_tab_put(&f, &e);
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		child_open(&e, i);
		tl_tab_put(&f, &e);
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		parent_task(&e);
		e.op = MCPT__OP__OP_OPENAT;
		tl_tab_put(&f, &e);
	}
	tl_tab_close(&f, t);
}

static void assert_round(const Mcpt__Event *e, size_t n)
{
	Mcpt__Event want = MCPT__EVENT__INIT;

	if (n % 4 == 1 || n % 4 == 2)
		child_task(&want, (unsigned)(n / 4));
	else
		parent_task(&want);
	ck_assert_uint_eq(e->task_ref, 0);
	ck_assert_uint_eq(e->pid, want.pid);
	ck_assert_uint_eq(e->tid, want.tid);
	ck_assert_uint_eq(e->pstart, want.pstart);
	ck_assert_uint_eq(e->uid, want.uid);
	ck_assert_uint_eq(e->gid, want.gid);
	ck_assert_uint_gt(e->ts, 0);
}

struct seen {
	unsigned events;
	Mcpt__Event got[ROUND_EVENTS];
};

static void on_resolved(void *ctx, enum mcpt_type type, const ProtobufCMessage *m)
{
	struct seen *s = ctx;

	if (type == MCPT_T_EVENT && s->events < ROUND_EVENTS)
		s->got[s->events++] = *(const Mcpt__Event *)m; /* numbers only are read */
}

START_TEST(test_round_trip)
{
	struct tl_bytes t;
	struct seen *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	round_trace(&t, 64);
	ck_assert_uint_eq(count_type(&t, MCPT_T_TASK_DEF), 1); /* the parent's only */
	for (int hold = 0; hold < 2; hold++) {
		memset(s, 0, sizeof(*s));
		tl_verify_resolved(&t, hold, on_resolved, s);
		ck_assert_uint_eq(s->events, ROUND_EVENTS);
		for (size_t i = 0; i < ROUND_EVENTS; i++)
			assert_round(&s->got[i], i);
	}
	free(s);
	tl_bytes_free(&t);
}
END_TEST

static void excerpt_round(void *ctx, const Mcpt__Event *raw, const Mcpt__Event *e, size_t n)
{
	*(size_t *)ctx += raw->task_ref != 0;
	assert_round(e, n);
}

START_TEST(test_excerpt)
{
	struct tl_bytes t;
	size_t refs = 0;

	round_trace(&t, 6); /* chunks that cut fork families apart */
	ck_assert_uint_eq(tl_excerpt_each(&t, excerpt_round, &refs), ROUND_EVENTS);
	ck_assert_uint_gt(refs, ROUND_FORKS);
	tl_bytes_free(&t);
}
END_TEST

static bool only_open(void *ctx, uint32_t op)
{
	(void)ctx;
	return op == MCPT__OP__OP_OPENAT;
}

static int on_open(void *ctx, const struct mcpt_record *rec)
{
	struct seen *s = ctx;
	const Mcpt__Event *e = (const Mcpt__Event *)rec->msg;

	if (rec->type == MCPT_T_EVENT && e && e->op == MCPT__OP__OP_OPENAT &&
	    s->events < ROUND_EVENTS)
		s->got[s->events++] = *e;
	return 0;
}

/* A read that wants only opens still reads every fork: the children's opens resolve. */
START_TEST(test_skipping_read)
{
	struct tl_bytes t;
	struct mcpt_report rep;
	struct seen *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	round_trace(&t, 64);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1, .want_event = only_open},
				   on_open, s, &rep),
			 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(s->events, ROUND_FORKS * 3);
	for (size_t i = 0; i < s->events; i++)
		assert_round(&s->got[i], i / 3 * 4 + i % 3 + 1);
	mcpt_report__fini(&rep);
	free(s);
	tl_bytes_free(&t);
}
END_TEST

/* ---- hostile ---- */

/* A fork of child 0 flagged, with one part changed by `how`, fed to t in chunk 1. */
static int feed_fork(struct mcpt_valtab *t, int how, char *why)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4];

	fork_of(&e, args, 0);
	e.child_task = true;
	switch (how) {
	case 1: e.op = MCPT__OP__OP_OPENAT; break;
	case 2: e.ret = -11; break;
	case 3: e.ret = 0; break;
	case 4: e.n_args = 2; break;
	case 5: args[0] = 0; break;
	case 6: args[1] = (int64_t)UINT32_MAX + 1; break;
	case 7: args[2] = 0; break;
	case 8: args[0] = -1; break;
	default: break;
	}
	return mcpt_valtab__feed(t, 1, MCPT_T_EVENT, &e.base, why, 160);
}

static int feed_ref(struct mcpt_valtab *t, uint32_t id, Mcpt__Event *e, char *why)
{
	*e = (Mcpt__Event)MCPT__EVENT__INIT;
	e->task_ref = id;
	return mcpt_valtab__feed(t, 1, MCPT_T_EVENT, &e->base, why, 160);
}

START_TEST(test_table_hostile)
{
	struct mcpt_valtab *t = mcpt_valtab__new();
	Mcpt__TaskDef d = MCPT__TASK_DEF__INIT;
	Mcpt__Event e;
	char why[160];
	unsigned i;

	ck_assert_ptr_nonnull(t);
	for (int how = 1; how <= 8; how++) {
		ck_assert_int_eq(feed_fork(t, how, why), -EBADMSG);
		ck_assert_str_eq(why, "Event has child_task but is not a fork naming its child (op "
				      "OP_FORK, ret > 0, args tgid, tid, pstart)");
	}
	ck_assert_int_eq(feed_ref(t, 1, &e, why), -EBADMSG); /* none of them defined a task */
	ck_assert_int_eq(feed_fork(t, 0, why), 0);
	ck_assert_int_eq(feed_ref(t, 1, &e, why), 0);
	ck_assert_uint_eq(e.pid, PARENT + 1);
	ck_assert_uint_eq(e.tid, PARENT + 1);
	ck_assert_uint_eq(e.pstart, BOOT + 1000);
	ck_assert_uint_eq(e.uid, 1000);
	ck_assert_uint_eq(e.gid, 1000);
	ck_assert_int_eq(feed_ref(t, 2, &e, why), -EBADMSG);
	d.id = 2; /* a TaskDef after it takes the next id */
	d.pid = 7;
	ck_assert_int_eq(mcpt_valtab__feed(t, 1, MCPT_T_TASK_DEF, &d.base, why, sizeof(why)), 0);
	for (i = 3; i <= MCPT_VT_MAX_TASKS; i++)
		ck_assert_int_eq(feed_fork(t, 0, why), 0);
	ck_assert_int_eq(feed_fork(t, 0, why), -EBADMSG);
	ck_assert_str_eq(why, "Event child_task: more than 1024 tasks in one chunk");
	mcpt_valtab__free(t);
}
END_TEST

static void forge_fork(struct forge *f, int how)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4];
	uint8_t buf[96];

	fork_of(&e, args, 0);
	e.ts = f->now;
	e.child_task = true;
	if (how == 1)
		e.ret = -11;
	forge_record(f, MCPT_T_EVENT, buf, mcpt__event__pack(&e, buf));
}

static void forge_child(struct forge *f)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	uint8_t buf[64];

	e.ts = f->now;
	e.op = MCPT__OP__OP_OPENAT;
	e.task_ref = 1;
	forge_record(f, MCPT_T_EVENT, buf, mcpt__event__pack(&e, buf));
}

START_TEST(test_verify_hostile)
{
	static const char *const want[] = {
		"record 1: Event has child_task but is not a fork naming its child (op OP_FORK, "
		"ret > 0, args tgid, tid, pstart)",
		"record 5: Event task_ref 1 names a task not defined in its chunk (0 defined "
		"before it)",
	};
	uint64_t bits = MCPT_FEAT_TASK_TABLE | MCPT_FEAT_FORK_TASK;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_fork(&f, 1);  /* 1: a failed fork */
	forge_seal(&f, 0);  /* 2 */
	forge_fork(&f, 0);  /* 3: good, but its chunk ends at the seal */
	forge_seal(&f, 0);  /* 4 */
	forge_child(&f);    /* 5: another chunk */
	forge_seal(&f, 0);  /* 6 */
	forge_fork(&f, 0);  /* 7 */
	forge_child(&f);    /* 8: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 2, &rep);
	ck_assert_uint_eq(rep.first_bad_record, 1);
	ck_assert(rep.final);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* child_task in a trace whose header declares the task table but not fork tasks. */
START_TEST(test_undeclared)
{
	static const char *const want[] = {
		"record 1: child_task in a trace whose header does not declare fork tasks "
		"(incompatible_features bit 3)",
	};
	uint64_t bits = MCPT_FEAT_TASK_TABLE;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_fork(&f, 0); /* 1 */
	forge_seal(&f, 0); /* 2 */
	forge_event(&f, 1); /* 3: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 1, &rep);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

Suite *forktask_suite(void)
{
	Suite *s = suite_create("forktask");
	TCase *w = tcase_create("writer"), *r = tcase_create("round"), *h = tcase_create("hostile");

	tcase_add_test(w, test_fork_defines_child);
	tcase_add_test(w, test_without_option);
	tcase_add_test(w, test_chunk_boundary);
	tcase_add_test(w, test_bound);
	tcase_add_test(r, test_round_trip);
	tcase_add_test(r, test_excerpt);
	tcase_add_test(r, test_skipping_read);
	tcase_add_test(h, test_table_hostile);
	tcase_add_test(h, test_verify_hostile);
	tcase_add_test(h, test_undeclared);
	tcase_set_timeout(w, 60);
	tcase_set_timeout(r, 60);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	suite_add_tcase(s, h);
	return s;
}
