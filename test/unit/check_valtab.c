/*
 * check_valtab.c - the value table (trace.proto PathDef, Event *_ref; proto/valtab.c and
 * proto/writer_vt.c):
 *   writer:  a value is inline the first time its chunk meets it and defined (one PathDef just
 *            before the event, in the same chunk) the second time, or at once when one record
 *            holds it twice; the table empties at each chunk; definitions that would not share
 *            the event's chunk are not written (the value stays inline); past 1024 values or
 *            64 KiB a chunk's new values stay inline; the Header carries the feature bit;
 *            the table's hash changes with every bit of a value, its length and its seed;
 *            each definition is byte for byte protobuf-c's packing of it;
 *   round:   a trace written with the table verifies VALID_COMPLETE and every record handed
 *            to the callback (streamed, or held and unpacked by the caller with rec.chunk)
 *            resolves to exactly the values given to the writer; an excerpt of a referencing
 *            event proves it and resolves its values from its own chunk.
 * The reader's side against hostile tables: check_valtab_hostile.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tabhash.h"
#include "trace_testlib.h"

Suite *valtab_suite(void);

#define PA "/usr/lib/python3/dist-packages/a.py"
#define PB "/home/user/project/README.md"

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
}

START_TEST(test_second_meeting)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;

	tl_tab_open(&f, 64, 4096, true, false);
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* met once: inline */
	ck_assert_uint_eq(e.path_ref, 0);
	ck_assert_uint_eq(e.path.len, strlen(PA));
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* met again: defined, then referenced */
	ck_assert_uint_eq(e.path_ref, 1);
	ck_assert_uint_eq(e.path.len, 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	e.data = bin("abc"); /* shorter than a reference is worth: never in the table */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert_uint_eq(e.path_ref, 1);
	ck_assert_uint_eq(e.data_ref, 0);
	ck_assert_uint_eq(e.data.len, 3);
	e.path = bin(PA); /* an event already holding a reference is refused, nothing written */
	ck_assert_int_eq(mcpt_writer__event_refs(f.w, &e), -EINVAL);
	tl_tab_close(&f, &t);
	{
		Mcpt__Header *h;
		struct tl_frame fr[16];

		ck_assert_uint_eq(tl_frames(t.p, t.len, fr, 16), 6); /* hdr, 3 ev, def, seal */
		ck_assert_uint_eq(fr[2].type, MCPT_T_PATH_DEF);
		h = mcpt__header__unpack(NULL, fr[0].blen, t.p + fr[0].body);
		ck_assert_ptr_nonnull(h);
		ck_assert_uint_eq(h->incompatible_features, MCPT_FEAT_VALUE_TABLE);
		mcpt__header__free_unpacked(h, NULL);
	}
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_repeated_in_one_record)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;

	tl_tab_open(&f, 64, 4096, true, false);
	e.path = bin(PA);
	e.opened_path = bin(PA);
	e.path2 = bin(PB);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1);
	ck_assert_uint_eq(e.path_ref, 1);
	ck_assert_uint_eq(e.opened_path_ref, 1);
	ck_assert_uint_eq(e.path2_ref, 0); /* once: inline */
	ck_assert_uint_eq(e.path2.len, strlen(PB));
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.abs_path = bin(PB);
	e.abs_path2 = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1);
	ck_assert_uint_eq(e.abs_path_ref, 2);
	ck_assert_uint_eq(e.abs_path2_ref, 1);
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_chunk_boundary)
{
	struct tl_tab f;
	struct tl_bytes t;
	Mcpt__Event e = MCPT__EVENT__INIT;

	tl_tab_open(&f, 4, 4096, true, false);
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* chunk 1: record 1 */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* def (2), event (3) */
	ck_assert_uint_eq(mcpt_writer__chunk(f.w), 1);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* reference (4): the chunk closes */
	ck_assert_uint_eq(e.path_ref, 1);
	ck_assert_uint_eq(mcpt_writer__chunk(f.w), 2);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* a new chunk: met for the first time there */
	ck_assert_uint_eq(e.path_ref, 0);
	ck_assert_uint_eq(e.path.len, strlen(PA));
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* no value: 2 of 4 records in the chunk */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	e.opened_path = bin(PB);
	e.path2 = bin(PB);
	e.abs_path2 = bin(PA);
	/* two definitions and the event need 3 records, 2 are left: the event would fall in the
	 * next chunk, so nothing is defined */
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	ck_assert_uint_eq(e.path_ref + e.opened_path_ref + e.path2_ref + e.abs_path2_ref, 0);
	ck_assert_uint_eq(e.path.len + e.abs_path2.len, 2 * strlen(PA));
	/* a count seal ends the chunk too: with one record left in the segment, no definition */
	tl_tab_close(&f, &t);
	tl_tab_open(&f, 64, 3, true, false);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PA);
	e.opened_path = bin(PA);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 1); /* 1 + 1 < 3 */
	ck_assert_uint_eq(mcpt_writer__seals(f.w), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.path = bin(PB);
	e.opened_path = bin(PB);
	ck_assert_uint_eq(tl_tab_put(&f, &e), 0); /* seals after it: 2 + 1 < 3 fails */
	ck_assert_uint_eq(e.path_ref, 0);
	ck_assert_uint_eq(mcpt_writer__seals(f.w), 1);
	tl_bytes_free(&t);
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

/* Distinct values of `len` bytes numbered by n. */
static ProtobufCBinaryData value_n(char *buf, size_t len, unsigned n)
{
	memset(buf, 'a' + n % 26, len);
	snprintf(buf, len, "/v/%u/", n);
	buf[strlen(buf)] = 'x';
	return (ProtobufCBinaryData){len, (uint8_t *)buf};
}

START_TEST(test_bound_values)
{
	static char bufs[1100][16];
	struct tl_tab f;
	struct tl_bytes t;
	unsigned n = 0, i;

	tl_tab_open(&f, 65536, 65536, true, false);
	while (n < 1030) { /* 7 distinct values per event: the table fills at 1024 */
		Mcpt__Event e = MCPT__EVENT__INIT;
		ProtobufCBinaryData *b[7] = {&e.path,  &e.abs_path,  &e.opened_path, &e.data,
					     &e.path2, &e.abs_path2, &e.data2};

		for (i = 0; i < 7; i++, n++)
			*b[i] = value_n(bufs[n], 16, n);
		ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	}
	for (i = 0; i < 2; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.path = value_n(bufs[3], 16, 3);	       /* in the table: defined */
		e.opened_path = value_n(bufs[1027], 16, 1027); /* met past the bound: inline */
		ck_assert_uint_eq(tl_tab_put(&f, &e), i == 0 ? 1 : 0);
		ck_assert_uint_eq(e.path_ref, 1);
		ck_assert_uint_eq(e.opened_path_ref, 0);
		ck_assert_uint_eq(e.opened_path.len, 16);
	}
	tl_tab_close(&f, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1}, NULL, NULL,
				   &(struct mcpt_report){0}),
			 0);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_bound_bytes)
{
	static char big[20][4096];
	struct tl_tab f;
	struct tl_bytes t;
	unsigned i;

	tl_tab_open(&f, 65536, 65536, true, false);
	for (i = 0; i < 17; i++) { /* 16 values of 4 KiB fill the 64 KiB store */
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.data = value_n(big[i], sizeof(big[i]), i);
		ck_assert_uint_eq(tl_tab_put(&f, &e), 0);
	}
	for (i = 15; i < 17; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.data = value_n(big[i], sizeof(big[i]), i);
		ck_assert_uint_eq(tl_tab_put(&f, &e), i == 15 ? 1 : 0);
		ck_assert_uint_eq(e.data_ref, i == 15 ? 1 : 0);
	}
	tl_tab_close(&f, &t);
	tl_bytes_free(&t);
}
END_TEST

