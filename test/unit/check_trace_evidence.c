/*
 * check_trace_evidence.c - evidence for tickets (TRACE-FORMAT.md 4.12, proto/EXCERPT.md):
 *   paths:    RFC 9162 audit paths for every leaf of trees of 1..70 leaves verify against the
 *             root, and fail for a flipped hash or another leaf index;
 *   excerpt:  every record of a multi-segment trace (several chunk layouts) exports or is
 *             refused for the right reason (Header, seal, no such record, unsealed tail); each
 *             excerpt proves the record's exact bytes with the index within its proven bounds,
 *             exact for a segment's first and last chunk; with the wrong key, no key, an
 *             unsigned trace, a tampered segment;
 *   hostile:  every bit flip of an excerpt is refused or still proves only what is true of
 *             the trace; every truncation is refused; trailing bytes, bent proofs (index outside
 *             its bounds, extra hash, leaf out of range, a sibling's leaf) each with its code;
 *   dsse:     the envelope of the FINAL seal checks against the key and carries the FINAL
 *             statement; no envelope for a trace without FINAL seal; bent envelopes refused.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *trace_evidence_suite(void);

/* ---- audit paths ---- */

START_TEST(test_audit_paths)
{
	uint8_t leaves[70][MCPT_HASH_LEN], path[MCPT_PATH_MAX][MCPT_HASH_LEN], root[MCPT_HASH_LEN];

	for (unsigned i = 0; i < 70; i++)
		mcpt_hash2(leaves[i], "leaf", 4, &i, sizeof(i));
	for (uint64_t n = 1; n <= 70; n++) {
		struct mcpt_range r;

		mcpt_range_init(&r);
		for (uint64_t i = 0; i < n; i++)
			mcpt_range_push(&r, leaves[i]);
		mcpt_range_root(&r, root);
		for (uint64_t m = 0; m < n; m++) {
			size_t k = mcpt_audit_path((const uint8_t(*)[32])leaves, n, m, path);

			ck_assert_uint_eq(k, mcpt_audit_path_len(n, m));
			ck_assert(mcpt_audit_path_verify(leaves[m], m, n,
							 (const uint8_t(*)[32])path, k, root));
			if (n > 1)
				ck_assert(!mcpt_audit_path_verify(leaves[m], (m + 1) % n, n,
								  (const uint8_t(*)[32])path, k,
								  root));
			/* (another tree size can share a path's shape: the size is bound by the
			 * signed statement, not by the path) */
			for (size_t j = 0; j < k; j++) {
				path[j][5] ^= 1;
				ck_assert(!mcpt_audit_path_verify(
					leaves[m], m, n, (const uint8_t(*)[32])path, k, root));
				path[j][5] ^= 1;
			}
		}
	}
	ck_assert_uint_eq(mcpt_audit_path_len(1, 0), 0);
	ck_assert_uint_eq(mcpt_audit_path_len(64, 5), 6);
	ck_assert_uint_eq(mcpt_audit_path_len(5, 5), 0);
}
END_TEST

/* ---- excerpts ---- */

static int export_x(const struct tl_bytes *t, uint64_t i, const struct mcpt_verify_opts *o,
		    struct tl_bytes *x, char *err)
{
	int fd = tl_memfd(t->p, t->len);
	int rc = mcpt_excerpt_export(fd, i, o, &x->p, &x->len, err, 256);

	close(fd);
	return rc;
}

static void check_proven(const struct mcpt_excerpt *x, const struct tl_bytes *t,
			 const struct tl_frame *f, uint64_t i)
{
	ck_assert_msg(x->verdict == MCPT_VALID_COMPLETE, "record %llu: %s", (unsigned long long)i,
		      x->message);
	ck_assert_str_eq(mcpt_excerpt_verdict_name(x), "PROVEN");
	ck_assert_uint_eq(x->record, i);
	ck_assert_uint_eq(x->rec.index, i);
	ck_assert(!x->rec.provisional);
	ck_assert(x->index_min <= i && i <= x->index_max);
	if (x->leaf_index == 0 || x->leaf_index + 1 == x->leaf_count)
		ck_assert_uint_eq(x->index_min, x->index_max);
	ck_assert_uint_eq(x->rec.type, f->type);
	ck_assert_uint_eq(x->rec.body_len, f->blen);
	ck_assert(!memcmp(x->rec.body, t->p + f->body, f->blen));
	ck_assert(x->first_record <= i && i < x->seal_record);
}

