/*
 * check_trace_props.c - properties of the verifier over real multi-segment traces:
 *  - truncation at every byte offset gives VALID_PREFIX (torn exactly when the cut is inside a
 *    frame), never INVALID; verified_through_record is the last seal wholly inside the prefix,
 *    so it is monotone in the prefix length; with hold_segments exactly the verified records
 *    are delivered;
 *  - flipping any single byte (three masks per byte) never yields VALID_COMPLETE, and the
 *    segment holding the byte is never verified;
 *  - splices A[:x] || B[y:] (B another trace, or A itself: deletion/duplication of a range)
 *    never verify past what A[:x] alone proves;
 *  - reordering segments, deleting a segment with its seal, duplicating a seal are E_SEAL_CHAIN;
 *    deleting or inserting one record is E_SEAL_COUNT, changing one is E_SEAL_ROOT, each
 *    reported once (no cascade onto later segments).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trace_testlib.h"

Suite *trace_props_suite(void);

#define MAXF 4096

struct layout {
	struct tl_bytes t;
	struct tl_frame fr[MAXF];
	size_t nf;
};

static struct layout A, B;

static void make(struct layout *l, uint64_t n, uint32_t seg_max, uint8_t tid)
{
	struct tl_trace_opts o = {
		.n = n, .seg_max = seg_max, .key = 1, .trace_id_byte = tid, .chunk_records = 4};

	tl_make_trace(&o, &l->t);
	l->nf = tl_frames(l->t.p, l->t.len, l->fr, MAXF);
}

/* Index of the last seal frame that ends at or before byte x (0 = none). */
static uint64_t sealed_through(const struct layout *l, size_t x)
{
	uint64_t last = 0;

	for (size_t i = 0; i < l->nf && l->fr[i].off + l->fr[i].len <= x; i++)
		if (l->fr[i].type == MCPT_T_SEAL)
			last = i;
	return last;
}

static bool at_boundary(const struct layout *l, size_t x)
{
	if (x == MCPT_PREAMBLE_LEN)
		return true;
	for (size_t i = 0; i < l->nf; i++)
		if (l->fr[i].off + l->fr[i].len == x)
			return true;
	return false;
}

static int count(void *ctx, const struct mcpt_record *r)
{
	(void)r;
	(*(uint64_t *)ctx)++;
	return 0;
}

START_TEST(test_truncation_every_offset)
{
	struct tl_verify vo = {.key = 1};
	uint64_t prev = 0;

	make(&A, 150, 25, 0x11);
	ck_assert_uint_ge(sealed_through(&A, A.t.len), 6);
	for (size_t x = 0; x <= A.t.len; x++) {
		struct mcpt_report rep;
		uint64_t delivered = 0;

		vo.hold = x % 97 == 0;
		ck_assert_int_eq(tl_verify(A.t.p, x, &vo, count, &delivered, &rep), 0);
		if (x == 0)
			ck_assert_int_eq(rep.verdict, MCPT_UNSUPPORTED); /* empty file */
		else if (x == A.t.len)
			ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
		else
			ck_assert_msg(rep.verdict == MCPT_VALID_PREFIX, "cut at %zu: %s %s", x,
				      mcpt_verdict_name(rep.verdict), rep.message);
		ck_assert_uint_ge(rep.verified_through_record, prev);
		prev = rep.verified_through_record;
		ck_assert_uint_eq(rep.verified_through_record, sealed_through(&A, x));
		if (x > MCPT_PREAMBLE_LEN && x < A.t.len)
			ck_assert_int_eq(rep.truncated, !at_boundary(&A, x));
		if (vo.hold)
			ck_assert_uint_eq(delivered,
					  rep.seals ? rep.verified_through_record + 1 : 0);
		mcpt_report__fini(&rep);
	}
	tl_bytes_free(&A.t);
}
END_TEST

/* Index of the seal frame that covers byte i (the header is covered by seal 0). */
static size_t covering_seal(const struct layout *l, size_t i)
{
	for (size_t f = 0; f < l->nf; f++)
		if (l->fr[f].type == MCPT_T_SEAL && i < l->fr[f].off + l->fr[f].len)
			return f;
	return l->nf;
}

