/*
 * excerpt.c - verifying an excerpt (proto/EXCERPT.md): the proof that one record was in a
 * signed trace, checked with the public key alone. The Header and the seal go through the
 * trace verifier's own checks (mcpt_v_header, mcpt_v_seal_open: key, canonical encodings,
 * signature over the DSSE PAE, trace identity, header digest), so an excerpt is held to exactly
 * what its trace is. Then the chunk: each frame strictly framed, the chunk rule respected, its
 * leaf recomputed and led by the RFC 9162 audit path to the segment root the seal signs; the
 * record's index is bounded by what the signed counts allow; the record itself must parse.
 *
 * An excerpt is all or nothing: a truncated one proves nothing (INVALID, E_TRUNCATED), and so
 * does one with bytes after its chunk (E_TRAILING).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

#define PROOF_MAX (64u << 10)

typedef unsigned long long ull;

/* What the seal says, copied out of the arena (chunk records are parsed in it afterwards). */
struct xseal {
	uint64_t index, first, count, leaves, seal_record;
	uint32_t flags, end_reason;
	uint8_t root[MCPT_HASH_LEN];
};

struct xstate {
	struct vstate v; /* the trace verifier's header and seal checks run on it */
	struct mcpt_report rep;
	struct mcpt_excerpt *out;
	const uint8_t *p;
	size_t n, pos;
	uint8_t path[MCPT_PATH_MAX][MCPT_HASH_LEN];
	size_t path_len;
	struct xseal seal;
	bool parse_err; /* the proven record does not parse */
};

__attribute__((format(printf, 3, 4))) static int xfail(struct xstate *x, enum mcpt_code code,
						       const char *fmt, ...)
{
	va_list ap;

	x->out->code = code;
	va_start(ap, fmt);
	vsnprintf(x->out->message, sizeof(x->out->message), fmt, ap);
	va_end(ap);
	return 1;
}

bool mcpt_is_excerpt(const uint8_t *p, size_t n)
{
	return p && n >= MCPT_MAGIC_LEN && memcmp(p, MCPT_EXCERPT_MAGIC, MCPT_MAGIC_LEN) == 0;
}

static int preambles(struct xstate *x)
{
	const uint8_t *p = x->p;
	enum mcpt_code code;
	char msg[160];

	if (x->n == 0)
		return xfail(x, MCPT_E_NOT_A_TRACE, "empty file: not an excerpt");
	if (x->n < MCPT_PREAMBLE_LEN) {
		if (memcmp(p, MCPT_EXCERPT_MAGIC, x->n < MCPT_MAGIC_LEN ? x->n : MCPT_MAGIC_LEN))
			return xfail(x, MCPT_E_NOT_A_TRACE, "not an excerpt (%zu bytes)", x->n);
		return xfail(x, MCPT_E_TRUNCATED, "truncated inside the excerpt preamble");
	}
	if (!mcpt_is_excerpt(p, x->n))
		return xfail(x, MCPT_E_NOT_A_TRACE, "not an excerpt: wrong magic");
	if ((unsigned)(p[8] | p[9] << 8) != MCPT_EXCERPT_MAJOR)
		return xfail(x, MCPT_E_VERSION,
			     "excerpt format major version %u is not supported (this reader: %u)",
			     (unsigned)(p[8] | p[9] << 8), MCPT_EXCERPT_MAJOR);
	if (x->n < 2 * MCPT_PREAMBLE_LEN)
		return xfail(x, MCPT_E_TRUNCATED, "the excerpt ends inside the trace preamble");
	code = mcpt_preamble_check(p + MCPT_PREAMBLE_LEN, MCPT_PREAMBLE_LEN, msg, sizeof(msg));
	if (code != MCPT_OK)
		return xfail(x, code, "the excerpt's trace preamble: %s", msg);
	memcpy(x->v.preamble, p + MCPT_PREAMBLE_LEN, MCPT_PREAMBLE_LEN);
	x->pos = 2 * MCPT_PREAMBLE_LEN;
	return 0;
}

