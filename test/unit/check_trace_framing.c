/*
 * check_trace_framing.c - the building blocks of the trace library, tested on their own:
 * uvarint32 (minimal, at most 5 bytes, below 2^32, round trip at every length boundary), the
 * one-field Record rule, the RFC 9162 compact range against the RFC's recursive definition for
 * 0..300 leaves, the DSSE v1 PAE bytes, the arena's budget, the preamble hints.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "trace_testlib.h"

Suite *trace_framing_suite(void);

START_TEST(test_varint_round_trip)
{
	static const uint32_t vals[] = {0,	 1,	  127,	     128,	16383,	   16384,
					2097151, 2097152, 268435455, 268435456, UINT32_MAX};
	uint8_t buf[8];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		size_t n = mcpt_uvarint_put(buf, vals[i]), used = 0;
		uint32_t v = 0;

		ck_assert_uint_eq(n, mcpt_uvarint_len(vals[i]));
		ck_assert_int_eq(mcpt_uvarint_get(buf, n, &v, &used), 0);
		ck_assert_uint_eq(v, vals[i]);
		ck_assert_uint_eq(used, n);
		for (size_t k = 0; k < n; k++) /* every proper prefix asks for more */
			ck_assert_int_eq(mcpt_uvarint_get(buf, k, &v, &used), -EAGAIN);
	}
}
END_TEST

/* The length of a 64-bit uvarint (the task table's zigzagged values), at every bit length and
 * on both sides of each 7-bit boundary, against the plain loop. */
START_TEST(test_uvarint_len_64)
{
	for (unsigned bits = 0; bits <= 64; bits++) {
		uint64_t top = bits ? (bits == 64 ? UINT64_MAX : (1ull << bits) - 1) : 0;
		uint64_t cases[3] = {top, top >> 1, bits ? 1ull << (bits - 1) : 0};

		for (unsigned c = 0; c < 3; c++) {
			uint64_t v = cases[c];
			size_t want = 1;

			while (v >= 0x80) {
				v >>= 7;
				want++;
			}
			ck_assert_uint_eq(mcpt_uvarint_len(cases[c]), want);
		}
	}
}
END_TEST

/* The decoding rule written out plainly, for the exhaustive comparison below. */
static int varint_ref(const uint8_t *p, size_t n, uint32_t *v, size_t *used)
{
	uint64_t val = 0;

	for (size_t i = 0; i < 5; i++) {
		if (i == n)
			return -EAGAIN;
		val |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] & 0x80)
			continue;
		if (val > UINT32_MAX)
			return -EOVERFLOW;
		if (i > 0 && p[i] == 0)
			return -EINVAL;
		*v = (uint32_t)val;
		*used = i + 1;
		return 0;
	}
	return -EOVERFLOW;
}

/* Every one- and two-byte input (the short ways of mcpt_uvarint_get), whole and cut. */
START_TEST(test_varint_short_exhaustive)
{
	for (unsigned b = 0; b < 65536; b++) {
		const uint8_t p[3] = {(uint8_t)b, (uint8_t)(b >> 8), 0x01};

		for (size_t n = 0; n <= 3; n++) {
			uint32_t v1 = 0, v2 = 0;
			size_t u1 = 0, u2 = 0;
			int r1 = mcpt_uvarint_get(p, n, &v1, &u1), r2 = varint_ref(p, n, &v2, &u2);

			ck_assert_int_eq(r1, r2);
			if (!r1) {
				ck_assert_uint_eq(v1, v2);
				ck_assert_uint_eq(u1, u2);
			}
		}
	}
}
END_TEST