START_TEST(test_single_byte_flips)
{
	static const uint8_t masks[] = {0x01, 0x80, 0xff};
	struct tl_verify vo = {.key = 1};
	uint8_t *buf;

	make(&A, 60, 20, 0x11);
	buf = malloc(A.t.len);
	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < A.t.len; i++) {
		for (size_t m = 0; m < sizeof(masks); m++) {
			struct mcpt_report rep;

			memcpy(buf, A.t.p, A.t.len);
			buf[i] ^= masks[m];
			ck_assert_int_eq(tl_verify(buf, A.t.len, &vo, NULL, NULL, &rep), 0);
			ck_assert_msg(rep.verdict != MCPT_VALID_COMPLETE, "flip %zu^%02x verified",
				      i, masks[m]);
			ck_assert_msg(rep.verified_through_record < covering_seal(&A, i),
				      "flip at %zu: verified through %llu", i,
				      (unsigned long long)rep.verified_through_record);
			mcpt_report__fini(&rep);
		}
	}
	free(buf);
	tl_bytes_free(&A.t);
}
END_TEST

static void splice_check(const struct layout *a, size_t x, const struct layout *b, size_t y)
{
	struct tl_verify vo = {.key = 1};
	size_t n = x + (b->t.len - y);
	uint8_t *buf, b_id[16];
	struct mcpt_report rep;

	if (a == b && x == y)
		return; /* that is A itself */
	buf = malloc(n + 1);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, a->t.p, x);
	memcpy(buf + x, b->t.p + y, b->t.len - y);
	ck_assert_int_eq(tl_verify(buf, n, &vo, NULL, NULL, &rep), 0);
	memset(b_id, 0x33, sizeof(b_id)); /* B's trace id */
	if (a != b && rep.have_header && memcmp(rep.trace_id, b_id, 16) == 0) {
		/* B's Header survived: only possible when A[:x] is B[:x] and y == x, i.e. the
		 * "splice" is B itself */
		ck_assert(x == y && memcmp(a->t.p, b->t.p, x) == 0);
		mcpt_report__fini(&rep);
		free(buf);
		return;
	}
	ck_assert_msg(rep.verified_through_record <= sealed_through(a, x),
		      "splice %zu|%zu verified through %llu", x, y,
		      (unsigned long long)rep.verified_through_record);
	if (!(x == a->t.len && y == b->t.len))
		ck_assert_int_ne(rep.verdict, MCPT_VALID_COMPLETE);
	mcpt_report__fini(&rep);
	free(buf);
}

/* Offsets worth cutting at: every frame boundary, and a spread of interior bytes. */
static size_t cut_points(const struct layout *l, size_t *out, size_t max, size_t stride)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nf && n < max; i++)
		out[n++] = l->fr[i].off;
	for (size_t x = 1; x < l->t.len && n < max; x += stride)
		out[n++] = x;
	if (n < max)
		out[n++] = l->t.len;
	return n;
}

START_TEST(test_splices)
{
	static size_t xs[2048], ys[2048];
	size_t nx, ny;

	make(&A, 80, 16, 0x11);
	make(&B, 70, 16, 0x33);
	nx = cut_points(&A, xs, 2048, 29);
	ny = cut_points(&B, ys, 2048, 211);
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j += 3)
			splice_check(&A, xs[i], &B, ys[j]);
	/* A with itself: ranges deleted (y > x) or repeated (y < x), at frame boundaries */
	for (size_t i = 0; i < A.nf; i += 2)
		for (size_t j = 0; j < A.nf; j += 3)
			splice_check(&A, A.fr[i].off, &A, A.fr[j].off);
	tl_bytes_free(&A.t);
	tl_bytes_free(&B.t);
}
END_TEST

/* Seal frame indexes of A. */
static size_t seals_of(const struct layout *l, size_t *s, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nf && n < max; i++)
		if (l->fr[i].type == MCPT_T_SEAL)
			s[n++] = i;
	return n;
}

/* Rebuilds A from frame ranges [from, to) in the order given. */
static void rebuild(const struct layout *l, const size_t (*ranges)[2], size_t n,
		    struct tl_bytes *out)
{
	size_t len = MCPT_PREAMBLE_LEN;

	out->p = malloc(l->t.len * 2);
	ck_assert_ptr_nonnull(out->p);
	memcpy(out->p, l->t.p, MCPT_PREAMBLE_LEN);
	for (size_t r = 0; r < n; r++) {
		for (size_t f = ranges[r][0]; f < ranges[r][1]; f++) {
			memcpy(out->p + len, l->t.p + l->fr[f].off, l->fr[f].len);
			len += l->fr[f].len;
		}
	}
	out->len = len;
}

