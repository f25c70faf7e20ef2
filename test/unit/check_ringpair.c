/*
 * check_ringpair.c - the merge of the hot and the spill ring (collector/ringpair.c) on rings laid
 * out in memory as the kernel lays out its ringbuf maps (header word with the busy and discard
 * bits, 8-byte alignment, the data mapped twice): each thread's records in the order it made
 * them whichever ring they went to, a head that waits for a record still being written, a
 * record that wraps, a stop asked by the callback, and a header that cannot be.
 */
#include <check.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "ringpair.h"

#define SIZE 256 /* bytes of each fake ring */

struct fake {
	unsigned long cons, prod;
	uint8_t data[2 * SIZE];
};

static struct fake fakes[RING_COUNT];
static struct ringpair rp;
static char got[64][16]; /* the records taken, as their text */
static int ngot, stop_at = -1;

static void setup(void)
{
	int i;

	memset(fakes, 0, sizeof(fakes));
	memset(&rp, 0, sizeof(rp));
	for (i = 0; i < RING_COUNT; i++) {
		rp.ring[i].consumer = &fakes[i].cons;
		rp.ring[i].producer = &fakes[i].prod;
		rp.ring[i].data = fakes[i].data;
		rp.ring[i].mask = SIZE - 1;
	}
	rp.epfd = -1;
	ngot = 0;
	stop_at = -1;
}

/* Writes n bytes at ring position pos, into both mappings of the data. */
static void put(struct fake *f, uint64_t pos, const void *src, size_t n)
{
	const uint8_t *b = src;
	size_t i;

	for (i = 0; i < n; i++) {
		size_t k = (size_t)((pos + i) & (SIZE - 1));

		f->data[k] = b[i];
		f->data[k + SIZE] = b[i];
	}
}

/* Reserves a record "text" with trailer `other` in ring r, as the kernel does: busy until
 * commit(). Returns its position. */
static uint64_t reserve(int r, const char *text, uint64_t other)
{
	struct fake *f = &fakes[r];
	uint32_t len = (uint32_t)strlen(text) + 1 + MW_RING_TRAILER;
	uint32_t hdr[2] = { len | BPF_RINGBUF_BUSY_BIT, 0 };
	uint64_t pos = f->prod;

	put(f, pos, hdr, sizeof(hdr));
	put(f, pos + BPF_RINGBUF_HDR_SZ, text, strlen(text) + 1);
	put(f, pos + BPF_RINGBUF_HDR_SZ + strlen(text) + 1, &other, sizeof(other));
	f->prod = pos + ((len + BPF_RINGBUF_HDR_SZ + 7) & ~7u);
	return pos;
}

static void commit(int r, uint64_t pos, bool discard)
{
	uint32_t word;

	memcpy(&word, &fakes[r].data[pos & (SIZE - 1)], sizeof(word));
	word &= ~BPF_RINGBUF_BUSY_BIT;
	if (discard)
		word |= BPF_RINGBUF_DISCARD_BIT;
	put(&fakes[r], pos, &word, sizeof(word));
}

static uint64_t add(int r, const char *text, uint64_t other)
{
	uint64_t pos = reserve(r, text, other);

	commit(r, pos, false);
	return pos;
}

static int take(void *ctx, void *data, size_t size)
{
	(void)ctx;
	ck_assert_uint_lt(ngot, 64);
	ck_assert_uint_eq(size, strlen(data) + 1); /* the trailer is not part of it */
	strcpy(got[ngot], data);
	return ngot++ == stop_at ? -EAGAIN : 0;
}

static void assert_got(const char *const *want, int n)
{
	int i;

	ck_assert_int_eq(ngot, n);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(got[i], want[i]);
}

START_TEST(one_ring_in_order_and_consumer_published)
{
	static const char *const want[] = { "a1", "b1", "a2" };

	add(RING_HOT, "a1", 0);
	add(RING_HOT, "b1", 0);
	add(RING_HOT, "a2", 0);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 3);
	assert_got(want, 3);
	ck_assert_uint_eq(fakes[RING_HOT].cons, fakes[RING_HOT].prod);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 0);
}
END_TEST

/* The spill ring holds c (another CPU's record, reserved first) then a; thread T's a was
 * followed by b in the hot ring, made once the spill ring's producer was past a. Comparing
 * sequence numbers of the heads could put b before a; the positions cannot. */
