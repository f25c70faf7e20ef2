/*
 * check_trace_seal.c - regression tests for the seal and statement inputs of TRACE-FORMAT.md 5
 * (items 11, 12 and the FINAL rules of 3): every statement field bent one way at a time and
 * signed with the test key, so each check behind the signature answers with its own code;
 * signatures of the wrong length, all zero, over the bare statement or another payload type,
 * by another key; seal sequences that are legal (seal first, consecutive seals); bytes after
 * FINAL; records that are signed but do not parse (including an allocation bomb); warnings.
 */
#include <check.h>
#include <string.h>
#include <time.h>

#include "trace_testlib.h"

Suite *trace_seal_suite(void);

static void verify_forge(struct forge *f, const struct tl_verify *vo, struct mcpt_report *rep)
{
	static const struct tl_verify def = {.key = 1};

	ck_assert_int_eq(tl_verify(f->out.p, f->out.len, vo ? vo : &def, NULL, NULL, rep), 0);
}

/* seal 0 normal, seal 1 bent by sf/bf (or signed per sig_mode/sig_len), FINAL seal 2. */
static void three_seals(struct forge *f, forge_stmt_fn sf, forge_bytes_fn bf, void *ctx,
			size_t sig_len)
{
	forge_init(f, 1, 0, NULL, NULL);
	forge_event(f, 0);
	forge_event(f, 1);
	forge_seal(f, 0);
	forge_event(f, 2);
	forge_event(f, 3);
	forge_seal_ex(f, 0, sf, bf, ctx, sig_len);
	f->sig_mode = FORGE_SIG_PAE;
	forge_event(f, 4);
	forge_seal(f, MCPT_SEAL_FINAL);
}

static void expect_seal1(struct forge *f, enum mcpt_code code, const char *needle)
{
	struct mcpt_report rep;

	verify_forge(f, NULL, &rep);
	ck_assert_msg(rep.verdict == MCPT_INVALID && rep.code == code, "got %s/%s: %s",
		      mcpt_verdict_name(rep.verdict), mcpt_code_name(rep.code), rep.message);
	ck_assert_uint_ge(rep.n_bad_segments, 1);
	ck_assert_uint_eq(rep.bad_segments[0].first_record, 4); /* segment 1 */
	ck_assert_uint_eq(rep.bad_segments[0].record_count, 2);
	ck_assert_uint_eq(rep.first_bad_record, 4);
	ck_assert_uint_eq(rep.verified_through_record, 3);
	if (needle)
		ck_assert_msg(strstr(rep.bad_segments[0].reason, needle), "\"%s\" not in \"%s\"",
			      needle, rep.bad_segments[0].reason);
	mcpt_report__fini(&rep);
	forge_fini(f);
}

static uint8_t other[32] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
			    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};

static void sx_index_repeat(Mcpt__SealStatement *st)
{
	st->seal_index = 0;
}
static void sx_index_skip(Mcpt__SealStatement *st)
{
	st->seal_index = 2;
}
static void sx_prev(Mcpt__SealStatement *st)
{
	st->prev_seal_digest.data = other;
}
static void sx_trace(Mcpt__SealStatement *st)
{
	st->trace_id.data = other;
}
static void sx_header(Mcpt__SealStatement *st)
{
	st->header_digest.data = other;
}
static void sx_first(Mcpt__SealStatement *st)
{
	st->first_record++;
}
static void sx_count(Mcpt__SealStatement *st)
{
	st->record_count++;
}
static void sx_leaves(Mcpt__SealStatement *st)
{
	st->leaf_count++;
}
static void sx_seal_rec(Mcpt__SealStatement *st)
{
	st->seal_record++;
}
static void sx_offset(Mcpt__SealStatement *st)
{
	st->seal_offset++;
}
static void sx_root(Mcpt__SealStatement *st)
{
	st->segment_root.data = other;
}
static void sx_epoch(Mcpt__SealStatement *st)
{
	st->epoch = 1;
}
static void sx_no_clock(Mcpt__SealStatement *st)
{
	st->clock = NULL;
}
static void sx_no_loss(Mcpt__SealStatement *st)
{
	st->loss = NULL;
}
static void sx_key(Mcpt__SealStatement *st)
{
	st->key_id.data = other;
}
static void sx_tid_len(Mcpt__SealStatement *st)
{
	st->trace_id.len = 15;
}
static void sx_boot_back(Mcpt__SealStatement *st)
{
	st->clock->boottime_before_ns = st->clock->boottime_after_ns = 5;
}
static void sx_boot_inv(Mcpt__SealStatement *st)
{
	st->clock->boottime_before_ns += 5000;
}
static void sx_mono_back(Mcpt__SealStatement *st)
{
	st->clock->monotonic_ns = 1;
}
static void sx_minmax(Mcpt__SealStatement *st)
{
	st->min_event_ts = 5;
}
static void sx_min_gt_max(Mcpt__SealStatement *st)
{
	st->min_event_ts = 9;
	st->max_event_ts = 8;
}
static void sx_future(Mcpt__SealStatement *st)
{
	st->min_event_ts = 1;
	st->max_event_ts = st->clock->boottime_after_ns + 6000000000ull;
}