/* uvarint(L) || L bytes at x->pos, 2 <= L <= cap: 0 with *body / *L / *vlen, or 1. */
static int length_prefixed(struct xstate *x, uint32_t cap, const char *what, uint32_t *L,
			   size_t *vlen)
{
	int err = mcpt_uvarint_get(x->p + x->pos, x->n - x->pos, L, vlen);

	if (err == -EAGAIN)
		return xfail(x, MCPT_E_TRUNCATED, "the excerpt ends inside the %s", what);
	if (err)
		return xfail(x, MCPT_E_FRAME_VARINT, "bad length varint of the %s at offset %zu",
			     what, x->pos);
	if (*L < 2 || *L > cap)
		return xfail(x, MCPT_E_FRAME_LEN, "the %s has length %u (2..%u)", what, *L, cap);
	if (*L > x->n - x->pos - *vlen)
		return xfail(x, MCPT_E_TRUNCATED, "the excerpt ends inside the %s", what);
	return 0;
}

/* One trace frame, verbatim: uvarint(L) || Record. 0 and f, or 1. */
static int frame(struct xstate *x, uint32_t cap, const char *what, struct vframe *f)
{
	char why[120];
	uint32_t L;
	size_t vlen;

	if (length_prefixed(x, cap, what, &L, &vlen))
		return 1;
	*f = (struct vframe){.p = x->p + x->pos, .len = vlen + L, .offset = x->pos};
	if (mcpt_record_split(f->p + vlen, L, &f->rv, why, sizeof(why)))
		return xfail(x, MCPT_E_FRAME_STRUCT, "the %s is malformed: %s", what, why);
	f->rv.body_off += vlen;
	x->pos += f->len;
	return 0;
}

static int proof_fields(struct xstate *x, const Mcpt__ExcerptProof *pr)
{
	struct mcpt_excerpt *o = x->out;

	if (pr->chunk_frames < 1 || pr->chunk_frames > MCPT_CHUNK_RECORDS_MAX ||
	    pr->in_chunk >= pr->chunk_frames)
		return xfail(x, MCPT_E_EXCERPT, "the proof places record %u in a chunk of %u",
			     pr->in_chunk, pr->chunk_frames);
	if (pr->leaf_index >= pr->leaf_count)
		return xfail(x, MCPT_E_EXCERPT, "the proof names leaf %llu of %llu",
			     (ull)pr->leaf_index, (ull)pr->leaf_count);
	x->path_len = mcpt_audit_path_len(pr->leaf_count, pr->leaf_index);
	if (pr->n_audit_path != x->path_len)
		return xfail(x, MCPT_E_EXCERPT,
			     "the audit path has %zu hashes; leaf %llu of %llu needs %zu",
			     pr->n_audit_path, (ull)pr->leaf_index, (ull)pr->leaf_count,
			     x->path_len);
	for (size_t i = 0; i < x->path_len; i++) {
		if (pr->audit_path[i].len != MCPT_HASH_LEN)
			return xfail(x, MCPT_E_EXCERPT, "audit path hash %zu has %zu bytes", i,
				     pr->audit_path[i].len);
		memcpy(x->path[i], pr->audit_path[i].data, MCPT_HASH_LEN);
	}
	o->record = pr->record;
	o->leaf_index = pr->leaf_index;
	o->leaf_count = pr->leaf_count;
	o->in_chunk = pr->in_chunk;
	o->chunk_frames = pr->chunk_frames;
	return 0;
}

static int proof(struct xstate *x)
{
	const uint8_t *body;
	Mcpt__ExcerptProof *pr;
	uint32_t L;
	size_t vlen;

	if (length_prefixed(x, PROOF_MAX, "proof", &L, &vlen))
		return 1;
	body = x->p + x->pos + vlen;
	mcpt_arena_reset(&x->v.arena, mcpt_arena_budget(L));
	pr = mcpt__excerpt_proof__unpack(&x->v.arena.pb, L, body);
	if (!pr)
		return xfail(x, MCPT_E_EXCERPT, "the proof does not parse");
	if (!mcpt_packs_to(&pr->base, body, L, &x->v.scratch))
		return xfail(x, MCPT_E_EXCERPT, "the proof is not canonically encoded");
	x->pos += vlen + L;
	return proof_fields(x, pr);
}

static int header(struct xstate *x)
{
	struct vframe f;

	if (frame(x, MCPT_HEADER_MAX, "Header", &f))
		return 1;
	if (mcpt_v_header(&x->v, &f, false) || x->v.fatal != MCPT_OK)
		return xfail(x, x->v.fatal, "%s", x->v.fatal_msg);
	x->out->header = f.p + f.rv.body_off;
	x->out->header_len = f.rv.body_len;
	return 0;
}