/* Definitions are packed by hand (mcpt_writer_path_def): each is byte for byte what
 * protobuf-c packs for the same PathDef, at ids of one and two bytes and values whose length
 * prefix takes one or two bytes. */
struct defs_seen {
	unsigned defs, long_ids, long_values;
};

static int on_def(void *ctx, const struct mcpt_record *rec)
{
	struct defs_seen *s = ctx;
	Mcpt__PathDef *d;
	uint8_t buf[8192];

	if (rec->type != MCPT_T_PATH_DEF)
		return 0;
	d = mcpt__path_def__unpack(NULL, rec->body_len, rec->body);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_le(mcpt__path_def__get_packed_size(d), sizeof(buf));
	ck_assert_uint_eq(mcpt__path_def__pack(d, buf), rec->body_len);
	ck_assert(memcmp(buf, rec->body, rec->body_len) == 0);
	s->defs++;
	s->long_ids += d->id >= 128;
	s->long_values += d->value.len >= 128;
	mcpt__path_def__free_unpacked(d, NULL);
	return 0;
}

START_TEST(test_defs_as_protobuf_packs_them)
{
	/* 36 KiB in all: under the table's bound */
	static const size_t lens[] = {4, 5, 127, 128, 129, 200, 250};
	static char bufs[300][256];
	struct defs_seen s = {0};
	struct mcpt_report rep;
	struct tl_tab f;
	struct tl_bytes t;

	tl_tab_open(&f, 65536, 65536, true, false);
	for (unsigned n = 0; n < 300; n++) { /* each value twice in its record: defined at once */
		Mcpt__Event e = MCPT__EVENT__INIT;

		char head[8];

		snprintf(head, sizeof(head), "%03u/", n); /* distinct at every length */
		memset(bufs[n], 'a' + n % 26, lens[n % 7]);
		memcpy(bufs[n], head, 4);
		e.path = (ProtobufCBinaryData){lens[n % 7], (uint8_t *)bufs[n]};
		e.opened_path = e.path;
		ck_assert_uint_eq(tl_tab_put(&f, &e), 1);
		ck_assert_uint_eq(e.path_ref, n + 1);
	}
	tl_tab_close(&f, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1}, on_def, &s, &rep), 0);
	ck_assert_msg(rep.verdict == MCPT_VALID_COMPLETE, "%s", rep.message);
	ck_assert_uint_eq(s.defs, 300);
	ck_assert_uint_eq(s.long_ids, 300 - 127);
	ck_assert_uint_gt(s.long_values, 100);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

