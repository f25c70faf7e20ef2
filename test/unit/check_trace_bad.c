/*
 * check_trace_bad.c - regression tests for the bad inputs of TRACE-FORMAT.md 5 that concern the
 * file, the framing and the Header (static-key mode): each input, the verdict and the code it
 * must produce, and for framing errors the exact record index and offset. Inputs are built with
 * the forge (valid signatures where a check behind the signature must be reached) or by hand.
 */
#include <check.h>
#include <string.h>

#include "trace_testlib.h"

Suite *trace_bad_suite(void);

static void verify_bytes(const uint8_t *p, size_t n, struct mcpt_report *rep)
{
	struct tl_verify vo = {.key = 1};

	ck_assert_int_eq(tl_verify(p, n, &vo, NULL, NULL, rep), 0);
}

static void expect_bytes(const uint8_t *p, size_t n, enum mcpt_verdict v, enum mcpt_code c,
			 const char *needle)
{
	struct mcpt_report rep;

	verify_bytes(p, n, &rep);
	ck_assert_msg(rep.verdict == v && rep.code == c, "got %s/%s (%s), want %s/%s",
		      mcpt_verdict_name(rep.verdict), mcpt_code_name(rep.code), rep.message,
		      mcpt_verdict_name(v), mcpt_code_name(c));
	if (needle)
		ck_assert_msg(strstr(rep.message, needle), "\"%s\" not in \"%s\"", needle,
			      rep.message);
	mcpt_report__fini(&rep);
}

static void expect_forge(struct forge *f, enum mcpt_verdict v, enum mcpt_code c, const char *needle)
{
	expect_bytes(f->out.p, f->out.len, v, c, needle);
	forge_fini(f);
}

START_TEST(test_forge_is_valid)
{
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	for (int i = 0; i < 5; i++)
		forge_event(&f, (uint64_t)i);
	forge_seal(&f, 0);
	forge_event(&f, 5);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, MCPT_VALID_COMPLETE, MCPT_OK, "all 9 records verified");
}
END_TEST

/* ---- preamble ---- */

static const struct {
	const char *bytes;
	size_t len;
	enum mcpt_verdict v;
	enum mcpt_code c;
	const char *needle;
} preambles[] = {
	{"", 0, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE, "empty"},
	{"\x89", 1, MCPT_VALID_PREFIX, MCPT_E_UNVERIFIED, "ends before its Header"},
	{"\x89MCPT\r\n\x1a\x01\x00\x00", 11, MCPT_VALID_PREFIX, MCPT_E_UNVERIFIED, NULL},
	{"\x89MCPT\r\n\x1a\x01\x00\x00\x00", 12, MCPT_VALID_PREFIX, MCPT_E_UNVERIFIED,
	 "ends before its Header"},
	{"hello", 5, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE, "(5 bytes)"},
	{"\x89MCPX\r\n\x1a\x01\x00\x00\x00\x02\x0a\x00", 15, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE,
	 "wrong magic"},
	{"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00", 13, MCPT_UNSUPPORTED,
	 MCPT_E_NOT_A_TRACE, "gzip"},
	{"\x28\xb5\x2f\xfd\x00\x00\x00\x00\x00\x00\x00\x00", 12, MCPT_UNSUPPORTED,
	 MCPT_E_NOT_A_TRACE, "zstd"},
	{"\x0a\x0d\x0d\x0a\x1c\x00\x00\x00\x4d\x3c\x2b\x1a", 12, MCPT_UNSUPPORTED,
	 MCPT_E_NOT_A_TRACE, "pcapng"},
	{"\xff\xfe\x4d\x00\x43\x00\x50\x00\x54\x00\x0a\x00", 12, MCPT_UNSUPPORTED,
	 MCPT_E_NOT_A_TRACE, "UTF-16"},
	{"\x89MCPT\n\x1a\x01\x00\x00\x00\x02", 12, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE, "CR-LF"},
	{"\x89MCPT\r\r\n\x1a\x01\x00\x00\x00", 13, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE, "mangled"},
	{"\x09MCPT\r\n\x1a\x01\x00\x00\x00", 12, MCPT_UNSUPPORTED, MCPT_E_NOT_A_TRACE, "8-bit"},
	{"\x89MCPT\r\n\x1a\x02\x00\x00\x00\x02\x0a\x00", 15, MCPT_UNSUPPORTED, MCPT_E_VERSION,
	 "major version 2"},
};