static void keep_seal(struct xstate *x, const Mcpt__SealStatement *st)
{
	struct xseal *s = &x->seal;
	struct mcpt_excerpt *o = x->out;

	s->index = o->seal_index = st->seal_index;
	s->first = o->first_record = st->first_record;
	s->count = o->record_count = st->record_count;
	s->seal_record = o->seal_record = st->seal_record;
	s->leaves = st->leaf_count;
	s->flags = o->seal_flags = st->flags;
	s->end_reason = o->end_reason = st->end_reason;
	memcpy(s->root, st->segment_root.data, MCPT_HASH_LEN);
}

static int seal(struct xstate *x)
{
	struct seal_check c = {0};
	struct vframe f;

	if (frame(x, x->v.max_record_len, "seal frame", &f))
		return 1;
	if (f.rv.type != MCPT_T_SEAL)
		return xfail(x, MCPT_E_EXCERPT,
			     "the frame after the Header is of type %u, not a seal", f.rv.type);
	c.f = &f;
	if (!mcpt_v_seal_open(&x->v, &c))
		return xfail(x, c.code, "the seal: %s", c.why);
	mcpt_seal_digest(f.p, f.len, x->out->seal_digest);
	keep_seal(x, c.st);
	if (c.st->seal_record != c.st->first_record + c.st->record_count)
		return xfail(
			x, MCPT_E_SEAL_COUNT, "the seal's counts disagree (%llu + %llu != %llu)",
			(ull)c.st->first_record, (ull)c.st->record_count, (ull)c.st->seal_record);
	if (c.st->leaf_count != x->out->leaf_count)
		return xfail(x, MCPT_E_EXCERPT, "the proof says %llu leaves, the seal %llu",
			     (ull)x->out->leaf_count, (ull)c.st->leaf_count);
	return 0;
}

/* One frame of the chunk into the leaf hash; the record at in_chunk is kept and parsed. */
static int chunk_frame(struct xstate *x, uint32_t i, crypto_generichash_state *h)
{
	struct mcpt_excerpt *o = x->out;
	struct vframe f;
	char what[40];

	snprintf(what, sizeof(what), "chunk frame %u", i);
	if (frame(x, x->v.max_record_len, what, &f))
		return 1;
	if (f.rv.type == MCPT_T_HEADER || f.rv.type == MCPT_T_SEAL)
		return xfail(x, MCPT_E_EXCERPT, "chunk frame %u is a %s", i,
			     f.rv.type == MCPT_T_SEAL ? "seal" : "Header");
	crypto_generichash_update(h, f.p, f.len);
	if (i == o->in_chunk) {
		o->rec.type = (enum mcpt_type)f.rv.type;
		o->rec.body = f.p + f.rv.body_off;
		o->rec.body_len = f.rv.body_len;
		x->parse_err = mcpt_v_unpack_check(&x->v, f.rv.type, o->rec.body, o->rec.body_len);
	}
	return 0;
}

/* The frames of the chunk: they must form one chunk by the rule of TRACE-FORMAT.md 4.5 (it
 * closes at chunk_records frames or once chunk_bytes are reached; only a segment's last chunk
 * may close short), so the leaf they hash to is one the writer made. */
static int chunk(struct xstate *x, uint8_t leaf[MCPT_HASH_LEN])
{
	const struct mcpt_segment *rule = &x->v.seg;
	struct mcpt_excerpt *o = x->out;
	static const uint8_t prefix = 0x00;
	crypto_generichash_state h;
	uint64_t bytes = 0;

	if (o->chunk_frames > rule->max_records)
		return xfail(x, MCPT_E_EXCERPT, "a chunk of %u frames (the trace's chunks: %u)",
			     o->chunk_frames, rule->max_records);
	crypto_generichash_init(&h, NULL, 0, MCPT_HASH_LEN);
	crypto_generichash_update(&h, &prefix, 1);
	o->chunk = x->p + x->pos;
	for (uint32_t i = 0; i < o->chunk_frames; i++) {
		size_t at = x->pos;

		if (bytes >= rule->max_bytes)
			return xfail(x, MCPT_E_EXCERPT, "not one chunk: it closes after frame %u",
				     i - 1);
		if (chunk_frame(x, i, &h))
			return 1;
		bytes += x->pos - at;
	}
	o->chunk_len = (size_t)bytes;
	if (x->pos != x->n)
		return xfail(x, MCPT_E_TRAILING, "%zu bytes after the chunk", x->n - x->pos);
	if (o->chunk_frames < rule->max_records && bytes < rule->max_bytes &&
	    o->leaf_index + 1 != o->leaf_count)
		return xfail(x, MCPT_E_EXCERPT,
			     "a short chunk (%u frames, %llu bytes) that is not the segment's last",
			     o->chunk_frames, (ull)bytes);
	crypto_generichash_final(&h, leaf, MCPT_HASH_LEN);
	return 0;
}

