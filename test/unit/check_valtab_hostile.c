/*
 * check_valtab_hostile.c - the value table's reader against hostile traces (trace.proto
 * PathDef, Event *_ref; proto/valtab.c): the table refuses an undefined id, a forward
 * reference, a definition from another chunk, ids 0 / out of order / repeated / 2^32-1, a
 * field with both bytes and a reference, the 1025th value and values past 64 KiB, each with
 * one line; through the verifier each is an INVALID segment (E_RECORD_PARSE) naming the
 * record, and the reading goes on; a table in a trace whose header does not declare it is
 * refused. The writer and the round trip: check_valtab.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_testlib.h"

Suite *valtab_hostile_suite(void);

#define PA "/usr/lib/python3/dist-packages/a.py"
#define PB "/home/user/project/README.md"

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
}

static int feed_def(struct mcpt_valtab *t, uint64_t chunk, uint32_t id, const char *v, char *why)
{
	Mcpt__PathDef d = MCPT__PATH_DEF__INIT;

	d.id = id;
	d.value = bin(v);
	return mcpt_valtab__feed(t, chunk, MCPT_T_PATH_DEF, &d.base, why, 160);
}

static int feed_ref(struct mcpt_valtab *t, uint64_t chunk, uint32_t id, char *why)
{
	Mcpt__Event e = MCPT__EVENT__INIT;

	e.data2_ref = id;
	return mcpt_valtab__feed(t, chunk, MCPT_T_EVENT, &e.base, why, 160);
}

START_TEST(test_table_hostile)
{
	struct mcpt_valtab *t = mcpt_valtab__new();
	Mcpt__Event e = MCPT__EVENT__INIT;
	static char big[40000];
	char why[160];
	unsigned i;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(feed_ref(t, 1, 1, why), -EBADMSG); /* undefined */
	ck_assert_str_eq(why, "Event data2_ref 1 names a value not defined in its chunk (0 defined "
			      "before it)");
	ck_assert_int_eq(feed_def(t, 1, 1, PA, why), 0); /* forward: defined after the reference */
	ck_assert_int_eq(feed_ref(t, 1, 1, why), 0);
	ck_assert_int_eq(feed_ref(t, 2, 1, why), -EBADMSG);	      /* defined in another chunk */
	ck_assert_int_eq(feed_ref(t, 2, 0xffffffffu, why), -EBADMSG); /* huge */
	ck_assert_int_eq(feed_def(t, 2, 0, PA, why), -EBADMSG);
	ck_assert_str_eq(why, "PathDef defines id 0 where its chunk's next id is 1");
	ck_assert_int_eq(feed_def(t, 2, 0xffffffffu, PA, why), -EBADMSG);
	ck_assert_int_eq(feed_def(t, 2, 2, PA, why), -EBADMSG); /* out of order */
	ck_assert_int_eq(feed_def(t, 2, 1, PA, why), 0);
	ck_assert_int_eq(feed_def(t, 2, 1, PB, why), -EBADMSG); /* repeated */
	ck_assert_int_eq(feed_def(t, 2, 2, "", why), -EBADMSG); /* empty */
	e.path = bin(PB);
	e.path_ref = 1;
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)),
			 -EBADMSG);
	ck_assert_str_eq(why, "Event has both path and path_ref 1");
	ck_assert_uint_eq(e.path.len, strlen(PB)); /* a refused event is left as it was */
	e.path = (ProtobufCBinaryData){0, NULL};
	e.data_ref = 1;
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	ck_assert_uint_eq(e.path_ref + e.data_ref, 0);
	ck_assert_mem_eq(e.path.data, PA, strlen(PA));
	ck_assert_mem_eq(e.data.data, PA, strlen(PA));
	ck_assert_int_eq(mcpt_valtab__feed(t, 2, MCPT_T_EVENT, &e.base, why, sizeof(why)), 0);
	for (i = 2; i <= MCPT_VT_MAX_VALUES; i++) /* the bound on values */
		ck_assert_int_eq(feed_def(t, 2, i, "/x", why), 0);
	ck_assert_int_eq(feed_def(t, 2, i, "/x", why), -EBADMSG);
	ck_assert_str_eq(why, "PathDef id 1025: more than 1024 values in one chunk");
	memset(big, 'b', sizeof(big) - 1); /* the bound on bytes */
	ck_assert_int_eq(feed_def(t, 3, 1, big, why), 0);
	ck_assert_int_eq(feed_def(t, 3, 2, big, why), -EBADMSG);
	ck_assert_str_eq(why, "PathDef id 2: values over 65536 bytes in one chunk");
	mcpt_valtab__free(t);
}
END_TEST

