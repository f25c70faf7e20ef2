/*
 * check_tasktab.c - the task table (trace.proto TaskDef, Event task_ref; proto/valtab.c and
 * proto/writer_tt.c), the counterpart of check_valtab.c for values:
 *   writer:  a task (pid, tid, pstart, uid, gid) is inline the first time its chunk meets it
 *            and defined (one TaskDef just before the event, after the event's PathDefs, in
 *            the same chunk) the second time; a task too short to be worth a reference is never
 *            defined; the table empties at each chunk; definitions that would not share the
 *            event's chunk are not written; past 1024 tasks a chunk's new tasks stay inline;
 *            the Header carries bit 1 (and bit 0 only with the value table);
 *   round:   a trace written with both tables verifies VALID_COMPLETE and every event handed to
 *            the callback (streamed, or held and unpacked by the caller with rec.chunk) resolves
 *            to exactly the task given to the writer; an excerpt of every event proves it and
 *            resolves its task from its own chunk;
 *   hostile: the reader's table refuses an undefined task id, a forward reference, a task from
 *            another chunk, ids 0 / out of order / repeated / 2^32-1, an empty TaskDef, an
 *            event with both task_ref and a field of its own, the 1025th task, each with one
 *            line; through the verifier each is an INVALID segment (E_RECORD_PARSE) naming the
 *            record; TaskDef or task_ref in a trace without bit 1 is refused the same way.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *tasktab_suite(void);

#define PA "/usr/lib/python3/dist-packages/a.py"

/* The n-th task of the tests: realistic widths (pstart in boot-time ns). */
static void task_n(Mcpt__Event *e, unsigned n)
{
	e->pid = 4000 + n;
	e->tid = 4000 + n + (n % 3);
	e->pstart = 71234567890123ull + n * 1000;
	e->uid = 1000 + n % 2;
	e->gid = 1000;
}

static void assert_task(const Mcpt__Event *e, unsigned n)
{
	Mcpt__Event want = MCPT__EVENT__INIT;

	task_n(&want, n);
	ck_assert_uint_eq(e->task_ref, 0);
	ck_assert_uint_eq(e->pid, want.pid);
	ck_assert_uint_eq(e->tid, want.tid);
	ck_assert_uint_eq(e->pstart, want.pstart);
	ck_assert_uint_eq(e->uid, want.uid);
	ck_assert_uint_eq(e->gid, want.gid);
}

static bool no_task(const Mcpt__Event *e)
{
	return !(e->pid | e->tid | e->pstart | e->uid | e->gid);
}

START_TEST(test_second_meeting)
{
	struct tl_tab f;
	struct tl_bytes t;
	struct tl_frame fr[16];
	Mcpt__Event e = MCPT__EVENT__INIT;
	Mcpt__TaskDef *d;

	tl_tab_open(&f, 64, 4096, false, true);
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* met once: inline */
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, 4001);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* met again: defined, then referenced */
	ck_assert_uint_eq(e.task_ref, 1);
	ck_assert(no_task(&e));
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* defined: referenced */
	ck_assert_uint_eq(e.task_ref, 1);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.pid = 7; /* 2 bytes inline: never worth a reference */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.pid = 7;
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, 7);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* no value table: the path stays inline */
	ck_assert_uint_eq(e.path_ref, 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	e.task_ref = 1; /* an event already holding a reference is refused, nothing written */
	ck_assert_int_eq(mcpt_writer__event_refs(f.w, &e), -EINVAL);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_TASK_TABLE);
	ck_assert_uint_eq(tl_frames(t.p, t.len, fr, 16), 9); /* hdr, 6 ev, def, seal */
	ck_assert_uint_eq(fr[2].type, MCPT_T_TASK_DEF);
	d = mcpt__task_def__unpack(NULL, fr[2].blen, t.p + fr[2].body);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->id, 1);
	ck_assert_uint_eq(d->pid, 4001);
	ck_assert_uint_eq(d->pstart, 71234567891123ull);
	mcpt__task_def__free_unpacked(d, NULL);
	tl_bytes_free(&t);
}
END_TEST