/* segment 1 holds the Events stamped 1002000 and 1003000 (forge_event 2 and 3) */
static void sx_event_before(Mcpt__SealStatement *st)
{
	st->min_event_ts = 1002500;
	st->max_event_ts = 1003000;
}
static void sx_event_after(Mcpt__SealStatement *st)
{
	st->min_event_ts = 1002000;
	st->max_event_ts = 1002999;
}

static const struct {
	void (*fn)(Mcpt__SealStatement *st);
	enum mcpt_code c;
	const char *needle;
} sx[] = {
	{sx_index_repeat, MCPT_E_SEAL_CHAIN, "seal index 0 where 1"},
	{sx_index_skip, MCPT_E_SEAL_CHAIN, "seals are missing"},
	{sx_prev, MCPT_E_SEAL_CHAIN, "previous-seal digest"},
	{sx_trace, MCPT_E_SEAL_TRACE, "another trace"},
	{sx_header, MCPT_E_SEAL_TRACE, "header digest"},
	{sx_first, MCPT_E_SEAL_COUNT, "first_record 5, expected 4"},
	{sx_count, MCPT_E_SEAL_COUNT, "record_count 3"},
	{sx_leaves, MCPT_E_SEAL_COUNT, "leaf_count 2"},
	{sx_seal_rec, MCPT_E_SEAL_COUNT, "seal_record 7, expected 6"},
	{sx_offset, MCPT_E_SEAL_COUNT, "seal_offset"},
	{sx_root, MCPT_E_SEAL_ROOT, "segment root"},
	{sx_epoch, MCPT_E_SEAL_PARSE, "epoch"},
	{sx_no_clock, MCPT_E_SEAL_PARSE, "clock"},
	{sx_no_loss, MCPT_E_SEAL_PARSE, "loss"},
	{sx_key, MCPT_E_SEAL_PARSE, "key id differs"},
	{sx_tid_len, MCPT_E_SEAL_PARSE, "wrong length"},
	{sx_boot_back, MCPT_E_SEAL_TIME, "backwards"},
	{sx_boot_inv, MCPT_E_SEAL_TIME, "before > after"},
	{sx_mono_back, MCPT_E_SEAL_TIME, "backwards"},
	{sx_minmax, MCPT_E_SEAL_TIME, "time range"},
	{sx_min_gt_max, MCPT_E_SEAL_TIME, "time range"},
	{sx_future, MCPT_E_SEAL_TIME, "after their seal"},
	{sx_event_before, MCPT_E_SEAL_TIME, "outside its seal's time range"},
	{sx_event_after, MCPT_E_SEAL_TIME, "outside its seal's time range"},
};

static void run_sx(Mcpt__SealStatement *st, void *ctx)
{
	sx[*(int *)ctx].fn(st);
}

START_TEST(test_statement_fields)
{
	struct forge f;
	int i = _i;

	three_seals(&f, run_sx, NULL, &i, 64);
	expect_seal1(&f, sx[_i].c, sx[_i].needle);
}
END_TEST

