/*
 * check_trace.c - writer -> verifier round trips of the trace library: many records over many
 * segments verify VALID_COMPLETE with every record delivered once, in order, with the right
 * provisional flag (streaming and hold modes); segment roots recomputed by an independent
 * implementation match the signed ones; the verdicts for no key, unsigned, wrong key, missing
 * FINAL; warnings for unknown types and losses; callback stop; the hold limit.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *trace_suite(void);

struct seen {
	uint64_t n, next, provisional, seals, events, bad_order;
	uint64_t first_event_seq;
};

static int collect(void *ctx, const struct mcpt_record *r)
{
	struct seen *s = ctx;

	if (r->index != s->next)
		s->bad_order++;
	s->next = r->index + 1;
	s->n++;
	s->provisional += r->provisional;
	if (r->type == MCPT_T_SEAL)
		s->seals++;
	if (r->type == MCPT_T_EVENT) {
		Mcpt__Event *ev = mcpt__event__unpack(NULL, r->body_len, r->body);

		ck_assert_ptr_nonnull(ev);
		if (s->events == 0)
			s->first_event_seq = ev->seq;
		ck_assert_uint_eq(ev->seq, s->events);
		s->events++;
		mcpt__event__free_unpacked(ev, NULL);
	}
	return 0;
}

static const struct tl_trace_opts big = {.n = 10000, .seg_max = 700, .seal_every = 1500, .key = 1};

START_TEST(test_roundtrip_many)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;
	struct seen s = {0};

	tl_make_trace(&big, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, collect, &s, &rep), 0);
	ck_assert_str_eq(mcpt_report_verdict_name(&rep), "VALID_COMPLETE");
	ck_assert_int_eq(rep.code, MCPT_OK);
	ck_assert(rep.signatures_checked && rep.final);
	ck_assert_int_eq(rep.end_reason, MCPT__END_REASON__END_CLEAN);
	ck_assert_uint_gt(rep.seals, 15);
	ck_assert_uint_eq(rep.seals, rep.seals_ok);
	ck_assert_uint_eq(rep.records, 1 + 10000 + rep.seals);
	ck_assert_uint_eq(rep.bytes, t.len);
	ck_assert_uint_eq(rep.verified_through_record, rep.records - 1);
	ck_assert_uint_eq(rep.unsealed_records, 0);
	ck_assert_uint_eq(rep.n_warnings, 0);
	ck_assert_uint_eq(s.n, rep.records);
	ck_assert_uint_eq(s.bad_order, 0);
	ck_assert_uint_eq(s.events, 10000);
	ck_assert_uint_eq(s.seals, rep.seals);
	ck_assert_uint_eq(s.provisional, rep.records - rep.seals); /* seals arrive verified */
	ck_assert_uint_eq(rep.min_event_ts, 1000000);
	ck_assert_uint_eq(rep.max_event_ts, 1000000 + 9999 * 1000);
	ck_assert_int_eq(mcpt_verdict_exit_code(rep.verdict), 0);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_roundtrip_hold)
{
	struct tl_verify vo = {.key = 1, .hold = true};
	struct mcpt_report rep;
	struct tl_bytes t;
	struct seen s = {0};

	tl_make_trace(&big, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, collect, &s, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(s.n, rep.records);
	ck_assert_uint_eq(s.bad_order, 0);
	ck_assert_uint_eq(s.provisional, 0);
	mcpt_report__fini(&rep);

	/* without FINAL the unsealed tail is never released */
	struct tl_trace_opts o = big;

	o.no_final = true;
	tl_bytes_free(&t);
	tl_make_trace(&o, &t);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, collect, &s, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_uint_eq(s.n, rep.verified_through_record + 1);
	ck_assert_uint_gt(rep.unsealed_records, 0);
	ck_assert_uint_eq(s.n + rep.unsealed_records, rep.records);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

/* RFC 9162 MTH written from the RFC's recursive definition. */
static void naive_mth(uint8_t (*leaves)[32], size_t n, uint8_t out[32])
{
	uint8_t l[32], r[32];
	size_t k = 1;

	if (n == 0) {
		crypto_generichash(out, 32, NULL, 0, NULL, 0);
		return;
	}
	if (n == 1) {
		memcpy(out, leaves[0], 32);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	naive_mth(leaves, k, l);
	naive_mth(leaves + k, n - k, r);
	{
		uint8_t buf[65] = {1};

		memcpy(buf + 1, l, 32);
		memcpy(buf + 33, r, 32);
		crypto_generichash(out, 32, buf, sizeof(buf), NULL, 0);
	}
}

/* Recomputes every segment root from the bytes with the chunk rule written out again. */
static void check_roots(const uint8_t *p, size_t n, uint32_t crec, uint32_t cbytes)
{
	static struct tl_frame fr[20000];
	static uint8_t leaves[5000][32];
	size_t nf = tl_frames(p, n, fr, 20000), nl = 0, start = 1, segs = 0;

	for (size_t i = 1; i < nf; i++) {
		if (fr[i].type == MCPT_T_SEAL) {
			Mcpt__Seal *s = mcpt__seal__unpack(NULL, fr[i].blen, p + fr[i].body);
			Mcpt__SealStatement *st;
			uint8_t root[32];
			size_t crecs = 0, cbytes_now = 0, cstart = start;

			ck_assert_ptr_nonnull(s);
			st = mcpt__seal_statement__unpack(NULL, s->statement.len,
							  s->statement.data);
			ck_assert_ptr_nonnull(st);
			nl = 0;
			for (size_t j = start; j < i; j++) {
				crecs++;
				cbytes_now += fr[j].len;
				if (crecs == crec || cbytes_now >= cbytes || j + 1 == i) {
					crypto_generichash_state h;

					crypto_generichash_init(&h, NULL, 0, 32);
					crypto_generichash_update(&h, (const uint8_t *)"", 1);
					crypto_generichash_update(&h, p + fr[cstart].off,
								  fr[j].off + fr[j].len -
									  fr[cstart].off);
					crypto_generichash_final(&h, leaves[nl++], 32);
					crecs = cbytes_now = 0;
					cstart = j + 1;
				}
			}
			naive_mth(leaves, nl, root);
			ck_assert_uint_eq(st->leaf_count, nl);
			ck_assert_uint_eq(st->record_count, i - start);
			ck_assert_mem_eq(st->segment_root.data, root, 32);
			ck_assert_uint_eq(st->seal_offset, fr[i].off);
			mcpt__seal_statement__free_unpacked(st, NULL);
			mcpt__seal__free_unpacked(s, NULL);
			start = i + 1;
			segs++;
		}
	}
	ck_assert_uint_gt(segs, 3);
}

START_TEST(test_independent_roots)
{
	struct tl_trace_opts o = big;
	struct tl_bytes t;

	o.n = 3000;
	tl_make_trace(&o, &t);
	check_roots(t.p, t.len, 64, 16384);
	tl_bytes_free(&t);
	o.chunk_records = 5; /* odd leaf counts, many levels */
	o.chunk_bytes = 1024;
	tl_make_trace(&o, &t);
	check_roots(t.p, t.len, 5, 1024);
	tl_bytes_free(&t);
	o.chunk_records = 1000; /* the byte limit closes chunks */
	o.chunk_bytes = 16384;
	tl_make_trace(&o, &t);
	check_roots(t.p, t.len, 1000, 16384);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_structure_only)
{
	struct tl_trace_opts o = {.n = 300, .seg_max = 50, .key = 1};
	struct tl_verify vo = {.key = 0, .hold = (bool)_i};
	struct mcpt_report rep;
	struct tl_bytes t;
	struct seen s = {0};

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, collect, &s, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_UNVERIFIED);
	ck_assert_str_eq(mcpt_report_verdict_name(&rep), "UNVERIFIED");
	ck_assert(!rep.signatures_checked && rep.final);
	ck_assert_ptr_nonnull(strstr(rep.message, "structure only"));
	ck_assert_uint_eq(s.n, rep.records);
	ck_assert_uint_eq(s.provisional, rep.records); /* nothing was verified */
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_unsigned)
{
	struct tl_trace_opts o = {.n = 100, .seg_max = 30, .key = 0};
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_WRONG_KEY);
	ck_assert_int_eq(rep.code, MCPT_E_UNSIGNED);
	ck_assert_str_eq(mcpt_report_verdict_name(&rep), "UNSIGNED");
	ck_assert_int_eq(mcpt_verdict_exit_code(rep.verdict), 3);
	ck_assert_ptr_nonnull(strstr(rep.message, "unsigned"));
	mcpt_report__fini(&rep);
	vo.allow_unsigned = true;
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert(!rep.signatures_checked);
	ck_assert_ptr_nonnull(strstr(rep.message, "UNSIGNED"));
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_wrong_key)
{
	struct tl_trace_opts o = {.n = 10, .key = 1};
	struct tl_verify vo = {.key = 2};
	struct mcpt_pubkey k1, k2;
	struct mcpt_report rep;
	char h1[17], h2[17];
	struct tl_bytes t;

	tl_pubkey(1, &k1);
	tl_pubkey(2, &k2);
	mcpt_key_id_hex(k1.key_id, h1);
	mcpt_key_id_hex(k2.key_id, h2);
	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_WRONG_KEY);
	ck_assert_int_eq(rep.code, MCPT_E_WRONG_KEY);
	ck_assert_ptr_nonnull(strstr(rep.message, h1));
	ck_assert_ptr_nonnull(strstr(rep.message, h2));
	ck_assert_mem_eq(rep.key_id, k1.key_id, 8);
	ck_assert_mem_eq(rep.trusted_key_id, k2.key_id, 8);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_no_final)
{
	struct tl_trace_opts o = {.n = 120, .seg_max = 50, .key = 1, .no_final = true};
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;
	char want[128];

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_NO_FINAL);
	ck_assert_uint_eq(rep.seals, 2);
	ck_assert_uint_eq(rep.verified_through_record, 102); /* 1 + 50 + 1 + 50 */
	ck_assert_uint_eq(rep.unsealed_from_record, 103);
	ck_assert_uint_eq(rep.unsealed_records, 20);
	snprintf(want, sizeof(want),
		 "verified through record 102; 20 records (%llu bytes) after the last seal are "
		 "unproven; no FINAL seal",
		 (unsigned long long)rep.unsealed_bytes);
	ck_assert_str_eq(rep.message, want);
	ck_assert(tl_has_warning(&rep, MCPT_W_UNSEALED_TAIL));
	ck_assert_int_eq(mcpt_verdict_exit_code(rep.verdict), 5);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

