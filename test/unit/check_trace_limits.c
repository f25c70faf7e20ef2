/*
 * check_trace_limits.c - hostile text and hostile volume (TRACE-FORMAT.md 5.10, 5.14):
 *   escape: the escaper's output is printable ASCII, cut only at whole escapes, and the
 *           sanitizer changes nothing on escaped text (so nothing is escaped twice);
 *   text:   a signed trace whose signer alg or schema id carries terminal escapes and newlines
 *           is reported with them escaped, in the message, in the text rendering (one verdict
 *           line, no ESC byte) and in the JSON rendering (valid, ASCII);
 *           a NUL inside a protobuf string is caught by the canonical check; enum values out of
 *           range (event clock, end reason, seal flags) are shown, not trusted;
 *   seals:  signed empty seals closer together than the writer's policy give W_SEAL_FLOOD (not
 *           for heartbeats or for a MARK-rate trace); the cap on empty seals stops reading
 *           with E_LIMIT; the cap on bad segments stops a flood of forged seals; 300000
 *           unknown-type records and thousands of epoch certificates give one warning;
 *   loss:   every LossSource of the schema is carried in the signed totals and warned about.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *trace_limits_suite(void);

#define HOSTILE "\x1b[2J\x1b[31mVALID_COMPLETE\nforged \"line\"\\\x9b\x07"

START_TEST(test_escape)
{
	char out[64], again[64];

	mcpt_escape(out, sizeof(out), HOSTILE, strlen(HOSTILE));
	ck_assert_str_eq(out,
			 "\\x1b[2J\\x1b[31mVALID_COMPLETE\\nforged \\\"line\\\"\\\\\\x9b\\x07");
	ck_assert_str_eq(mcpt_sanitize(again, sizeof(again), out), out);
	for (size_t i = 0; out[i]; i++)
		ck_assert(out[i] >= 0x20 && out[i] < 0x7f);
	/* cut at a whole escape: 7 bytes of room hold "ab" and one \x1b, not half the next */
	ck_assert_str_eq(mcpt_escape(out, 8, "ab\x1b\x1b", 4), "ab\\x1b");
	ck_assert_str_eq(mcpt_escape(out, 1, "ab", 2), "");
	ck_assert_str_eq(mcpt_escape(out, sizeof(out), NULL, 5), "");
	ck_assert_str_eq(mcpt_sanitize(out, sizeof(out), "a\\b\n\xff"), "a\\b\\n\\xff");
}
END_TEST

static void hx_alg(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->signer->alg = (char *)HOSTILE;
}

static void hx_schema(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->schema_id = (char *)HOSTILE;
}

static char *render(const struct mcpt_report *rep, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	if (json)
		mcpt_report_print_json(f, rep);
	else
		mcpt_report_print(f, rep);
	fclose(f);
	return buf;
}

static void expect_escaped(forge_header_fn hf, enum mcpt_code code)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct forge f;
	json_t *j;
	char *text;

	forge_init(&f, 1, 0, hf, NULL);
	forge_seal(&f, MCPT_SEAL_FINAL);
	ck_assert_int_eq(tl_verify(f.out.p, f.out.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_msg(rep.code == code, "%s: %s", mcpt_code_name(rep.code), rep.message);
	ck_assert_msg(strstr(rep.message, "\\x1b[2J\\x1b[31mVALID_COMPLETE\\nforged"), "%s",
		      rep.message);
	text = render(&rep, false);
	ck_assert_ptr_null(strchr(text, 0x1b));
	ck_assert_ptr_null(strstr(text, "\nforged"));
	ck_assert_msg(strncmp(text, "UNSUPPORTED: ", 13) == 0 || strncmp(text, "INVALID: ", 9) == 0,
		      "%s", text);
	free(text);
	text = render(&rep, true);
	for (size_t i = 0; text[i]; i++)
		ck_assert(text[i] >= 0x20 && text[i] < 0x7f);
	j = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "message")), "\\x1b"));
	json_decref(j);
	free(text);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}

START_TEST(test_hostile_header_text)
{
	expect_escaped(hx_alg, MCPT_E_HEADER);
	expect_escaped(hx_schema, MCPT_E_VERSION);
}
END_TEST