/* ---- round trip ---- */

struct seen {
	struct mcpt_valtab *vt;
	bool unpack; /* held records come without msg: unpack and resolve here */
	unsigned events, defs;
	char paths[64][160];
	bool bad;
};

static int on_rec(void *ctx, const struct mcpt_record *rec)
{
	struct seen *s = ctx;
	ProtobufCMessage *m = (ProtobufCMessage *)rec->msg;
	bool own = false;

	if (rec->type != MCPT_T_EVENT && rec->type != MCPT_T_PATH_DEF)
		return 0;
	if (s->unpack) {
		ck_assert_ptr_null(m);
		m = protobuf_c_message_unpack(mcpt_record_descriptor(rec->type), NULL,
					      rec->body_len, rec->body);
		own = true;
	}
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_ne(rec->chunk, 0);
	if (mcpt_valtab__feed(s->vt, rec->chunk, rec->type, m, NULL, 0))
		s->bad = true;
	if (rec->type == MCPT_T_PATH_DEF) {
		s->defs++;
	} else if (s->events < 64) {
		const Mcpt__Event *e = (const Mcpt__Event *)m;

		ck_assert_uint_eq(e->path_ref + e->opened_path_ref, 0);
		snprintf(s->paths[s->events++], sizeof(s->paths[0]), "%.*s|%.*s", (int)e->path.len,
			 (const char *)e->path.data, (int)e->opened_path.len,
			 (const char *)e->opened_path.data);
	}
	mcpt_valtab__detach(s->vt, m);
	if (own)
		protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}

static const char *const round_paths[] = {PA, PB, PA, PA, PB, "/etc/hosts", PB, PA, PA, PA};

static void round_trace(struct tl_bytes *t)
{
	struct tl_tab f;
	unsigned i;

	tl_tab_open(&f, 4, 4096, true, false); /* small chunks: definitions in many of them */
	for (i = 0; i < 40; i++) {
		Mcpt__Event e = MCPT__EVENT__INIT;

		e.path = bin(round_paths[i % 10]);
		e.opened_path = bin(round_paths[(i + 3) % 10]);
		tl_tab_put(&f, &e);
	}
	tl_tab_close(&f, t);
}