/* Both tables: the event's PathDefs, then its TaskDef, then the event; own id spaces. */
START_TEST(test_with_values)
{
	struct tl_tab f;
	struct tl_bytes t;
	struct tl_frame fr[16];
	Mcpt__Event e = MCPT__EVENT__INIT;
	unsigned i;

	tl_tab_open(&f, 64, 4096, true, true);
	for (i = 0; i < 2; i++) {
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		task_n(&e, 5);
		e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
		ck_assert_uint_eq(tl_tab_put(&f, &e), i == 0 ? 0 : 2);
	}
	ck_assert_uint_eq(e.path_ref, 1);
	ck_assert_uint_eq(e.task_ref, 1);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 6);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 6);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1);
	ck_assert_uint_eq(e.task_ref, 2);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_VALUE_TABLE | MCPT_FEAT_TASK_TABLE);
	ck_assert_uint_eq(tl_frames(t.p, t.len, fr, 16), 9); /* hdr ev pd td ev ev td ev seal */
	ck_assert_uint_eq(fr[2].type, MCPT_T_PATH_DEF);
	ck_assert_uint_eq(fr[3].type, MCPT_T_TASK_DEF);
	ck_assert_uint_eq(fr[6].type, MCPT_T_TASK_DEF);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_chunk_boundary)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;

	tl_tab_open(&f, 4, 4096, true, true);
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* chunk 1: record 1 */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* def (2), event (3) */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* reference (4): the chunk closes */
	ck_assert_uint_eq(e.task_ref, 1);
	ck_assert_uint_eq(mcpt_writer__chunk(f.w), 2);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* a new chunk: met for the first time there */
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, 4001);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* no task: 2 of 4 records in the chunk */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 1);
	e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
	/* a PathDef, a TaskDef and the event need 3 records, 2 are left: neither is defined */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert_uint_eq(e.task_ref + e.path_ref, 0);
	ck_assert_uint_eq(e.pid, 4001);
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
	/* a count seal ends the chunk too: with one record left in the segment, no definition */
	tl_tab_open(&f, 64, 3, false, true);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 2);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 2);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* 1 + 1 < 3: def and event end the segment */
	ck_assert_uint_eq(mcpt_writer__seals(f.w), 1);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 2);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* the next segment's chunk: met for the first time */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	task_n(&e, 2);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* 2 + 1 < 3 fails: the seal would come between */
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(mcpt_writer__seals(f.w), 2);
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_bound_tasks)
{
	struct tl_tab f;
	struct tl_bytes t;
	unsigned n, i;

	tl_tab_open(&f, 65536, 65536, false, true);
	for (n = 0; n < MCPT_VT_MAX_TASKS + 6; n++) { /* the table fills at 1024 */
		Mcpt__Event e = MCPT__EVENT__INIT;

		task_n(&e, n);
		ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	}
	for (i = 0; i < 2; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		task_n(&e, 3); /* in the table: defined */
		ck_assert_uint_eq(tl_tab_put(&f, &e), i == 0 ? 1 : 0);
		ck_assert_uint_eq(e.task_ref, 1);
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		task_n(&e, MCPT_VT_MAX_TASKS + 3); /* met past the bound: inline */
		ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
		ck_assert_uint_eq(e.task_ref, 0);
	}
	tl_tab_close(&f, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1}, NULL, NULL,
				   &(struct mcpt_report){0}),
			 0);
	tl_bytes_free(&t);
}
END_TEST

/* ---- round trip ---- */

#define ROUND_EVENTS 60

struct seen {
	unsigned events, defs;
	Mcpt__Event got[ROUND_EVENTS];
};

static void on_resolved(void *ctx, enum mcpt_type type, const ProtobufCMessage *m)
{
	struct seen *s = ctx;

	if (type == MCPT_T_TASK_DEF)
		s->defs++;
	else if (type == MCPT_T_EVENT && s->events < ROUND_EVENTS)
		s->got[s->events++] = *(const Mcpt__Event *)m; /* numbers only are read */
}

/* Task of the i-th round event: a few tasks in turn, some met once per chunk. */
static unsigned round_task(unsigned i)
{
	static const unsigned order[] = {1, 2, 1, 1, 3, 2, 2, 4, 1, 5};

	return order[i % 10];
}

static void round_trace(struct tl_bytes *t)
{
	struct tl_tab f;
	unsigned i;

	tl_tab_open(&f, 5, 4096, true, true); /* small chunks: definitions in many of them */
	for (i = 0; i < ROUND_EVENTS; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		task_n(&e, round_task(i));
		e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
		tl_tab_put(&f, &e);
	}
	tl_tab_close(&f, t);
}

static void check_round(bool hold)
{
	struct tl_bytes t;
	struct seen *s = calloc(1, sizeof(*s));
	unsigned i;

	ck_assert_ptr_nonnull(s);
	round_trace(&t);
	tl_verify_resolved(&t, hold, on_resolved, s);
	ck_assert_uint_eq(s->events, ROUND_EVENTS);
	ck_assert_uint_gt(s->defs, 5);
	for (i = 0; i < ROUND_EVENTS; i++)
		assert_task(&s->got[i], round_task(i));
	free(s);
	tl_bytes_free(&t);
}