/* Every record of trace t: proven, or refused for the reason its position says. */
static void every_record(const struct tl_trace_opts *to, uint64_t unsealed_from)
{
	static struct tl_frame frames[2048];
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key};
	struct tl_bytes t;
	size_t nf;
	char err[256];

	tl_pubkey(1, &key);
	tl_make_trace(to, &t);
	nf = tl_frames(t.p, t.len, frames, 2048);
	for (uint64_t i = 0; i <= nf; i++) {
		struct tl_bytes x = {0};
		struct mcpt_excerpt ex;
		int rc = export_x(&t, i, &o, &x, err);

		if (i == nf)
			ck_assert_msg(rc == -ENOENT && strstr(err, "no record"), "%s", err);
		else if (frames[i].type == MCPT_T_HEADER || frames[i].type == MCPT_T_SEAL)
			ck_assert_msg(rc == -EINVAL, "record %llu: %d %s", (unsigned long long)i,
				      rc, err);
		else if (i >= unsealed_from)
			ck_assert_msg(rc == -ENODATA && strstr(err, "after the last seal"), "%s",
				      err);
		if (rc)
			continue;
		ck_assert_int_eq(mcpt_excerpt_verify(x.p, x.len, &o, &ex), 0);
		check_proven(&ex, &t, &frames[i], i);
		ck_assert_uint_lt(x.len, 8192);
		tl_bytes_free(&x);
	}
	tl_bytes_free(&t);
}

START_TEST(test_every_record)
{
	struct tl_trace_opts a = {
		.n = 320, .seg_max = 50, .chunk_records = 4, .key = 1, .no_final = true};
	struct tl_trace_opts b = {
		.n = 200, .seg_max = 90, .chunk_records = 64, .chunk_bytes = 1024, .key = 1};
	struct tl_trace_opts c = {.n = 40, .seg_max = 4096, .seal_every = 7, .key = 1};

	every_record(&a, 306); /* 6 seals of 50 records: 300 + 6 seals + header = 306 */
	every_record(&b, 1000);
	every_record(&c, 1000);
}
END_TEST

/* A default trace and an excerpt of one record in a middle chunk of a middle segment. */
static void sample(struct tl_bytes *t, struct tl_bytes *x, uint64_t rec, uint8_t kb)
{
	struct tl_trace_opts to = {.n = 120, .seg_max = 50, .chunk_records = 8, .key = kb};
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key, .allow_unsigned = kb == 0};
	char err[256];

	tl_pubkey(1, &key);
	tl_make_trace(&to, t);
	ck_assert_msg(export_x(t, rec, &o, x, err) == 0, "%s", err);
}

static void verify_with(const struct tl_bytes *x, uint8_t kb, bool allow_unsigned,
			struct mcpt_excerpt *ex)
{
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = kb ? &key : NULL, .allow_unsigned = allow_unsigned};

	if (kb)
		tl_pubkey(kb, &key);
	ck_assert_int_eq(mcpt_excerpt_verify(x->p, x->len, &o, ex), 0);
}

START_TEST(test_keys_and_modes)
{
	struct tl_bytes t, x;
	struct mcpt_excerpt ex;

	sample(&t, &x, 70, 1);
	verify_with(&x, 2, false, &ex);
	ck_assert_int_eq(ex.verdict, MCPT_WRONG_KEY);
	ck_assert_int_eq(ex.code, MCPT_E_WRONG_KEY);
	ck_assert_int_eq(mcpt_verdict_exit_code(ex.verdict), 3);
	ck_assert_ptr_null(ex.rec.body);
	verify_with(&x, 0, false, &ex);
	ck_assert_int_eq(ex.verdict, MCPT_VALID_PREFIX);
	ck_assert_str_eq(mcpt_excerpt_verdict_name(&ex), "UNVERIFIED");
	ck_assert(ex.rec.provisional);
	tl_bytes_free(&x);
	tl_bytes_free(&t);
	sample(&t, &x, 70, 0); /* unsigned trace, exported with allow_unsigned */
	verify_with(&x, 1, false, &ex);
	ck_assert_str_eq(mcpt_excerpt_verdict_name(&ex), "UNSIGNED");
	verify_with(&x, 1, true, &ex);
	ck_assert_int_eq(ex.verdict, MCPT_VALID_COMPLETE);
	ck_assert(!ex.signatures_checked && ex.rec.provisional);
	ck_assert_ptr_nonnull(strstr(ex.message, "by hashes only"));
	tl_bytes_free(&x);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_tampered_segment_not_exported)
{
	struct tl_trace_opts to = {.n = 120, .seg_max = 50, .chunk_records = 8, .key = 1};
	static struct tl_frame frames[256];
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key};
	struct tl_bytes t, x = {0};
	char err[256];

	tl_pubkey(1, &key);
	tl_make_trace(&to, &t);
	tl_frames(t.p, t.len, frames, 256);
	t.p[frames[60].body + 3] ^= 0x20; /* a record of segment 1 */
	ck_assert_int_eq(export_x(&t, 70, &o, &x, err), -EBADMSG);
	ck_assert_msg(strstr(err, "does not verify") && strstr(err, "E_SEAL_ROOT"), "%s", err);
	ck_assert_int_eq(export_x(&t, 20, &o, &x, err), 0); /* segment 0 is intact */
	tl_bytes_free(&x);
	t.len = 40; /* inside the Header */
	ck_assert_int_eq(export_x(&t, 20, &o, &x, err), -EBADMSG);
	memcpy(t.p, "\x1f\x8b", 2);
	ck_assert_int_eq(export_x(&t, 20, &o, &x, err), -EBADMSG);
	ck_assert_msg(strstr(err, "gzip"), "%s", err);
	tl_bytes_free(&t);
}
END_TEST

