/*
 * check_tsdelta.c - event timestamps as deltas within a chunk (trace.proto Event ts_delta,
 * Header bit 2; proto/writer_tt.c writes them, proto/valtab.c resolves them):
 *   writer:  the first Event of each chunk carries its absolute ts, the later ones ts_delta
 *            (negative when out of time order) whenever it is shorter; a delta of 0, a ts of 0
 *            and a sign the int64 cannot hold stay absolute; an Event appended without
 *            event_refs is still the next one's base; the Header carries bit 2;
 *   round:   a trace with deltas and both tables verifies VALID_COMPLETE and every event handed
 *            to the callback (streamed, or held and unpacked by the caller) resolves to exactly
 *            the ts given to the writer; an excerpt of every event resolves its ts from its
 *            own chunk;
 *   hostile: the reader's table refuses ts_delta on a chunk's first Event, beside a ts, or
 *            leaving the clock's range (below 1, past 2^64-1, INT64_MIN), with one line and
 *            the event left as it was; through the verifier each is an INVALID segment
 *            (E_RECORD_PARSE) naming the record; ts_delta without bit 2 is refused the same way.
 *   skipped: a read that skips the Events it does not want (mcpt_verify_opts.want_event, the
 *            analyzer's model pass) still takes their clocks: the Events it delivers have the
 *            ts, paths, tasks and chunks of a full read (PathDefs feed the table but are not
 *            delivered), its verdict and counts are the same,
 *            and the hostile clocks above are refused the same way when every Event is
 *            skipped; the same through a skimming read (opts.skim, nothing hashed), whose
 *            verdict is VALID_PREFIX, unverified, and which refuses a key.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *tsdelta_suite(void);

#define BOOT 71234567890123ull /* a boot time of ~20 h, in ns */
#define PA   "/usr/lib/python3/dist-packages/a.py"

static void open_ts(struct tl_tab *f, uint32_t chunk_records, bool tables)
{
	struct mcpt_writer_opts wo = {.ts_delta = true, .value_table = tables,
				      .task_table = tables};

	tl_tab_open_opts(f, chunk_records, 4096, wo, BOOT + 1000000000);
}

/* Puts an event stamped ts; checks whether it was written with a delta (and which). */
static void put(struct tl_tab *f, uint64_t ts, int64_t want_delta)
{
	Mcpt__Event e = MCPT__EVENT__INIT;

	e.op = MCPT__OP__OP_OPENAT;
	tl_tab_put_at(f, &e, ts);
	ck_assert_int_eq(e.ts_delta, want_delta);
	ck_assert_uint_eq(e.ts, want_delta ? 0 : ts);
}

START_TEST(test_writer_deltas)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;

	open_ts(&f, 8, false);
	put(&f, BOOT, 0);		  /* 1: the chunk's first: absolute */
	put(&f, BOOT + 3000, 3000);	  /* 2 */
	put(&f, BOOT + 2500, -500);	  /* 3: another CPU's, a little earlier */
	put(&f, BOOT + 2500, 0);	  /* 4: delta 0 cannot be written: absolute */
	put(&f, 0, 0);			  /* 5: no ts */
	put(&f, BOOT + 9000, 0);	  /* 6: from 0 the delta is no shorter */
	e.ts = BOOT + 9100; /* 7: appended without event_refs (the collector's unfinished ones) */
	ck_assert_int_eq(mcpt_writer__append(f.w, MCPT_T_EVENT, &e.base, e.ts), 0);
	put(&f, BOOT + 9150, 50);	  /* 8: its base is 7; the chunk closes */
	put(&f, BOOT + 9200, 0);	  /* 9: the next chunk's first */
	put(&f, UINT64_MAX, 0);		  /* 10: |delta| >= 2^63: absolute */
	put(&f, BOOT, 0);		  /* 11: the same the other way */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.ts = BOOT;
	e.ts_delta = 1; /* the writer's to set */
	ck_assert_int_eq(mcpt_writer__event_refs(f.w, &e), -EINVAL);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_TS_DELTA);
	tl_bytes_free(&t);
	/* without the option: never a delta, and no bit */
	tl_tab_open(&f, 8, 4096, true, true);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	tl_tab_put(&f, &e);
	tl_tab_put(&f, &e);
	ck_assert_int_eq(e.ts_delta, 0);
	ck_assert_uint_ne(e.ts, 0);
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_VALUE_TABLE | MCPT_FEAT_TASK_TABLE);
	tl_bytes_free(&t);
}
END_TEST