START_TEST(test_preamble)
{
	expect_bytes((const uint8_t *)preambles[_i].bytes, preambles[_i].len, preambles[_i].v,
		     preambles[_i].c, preambles[_i].needle);
}
END_TEST

START_TEST(test_truncated_preamble_is_torn)
{
	struct mcpt_report rep;

	verify_bytes((const uint8_t *)"\x89MCPT", 5, &rep);
	ck_assert(rep.truncated && !rep.have_header);
	mcpt_report__fini(&rep);
}
END_TEST

/* ---- header ---- */

static void minor_1(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->format_minor = 1;
}

START_TEST(test_newer_minor_ok)
{
	struct forge f;

	forge_init(&f, 1, 1, minor_1, NULL);
	forge_event(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, MCPT_VALID_COMPLETE, MCPT_OK, NULL);
}
END_TEST

static void minor_0(Mcpt__Header *h, void *ctx)
{
	(void)ctx;
	h->format_minor = 0;
}

START_TEST(test_minor_mismatch)
{
	struct forge f;

	forge_init(&f, 1, 1, minor_0, NULL); /* preamble 1.1, Header 1.0 */
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, MCPT_INVALID, MCPT_E_HEADER, "preamble 1.1");
}
END_TEST

struct htweak {
	void (*fn)(Mcpt__Header *h);
	enum mcpt_verdict v;
	enum mcpt_code c;
	const char *needle;
};

static void hx_incompat(Mcpt__Header *h)
{
	h->incompatible_features = 16; /* the first bit no reader knows yet */
}
static void hx_incompat_beside_known(Mcpt__Header *h)
{
	h->incompatible_features = MCPT_FEATURES_KNOWN | 16; /* still refused beside known ones */
}
static void hx_fork_without_tasks(Mcpt__Header *h)
{
	h->incompatible_features = MCPT_FEAT_FORK_TASK; /* bit 3 needs bit 1 */
}
static void hx_compat(Mcpt__Header *h)
{
	h->compatible_features = 1ull << 40;
}
static void hx_chunk0(Mcpt__Header *h)
{
	h->seal_policy->chunk_records = 0;
}
static void hx_chunk_huge(Mcpt__Header *h)
{
	h->seal_policy->chunk_records = 1u << 20;
}
static void hx_bytes0(Mcpt__Header *h)
{
	h->seal_policy->chunk_bytes = 0;
}
static void hx_bytes_huge(Mcpt__Header *h)
{
	h->seal_policy->chunk_bytes = 1u << 30;
}
static void hx_hb0(Mcpt__Header *h)
{
	h->seal_policy->heartbeat_ns = 0;
}
static void hx_seg0(Mcpt__Header *h)
{
	h->seal_policy->max_segment_records = 0;
}
static void hx_nopolicy(Mcpt__Header *h)
{
	h->seal_policy = NULL;
}
static void hx_maxrec0(Mcpt__Header *h)
{
	h->max_record_len = 0;
}
static void hx_maxrec_big(Mcpt__Header *h)
{
	h->max_record_len = (16u << 20) + 1;
}
static void hx_bootid(Mcpt__Header *h)
{
	h->boot_id.len = 5;
}
static void hx_traceid(Mcpt__Header *h)
{
	h->trace_id.len = 15;
}
static void hx_schema(Mcpt__Header *h)
{
	h->schema_id = (char *)"other.schema.v9";
}
static void hx_fs(Mcpt__Header *h)
{
	h->signer->mode = MCPT__SIGN_MODE__SIGN_FS;
}
static void hx_alg(Mcpt__Header *h)
{
	h->signer->alg = (char *)"rsa";
}
static void hx_keyid(Mcpt__Header *h)
{
	h->signer->key_id.len = 4;
}
static void hx_major(Mcpt__Header *h)
{
	h->format_major = 2;
}