/* Whatever a verified excerpt proves must be true of the trace: its record is a record of
 * the trace, at an index within the bounds it states. (The excerpt's minor version and, within
 * those bounds, the index it names and the record's place in its chunk are not fixed by the
 * signature, so some flips still verify: they must not prove anything false.) */
static void sound(const struct mcpt_excerpt *ex, const struct tl_bytes *t,
		  const struct tl_frame *frames, size_t nf, size_t at)
{
	for (size_t i = 0; i < nf; i++) {
		if (frames[i].blen != ex->rec.body_len ||
		    memcmp(t->p + frames[i].body, ex->rec.body, ex->rec.body_len))
			continue;
		ck_assert_msg(ex->index_min <= i && i <= ex->index_max &&
				      ex->index_min <= ex->record && ex->record <= ex->index_max,
			      "flip at %zu: record %zu shown as %llu in %llu..%llu", at, i,
			      (unsigned long long)ex->record, (unsigned long long)ex->index_min,
			      (unsigned long long)ex->index_max);
		return;
	}
	ck_abort_msg("flip at %zu proved bytes that are not a record of the trace", at);
}

START_TEST(test_every_flip_and_cut)
{
	static struct tl_frame frames[256];
	struct tl_bytes t, x;
	struct mcpt_excerpt ex;
	size_t nf, proven = 0;

	sample(&t, &x, 70, 1);
	nf = tl_frames(t.p, t.len, frames, 256);
	verify_with(&x, 1, false, &ex);
	ck_assert_int_eq(ex.verdict, MCPT_VALID_COMPLETE);
	for (size_t i = 0; i < x.len; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			x.p[i] ^= (uint8_t)(1u << bit);
			verify_with(&x, 1, false, &ex);
			if (ex.verdict == MCPT_VALID_COMPLETE) {
				sound(&ex, &t, frames, nf, i);
				proven++;
			}
			x.p[i] ^= (uint8_t)(1u << bit);
		}
	}
	ck_assert_uint_lt(proven, 40); /* minor version, index and place in the chunk only */
	for (size_t n = 0; n < x.len; n++) {
		struct tl_bytes cut = {x.p, n};

		verify_with(&cut, 1, false, &ex);
		ck_assert_msg(ex.verdict == (n ? MCPT_INVALID : MCPT_UNSUPPORTED), "cut at %zu: %s",
			      n, ex.message);
	}
	tl_bytes_free(&x);
	tl_bytes_free(&t);
}
END_TEST

/* Rewrites the excerpt's proof through fn and lays the excerpt out again. */
static void bend_proof(struct tl_bytes *x, void (*fn)(Mcpt__ExcerptProof *))
{
	uint32_t len;
	size_t vlen, rest_at, n;
	Mcpt__ExcerptProof *pr;
	uint8_t *out, extra[MCPT_HASH_LEN] = {0};
	ProtobufCBinaryData path[MCPT_PATH_MAX + 1], *orig;
	size_t n_orig;

	ck_assert_int_eq(mcpt_uvarint_get(x->p + 24, x->len - 24, &len, &vlen), 0);
	pr = mcpt__excerpt_proof__unpack(NULL, len, x->p + 24 + vlen);
	ck_assert_ptr_nonnull(pr);
	orig = pr->audit_path;
	n_orig = pr->n_audit_path;

	memcpy(path, pr->audit_path, pr->n_audit_path * sizeof(*path));
	path[pr->n_audit_path] = (ProtobufCBinaryData){sizeof(extra), extra};
	pr->audit_path = path;
	fn(pr);
	rest_at = 24 + vlen + len;
	n = mcpt__excerpt_proof__get_packed_size(pr);
	out = malloc(24 + 5 + n + x->len - rest_at);
	memcpy(out, x->p, 24);
	vlen = mcpt_uvarint_put(out + 24, (uint32_t)n);
	mcpt__excerpt_proof__pack(pr, out + 24 + vlen);
	memcpy(out + 24 + vlen + n, x->p + rest_at, x->len - rest_at);
	x->len = 24 + vlen + n + x->len - rest_at;
	pr->audit_path = orig; /* back to what unpack allocated, so it is freed */
	pr->n_audit_path = n_orig;
	mcpt__excerpt_proof__free_unpacked(pr, NULL);
	free(x->p);
	x->p = out;
}