START_TEST(a_thread_keeps_its_order_across_rings)
{
	static const char *const want[] = { "c", "a", "b" };
	uint64_t end_of_a;

	add(RING_SPILL, "c", 0);
	add(RING_SPILL, "a", 0);
	end_of_a = fakes[RING_SPILL].prod;
	add(RING_HOT, "b", end_of_a);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 3);
	assert_got(want, 3);
}
END_TEST

/* Back from the spill ring to the hot one: d in the hot ring was made before e spilled, f after
 * e, g in the spill ring after f. */
START_TEST(spill_and_back)
{
	static const char *const want[] = { "d", "e", "f", "g" };
	uint64_t hot_after_d, spill_after_e;

	add(RING_HOT, "d", 0);
	hot_after_d = fakes[RING_HOT].prod;
	add(RING_SPILL, "e", hot_after_d);
	spill_after_e = fakes[RING_SPILL].prod;
	add(RING_HOT, "f", spill_after_e);
	add(RING_SPILL, "g", fakes[RING_HOT].prod);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 4);
	assert_got(want, 4);
	ck_assert_uint_eq(rp.taken[RING_HOT], 2);
	ck_assert_uint_eq(rp.taken[RING_SPILL], 2);
}
END_TEST

/* A hot head made after a spill record that is still being written waits for it; records
 * that need nothing of it do not. */
START_TEST(a_head_waits_for_a_busy_record)
{
	static const char *const want[] = { "x", "busy", "y" };
	uint64_t busy = reserve(RING_SPILL, "busy", 0);

	add(RING_HOT, "x", 0); /* made before the busy one's reservation */
	add(RING_HOT, "y", fakes[RING_SPILL].prod);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 1);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 0);
	ck_assert(ringpair_waiting(&rp)); /* what the last drain of a recording waits for */
	commit(RING_SPILL, busy, false);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 2);
	assert_got(want, 3);
	ck_assert(!ringpair_waiting(&rp));
}
END_TEST

START_TEST(a_record_that_wraps_reads_whole)
{
	static const char *const want[] = { "0123456789abcd", "0123456789abcd", "wrapping-rec",
					     "last" };
	int i, n = 0;

	/* 32-byte records: the fourth starts 128 bytes in; push the position near the end */
	for (i = 0; i < 2; i++)
		add(RING_HOT, "0123456789abcd", 0);
	n += ringpair_drain(&rp, take, NULL);
	fakes[RING_HOT].prod = fakes[RING_HOT].cons = rp.ring[RING_HOT].pos = SIZE - 16;
	add(RING_HOT, "wrapping-rec", 0);
	add(RING_HOT, "last", 0);
	n += ringpair_drain(&rp, take, NULL);
	ck_assert_int_eq(n, 4);
	assert_got(want, 4);
}
END_TEST

START_TEST(a_stop_keeps_the_record_taken)
{
	static const char *const want[] = { "r0", "r1", "r2" };

	add(RING_HOT, "r0", 0);
	add(RING_HOT, "r1", 0);
	add(RING_HOT, "r2", 0);
	stop_at = 0;
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), -EAGAIN);
	ck_assert_int_eq(ngot, 1);
	stop_at = -1;
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 2);
	assert_got(want, 3);
	ck_assert_uint_eq(rp.taken[RING_HOT], 3); /* the record a stop kept counts as taken */
	ck_assert_uint_eq(rp.taken[RING_SPILL], 0);
}
END_TEST

START_TEST(discarded_skipped_bad_header_refused)
{
	static const char *const want[] = { "kept" };
	uint32_t bad[2] = { 2 * SIZE, 0 };
	uint64_t pos = reserve(RING_HOT, "dropped", 0);

	commit(RING_HOT, pos, true);
	add(RING_HOT, "kept", 0);
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), 1);
	assert_got(want, 1);
	put(&fakes[RING_SPILL], 0, bad, sizeof(bad));
	fakes[RING_SPILL].prod = 16;
	ck_assert_int_eq(ringpair_drain(&rp, take, NULL), -EBADMSG);
}
END_TEST

Suite *ringpair_suite(void);

Suite *ringpair_suite(void)
{
	Suite *s = suite_create("ringpair");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, one_ring_in_order_and_consumer_published);
	tcase_add_test(tc, a_thread_keeps_its_order_across_rings);
	tcase_add_test(tc, spill_and_back);
	tcase_add_test(tc, a_head_waits_for_a_busy_record);
	tcase_add_test(tc, a_record_that_wraps_reads_whole);
	tcase_add_test(tc, a_stop_keeps_the_record_taken);
	tcase_add_test(tc, discarded_skipped_bad_header_refused);
	suite_add_tcase(s, tc);
	return s;
}