/* Records before the chunk: leaf_index chunks of 1..C each; after it: the later chunks, 1..C
 * each, and the signed record_count ties the two together. The index is first + before +
 * in_chunk; exact when the bounds meet (always for the first and the last chunk). */
static int index_bounds(struct xstate *x)
{
	struct mcpt_excerpt *o = x->out;
	unsigned __int128 c = x->v.seg.max_records, later = o->leaf_count - 1 - o->leaf_index;
	unsigned __int128 rc = x->seal.count, k = o->chunk_frames, lo, hi;

	if (rc < k + o->leaf_index + later)
		return xfail(x, MCPT_E_SEAL_COUNT, "%llu records cannot fill %llu chunks",
			     (ull)x->seal.count, (ull)o->leaf_count);
	lo = rc - k > later * c ? rc - k - later * c : 0;
	if (lo < o->leaf_index)
		lo = o->leaf_index;
	hi = rc - k - later;
	if (hi > o->leaf_index * c)
		hi = o->leaf_index * c;
	if (lo > hi)
		return xfail(x, MCPT_E_SEAL_COUNT,
			     "no layout of %llu records fits leaf %llu of %llu", (ull)x->seal.count,
			     (ull)o->leaf_index, (ull)o->leaf_count);
	o->index_min = x->seal.first + (uint64_t)lo + o->in_chunk;
	o->index_max = x->seal.first + (uint64_t)hi + o->in_chunk;
	if (o->record < o->index_min || o->record > o->index_max)
		return xfail(x, MCPT_E_EXCERPT,
			     "the excerpt names record %llu; the proof places it in %llu..%llu",
			     (ull)o->record, (ull)o->index_min, (ull)o->index_max);
	return 0;
}

static void proven(struct xstate *x)
{
	struct mcpt_excerpt *o = x->out;
	char where[64];

	if (o->index_min == o->index_max)
		snprintf(where, sizeof(where), "index exact");
	else
		snprintf(where, sizeof(where), "index within %llu..%llu", (ull)o->index_min,
			 (ull)o->index_max);
	o->code = MCPT_OK;
	snprintf(o->message, sizeof(o->message),
		 "record %llu (type %u) is in seal %llu (records %llu..%llu, chunk %llu of %llu, "
		 "%s)%s%s",
		 (ull)o->record, (unsigned)o->rec.type, (ull)o->seal_index, (ull)o->first_record,
		 (ull)o->seal_record - 1, (ull)o->leaf_index + 1, (ull)o->leaf_count, where,
		 o->seal_flags & MCPT_SEAL_FINAL ? ", the FINAL seal" : "",
		 !x->v.opts.key		      ? "; structure only (no key given): nothing proven"
		 : !x->rep.signatures_checked ? "; by hashes only: UNSIGNED trace allowed"
					      : "");
	if (!x->v.opts.key)
		o->code = MCPT_E_UNVERIFIED;
}

/* Step 12 (EXCERPT.md): the record's value references resolve from its chunk's definitions. */
static int refs(struct xstate *x)
{
	const ProtobufCMessageDescriptor *d = mcpt_type_descriptor(x->out->rec.type);
	struct mcpt_valtab *t;
	ProtobufCMessage *m;
	char why[120];
	int err;

	if (x->out->rec.type != MCPT_T_EVENT || !d)
		return 0;
	t = mcpt_valtab__new();
	m = protobuf_c_message_unpack(d, NULL, x->out->rec.body_len, x->out->rec.body);
	err = t && m ? mcpt_excerpt_resolve(x->out, t, m, why, sizeof(why)) : -ENOMEM;
	mcpt_valtab__detach(t, m);
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
	mcpt_valtab__free(t);
	if (err == -ENOMEM)
		return xfail(x, MCPT_E_IO, "failed to check record %llu: out of memory",
			     (ull)x->out->record);
	if (err)
		return xfail(x, MCPT_E_RECORD_PARSE, "record %llu: %s", (ull)x->out->record, why);
	return 0;
}