static const struct {
	const char *bytes;
	size_t len;
	const char *needle;
} bx[] = {
	{"\x00", 1, "does not parse"},	      /* trailing byte */
	{"\xa0\x06\x01", 3, "not canonical"}, /* unknown field 100 */
	{"\x18\x01", 2, "not canonical"},     /* seal_index repeated */
	{"\x18\x81\x00", 3, "not canonical"}, /* repeated, non-minimal varint */
	{"\x5a\x00", 2, "not canonical"},     /* clock sub-message repeated (merged) */
};

static void run_bx(struct mcpt_buf *stmt, void *ctx)
{
	int i = *(int *)ctx;

	ck_assert_int_eq(mcpt_buf_reserve(stmt, bx[i].len), 0);
	memcpy(stmt->p + stmt->len, bx[i].bytes, bx[i].len);
	stmt->len += bx[i].len;
}

START_TEST(test_statement_bytes)
{
	struct forge f;
	int i = _i;

	three_seals(&f, NULL, run_bx, &i, 64);
	expect_seal1(&f, MCPT_E_SEAL_PARSE, bx[_i].needle);
}
END_TEST

START_TEST(test_signature_length)
{
	struct forge f;

	three_seals(&f, NULL, NULL, NULL, _i ? 65 : 63);
	expect_seal1(&f, MCPT_E_SEAL_SIG, _i ? "65 bytes" : "63 bytes");
}
END_TEST

static void set_mode(struct forge *f, int mode)
{
	f->sig_mode = mode;
}

START_TEST(test_signature_coverage)
{
	static const int modes[] = {FORGE_SIG_ZERO, FORGE_SIG_RAW, FORGE_SIG_OTHER_TYPE,
				    FORGE_SIG_HIGH_S, FORGE_SIG_SMALL_R};
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_event(&f, 1);
	forge_seal(&f, 0);
	forge_event(&f, 2);
	forge_event(&f, 3);
	set_mode(&f, modes[_i]);
	forge_seal(&f, 0);
	set_mode(&f, FORGE_SIG_PAE);
	forge_event(&f, 4);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_seal1(&f, MCPT_E_SEAL_SIG, "does not verify");
}
END_TEST