/* With both tables: an event's definitions come before it in its chunk (never first in a
 * chunk, as a chunk's table starts empty), and the event's delta is from the previous Event. */
START_TEST(test_with_tables)
{
	struct tl_tab f;
	struct tl_bytes t;
	struct tl_frame fr[16];
	Mcpt__Event e;
	unsigned i;

	open_ts(&f, 4, true);
	for (i = 0; i < 4; i++) {
		e = (Mcpt__Event)MCPT__EVENT__INIT;
		e.pid = e.tid = 4001;
		e.pstart = BOOT;
		e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
		tl_tab_put_at(&f, &e, BOOT + i * 1000);
		ck_assert_uint_eq(e.path_ref, i % 2);
		ck_assert_int_eq(e.ts_delta, i % 2 ? 1000 : 0);
	}
	tl_tab_close(&f, &t);
	ck_assert_uint_eq(tl_header_features(&t), MCPT_FEAT_VALUE_TABLE | MCPT_FEAT_TASK_TABLE |
						MCPT_FEAT_TS_DELTA);
	/* hdr | ev pd td ev | ev pd td ev | seal */
	ck_assert_uint_eq(tl_frames(t.p, t.len, fr, 16), 10);
	ck_assert_uint_eq(fr[4].type, MCPT_T_EVENT);
	ck_assert_uint_eq(fr[6].type, MCPT_T_PATH_DEF);
	tl_bytes_free(&t);
}
END_TEST

/* ---- round trip ---- */

#define ROUND_EVENTS 70

struct seen {
	unsigned events;
	uint64_t ts[ROUND_EVENTS];
};

static void on_resolved(void *ctx, enum mcpt_type type, const ProtobufCMessage *m)
{
	struct seen *s = ctx;

	if (type != MCPT_T_EVENT || s->events >= ROUND_EVENTS)
		return;
	ck_assert_int_eq(((const Mcpt__Event *)m)->ts_delta, 0);
	s->ts[s->events++] = ((const Mcpt__Event *)m)->ts;
}

/* The i-th round event's ts: mostly forward, some a little back (another CPU), some equal. */
static uint64_t round_ts(unsigned i)
{
	static const int64_t step[] = {1200, 35000, -700, 0, 5, 2000000, -3, 90, 0, 17};

	return BOOT + i * 100000ull + (uint64_t)step[i % 10];
}

static void round_trace(struct tl_bytes *t)
{
	struct tl_tab f;
	unsigned i;

	open_ts(&f, 7, true); /* small chunks: many first events */
	for (i = 0; i < ROUND_EVENTS; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.pid = e.tid = 4000 + i % 3;
		e.pstart = BOOT;
		e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
		tl_tab_put_at(&f, &e, round_ts(i));
	}
	tl_tab_close(&f, t);
}

static void check_round(bool hold)
{
	struct tl_bytes t;
	struct seen s = {0};
	unsigned i;

	round_trace(&t);
	tl_verify_resolved(&t, hold, on_resolved, &s);
	ck_assert_uint_eq(s.events, ROUND_EVENTS);
	for (i = 0; i < ROUND_EVENTS; i++)
		ck_assert_uint_eq(s.ts[i], round_ts(i));
	tl_bytes_free(&t);
}

START_TEST(test_round_trip)
{
	check_round(false);
	check_round(true);
}
END_TEST

static void excerpt_ts(void *ctx, const Mcpt__Event *raw, const Mcpt__Event *e, size_t n)
{
	*(size_t *)ctx += raw->ts_delta != 0;
	ck_assert_int_eq(e->ts_delta, 0);
	ck_assert_uint_eq(e->ts, round_ts((unsigned)n));
}

START_TEST(test_excerpt)
{
	struct tl_bytes t;
	size_t deltas = 0;

	round_trace(&t);
	ck_assert_uint_eq(tl_excerpt_each(&t, excerpt_ts, &deltas), ROUND_EVENTS);
	ck_assert_uint_gt(deltas, ROUND_EVENTS / 2);
	tl_bytes_free(&t);
}
END_TEST

/* ---- hostile ---- */