static const struct htweak htweaks[] = {
	{hx_incompat, MCPT_UNSUPPORTED, MCPT_E_FEATURE, "incompatible feature bits 0x10"},
	{hx_incompat_beside_known, MCPT_UNSUPPORTED, MCPT_E_FEATURE,
	 "incompatible feature bits 0x10"},
	{hx_fork_without_tasks, MCPT_INVALID, MCPT_E_HEADER, "bit 3 (fork tasks) without bit 1"},
	{hx_compat, MCPT_VALID_COMPLETE, MCPT_OK, NULL},
	{hx_chunk0, MCPT_INVALID, MCPT_E_HEADER, "chunk parameters"},
	{hx_chunk_huge, MCPT_INVALID, MCPT_E_HEADER, "chunk parameters"},
	{hx_bytes0, MCPT_INVALID, MCPT_E_HEADER, "chunk parameters"},
	{hx_bytes_huge, MCPT_INVALID, MCPT_E_HEADER, "chunk parameters"},
	{hx_hb0, MCPT_INVALID, MCPT_E_HEADER, "seal policy"},
	{hx_seg0, MCPT_INVALID, MCPT_E_HEADER, "seal policy"},
	{hx_nopolicy, MCPT_INVALID, MCPT_E_HEADER, "no seal policy"},
	{hx_maxrec0, MCPT_INVALID, MCPT_E_HEADER, "max_record_len"},
	{hx_maxrec_big, MCPT_INVALID, MCPT_E_HEADER, "max_record_len"},
	{hx_bootid, MCPT_INVALID, MCPT_E_HEADER, "wrong length"},
	{hx_traceid, MCPT_INVALID, MCPT_E_HEADER, "wrong length"},
	{hx_schema, MCPT_UNSUPPORTED, MCPT_E_VERSION, "other.schema.v9"},
	{hx_fs, MCPT_UNSUPPORTED, MCPT_E_FEATURE, "forward-secure"},
	{hx_alg, MCPT_INVALID, MCPT_E_HEADER, "unknown signer"},
	{hx_keyid, MCPT_INVALID, MCPT_E_HEADER, "unknown signer"},
	{hx_major, MCPT_INVALID, MCPT_E_HEADER, "format 2.0"},
};

static void run_htweak(Mcpt__Header *h, void *ctx)
{
	((const struct htweak *)ctx)->fn(h);
}

START_TEST(test_header_fields)
{
	struct forge f;

	forge_init(&f, 1, 0, run_htweak, (void *)&htweaks[_i]);
	forge_event(&f, 0);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, htweaks[_i].v, htweaks[_i].c, htweaks[_i].needle);
}
END_TEST

static void big_challenge(Mcpt__Header *h, void *ctx)
{
	h->challenge = (ProtobufCBinaryData){70000, ctx};
}

START_TEST(test_header_too_big)
{
	static uint8_t junk[70000];
	struct forge f;

	forge_init(&f, 1, 0, big_challenge, junk);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, MCPT_INVALID, MCPT_E_HEADER, "above 65536");
}
END_TEST

START_TEST(test_header_missing)
{
	struct forge f, g;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_init(&g, 1, 0, NULL, NULL);
	g.out.len = MCPT_PREAMBLE_LEN; /* a trace that starts with an Event */
	forge_event(&g, 0);
	forge_seal(&g, MCPT_SEAL_FINAL);
	forge_fini(&f);
	expect_forge(&g, MCPT_INVALID, MCPT_E_HEADER, "not a Header");
}
END_TEST

/* The Header's bytes with a repeated field: parses (last wins) but is not canonical. */
START_TEST(test_header_not_canonical)
{
	struct forge f;
	struct tl_frame fr[4];
	uint8_t buf[4096], head[16];
	size_t n, hl;

	forge_init(&f, 1, 0, NULL, NULL);
	ck_assert_uint_eq(tl_frames(f.out.p, f.out.len, fr, 4), 1);
	memcpy(buf, fr[0].body + f.out.p, fr[0].blen);
	memcpy(buf + fr[0].blen, "\x08\x01", 2); /* format_major again */
	n = fr[0].blen + 2;
	hl = mcpt_frame_head(head, MCPT_T_HEADER, n);
	f.out.len = MCPT_PREAMBLE_LEN;
	forge_raw(&f, head, hl);
	forge_raw(&f, buf, n);
	expect_forge(&f, MCPT_INVALID, MCPT_E_HEADER, "canonical");
}
END_TEST