static struct mcpt_writer *small_writer(int fd, struct tl_clock *clk, struct mcpt_signer *s)
{
	static Mcpt__Header h;
	static Mcpt__Host host;
	static Mcpt__Kernel k;
	static Mcpt__ClockSample cs;
	struct mcpt_writer_opts wo = {.clock = &clk->clock};

	tl_clock_init(clk, 5000000);
	tl_header(&h, &host, &k, &cs);
	return mcpt_writer__new(fd, &h, s, &wo);
}

START_TEST(test_unknown_type_and_loss)
{
	struct mcpt_signer *s = tl_signer(1);
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_clock clk;
	struct tl_bytes t;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w = small_writer(fd, &clk, s);

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(tl_append_event(w, 0), 0);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1024, (const uint8_t *)"\x08\x01", 2, 0), 0);
	ck_assert_int_eq(mcpt_writer__set_loss(w, MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL, 7), 0);
	ck_assert_int_eq(mcpt_writer__set_loss(w, MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL, 6),
			 -EINVAL);
	ck_assert_int_eq(mcpt_writer__set_loss(w, 99, 1), -EINVAL);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_SIGNAL), 0);
	mcpt_writer__free(w);
	tl_slurp(fd, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_int_eq(rep.end_reason, MCPT__END_REASON__END_SIGNAL);
	ck_assert_uint_eq(rep.unknown_types, 1);
	ck_assert(tl_has_warning(&rep, MCPT_W_UNKNOWN_TYPE));
	ck_assert(tl_has_warning(&rep, MCPT_W_LOSS));
	ck_assert_uint_eq(rep.loss.ringbuf_reserve_fail, 7);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

static int stop_at_5(void *ctx, const struct mcpt_record *r)
{
	(void)ctx;
	return r->index == 5 ? 7 : 0;
}

START_TEST(test_callback_stop)
{
	struct tl_trace_opts o = {.n = 100, .key = 1};
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, stop_at_5, NULL, &rep), 7);
	ck_assert_ptr_nonnull(strstr(rep.message, "stopped by the caller"));
	ck_assert_uint_lt(rep.records, 10);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_hold_limit)
{
	struct tl_trace_opts o = {.n = 500, .seg_max = 400, .key = 1};
	struct tl_verify vo = {.key = 1, .hold = true, .hold_max = 8192};
	struct mcpt_report rep;
	struct tl_bytes t;
	struct seen s = {0};

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, collect, &s, &rep), -ENOBUFS);
	ck_assert_int_eq(rep.code, MCPT_E_LIMIT);
	ck_assert_ptr_nonnull(strstr(rep.message, "hold buffer"));
	ck_assert_uint_eq(s.n, 0); /* nothing unverified was released */
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *core = tcase_create("core"), *modes = tcase_create("modes");

	tcase_set_timeout(core, 120);
	tcase_add_test(core, test_roundtrip_many);
	tcase_add_test(core, test_roundtrip_hold);
	tcase_add_test(core, test_independent_roots);
	tcase_add_loop_test(modes, test_structure_only, 0, 2);
	tcase_add_test(modes, test_unsigned);
	tcase_add_test(modes, test_wrong_key);
	tcase_add_test(modes, test_no_final);
	tcase_add_test(modes, test_unknown_type_and_loss);
	tcase_add_test(modes, test_callback_stop);
	tcase_add_test(modes, test_hold_limit);
	suite_add_tcase(s, core);
	suite_add_tcase(s, modes);
	return s;
}