static void px_index_far(Mcpt__ExcerptProof *p)
{
	p->record += 20;
}
static void px_index_near(Mcpt__ExcerptProof *p)
{
	p->record -= 1; /* record 70 sits in chunk 2 of segment 1: bounds are a range */
}
static void px_extra_hash(Mcpt__ExcerptProof *p)
{
	p->n_audit_path++;
}
static void px_leaf(Mcpt__ExcerptProof *p)
{
	p->leaf_index = p->leaf_count;
}
static void px_in_chunk(Mcpt__ExcerptProof *p)
{
	p->in_chunk = p->chunk_frames;
}
static void px_leaves(Mcpt__ExcerptProof *p)
{
	p->leaf_count++;
}
static void px_sibling(Mcpt__ExcerptProof *p)
{
	p->leaf_index ^= 1;
}

START_TEST(test_bent_proofs)
{
	static const struct {
		void (*fn)(Mcpt__ExcerptProof *);
		enum mcpt_code code;
		const char *needle;
	} cases[] = {
		{px_index_far, MCPT_E_EXCERPT, "the proof places it in"},
		{px_extra_hash, MCPT_E_EXCERPT, "audit path has"},
		{px_leaf, MCPT_E_EXCERPT, "names leaf"},
		{px_in_chunk, MCPT_E_EXCERPT, "in a chunk of"},
		{px_leaves, MCPT_E_EXCERPT, NULL},
		{px_sibling, MCPT_E_SEAL_ROOT, "audit path"},
	};
	struct tl_bytes t, x;
	struct mcpt_excerpt ex;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sample(&t, &x, 70, 1);
		bend_proof(&x, cases[i].fn);
		verify_with(&x, 1, false, &ex);
		ck_assert_msg(ex.verdict == MCPT_INVALID && ex.code == cases[i].code,
			      "case %zu: %s %s", i, mcpt_code_name(ex.code), ex.message);
		if (cases[i].needle)
			ck_assert_msg(strstr(ex.message, cases[i].needle), "%s", ex.message);
		tl_bytes_free(&x);
		tl_bytes_free(&t);
	}
	sample(&t, &x, 70, 1); /* within the bounds the proof allows: still PROVEN, as a range */
	verify_with(&x, 1, false, &ex);
	ck_assert_uint_lt(ex.index_min, ex.index_max);
	bend_proof(&x, px_index_near);
	verify_with(&x, 1, false, &ex);
	ck_assert_int_eq(ex.verdict, MCPT_VALID_COMPLETE);
	ck_assert_uint_eq(ex.record, 69);
	tl_bytes_free(&x);
	tl_bytes_free(&t);
}
END_TEST

START_TEST(test_trailing_and_not_excerpts)
{
	struct tl_bytes t, x;
	struct mcpt_excerpt ex;

	sample(&t, &x, 70, 1);
	x.p = realloc(x.p, x.len + 1);
	x.p[x.len++] = 0;
	verify_with(&x, 1, false, &ex);
	ck_assert_int_eq(ex.code, MCPT_E_TRAILING);
	tl_bytes_free(&x);
	verify_with(&t, 1, false, &ex); /* a trace is not an excerpt */
	ck_assert_int_eq(ex.verdict, MCPT_UNSUPPORTED);
	ck_assert_int_eq(ex.code, MCPT_E_NOT_A_TRACE);
	ck_assert(!mcpt_is_excerpt(t.p, t.len));
	memcpy(t.p, MCPT_EXCERPT_MAGIC, 8); /* and the trace reader names an excerpt */
	{
		struct tl_verify vo = {.key = 1};
		struct mcpt_report rep;

		ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
		ck_assert_ptr_nonnull(strstr(rep.message, "an mcpwitness excerpt"));
		mcpt_report__fini(&rep);
	}
	t.p[8] = 2;
	verify_with(&t, 1, false, &ex);
	ck_assert_int_eq(ex.code, MCPT_E_VERSION);
	x = (struct tl_bytes){NULL, 0};
	verify_with(&x, 1, false, &ex);
	ck_assert_int_eq(ex.code, MCPT_E_NOT_A_TRACE);
	tl_bytes_free(&t);
}
END_TEST