static void verify_opts(const struct forge *f, const struct mcpt_verify_opts *o,
			struct mcpt_report *rep)
{
	int fd = tl_memfd(f->out.p, f->out.len);

	ck_assert_int_eq(mcpt_verify(fd, o, NULL, NULL, rep), 0);
	close(fd);
}

START_TEST(test_seal_flood_warning)
{
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key};
	struct mcpt_report rep;
	struct forge f;

	tl_pubkey(1, &key);
	/* 20 empty seals 1 ms apart: the writer never does that (MARK seals are >= 10 ms apart) */
	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	for (int i = 0; i < 20; i++)
		forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_opts(&f, &o, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert(tl_has_warning(&rep, MCPT_W_SEAL_FLOOD));
	ck_assert_ptr_nonnull(strstr(rep.warnings[rep.n_warnings - 1].text, "19 signed empty"));
	mcpt_report__fini(&rep);
	forge_fini(&f);
	/* heartbeats (empty, 10 s apart) and seals over records are what a writer does */
	forge_init(&f, 1, 0, NULL, NULL);
	for (int i = 0; i < 20; i++) {
		f.now += 10000000000ull;
		forge_seal(&f, MCPT_SEAL_HEARTBEAT);
		forge_event(&f, (uint64_t)i);
		forge_seal(&f, MCPT_SEAL_MARK);
	}
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_opts(&f, &o, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert(!tl_has_warning(&rep, MCPT_W_SEAL_FLOOD));
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

START_TEST(test_empty_seal_cap)
{
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key, .max_empty_seals = 10};
	struct mcpt_report rep;
	struct forge f;

	tl_pubkey(1, &key);
	forge_init(&f, 1, 0, NULL, NULL);
	for (int i = 0; i < 30; i++)
		forge_seal(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_opts(&f, &o, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_int_eq(rep.code, MCPT_E_LIMIT);
	ck_assert_uint_eq(rep.seals, 10); /* the 11th was not checked */
	ck_assert_uint_eq(rep.first_bad_record, 11);
	ck_assert_ptr_nonnull(strstr(rep.message, "more than 10 seals over empty segments"));
	mcpt_report__fini(&rep);
	o.max_empty_seals = 31; /* the same trace within the cap */
	verify_opts(&f, &o, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

START_TEST(test_bad_segment_cap)
{
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key, .max_bad_segments = 300};
	struct mcpt_report rep;
	struct forge f;

	tl_pubkey(1, &key);
	forge_init(&f, 1, 0, NULL, NULL);
	f.sig_mode = FORGE_SIG_RAW; /* a well-formed signature over the wrong bytes: a full check */
	for (unsigned i = 0; i < 400; i++) {
		forge_event(&f, i);
		forge_seal(&f, 0);
	}
	verify_opts(&f, &o, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_int_eq(rep.code, MCPT_E_SEAL_SIG);
	ck_assert_uint_eq(rep.bad_segments_total, 300);
	ck_assert_uint_eq(rep.seals, 300); /* the 100 after the cap were not checked */
	ck_assert_uint_eq(rep.n_bad_segments, MCPT_REPORT_MAX_LIST);
	ck_assert_ptr_nonnull(strstr(rep.message, "reading stopped at a limit"));
	mcpt_report__fini(&rep);
	o.max_bad_segments = 0; /* the default is far above: all 400 are reported */
	verify_opts(&f, &o, &rep);
	ck_assert_uint_eq(rep.bad_segments_total, 400);
	ck_assert_ptr_null(strstr(rep.message, "reading stopped"));
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* 5.10: NUL inside a protobuf `string` (C sees a shorter string: the canonical check must
 * notice the bytes differ) and enum values outside their declared range. */
static void hx_nul_schema(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->schema_id = (char *)"mcpwitness.trace.v1Xevil"; /* the test turns X into NUL */
}

static void hx_clock(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->event_clock = (Mcpt__ClockId)99;
}

static void sx_enum(Mcpt__SealStatement *st, void *ctx)
{
	(void)ctx;
	st->end_reason = 99;
	st->flags |= 0x80000000u;
}

START_TEST(test_nul_and_enums)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct forge f;
	uint8_t *at;
	char *text;

	forge_init(&f, 1, 0, hx_nul_schema, NULL);
	at = memmem(f.out.p, f.out.len, "v1Xevil", 7);
	ck_assert_ptr_nonnull(at);
	at[2] = '\0'; /* strcmp() would now see exactly "mcpwitness.trace.v1" */
	forge_seal(&f, MCPT_SEAL_FINAL);
	ck_assert_int_eq(tl_verify(f.out.p, f.out.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_msg(rep.code == MCPT_E_HEADER && strstr(rep.message, "not canonically"), "%s: %s",
		      mcpt_code_name(rep.code), rep.message);
	mcpt_report__fini(&rep);
	forge_fini(&f);

	forge_init(&f, 1, 0, hx_clock, NULL);
	forge_event(&f, 0);
	forge_seal_ex(&f, MCPT_SEAL_FINAL, sx_enum, NULL, NULL, 64);
	ck_assert_int_eq(tl_verify(f.out.p, f.out.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	text = render(&rep, false);
	ck_assert_ptr_nonnull(strstr(text, "end reason UNKNOWN"));
	free(text);
	text = render(&rep, true);
	ck_assert_ptr_nonnull(strstr(text, "\"end_reason\":\"UNKNOWN\""));
	free(text);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* 5.14: hundreds of thousands of records of an unknown type and thousands of (static-mode)
 * epoch certificates verify and give one warning, not one per record. (Constant memory on a
 * long stream is check_trace_io's.) */
START_TEST(test_unknown_flood)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	for (int i = 0; i < 300000; i++)
		forge_record(&f, 1500, (const uint8_t *)"", 0);
	for (int i = 0; i < 5000; i++)
		forge_record(&f, MCPT_T_EPOCH_CERT, (const uint8_t *)"\x0a\x00", 2);
	forge_seal(&f, MCPT_SEAL_FINAL);
	ck_assert_int_eq(tl_verify(f.out.p, f.out.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(rep.unknown_types, 300000);
	ck_assert_uint_eq(rep.n_warnings, 1);
	ck_assert_int_eq(rep.warnings[0].code, MCPT_W_UNKNOWN_TYPE);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* Every LossSource of the schema is carried in the signed totals and warned about: a source
 * the library did not know (TRACK_FULL) used to make mcpt_writer__set_loss fail, so the
 * collector's totals stopped there and verify never reported that loss. */
START_TEST(test_every_loss_source)
{
	const ProtobufCEnumDescriptor *d = &mcpt__loss_source__descriptor;
	struct tl_verify vo = {.key = 1};
	struct mcpt_signer *s = tl_signer(1);
	struct mcpt_writer_opts o = {0};
	struct mcpt_report rep;
	struct tl_clock clk;
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct mcpt_writer *w;
	struct tl_bytes t;
	int fd = memfd_create("loss", MFD_CLOEXEC);
	unsigned sources = 0;

	tl_clock_init(&clk, 1000000);
	tl_header(&h, &host, &k, &cs);
	o.clock = &clk.clock;
	w = mcpt_writer__new(fd, &h, s, &o);
	ck_assert_ptr_nonnull(w);
	for (unsigned i = 0; i < d->n_values; i++) {
		if (d->values[i].value == 0)
			continue;
		ck_assert_msg(mcpt_writer__set_loss(w, (Mcpt__LossSource)d->values[i].value, 5) ==
				      0,
			      "source %s", d->values[i].name);
		sources++;
	}
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	tl_slurp(fd, &t);
	close(fd);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(rep.n_warnings, sources); /* one W_LOSS per source, nothing else */
	ck_assert_uint_eq(rep.loss.track_full, 5);
	ck_assert_ptr_nonnull(strstr(rep.warnings[sources - 1].text, "5 lost (track_full)"));
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

Suite *trace_limits_suite(void)
{
	Suite *s = suite_create("trace_limits");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_hostile_header_text);
	tcase_add_test(tc, test_nul_and_enums);
	suite_add_tcase(s, tc);
	tc = tcase_create("seals");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_seal_flood_warning);
	tcase_add_test(tc, test_empty_seal_cap);
	tcase_add_test(tc, test_bad_segment_cap);
	tcase_add_test(tc, test_unknown_flood);
	tcase_add_test(tc, test_every_loss_source);
	suite_add_tcase(s, tc);
	return s;
}