static void forge_def(struct forge *f, uint32_t id, const char *v)
{
	Mcpt__PathDef d = MCPT__PATH_DEF__INIT;
	uint8_t buf[256];

	d.id = id;
	d.value = bin(v);
	forge_record(f, MCPT_T_PATH_DEF, buf, mcpt__path_def__pack(&d, buf));
}

static void forge_ref(struct forge *f, uint32_t id)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	uint8_t buf[64];

	e.ts = f->now;
	e.op = MCPT__OP__OP_OPENAT;
	e.path_ref = id;
	forge_record(f, MCPT_T_EVENT, buf, mcpt__event__pack(&e, buf));
}

/* Each hostile segment is BAD with one line naming its record; good ones stay good. */
START_TEST(test_verify_hostile)
{
	static const char *const want[] = {
		"record 2: Event path_ref 1 names a value not defined in its chunk (0 defined "
		"before it)",
		"record 4: Event path_ref 1 names a value not defined in its chunk (0 defined "
		"before it)",
		"record 9: Event path_ref 1 names a value not defined in its chunk (0 defined "
		"before it)",
		"record 11: PathDef defines id 4294967295 where its chunk's next id is 1",
		"record 14: Event path_ref 4294967295 names a value not defined in its chunk (1 "
		"defined before it)",
	};
	uint64_t bits = MCPT_FEAT_VALUE_TABLE;
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, tl_features, &bits);
	forge_event(&f, 1);		/* 1 */
	forge_ref(&f, 1);		/* 2: undefined */
	forge_seal(&f, 0);		/* 3 */
	forge_ref(&f, 1);		/* 4: forward reference */
	forge_def(&f, 1, PA);		/* 5 */
	forge_seal(&f, 0);		/* 6 */
	forge_def(&f, 1, PA);		/* 7 */
	forge_seal(&f, 0);		/* 8: ends the chunk (a good segment) */
	forge_ref(&f, 1);		/* 9: defined in another chunk */
	forge_seal(&f, 0);		/* 10 */
	forge_def(&f, 0xffffffffu, PA); /* 11: huge id */
	forge_seal(&f, 0);		/* 12 */
	forge_def(&f, 1, PA);		/* 13 */
	forge_ref(&f, 0xffffffffu);	/* 14: huge reference */
	forge_seal(&f, 0);		/* 15 */
	forge_def(&f, 1, PA);		/* 16 */
	forge_ref(&f, 1);		/* 17: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 5, &rep);
	ck_assert_uint_eq(rep.first_bad_record, 1);
	ck_assert_uint_eq(rep.seals, 7);
	ck_assert(rep.final);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* A table record in a trace whose header does not declare the table is refused, not read. */
START_TEST(test_undeclared_table)
{
	static const char *const want[] = {
		"record 1: PathDef in a trace whose header does not declare the value table "
		"(incompatible_features bit 0)",
		"record 4: value reference in a trace whose header does not declare the value "
		"table (incompatible_features bit 0)",
	};
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_def(&f, 1, PA);	/* 1 */
	forge_ref(&f, 1);	/* 2 */
	forge_seal(&f, 0);	/* 3 */
	forge_ref(&f, 1);	/* 4: a reference alone */
	forge_seal(&f, 0);	/* 5 */
	forge_event(&f, 1);	/* 6: good */
	forge_seal(&f, MCPT_SEAL_FINAL);
	tl_verify_bad_refs(&f, want, 2, &rep);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

Suite *valtab_hostile_suite(void)
{
	Suite *s = suite_create("valtab_hostile");
	TCase *h = tcase_create("hostile");

	tcase_add_test(h, test_table_hostile);
	tcase_add_test(h, test_verify_hostile);
	tcase_add_test(h, test_undeclared_table);
	suite_add_tcase(s, h);
	return s;
}