START_TEST(test_second_header)
{
	struct forge f;
	struct tl_frame fr[4];
	uint8_t copy[1024];

	forge_init(&f, 1, 0, NULL, NULL);
	ck_assert_uint_eq(tl_frames(f.out.p, f.out.len, fr, 4), 1);
	ck_assert_uint_le(fr[0].len, sizeof(copy));
	memcpy(copy, f.out.p + fr[0].off, fr[0].len);
	forge_event(&f, 0);
	forge_raw(&f, copy, fr[0].len);
	forge_seal(&f, MCPT_SEAL_FINAL);
	expect_forge(&f, MCPT_INVALID, MCPT_E_HEADER, "a second Header at record 2");
}
END_TEST

/* ---- framing: a bad frame after a sealed segment, then valid frames ---- */

static const struct {
	const char *bytes;
	size_t len;
	enum mcpt_code c;
	const char *needle;
} frames[] = {
	{"\x80\x00", 2, MCPT_E_FRAME_VARINT, "non-minimal"},
	{"\xff\x80\x00", 3, MCPT_E_FRAME_VARINT, "non-minimal"},
	{"\xff\xff\xff\xff\xff\x01", 6, MCPT_E_FRAME_VARINT, "longer than 5"},
	{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 10, MCPT_E_FRAME_VARINT, "longer than 5"},
	{"\xff\xff\xff\xff\x1f", 5, MCPT_E_FRAME_VARINT, "above 2^32"},
	{"\x00\x12", 2, MCPT_E_FRAME_LEN, "length 0"},
	{"\x01\x12", 2, MCPT_E_FRAME_LEN, "length 1 below 2"},
	{"\x80\x80\x80\x01", 4, MCPT_E_FRAME_LEN, "above 1048576"},
	{"\x04\x12\x05\x08\x01", 5, MCPT_E_FRAME_STRUCT, "exceeds the record"},
	{"\x05\x12\x01\x08\x08\x01", 6, MCPT_E_FRAME_STRUCT, "second field"},
	{"\x06\x12\x01\x08\x12\x01\x08", 7, MCPT_E_FRAME_STRUCT, "second field"},
	{"\x02\x02\x00", 3, MCPT_E_FRAME_STRUCT, "field number 0"},
	{"\x02\x10\x01", 3, MCPT_E_FRAME_STRUCT, "wire type 0"},
	{"\x09\x11\x01\x02\x03\x04\x05\x06\x07\x08", 10, MCPT_E_FRAME_STRUCT, "wire type 1"},
	{"\x02\x13\x14", 3, MCPT_E_FRAME_STRUCT, "wire type 3"},
	{"\x02\x14\x01", 3, MCPT_E_FRAME_STRUCT, "wire type 4"},
	{"\x05\x15\x01\x02\x03\x04", 6, MCPT_E_FRAME_STRUCT, "wire type 5"},
	{"\x02\x16\x01", 3, MCPT_E_FRAME_STRUCT, "wire type 6"},
	{"\x02\x17\x01", 3, MCPT_E_FRAME_STRUCT, "wire type 7"},
	{"\x03\x12\x80\x00", 4, MCPT_E_FRAME_STRUCT, "inner length"},
	{"\x07\x82\x80\x80\x80\x10\x00", 7, MCPT_E_FRAME_STRUCT, "tag varint"},
	{"\x89MCPT\r\n\x1a\x01\x00\x00\x00", 12, MCPT_E_TRAILING, "concatenated trace"},
};