START_TEST(test_round_trip)
{
	check_round(false);
	check_round(true);
}
END_TEST

static void excerpt_task(void *ctx, const Mcpt__Event *raw, const Mcpt__Event *e, size_t n)
{
	*(size_t *)ctx += raw->task_ref != 0;
	assert_task(e, round_task((unsigned)n));
}

START_TEST(test_excerpt)
{
	struct tl_bytes t;
	size_t refs = 0;

	round_trace(&t);
	ck_assert_uint_eq(tl_excerpt_each(&t, excerpt_task, &refs), ROUND_EVENTS);
	ck_assert_uint_gt(refs, 10);
	tl_bytes_free(&t);
}
END_TEST

/* ---- hostile ---- */

static int feed_def(struct mcpt_valtab *t, uint64_t chunk, uint32_t id, uint32_t pid, char *why)
{
	Mcpt__TaskDef d = MCPT__TASK_DEF__INIT;

	d.id = id;
	d.pid = pid;
	d.pstart = pid ? 71234567890123ull : 0;
	return mcpt_valtab__feed(t, chunk, MCPT_T_TASK_DEF, &d.base, why, 160);
}

static int feed_ref(struct mcpt_valtab *t, uint64_t chunk, uint32_t id, char *why)
{
	Mcpt__Event e = MCPT__EVENT__INIT;

	e.task_ref = id;
	return mcpt_valtab__feed(t, chunk, MCPT_T_EVENT, &e.base, why, 160);
}

START_TEST(test_table_hostile)
{
	struct mcpt_valtab *t = mcpt_valtab__new();
	Mcpt__Event e = MCPT__EVENT__INIT;
	Mcpt__PathDef pd = MCPT__PATH_DEF__INIT;
	char why[160];
	unsigned i;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(feed_ref(t, 1, 1, why), -EBADMSG); /* undefined */
	ck_assert_str_eq(why, "Event task_ref 1 names a task not defined in its chunk (0 defined "
			      "before it)");
	pd.id = 1; /* a value: its own id space, defines no task */
	pd.value = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
	ck_assert_int_eq(mcpt_valtab__feed(t, 1, MCPT_T_PATH_DEF, &pd.base, why, sizeof(why)), 0);
	ck_assert_int_eq(feed_ref(t, 1, 1, why), -EBADMSG);
	ck_assert_int_eq(feed_def(t, 1, 1, 4001, why), 0); /* forward: defined after the ref */
	ck_assert_int_eq(feed_ref(t, 1, 1, why), 0);
	ck_assert_int_eq(feed_ref(t, 2, 1, why), -EBADMSG);	      /* defined in another chunk */
	ck_assert_int_eq(feed_ref(t, 2, 0xffffffffu, why), -EBADMSG); /* huge */
	ck_assert_int_eq(feed_def(t, 2, 0, 4001, why), -EBADMSG);
	ck_assert_str_eq(why, "TaskDef defines id 0 where its chunk's next task id is 1");
	ck_assert_int_eq(feed_def(t, 2, 0xffffffffu, 4001, why), -EBADMSG);
	ck_assert_int_eq(feed_def(t, 2, 2, 4001, why), -EBADMSG); /* out of order */
	ck_assert_int_eq(feed_def(t, 2, 1, 4001, why), 0);
	ck_assert_int_eq(feed_def(t, 2, 1, 4002, why), -EBADMSG); /* repeated */
	ck_assert_int_eq(feed_def(t, 2, 2, 0, why), -EBADMSG);	  /* empty */
	ck_assert_str_eq(why, "TaskDef id 2 defines an empty task");
	e.task_ref = 1;
	e.gid = 5;
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)),
			 -EBADMSG);
	ck_assert_str_eq(why, "Event has both task_ref 1 and its own pid, tid, pstart, uid or gid");
	ck_assert_uint_eq(e.task_ref, 1); /* a refused event is left as it was */
	ck_assert_uint_eq(e.gid, 5);
	e.gid = 0;
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.task_ref, 0);
	ck_assert_uint_eq(e.pid, 4001);
	ck_assert_uint_eq(e.pstart, 71234567890123ull);
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.pid, 4001); /* fed twice: harmless */
	for (i = 2; i <= MCPT_VT_MAX_TASKS; i++) /* the bound on tasks */
		ck_assert_int_eq(feed_def(t, 2, i, i, why), 0);
	ck_assert_int_eq(feed_def(t, 2, i, i, why), -EBADMSG);
	ck_assert_str_eq(why, "TaskDef id 1025: more than 1024 tasks in one chunk");
	mcpt_valtab__free(t);
}
END_TEST