/* A bad seal j breaks the link from seal j+1: that is reported once, against j. */
START_TEST(test_bad_seal_not_cascaded)
{
	struct forge f;
	struct mcpt_report rep;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_seal(&f, 0);
	f.sig_mode = FORGE_SIG_ZERO;
	forge_event(&f, 1);
	forge_seal(&f, 0);
	f.sig_mode = FORGE_SIG_PAE;
	forge_event(&f, 2);
	forge_seal(&f, 0);
	forge_event(&f, 3);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_forge(&f, NULL, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_uint_eq(rep.bad_segments_total, 1);
	ck_assert_int_eq(rep.bad_segments[0].code, MCPT_E_SEAL_SIG);
	ck_assert_uint_eq(rep.seals_ok, 3);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* Wrong key (header names another key) and bad signature are distinct results. */
START_TEST(test_wrong_key_vs_bad_signature)
{
	struct tl_verify k2 = {.key = 2};
	struct mcpt_report a, b;
	struct forge f;

	three_seals(&f, NULL, NULL, NULL, 64);
	verify_forge(&f, &k2, &a);
	ck_assert_int_eq(a.verdict, MCPT_WRONG_KEY);
	ck_assert_int_eq(a.code, MCPT_E_WRONG_KEY);
	forge_fini(&f);
	three_seals(&f, NULL, NULL, NULL, 64);
	f.out.p[f.out.len - 20] ^= 1; /* inside the FINAL seal's signature */
	verify_forge(&f, NULL, &b);
	ck_assert_int_eq(b.verdict, MCPT_INVALID);
	ck_assert_int_eq(b.code, MCPT_E_SEAL_SIG);
	ck_assert_int_ne(mcpt_verdict_exit_code(a.verdict), mcpt_verdict_exit_code(b.verdict));
	mcpt_report__fini(&a);
	mcpt_report__fini(&b);
	forge_fini(&f);
}
END_TEST

/* A seal by another key in a trace whose Header names the test key. */
START_TEST(test_seal_by_other_key)
{
	struct mcpt_signer *mine;
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_seal(&f, 0);
	forge_event(&f, 1);
	mine = f.signer;
	f.signer = tl_signer(2);
	mcpt_signer_key_id(f.signer, f.key_id);
	forge_seal(&f, 0);
	mcpt_signer_free(f.signer);
	f.signer = mine;
	mcpt_signer_key_id(f.signer, f.key_id);
	forge_seal(&f, MCPT_SEAL_FINAL);
	{
		struct mcpt_report rep;

		verify_forge(&f, NULL, &rep);
		ck_assert_int_eq(rep.code, MCPT_E_SEAL_SIG);
		ck_assert_ptr_nonnull(strstr(rep.bad_segments[0].reason, "names key"));
		mcpt_report__fini(&rep);
	}
	forge_fini(&f);
}
END_TEST

START_TEST(test_seal_sequences_legal)
{
	struct mcpt_report rep;
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_seal(&f, 0); /* seal first: empty segment 0 */
	forge_seal(&f, MCPT_SEAL_HEARTBEAT);
	forge_seal(&f, 0); /* consecutive seals */
	forge_event(&f, 0);
	forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_forge(&f, NULL, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(rep.seals_ok, 5);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

static void loss_game(struct forge *f, uint64_t a, uint64_t b)
{
	forge_init(f, 1, 0, NULL, NULL);
	forge_event(f, 0);
	forge_event(f, 1);
	f->loss.perf_lost = a;
	forge_seal(f, 0);
	forge_event(f, 2);
	forge_event(f, 3);
	f->loss.perf_lost = b;
	forge_seal(f, 0);
	forge_seal(f, MCPT_SEAL_FINAL);
}

START_TEST(test_loss_regression)
{
	struct forge f;

	loss_game(&f, 5, 4);
	expect_seal1(&f, MCPT_E_LOSS_REGRESSION, "perf_lost went from 5 to 4");
	loss_game(&f, UINT64_MAX, 0); /* wrapped */
	expect_seal1(&f, MCPT_E_LOSS_REGRESSION, "perf_lost");
}
END_TEST

START_TEST(test_after_final)
{
	static const uint8_t zeros[64];
	static const char *const needles[] = {"bytes after the FINAL", "bytes after the FINAL",
					      "zero bytes after", "concatenated trace"};
	struct mcpt_report rep;
	struct forge f, g;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	switch (_i) {
	case 0:
		forge_event(&f, 1);
		break;
	case 1:
		forge_seal(&f, 0);
		break;
	case 2:
		forge_raw(&f, zeros, sizeof(zeros));
		break;
	default:
		forge_init(&g, 1, 0, NULL, NULL);
		forge_seal(&g, MCPT_SEAL_FINAL);
		forge_raw(&f, g.out.p, g.out.len);
		forge_fini(&g);
	}
	verify_forge(&f, NULL, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_int_eq(rep.code, MCPT_E_TRAILING);
	ck_assert(rep.final);
	ck_assert_uint_eq(rep.verified_through_record, 2); /* what precedes FINAL still holds */
	ck_assert_msg(strstr(rep.message, needles[_i]), "%s", rep.message);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* Signed records whose bytes protobuf-c rejects (TRACE-FORMAT.md 5.9). */
static const struct {
	const char *body;
	size_t len;
} malformed[] = {
	{"\x42\xff\x01", 3},	     /* path: length 255, 1 byte left */
	{"\x6a\x03\x02\x80\x80", 5}, /* packed args: truncated varint */
	{"\x40\x05", 2},	     /* path (bytes) sent as a varint */
	{"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12}, /* 11-byte varint */
	{"\x0b", 1},						  /* a start-group tag */
};

START_TEST(test_signed_record_does_not_parse)
{
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_event(&f, 1);
	forge_seal(&f, 0);
	forge_event(&f, 2);
	forge_record(&f, MCPT_T_EVENT, (const uint8_t *)malformed[_i].body, malformed[_i].len);
	forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_seal1(&f, MCPT_E_RECORD_PARSE, "record 5 is signed but does not parse");
}
END_TEST

/* 133 000 unknown fields in 400 KB: protobuf-c would allocate over 20x that; the arena's
 * budget (8x + 64 KiB) refuses, quickly. */
START_TEST(test_allocation_bomb)
{
	static uint8_t body[400000];
	struct forge f;
	clock_t t0 = clock();

	for (size_t i = 0; i + 3 <= sizeof(body); i += 3) {
		body[i] = 0xa0; /* field 100, varint 1: an unknown field each */
		body[i + 1] = 0x06;
		body[i + 2] = 0x01;
	}
	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_event(&f, 1);
	forge_seal(&f, 0);
	forge_event(&f, 2);
	forge_record(&f, MCPT_T_EVENT, body, sizeof(body) / 3 * 3);
	forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_seal1(&f, MCPT_E_RECORD_PARSE, "does not parse");
	ck_assert_int_lt((clock() - t0) / (CLOCKS_PER_SEC / 1000), 2000);
}
END_TEST

START_TEST(test_signed_seal_in_unsigned_trace)
{
	struct tl_verify vo = {.key = 1, .allow_unsigned = true};
	struct mcpt_report rep;
	struct forge f;

	forge_init(&f, 0, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_seal(&f, 0);
	verify_forge(&f, &vo, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX); /* hashes hold, no FINAL */
	mcpt_report__fini(&rep);
	f.signer = tl_signer(1);
	mcpt_signer_key_id(f.signer, f.key_id);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_forge(&f, &vo, &rep);
	ck_assert_msg(rep.verdict == MCPT_INVALID && rep.code == MCPT_E_SEAL_PARSE, "%s",
		      rep.message);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

static void cx_realtime(Mcpt__SealStatement *st, void *ctx)
{
	(void)ctx;
	st->clock->realtime_ns += 100000000000ull;
}

static void cx_unsync(Mcpt__SealStatement *st, void *ctx)
{
	(void)ctx;
	st->clock->ntp_synced = false;
}

START_TEST(test_clock_warnings)
{
	struct mcpt_report rep;
	struct forge f;

	three_seals(&f, cx_realtime, NULL, NULL, 64);
	verify_forge(&f, NULL, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert(tl_has_warning(&rep, MCPT_W_CLOCK_STEP));
	mcpt_report__fini(&rep);
	forge_fini(&f);
	three_seals(&f, cx_unsync, NULL, NULL, 64);
	verify_forge(&f, NULL, &rep);
	ck_assert(tl_has_warning(&rep, MCPT_W_NTP_UNSYNC));
	mcpt_report__fini(&rep);
	forge_fini(&f);
	forge_init(&f, 1, 0, NULL, NULL);
	forge_seal(&f, 0);
	f.now += 20000000000ull; /* 20 s without a seal, heartbeat 10 s */
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_forge(&f, NULL, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert(tl_has_warning(&rep, MCPT_W_SEAL_GAP));
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

Suite *trace_seal_suite(void)
{
	Suite *s = suite_create("trace_seal");
	TCase *st = tcase_create("statement"), *sig = tcase_create("signature"),
	      *seq = tcase_create("sequence");

	tcase_add_loop_test(st, test_statement_fields, 0, sizeof(sx) / sizeof(sx[0]));
	tcase_add_loop_test(st, test_statement_bytes, 0, sizeof(bx) / sizeof(bx[0]));
	tcase_add_test(st, test_loss_regression);
	tcase_add_loop_test(sig, test_signature_length, 0, 2);
	tcase_add_loop_test(sig, test_signature_coverage, 0, 5);
	tcase_add_test(sig, test_bad_seal_not_cascaded);
	tcase_add_test(sig, test_wrong_key_vs_bad_signature);
	tcase_add_test(sig, test_seal_by_other_key);
	tcase_add_test(seq, test_seal_sequences_legal);
	tcase_add_loop_test(seq, test_after_final, 0, 4);
	tcase_add_loop_test(seq, test_signed_record_does_not_parse, 0,
			    sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(seq, test_allocation_bomb);
	tcase_add_test(seq, test_signed_seal_in_unsigned_trace);
	tcase_add_test(seq, test_clock_warnings);
	suite_add_tcase(s, st);
	suite_add_tcase(s, sig);
	suite_add_tcase(s, seq);
	return s;
}