START_TEST(test_bad_frame)
{
	struct forge f;
	struct mcpt_report rep;
	size_t at;

	forge_init(&f, 1, 0, NULL, NULL);
	forge_event(&f, 0);
	forge_event(&f, 1);
	forge_seal(&f, 0);
	at = f.out.len;
	forge_raw(&f, frames[_i].bytes, frames[_i].len);
	forge_event(&f, 2);
	forge_seal(&f, MCPT_SEAL_FINAL);
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_msg(rep.verdict == MCPT_INVALID && rep.code == frames[_i].c, "case %d: %s/%s: %s",
		      _i, mcpt_verdict_name(rep.verdict), mcpt_code_name(rep.code), rep.message);
	ck_assert_msg(strstr(rep.message, frames[_i].needle), "case %d: %s", _i, rep.message);
	ck_assert_uint_eq(rep.first_bad_record, 4);
	ck_assert_uint_eq(rep.first_bad_offset, at);
	ck_assert_uint_eq(rep.verified_through_record, 3); /* the sealed prefix still holds */
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* ---- tails: torn and zero-filled ends are crash artifacts, not tampering ---- */

static void sealed_prefix(struct forge *f)
{
	forge_init(f, 1, 0, NULL, NULL);
	forge_event(f, 0);
	forge_seal(f, 0);
	forge_event(f, 1);
}

START_TEST(test_torn_varint)
{
	struct forge f;

	sealed_prefix(&f);
	forge_raw(&f, "\x80", 1);
	expect_forge(&f, MCPT_VALID_PREFIX, MCPT_E_TRUNCATED, "torn frame");
}
END_TEST

START_TEST(test_length_beyond_eof)
{
	struct forge f;

	sealed_prefix(&f);
	forge_raw(&f, "\x20\x12\x05", 3);
	expect_forge(&f, MCPT_VALID_PREFIX, MCPT_E_TRUNCATED, "torn frame");
}
END_TEST

START_TEST(test_zero_tail)
{
	static const uint8_t zeros[5000];
	struct forge f;

	sealed_prefix(&f);
	forge_raw(&f, zeros, sizeof(zeros));
	expect_forge(&f, MCPT_VALID_PREFIX, MCPT_E_ZERO_TAIL, "zero bytes from offset");
}
END_TEST

/* A crash tore the last seal: its end and everything after it are zeros. */
START_TEST(test_zero_torn_seal)
{
	static const uint8_t zeros[4096];
	struct forge f;
	struct mcpt_report rep;

	sealed_prefix(&f);
	forge_seal(&f, 0);
	memset(f.out.p + f.out.len - 40, 0, 40);
	forge_raw(&f, zeros, sizeof(zeros));
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_ZERO_TAIL);
	ck_assert_uint_eq(rep.verified_through_record, 2);
	ck_assert_uint_eq(rep.unsealed_records, 1); /* the event before the torn seal */
	ck_assert_uint_eq(rep.bad_segments_total, 0);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* A damaged last frame that happens to end in 00 is not a crash artifact: a crash leaves whole
 * sectors unwritten, so the zeros must cover a 512-byte boundary. */
START_TEST(test_short_zero_run_is_not_a_crash)
{
	struct forge f;
	struct mcpt_report rep;
	uint8_t pad[512];
	size_t end;

	sealed_prefix(&f);
	memset(pad, 0, sizeof(pad));
	forge_seal(&f, 0);
	end = f.out.len;
	f.out.p[end - 1] = 0; /* last byte of the key id hint: the seal no longer names our key */
	ck_assert_uint_ne((end - 1) % 512, 0);
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_INVALID);
	ck_assert_int_eq(rep.code, MCPT_E_SEAL_SIG);
	mcpt_report__fini(&rep);
	forge_raw(&f, pad, sizeof(pad)); /* now the zeros run over a sector boundary */
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_ZERO_TAIL);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* The zero-fill began inside the last frame, past its header bytes, so that frame still parses
 * (the zeros fell in its text) and the zeros seen from the next frame boundary cover no sector
 * boundary by themselves: the run starts at the aligned offset inside the frame, a crash. */
START_TEST(test_zero_fill_inside_a_parsed_frame)
{
	static const uint8_t zeros[100];
	uint8_t note[3 + 700];
	struct mcpt_report rep;
	struct forge f;
	size_t start, cut;

	sealed_prefix(&f);
	note[0] = 0x1a; /* Annotation.text (field 3, bytes), 700 bytes */
	note[1] = 0x80 | (700 & 0x7f);
	note[2] = 700 >> 7;
	memset(note + 3, 'a', 700);
	start = f.out.len;
	forge_record(&f, MCPT_T_NOTE, note, sizeof(note));
	cut = (start + 8 + 511) & ~(size_t)511; /* a sector boundary inside the text */
	ck_assert_uint_lt(cut, f.out.len);
	ck_assert_uint_gt(cut, start + 8);
	memset(f.out.p + cut, 0, f.out.len - cut);
	ck_assert_uint_gt((f.out.len + sizeof(zeros) + 511) & ~(size_t)511, f.out.len + sizeof(zeros));
	forge_raw(&f, zeros, sizeof(zeros)); /* ends short of the next sector boundary */
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_ZERO_TAIL);
	ck_assert_uint_eq(rep.verified_through_record, 2);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* A crash right after the preamble: the Header's end never reached the disk, so its frame and
 * everything after it are zeros. No Header, as when the stream ends before it, not a bad one. */