static void run(struct xstate *x)
{
	uint8_t leaf[MCPT_HASH_LEN];

	if (preambles(x) || proof(x) || header(x) || seal(x) || chunk(x, leaf))
		return;
	if (!mcpt_audit_path_verify(leaf, x->out->leaf_index, x->out->leaf_count, x->path,
				    x->path_len, x->seal.root)) {
		xfail(x, MCPT_E_SEAL_ROOT,
		      "the chunk is not leaf %llu of the segment seal %llu signs (the audit path "
		      "does not lead to its root)",
		      (ull)x->out->leaf_index, (ull)x->seal.index);
		return;
	}
	if (index_bounds(x))
		return;
	if (x->parse_err) {
		xfail(x, MCPT_E_RECORD_PARSE, "record %llu is signed but does not parse",
		      (ull)x->out->record);
		return;
	}
	if (refs(x))
		return;
	proven(x);
}

static enum mcpt_verdict verdict_of(enum mcpt_code c)
{
	switch (c) {
	case MCPT_OK:
		return MCPT_VALID_COMPLETE;
	case MCPT_E_WRONG_KEY:
	case MCPT_E_UNSIGNED:
		return MCPT_WRONG_KEY;
	case MCPT_E_NOT_A_TRACE:
	case MCPT_E_VERSION:
	case MCPT_E_FEATURE:
		return MCPT_UNSUPPORTED;
	case MCPT_E_UNVERIFIED:
		return MCPT_VALID_PREFIX;
	default:
		return MCPT_INVALID;
	}
}

static void finish(struct xstate *x)
{
	struct mcpt_excerpt *o = x->out;

	o->verdict = verdict_of(o->code);
	o->signatures_checked = x->rep.signatures_checked;
	memcpy(o->trace_id, x->rep.trace_id, MCPT_TRACE_ID_LEN);
	memcpy(o->key_id, x->rep.key_id, MCPT_KEY_ID_LEN);
	memcpy(o->trusted_key_id, x->rep.trusted_key_id, MCPT_KEY_ID_LEN);
	o->rec.index = o->record;
	o->rec.offset = 0; /* not known: the trace's byte offsets are not in an excerpt */
	o->rec.provisional = !(o->verdict == MCPT_VALID_COMPLETE && o->signatures_checked);
	if (o->verdict != MCPT_VALID_COMPLETE && o->verdict != MCPT_VALID_PREFIX) {
		o->rec.body = NULL; /* nothing proven: nothing to show */
		o->rec.body_len = 0;
	}
}

int mcpt_excerpt_verify(const uint8_t *p, size_t n, const struct mcpt_verify_opts *opts,
			struct mcpt_excerpt *out)
{
	struct xstate *x;

	if (!out || (!p && n))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (sodium_init() < 0)
		return -EIO;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->out = out;
	x->p = p;
	x->n = n;
	if (opts)
		x->v.opts = *opts;
	x->v.opts.hold_segments = false;
	x->v.rep = &x->rep;
	x->v.contiguous = true;
	mcpt_arena_init(&x->v.arena);
	run(x);
	finish(x);
	mcpt_arena_fini(&x->v.arena);
	mcpt_buf_free(&x->v.scratch);
	mcpt_buf_free(&x->v.pae);
	mcpt_report__fini(&x->rep);
	free(x);
	return 0;
}

const char *mcpt_excerpt_verdict_name(const struct mcpt_excerpt *x)
{
	if (x->verdict == MCPT_VALID_COMPLETE)
		return "PROVEN";
	if (x->verdict == MCPT_WRONG_KEY && x->code == MCPT_E_UNSIGNED)
		return "UNSIGNED";
	if (x->verdict == MCPT_VALID_PREFIX)
		return "UNVERIFIED";
	return mcpt_verdict_name(x->verdict);
}