static void forge_def(struct forge *f, uint32_t id)
{
	Mcpt__TaskDef d = MCPT__TASK_DEF__INIT;
	uint8_t buf[64];

	d.id = id;
	d.pid = 4001;
	d.tid = 4001;
	d.pstart = 71234567890123ull;
	forge_record(f, MCPT_T_TASK_DEF, buf, mcpt__task_def__pack(&d, buf));
}

static void forge_ref(struct forge *f, uint32_t id, uint32_t pid)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	uint8_t buf[64];

	e.ts = f->now;
	e.op = MCPT__OP__OP_OPENAT;
	e.task_ref = id;
	e.pid = pid;
	forge_record(f, MCPT_T_EVENT, buf, mcpt__event__pack(&e, buf));
}

/* Each hostile segment is BAD with one line naming its record; good ones stay good. */
START_TEST(test_verify_hostile)
{
	static const char *const want[] = {
		"record 2: Event task_ref 1 names a task not defined in its chunk (0 defined "
		"before it)",
		"record 4: Event task_ref 1 names a task not defined in its chunk (0 defined "
		"before it)",
		"record 9: Event task_ref 1 names a task not defined in its chunk (0 defined "
		"before it)",
		"record 11: TaskDef defines id 4294967295 where its chunk's next task id is 1",
		"record 14: Event task_ref 4294967295 names a task not defined in its chunk (1 "
		"defined before it)",
		"record 17: Event has both task_ref 1 and its own pid, tid, pstart, uid or gid",
	};
	uint64_t bits = MCPT_FEAT_TASK_TABLE;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_event(&f, 1);	    /* 1 */
	forge_ref(&f, 1, 0);	    /* 2: undefined */
	forge_seal(&f, 0);	    /* 3 */
	forge_ref(&f, 1, 0);	    /* 4: forward reference */
	forge_def(&f, 1);	    /* 5 */
	forge_seal(&f, 0);	    /* 6 */
	forge_def(&f, 1);	    /* 7 */
	forge_seal(&f, 0);	    /* 8: ends the chunk (a good segment) */
	forge_ref(&f, 1, 0);	    /* 9: defined in another chunk */
	forge_seal(&f, 0);	    /* 10 */
	forge_def(&f, 0xffffffffu); /* 11: huge id */
	forge_seal(&f, 0);	    /* 12 */
	forge_def(&f, 1);	    /* 13 */
	forge_ref(&f, 0xffffffffu, 0); /* 14: huge reference */
	forge_seal(&f, 0);	    /* 15 */
	forge_def(&f, 1);	    /* 16 */
	forge_ref(&f, 1, 42);	    /* 17: a reference and a pid */
	forge_seal(&f, 0);	    /* 18 */
	forge_def(&f, 1);	    /* 19 */
	forge_ref(&f, 1, 0);	    /* 20: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 6, &rep);
	ck_assert_uint_eq(rep.first_bad_record, 1);
	ck_assert_uint_eq(rep.seals, 8);
	ck_assert(rep.final);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* A task record in a trace whose header declares the value table only (bit 0) is refused. */
START_TEST(test_undeclared_table)
{
	static const char *const want[] = {
		"record 1: TaskDef in a trace whose header does not declare the task table "
		"(incompatible_features bit 1)",
		"record 4: task reference in a trace whose header does not declare the task "
		"table (incompatible_features bit 1)",
	};
	uint64_t bits = MCPT_FEAT_VALUE_TABLE;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_def(&f, 1);    /* 1 */
	forge_ref(&f, 1, 0); /* 2 */
	forge_seal(&f, 0);   /* 3 */
	forge_ref(&f, 1, 0); /* 4: a reference alone */
	forge_seal(&f, 0);   /* 5 */
	forge_event(&f, 1);  /* 6: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 2, &rep);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

Suite *tasktab_suite(void)
{
	Suite *s = suite_create("tasktab");
	TCase *w = tcase_create("writer"), *r = tcase_create("round"), *h = tcase_create("hostile");

	tcase_add_test(w, test_second_meeting);
	tcase_add_test(w, test_with_values);
	tcase_add_test(w, test_chunk_boundary);
	tcase_add_test(w, test_bound_tasks);
	tcase_add_test(r, test_round_trip);
	tcase_add_test(r, test_excerpt);
	tcase_add_test(h, test_table_hostile);
	tcase_add_test(h, test_verify_hostile);
	tcase_add_test(h, test_undeclared_table);
	tcase_set_timeout(w, 60);
	tcase_set_timeout(r, 60);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	suite_add_tcase(s, h);
	return s;
}