START_TEST(test_varint_strict)
{
	static const struct {
		const char *b;
		size_t n;
		int err;
	} bad[] = {
		{"\x80\x00", 2, -EINVAL},
		{"\xff\x80\x00", 3, -EINVAL},
		{"\x81\x80\x80\x80\x00", 5, -EINVAL},
		{"\xff\xff\xff\xff\x1f", 5, -EOVERFLOW},
		{"\xff\xff\xff\xff\x10", 5, -EOVERFLOW},
		{"\xff\xff\xff\xff\xff\x01", 6, -EOVERFLOW},
		{"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 10, -EOVERFLOW},
	};
	uint32_t v;
	size_t used;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(mcpt_uvarint_get((const uint8_t *)bad[i].b, bad[i].n, &v, &used),
				 bad[i].err);
	ck_assert_int_eq(mcpt_uvarint_get((const uint8_t *)"\xff\xff\xff\xff\x0f", 5, &v, &used),
			 0);
	ck_assert_uint_eq(v, UINT32_MAX);
}
END_TEST

START_TEST(test_record_split)
{
	struct mcpt_record_view rv;
	uint8_t rec[300], head[16];
	char why[120];
	size_t hl;

	memset(rec, 0x41, sizeof(rec));
	hl = mcpt_frame_head(head, 1030, 200); /* two-byte tag, two-byte inner length */
	ck_assert_uint_eq(hl, mcpt_uvarint_len((uint32_t)mcpt_record_len(1030, 200)) + 2 + 2);
	memcpy(rec, head + 2, hl - 2);
	ck_assert_int_eq(mcpt_record_split(rec, mcpt_record_len(1030, 200), &rv, why, sizeof(why)),
			 0);
	ck_assert_uint_eq(rv.type, 1030);
	ck_assert_uint_eq(rv.body_off, 4);
	ck_assert_uint_eq(rv.body_len, 200);
	ck_assert_int_eq(mcpt_record_split(rec, 205, &rv, why, sizeof(why)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(why, "second field"));
	ck_assert_int_eq(mcpt_record_split(rec, 203, &rv, why, sizeof(why)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(why, "exceeds"));
	ck_assert_int_eq(mcpt_record_split((const uint8_t *)"\x12\x00", 2, &rv, why, sizeof(why)),
			 0);
	ck_assert_uint_eq(rv.body_len, 0); /* an empty inner message is fine */
}
END_TEST

static void naive(uint8_t (*l)[32], size_t n, uint8_t out[32])
{
	size_t k = 1;
	uint8_t a[32], b[32];

	if (n == 0) {
		crypto_generichash(out, 32, NULL, 0, NULL, 0);
		return;
	}
	if (n == 1) {
		memcpy(out, l[0], 32);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	naive(l, k, a);
	naive(l + k, n - k, b);
	mcpt_node_hash(a, b, out);
}

START_TEST(test_compact_range)
{
	static uint8_t leaves[300][32];
	struct mcpt_range r;
	uint8_t got[32], want[32], h[65] = {1};

	mcpt_range_init(&r);
	for (size_t n = 0; n <= 300; n++) {
		mcpt_range_root(&r, got);
		naive(leaves, n, want);
		ck_assert_mem_eq(got, want, 32);
		if (n == 300)
			break;
		memset(leaves[n], (int)n, 32);
		leaves[n][0] = 0;
		mcpt_range_push(&r, leaves[n]);
	}
	/* NODE(l, r) = H(0x01 || l || r) */
	memcpy(h + 1, leaves[1], 32);
	memcpy(h + 33, leaves[2], 32);
	crypto_generichash(want, 32, h, sizeof(h), NULL, 0);
	mcpt_node_hash(leaves[1], leaves[2], got);
	ck_assert_mem_eq(got, want, 32);
}
END_TEST

START_TEST(test_pae)
{
	static const char want[] =
		"DSSEv1 49 application/vnd.mcpwitness.trace-seal.v1+protobuf 5 hello";
	struct mcpt_buf b = {0};

	ck_assert_int_eq(mcpt_pae(&b, (const uint8_t *)"hello", 5), 0);
	ck_assert_uint_eq(b.len, sizeof(want) - 1);
	ck_assert_mem_eq(b.p, want, b.len);
	ck_assert_int_eq(mcpt_pae(&b, NULL, 0), 0);
	ck_assert_uint_eq(b.len, sizeof(want) - 1 - 5); /* "... 0 " */
	mcpt_buf_free(&b);
}
END_TEST

START_TEST(test_arena_budget)
{
	struct mcpt_arena a;
	void *p;

	mcpt_arena_init(&a);
	mcpt_arena_reset(&a, 1000);
	p = a.pb.alloc(a.pb.allocator_data, 600);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % 16, 0);
	ck_assert_ptr_null(a.pb.alloc(a.pb.allocator_data, 600)); /* over budget */
	mcpt_arena_reset(&a, 1u << 20);
	for (int i = 0; i < 100; i++)
		ck_assert_ptr_nonnull(a.pb.alloc(a.pb.allocator_data, 10000));
	ck_assert_ptr_null(a.pb.alloc(a.pb.allocator_data, SIZE_MAX - 4));
	mcpt_arena_reset(&a, 100);
	ck_assert_ptr_nonnull(a.pb.alloc(a.pb.allocator_data, 10));
	mcpt_arena_fini(&a);
}
END_TEST

START_TEST(test_key_id_definition)
{
	struct mcpt_pubkey pk;
	uint8_t buf[64] = "MCPT-v1 keyidEd", h[32], id[8];

	tl_pubkey(7, &pk);
	memcpy(buf + 15, pk.pk, 32);
	crypto_generichash(h, 32, buf, 47, NULL, 0);
	mcpt_key_id(pk.pk, id);
	ck_assert_mem_eq(id, h, 8);
	ck_assert_mem_eq(pk.key_id, h, 8);
}
END_TEST

Suite *trace_framing_suite(void)
{
	Suite *s = suite_create("trace_framing");
	TCase *c = tcase_create("core");

	tcase_add_test(c, test_varint_round_trip);
	tcase_add_test(c, test_uvarint_len_64);
	tcase_add_test(c, test_varint_strict);
	tcase_add_test(c, test_varint_short_exhaustive);
	tcase_add_test(c, test_record_split);
	tcase_add_test(c, test_compact_range);
	tcase_add_test(c, test_pae);
	tcase_add_test(c, test_arena_budget);
	tcase_add_test(c, test_key_id_definition);
	suite_add_tcase(s, c);
	return s;
}