static void expect_bad(const struct tl_bytes *t, enum mcpt_code code, uint64_t total)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;

	ck_assert_int_eq(tl_verify(t->p, t->len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_msg(tl_has_bad(&rep, code), "%s not reported: %s", mcpt_code_name(code),
		      rep.message);
	if (total)
		ck_assert_uint_eq(rep.bad_segments_total, total);
	mcpt_report__fini(&rep);
}

START_TEST(test_reorder_delete_segments)
{
	size_t s[64], n;
	struct tl_bytes t;

	make(&A, 100, 10, 0x11);
	n = seals_of(&A, s, 64);
	ck_assert_uint_ge(n, 6);
	{ /* segments 1 and 2 swapped (each with its seal) */
		const size_t r[][2] = {{0, s[0] + 1},
				       {s[1] + 1, s[2] + 1},
				       {s[0] + 1, s[1] + 1},
				       {s[2] + 1, A.nf}};

		rebuild(&A, r, 4, &t);
		expect_bad(&t, MCPT_E_SEAL_CHAIN, 0);
		tl_bytes_free(&t);
	}
	{ /* segment 2 and its seal deleted: one gap, reported once */
		const size_t r[][2] = {{0, s[1] + 1}, {s[2] + 1, A.nf}};

		rebuild(&A, r, 2, &t);
		expect_bad(&t, MCPT_E_SEAL_CHAIN, 1);
		tl_bytes_free(&t);
	}
	{ /* seal 3 repeated */
		const size_t r[][2] = {{0, s[3] + 1}, {s[3], A.nf}};

		rebuild(&A, r, 2, &t);
		expect_bad(&t, MCPT_E_SEAL_CHAIN, 0);
		tl_bytes_free(&t);
	}
	tl_bytes_free(&A.t);
}
END_TEST

START_TEST(test_record_games)
{
	size_t s[64], n, k;
	struct tl_bytes t;

	make(&A, 100, 10, 0x11);
	n = seals_of(&A, s, 64);
	ck_assert_uint_ge(n, 6);
	k = s[2] + 3; /* a record inside segment 3 */
	{	      /* one record deleted */
		const size_t r[][2] = {{0, k}, {k + 1, A.nf}};

		rebuild(&A, r, 2, &t);
		expect_bad(&t, MCPT_E_SEAL_COUNT, 1);
		tl_bytes_free(&t);
	}
	{ /* one record inserted (a copy of its neighbour) */
		const size_t r[][2] = {{0, k + 1}, {k, A.nf}};

		rebuild(&A, r, 2, &t);
		expect_bad(&t, MCPT_E_SEAL_COUNT, 1);
		tl_bytes_free(&t);
	}
	{ /* two records swapped: same counts, different tree */
		const size_t r[][2] = {{0, k}, {k + 1, k + 2}, {k, k + 1}, {k + 2, A.nf}};

		rebuild(&A, r, 4, &t);
		expect_bad(&t, MCPT_E_SEAL_ROOT, 1);
		tl_bytes_free(&t);
	}
	{ /* one byte of a record's payload changed */
		const size_t r[][2] = {{0, A.nf}};

		rebuild(&A, r, 1, &t);
		t.p[A.fr[k].off + A.fr[k].len - 1] ^= 0x20;
		expect_bad(&t, MCPT_E_SEAL_ROOT, 1);
		tl_bytes_free(&t);
	}
	tl_bytes_free(&A.t);
}
END_TEST

Suite *trace_props_suite(void)
{
	Suite *s = suite_create("trace_props");
	TCase *t = tcase_create("truncation"), *f = tcase_create("flips"),
	      *sp = tcase_create("splices"), *g = tcase_create("games");

	tcase_set_timeout(t, 280);
	tcase_set_timeout(f, 280);
	tcase_set_timeout(sp, 280);
	tcase_add_test(t, test_truncation_every_offset);
	tcase_add_test(f, test_single_byte_flips);
	tcase_add_test(sp, test_splices);
	tcase_add_test(g, test_reorder_delete_segments);
	tcase_add_test(g, test_record_games);
	suite_add_tcase(s, t);
	suite_add_tcase(s, f);
	suite_add_tcase(s, sp);
	suite_add_tcase(s, g);
	return s;
}