/* ---- DSSE ---- */

static int dsse(const struct tl_bytes *t, char **json, struct mcpt_report *rep)
{
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key};
	int fd = tl_memfd(t->p, t->len), rc;

	tl_pubkey(1, &key);
	rc = mcpt_dsse_export(fd, &o, rep, json);
	close(fd);
	return rc;
}

static int check_env(const char *json, uint8_t kb, struct mcpt_dsse_info *info, char *err)
{
	struct mcpt_pubkey key;

	tl_pubkey(kb, &key);
	return mcpt_dsse_check(json, strlen(json), &key, info, err, 256);
}

/* The envelope with one member replaced by a JSON value. */
static char *bend_env(const char *json, const char *path, const char *value)
{
	json_t *o = json_loads(json, 0, NULL), *v = json_loads(value, JSON_DECODE_ANY, NULL);
	char *out;

	ck_assert(o && v);
	if (!strcmp(path, "sig") || !strcmp(path, "keyid"))
		json_object_set_new(json_array_get(json_object_get(o, "signatures"), 0), path, v);
	else
		json_object_set_new(o, path, v);
	out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return out;
}

START_TEST(test_dsse)
{
	struct tl_trace_opts to = {.n = 100, .seg_max = 30, .key = 1};
	static struct tl_frame frames[256];
	struct mcpt_dsse_info info;
	struct mcpt_report rep;
	struct tl_bytes t;
	char *json, *bad, err[256];
	size_t nf;

	tl_make_trace(&to, &t);
	ck_assert_int_eq(dsse(&t, &json, &rep), 0);
	mcpt_report__fini(&rep);
	ck_assert_int_eq(check_env(json, 1, &info, err), 0);
	nf = tl_frames(t.p, t.len, frames, 256);
	ck_assert_uint_eq(frames[nf - 1].type, MCPT_T_SEAL); /* the FINAL seal */
	ck_assert(info.flags & MCPT_SEAL_FINAL);
	ck_assert_uint_eq(info.seal_record, nf - 1);
	ck_assert_ptr_nonnull(memmem(t.p + frames[nf - 1].body, frames[nf - 1].blen, info.statement,
				     info.statement_len));
	mcpt_dsse_info__fini(&info);
	ck_assert_int_eq(check_env(json, 2, &info, err), -EKEYREJECTED);
	bad = bend_env(json, "payloadType", "\"application/json\"");
	ck_assert_int_eq(check_env(bad, 1, &info, err), -EBADMSG);
	free(bad);
	bad = bend_env(json, "sig", "\"AAAA\"");
	ck_assert_int_eq(check_env(bad, 1, &info, err), -EKEYREJECTED);
	free(bad);
	bad = bend_env(json, "keyid", "\"0000000000000000\"");
	ck_assert_int_eq(check_env(bad, 1, &info, err), -EKEYREJECTED);
	free(bad);
	bad = bend_env(json, "payload", "\"Zm9v\"");
	ck_assert_int_eq(check_env(bad, 1, &info, err), -EKEYREJECTED);
	free(bad);
	ck_assert_int_eq(check_env("{\"payloadType\":1,\"payloadType\":2}", 1, &info, err),
			 -EBADMSG);
	ck_assert_int_eq(check_env("\x1b[31m", 1, &info, err), -EBADMSG);
	ck_assert_ptr_null(strchr(err, 0x1b));
	free(json);
	tl_bytes_free(&t);
	to.no_final = true;
	tl_make_trace(&to, &t);
	ck_assert_int_eq(dsse(&t, &json, &rep), -EBADMSG);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_PREFIX);
	ck_assert_ptr_null(json);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

Suite *trace_evidence_suite(void)
{
	Suite *s = suite_create("trace_evidence");
	TCase *tc = tcase_create("paths");

	tcase_add_test(tc, test_audit_paths);
	suite_add_tcase(s, tc);
	tc = tcase_create("excerpt");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_record);
	tcase_add_test(tc, test_keys_and_modes);
	tcase_add_test(tc, test_tampered_segment_not_exported);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_flip_and_cut);
	tcase_add_test(tc, test_bent_proofs);
	tcase_add_test(tc, test_trailing_and_not_excerpts);
	suite_add_tcase(s, tc);
	tc = tcase_create("dsse");
	tcase_add_test(tc, test_dsse);
	suite_add_tcase(s, tc);
	return s;
}