START_TEST(test_zero_torn_header)
{
	static const uint8_t zeros[4096];
	struct mcpt_report rep;
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	ck_assert_uint_gt(f.out.len, MCPT_PREAMBLE_LEN + 40);
	memset(f.out.p + MCPT_PREAMBLE_LEN + 20, 0, f.out.len - MCPT_PREAMBLE_LEN - 20);
	forge_raw(&f, zeros, sizeof(zeros));
	verify_bytes(f.out.p, f.out.len, &rep);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_int_eq(rep.code, MCPT_E_UNVERIFIED); /* as for a stream that ends there */
	ck_assert(rep.zero_tail);
	ck_assert(!rep.have_header);
	ck_assert_uint_eq(rep.verified_through_record, 0);
	ck_assert_msg(strstr(rep.message, "ends before its Header") &&
			      strstr(rep.message, "crash artifact"),
		      "%s", rep.message);
	mcpt_report__fini(&rep);
	forge_fini(&f);
}
END_TEST

/* The same Header with only its last bytes zeroed, nothing after: a damaged Header, since a
 * crash leaves whole sectors unwritten. */
START_TEST(test_short_zero_run_in_header_is_invalid)
{
	struct forge f;

	forge_init(&f, 1, 0, NULL, NULL);
	ck_assert_uint_ge((f.out.len - 6 + 511) & ~(size_t)511, f.out.len); /* no sector boundary */
	memset(f.out.p + f.out.len - 6, 0, 6);
	expect_forge(&f, MCPT_INVALID, MCPT_E_HEADER, "Header");
}
END_TEST

START_TEST(test_zeros_then_data)
{
	static const uint8_t zeros[100];
	struct forge f;

	sealed_prefix(&f);
	forge_raw(&f, zeros, sizeof(zeros));
	forge_event(&f, 2);
	expect_forge(&f, MCPT_INVALID, MCPT_E_FRAME_LEN, "length 0");
}
END_TEST

Suite *trace_bad_suite(void)
{
	Suite *s = suite_create("trace_bad");
	TCase *p = tcase_create("preamble"), *h = tcase_create("header"),
	      *fr = tcase_create("framing"), *t = tcase_create("tails");

	tcase_add_test(p, test_forge_is_valid);
	tcase_add_loop_test(p, test_preamble, 0, sizeof(preambles) / sizeof(preambles[0]));
	tcase_add_test(p, test_truncated_preamble_is_torn);
	tcase_add_test(h, test_newer_minor_ok);
	tcase_add_test(h, test_minor_mismatch);
	tcase_add_loop_test(h, test_header_fields, 0, sizeof(htweaks) / sizeof(htweaks[0]));
	tcase_add_test(h, test_header_too_big);
	tcase_add_test(h, test_header_missing);
	tcase_add_test(h, test_header_not_canonical);
	tcase_add_test(h, test_second_header);
	tcase_add_loop_test(fr, test_bad_frame, 0, sizeof(frames) / sizeof(frames[0]));
	tcase_add_test(t, test_torn_varint);
	tcase_add_test(t, test_length_beyond_eof);
	tcase_add_test(t, test_zero_tail);
	tcase_add_test(t, test_zero_fill_inside_a_parsed_frame);
	tcase_add_test(t, test_zero_torn_seal);
	tcase_add_test(t, test_short_zero_run_is_not_a_crash);
	tcase_add_test(t, test_zeros_then_data);
	tcase_add_test(t, test_zero_torn_header);
	tcase_add_test(t, test_short_zero_run_in_header_is_invalid);
	suite_add_tcase(s, p);
	suite_add_tcase(s, h);
	suite_add_tcase(s, fr);
	suite_add_tcase(s, t);
	return s;
}