static int feed(struct mcpt_valtab *t, uint64_t chunk, uint64_t ts, int64_t d, char *why)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int err;

	e.ts = ts;
	e.ts_delta = d;
	err = mcpt_valtab__feed(t, chunk, MCPT_T_EVENT, &e.base, why, 160);
	if (err) { /* a refused event is left as it was */
		ck_assert_uint_eq(e.ts, ts);
		ck_assert_int_eq(e.ts_delta, d);
	} else {
		ck_assert_int_eq(e.ts_delta, 0);
	}
	return err;
}

START_TEST(test_table_hostile)
{
	struct mcpt_valtab *t = mcpt_valtab__new();
	Mcpt__Event e = MCPT__EVENT__INIT;
	char why[160];

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(feed(t, 1, 0, 5, why), -EBADMSG);
	ck_assert_str_eq(why, "Event has ts_delta 5 but is the first Event of its chunk");
	ck_assert_int_eq(feed(t, 1, BOOT, 0, why), 0);
	ck_assert_int_eq(feed(t, 1, BOOT, 5, why), -EBADMSG);
	ck_assert_str_eq(why, "Event has both ts 71234567890123 and ts_delta 5");
	e.ts_delta = -1000;
	ck_assert_int_eq(mcpt_valtab__feed(t, 1, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.ts, BOOT - 1000);
	ck_assert_int_eq(mcpt_valtab__feed(t, 1, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.ts, BOOT - 1000); /* fed twice: harmless */
	ck_assert_int_eq(feed(t, 1, 0, -(int64_t)(BOOT - 1000), why), -EBADMSG); /* to 0 */
	ck_assert_str_eq(why, "Event ts_delta -71234567889123 from ts 71234567889123 leaves the "
			      "clock's range");
	ck_assert_int_eq(feed(t, 1, 0, -(int64_t)BOOT, why), -EBADMSG); /* below 0 */
	ck_assert_int_eq(feed(t, 1, 0, INT64_MIN, why), -EBADMSG);
	ck_assert_int_eq(feed(t, 1, 0, -(int64_t)(BOOT - 1001), why), 0); /* to 1 */
	ck_assert_int_eq(feed(t, 1, UINT64_MAX - 10, 0, why), 0);
	ck_assert_int_eq(feed(t, 1, 0, 10, why), 0); /* to 2^64-1 */
	ck_assert_int_eq(feed(t, 1, 0, 1, why), -EBADMSG); /* past it */
	ck_assert_int_eq(feed(t, 1, 0, INT64_MAX, why), -EBADMSG);
	ck_assert_int_eq(feed(t, 2, 0, 1, why), -EBADMSG); /* a new chunk has no base */
	ck_assert_str_eq(why, "Event has ts_delta 1 but is the first Event of its chunk");
	ck_assert_int_eq(feed(t, 2, 0, 0, why), 0); /* an event without ts is a base too */
	ck_assert_int_eq(feed(t, 2, 0, -1, why), -EBADMSG);
	ck_assert_int_eq(feed(t, 2, 0, INT64_MAX, why), 0);
	mcpt_valtab__free(t);
}
END_TEST

static void forge_ts(struct forge *f, uint64_t ts, int64_t d)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	uint8_t buf[64];

	e.ts = ts;
	e.ts_delta = d;
	e.op = MCPT__OP__OP_OPENAT;
	forge_record(f, MCPT_T_EVENT, buf, mcpt__event__pack(&e, buf));
}

/* Each hostile segment is BAD with one line naming its record; good ones stay good. */
START_TEST(test_verify_hostile)
{
	static const char *const want[] = {
		"record 1: Event has ts_delta 1000 but is the first Event of its chunk",
		"record 4: Event has both ts 1000000 and ts_delta 7",
		"record 6: Event has ts_delta 7 but is the first Event of its chunk",
		"record 9: Event ts_delta -1000000 from ts 1000000 leaves the clock's range",
	};
	uint64_t bits = MCPT_FEAT_TS_DELTA;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_ts(&f, 0, 1000);		/* 1: the first Event of its chunk */
	forge_seal(&f, 0);		/* 2 */
	forge_ts(&f, 1000000, 0);	/* 3 */
	forge_ts(&f, 1000000, 7);	/* 4: both */
	forge_seal(&f, 0);		/* 5: ends the chunk */
	forge_ts(&f, 0, 7);		/* 6: the first of the next chunk */
	forge_seal(&f, 0);		/* 7 */
	forge_ts(&f, 1000000, 0);	/* 8 */
	forge_ts(&f, 0, -1000000);	/* 9: to 0 */
	forge_seal(&f, 0);		/* 10 */
	forge_ts(&f, 1000000, 0);	/* 11 */
	forge_ts(&f, 0, -5);		/* 12: good */
	forge_seal(&f, MCPT_SEAL_FINAL); /* 13 */
	tl_verify_bad_refs(&f, want, 4, &rep);
	ck_assert_uint_eq(rep.first_bad_record, 1);
	ck_assert_uint_eq(rep.seals, 5);
	ck_assert(rep.final);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* ---- reads that skip events ---- */

static bool only_exec(void *ctx, uint32_t op)
{
	(void)ctx;
	return op == MCPT__OP__OP_EXEC;
}

static bool no_event(void *ctx, uint32_t op)
{
	(void)ctx;
	(void)op;
	return false;
}

struct skim {
	unsigned events, records, path_defs;
	uint64_t ts[ROUND_EVENTS], chunk[ROUND_EVENTS];
	uint32_t pid[ROUND_EVENTS];
	bool path_ok;
};

static int on_skim(void *ctx, const struct mcpt_record *rec)
{
	struct skim *s = ctx;
	const Mcpt__Event *e = (const Mcpt__Event *)rec->msg;

	s->records++;
	s->path_defs += rec->type == MCPT_T_PATH_DEF;
	if (rec->type != MCPT_T_EVENT || s->events >= ROUND_EVENTS)
		return 0;
	ck_assert_ptr_nonnull(e);
	s->ts[s->events] = e->ts;
	s->chunk[s->events] = rec->chunk;
	s->pid[s->events++] = e->pid;
	s->path_ok &= e->path.len == strlen(PA) && !memcmp(e->path.data, PA, strlen(PA));
	return 0;
}

START_TEST(test_skipped)
{
	struct tl_tab f;
	struct tl_bytes t;
	struct skim full = {.path_ok = true}, part = {.path_ok = true}, skim = {.path_ok = true};
	struct mcpt_report r1, r2, r3;
	struct mcpt_verify_opts so = {.want_event = only_exec, .skim = true};
	struct mcpt_pubkey pk;
	unsigned i, k = 0;
	int fd;

	open_ts(&f, 7, true);
	for (i = 0; i < ROUND_EVENTS; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.op = i % 5 == 2 ? MCPT__OP__OP_EXEC : MCPT__OP__OP_OPENAT;
		e.pid = e.tid = 4000 + i % 3;
		e.pstart = BOOT;
		e.path = (ProtobufCBinaryData){strlen(PA), (uint8_t *)PA};
		tl_tab_put_at(&f, &e, round_ts(i));
	}
	tl_tab_close(&f, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1}, on_skim, &full, &r1),
			 0);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1, .want_event = only_exec},
				   on_skim, &part, &r2),
			 0);
	ck_assert_int_eq(r1.verdict, MCPT_VALID_COMPLETE);
	ck_assert_int_eq(r2.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(r1.records, r2.records);
	ck_assert_uint_eq(full.events, ROUND_EVENTS);
	ck_assert_uint_eq(part.events, ROUND_EVENTS / 5);
	ck_assert_uint_gt(full.path_defs, 0); /* definitions only feed the table when skipping */
	ck_assert_uint_eq(part.path_defs, 0);
	ck_assert_uint_eq(full.records - full.path_defs - part.records,
			  ROUND_EVENTS - ROUND_EVENTS / 5);
	ck_assert(full.path_ok && part.path_ok);
	fd = tl_memfd(t.p, t.len); /* skimming: the same records, nothing hashed or proven */
	ck_assert_int_eq(mcpt_verify(fd, &so, on_skim, &skim, &r3), 0);
	close(fd);
	ck_assert_int_eq(r3.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(r3.code, MCPT_E_UNVERIFIED);
	ck_assert_uint_eq(r3.n_bad_segments, 0);
	ck_assert_uint_eq(r3.records, r1.records);
	ck_assert_uint_eq(skim.records, part.records);
	ck_assert(skim.path_ok);
	for (i = 2; i < ROUND_EVENTS; i += 5, k++) { /* each delivered: as resolved in full */
		ck_assert_uint_eq(part.ts[k], round_ts(i));
		ck_assert_uint_eq(part.pid[k], 4000 + i % 3);
		ck_assert_uint_eq(part.chunk[k], full.chunk[i]);
		ck_assert_uint_eq(skim.ts[k], round_ts(i));
		ck_assert_uint_eq(skim.chunk[k], full.chunk[i]);
	}
	tl_pubkey(1, &pk);
	so.key = &pk;
	fd = tl_memfd(t.p, t.len);
	mcpt_report__fini(&r2);
	ck_assert_int_eq(mcpt_verify(fd, &so, NULL, NULL, &r2), -EINVAL); /* not with a key */
	close(fd);
	mcpt_report__fini(&r1);
	mcpt_report__fini(&r3);
	tl_bytes_free(&t);
}
END_TEST

/* Reads a forged trace skipping every Event: INVALID with n_bad BAD segments. */
static void skim_forged(const struct forge *f, struct mcpt_report *rep, size_t n_bad)
{
	const struct tl_verify o = {.key = 1, .want_event = no_event};

	ck_assert_int_eq(tl_verify(f->out.p, f->out.len, &o, NULL, NULL, rep), 0);
	ck_assert_int_eq(rep->verdict, MCPT_INVALID);
	ck_assert_uint_eq(rep->n_bad_segments, n_bad);
}

/* The hostile clocks of test_verify_hostile, every Event skipped: the same BAD segments. */
START_TEST(test_skipped_hostile)
{
	uint64_t bits = MCPT_FEAT_TS_DELTA;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_ts(&f, 0, 1000);
	forge_seal(&f, 0);
	forge_ts(&f, 1000000, 0);
	forge_ts(&f, 1000000, 7);
	forge_seal(&f, 0);
	forge_ts(&f, 0, 7);
	forge_seal(&f, MCPT_SEAL_FINAL);
	skim_forged(&f, &rep, 3);
	ck_assert_str_eq(rep.bad_segments[0].reason,
			 "record 1: Event has ts_delta 1000 but is the first Event of its chunk");
	ck_assert_str_eq(rep.bad_segments[1].reason,
			 "record 4: Event has both ts 1000000 and ts_delta 7");
	ck_assert_str_eq(rep.bad_segments[2].reason,
			 "record 6: Event has ts_delta 7 but is the first Event of its chunk");
	mcpt_report__fini(&rep);
	forge_fini(&f);
	bits = 0; /* and without bit 2 */
	forge_init(&f, 1, 0, tl_features, &bits);
	forge_ts(&f, 1000000, 0);
	forge_ts(&f, 0, 7);
	forge_seal(&f, MCPT_SEAL_FINAL);
	skim_forged(&f, &rep, 1);
	ck_assert_str_eq(rep.bad_segments[0].reason,
			 "record 2: ts_delta in a trace whose header does not declare timestamp "
			 "deltas (incompatible_features bit 2)");
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* ts_delta in a trace whose header declares both tables but not bit 2 is refused. */
START_TEST(test_undeclared)
{
	static const char *const want[] = {
		"record 2: ts_delta in a trace whose header does not declare timestamp deltas "
		"(incompatible_features bit 2)",
	};
	uint64_t bits = MCPT_FEAT_VALUE_TABLE | MCPT_FEAT_TASK_TABLE;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_ts(&f, 1000000, 0); /* 1 */
	forge_ts(&f, 0, 1000);	  /* 2: a good delta, but undeclared */
	forge_seal(&f, 0);	  /* 3 */
	forge_ts(&f, 1000000, 0); /* 4: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 1, &rep);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

Suite *tsdelta_suite(void)
{
	Suite *s = suite_create("tsdelta");
	TCase *w = tcase_create("writer"), *r = tcase_create("round"), *h = tcase_create("hostile");

	tcase_add_test(w, test_writer_deltas);
	tcase_add_test(w, test_with_tables);
	tcase_add_test(r, test_round_trip);
	tcase_add_test(r, test_excerpt);
	tcase_add_test(h, test_table_hostile);
	tcase_add_test(h, test_verify_hostile);
	tcase_add_test(h, test_undeclared);
	tcase_add_test(r, test_skipped);
	tcase_add_test(h, test_skipped_hostile);
	tcase_set_timeout(w, 60);
	tcase_set_timeout(r, 60);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	suite_add_tcase(s, h);
	return s;
}