static void check_round(bool hold)
{
	struct tl_bytes t;
	struct mcpt_report rep;
	struct seen s = {.unpack = hold};
	unsigned i;

	round_trace(&t);
	s.vt = mcpt_valtab__new();
	ck_assert_ptr_nonnull(s.vt);
	ck_assert_int_eq(tl_verify(t.p, t.len, &(struct tl_verify){.key = 1, .hold = hold}, on_rec,
				   &s, &rep),
			 0);
	ck_assert_msg(rep.verdict == MCPT_VALID_COMPLETE, "%s", rep.message);
	ck_assert(!s.bad);
	ck_assert_uint_eq(s.events, 40);
	ck_assert_uint_gt(s.defs, 5);
	for (i = 0; i < 40; i++) {
		char want[160];

		snprintf(want, sizeof(want), "%s|%s", round_paths[i % 10],
			 round_paths[(i + 3) % 10]);
		ck_assert_str_eq(s.paths[i], want);
	}
	mcpt_report__fini(&rep);
	mcpt_valtab__free(s.vt);
	tl_bytes_free(&t);
}

START_TEST(test_round_trip)
{
	check_round(false);
	check_round(true);
}
END_TEST

START_TEST(test_excerpt)
{
	struct tl_bytes t;
	struct tl_frame fr[128];
	struct mcpt_valtab *vt = mcpt_valtab__new();
	size_t n, i, refs = 0;

	round_trace(&t);
	n = tl_frames(t.p, t.len, fr, 128);
	for (i = 1; i < n; i++) {
		Mcpt__Event *e, *raw;

		if (fr[i].type != MCPT_T_EVENT)
			continue;
		raw = mcpt__event__unpack(NULL, fr[i].blen, t.p + fr[i].body);
		ck_assert_ptr_nonnull(raw);
		refs += raw->path_ref || raw->opened_path_ref;
		mcpt__event__free_unpacked(raw, NULL);
		e = tl_excerpt_event(&t, i, vt);
		ck_assert_uint_gt(e->path.len, 0);
		ck_assert_uint_gt(e->opened_path.len, 0);
		tl_excerpt_event_free(vt, e);
	}
	ck_assert_uint_gt(refs, 10);
	mcpt_valtab__free(vt);
	tl_bytes_free(&t);
}
END_TEST

/* The writer table's hash (proto/tabhash.h) takes every byte and the length into account:
 * each bit of a value of 0..40 bytes, flipped, changes it, as do the seed and one more zero
 * byte. (The table compares bytes on a hash match, so this is about its speed, not its
 * results: a hash that ignored a byte would send such values down one run of slots.) */
START_TEST(test_hash_takes_every_byte)
{
	uint8_t v[41] = {0};

	for (size_t n = 0; n <= 40; n++) {
		uint64_t h = mcpt_tabhash(7, v, n);

		ck_assert_uint_ne(h, mcpt_tabhash(8, v, n));
		ck_assert_uint_ne(h, mcpt_tabhash(7, v, n + 1));
		for (size_t bit = 0; bit < n * 8; bit++) {
			v[bit / 8] ^= (uint8_t)(1u << bit % 8);
			ck_assert_msg(mcpt_tabhash(7, v, n) != h, "length %zu, bit %zu", n, bit);
			v[bit / 8] ^= (uint8_t)(1u << bit % 8);
		}
	}
}
END_TEST

Suite *valtab_suite(void)
{
	Suite *s = suite_create("valtab");
	TCase *w = tcase_create("writer"), *r = tcase_create("round");

	tcase_add_test(w, test_second_meeting);
	tcase_add_test(w, test_repeated_in_one_record);
	tcase_add_test(w, test_chunk_boundary);
	tcase_add_test(w, test_bound_values);
	tcase_add_test(w, test_bound_bytes);
	tcase_add_test(w, test_hash_takes_every_byte);
	tcase_add_test(w, test_defs_as_protobuf_packs_them);
	tcase_add_test(r, test_round_trip);
	tcase_add_test(r, test_excerpt);
	tcase_set_timeout(w, 60);
	suite_add_tcase(s, w);
	suite_add_tcase(s, r);
	return s;
}
