/*
 * trace_forge.c - builds traces frame by frame for the bad-input tests: the same hashing and
 * statement layout as the library's writer, but every step can be bent (header fields, statement
 * fields and bytes, signature length and coverage, raw bytes between frames) and the result is
 * still signed with the test key, so the verifier's checks behind the signature are reached.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trace_testlib.h"

void tl_features(Mcpt__Header *h, void *ctx)
{
	h->incompatible_features = *(const uint64_t *)ctx;
}

void forge_init(struct forge *f, uint8_t key, uint16_t minor, forge_header_fn hf, void *ctx)
{
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	Mcpt__Signer sg = MCPT__SIGNER__INIT;
	Mcpt__SealPolicy sp = MCPT__SEAL_POLICY__INIT;
	Mcpt__LossTotals zero = MCPT__LOSS_TOTALS__INIT;
	uint8_t head[16], *frame;
	size_t body, len, hl;

	memset(f, 0, sizeof(*f));
	f->loss = zero;
	f->signer = key ? tl_signer(key) : NULL;
	memset(f->trace_id, 0x22, sizeof(f->trace_id));
	if (f->signer)
		mcpt_signer_key_id(f->signer, f->key_id);
	tl_header(&h, &host, &k, &cs);
	h.format_major = MCPT_FORMAT_MAJOR;
	h.format_minor = minor;
	h.trace_id = (ProtobufCBinaryData){16, f->trace_id};
	h.schema_id = (char *)MCPT_SCHEMA_ID;
	sg.alg = (char *)"ed25519";
	sg.key_id = (ProtobufCBinaryData){8, f->key_id};
	sg.mode = MCPT__SIGN_MODE__SIGN_STATIC;
	h.signer = f->signer ? &sg : NULL;
	sp.chunk_records = 64;
	sp.chunk_bytes = 16384;
	sp.max_segment_records = 4096;
	sp.max_segment_ns = 1000000000ull;
	sp.heartbeat_ns = 10000000000ull;
	h.seal_policy = &sp;
	h.max_record_len = MCPT_MAX_RECORD_LEN;
	if (hf)
		hf(&h, ctx);
	body = mcpt__header__get_packed_size(&h);
	len = mcpt_record_len(MCPT_T_HEADER, body);
	len += mcpt_uvarint_len((uint32_t)len);
	ck_assert_int_eq(mcpt_buf_reserve(&f->out, MCPT_PREAMBLE_LEN + len), 0);
	mcpt_preamble(f->out.p, minor);
	frame = f->out.p + MCPT_PREAMBLE_LEN;
	hl = mcpt_frame_head(head, MCPT_T_HEADER, body);
	memcpy(frame, head, hl);
	mcpt__header__pack(&h, frame + hl);
	mcpt_header_digest(f->out.p, frame, len, f->header_digest);
	f->out.len = MCPT_PREAMBLE_LEN + len;
	f->index = 1;
	f->seg_first = 1;
	f->now = 1000000;
	mcpt_segment_init(&f->seg, 64, 16384);
}

void forge_fini(struct forge *f)
{
	mcpt_buf_free(&f->out);
	mcpt_signer_free(f->signer);
}

void forge_raw(struct forge *f, const void *bytes, size_t n)
{
	ck_assert_int_eq(mcpt_buf_reserve(&f->out, n), 0);
	memcpy(f->out.p + f->out.len, bytes, n);
	f->out.len += n;
}

void forge_record(struct forge *f, uint32_t type, const uint8_t *body, size_t len)
{
	uint8_t head[16];
	size_t hl = mcpt_frame_head(head, type, len), at = f->out.len;

	forge_raw(f, head, hl);
	forge_raw(f, body, len);
	mcpt_segment_add(&f->seg, f->out.p + at, f->out.len - at);
	f->index++;
}

void forge_event(struct forge *f, uint64_t i)
{
	Mcpt__Event ev = MCPT__EVENT__INIT;
	uint8_t buf[256];
	size_t n;

	ev.seq = i;
	ev.ts = 1000000 + i * 1000;
	ev.pid = 42;
	ev.op = MCPT__OP__OP_OPENAT;
	ev.path = (ProtobufCBinaryData){9, (uint8_t *)"/etc/motd"};
	n = mcpt__event__pack(&ev, buf);
	forge_record(f, MCPT_T_EVENT, buf, n);
	f->now += 1000000;
}

static void sign(struct forge *f, const struct mcpt_buf *stmt, uint8_t sig[64])
{
	struct mcpt_buf pae = {0};

	switch (f->sig_mode) {
	case FORGE_SIG_RAW:
		ck_assert_int_eq(mcpt_signer_sign(f->signer, stmt->p, stmt->len, sig), 0);
		return;
	case FORGE_SIG_ZERO:
		memset(sig, 0, 64);
		return;
	case FORGE_SIG_SMALL_R:
		memset(sig, 0, 64);
		sig[0] = 1;
		return;
	case FORGE_SIG_HIGH_S: /* a valid signature made non-canonical: S >= L */
		ck_assert_int_eq(mcpt_pae(&pae, stmt->p, stmt->len), 0);
		ck_assert_int_eq(mcpt_signer_sign(f->signer, pae.p, pae.len, sig), 0);
		sig[63] |= 0xe0;
		mcpt_buf_free(&pae);
		return;
	case FORGE_SIG_OTHER_TYPE: {
		char head[128];
		int n = snprintf(head, sizeof(head), "DSSEv1 %zu %s %zu ",
				 strlen("application/json"), "application/json", stmt->len);

		ck_assert_int_eq(mcpt_buf_reserve(&pae, (size_t)n + stmt->len), 0);
		memcpy(pae.p, head, (size_t)n);
		memcpy(pae.p + n, stmt->p, stmt->len);
		pae.len = (size_t)n + stmt->len;
		break;
	}
	default:
		ck_assert_int_eq(mcpt_pae(&pae, stmt->p, stmt->len), 0);
	}
	ck_assert_int_eq(mcpt_signer_sign(f->signer, pae.p, pae.len, sig), 0);
	mcpt_buf_free(&pae);
}

static void statement(struct forge *f, uint32_t flags, Mcpt__SealStatement *st,
		      Mcpt__ClockSample *cs, uint8_t root[32])
{
	st->record_count = f->seg.records;
	mcpt_segment_finish(&f->seg, root, &st->leaf_count);
	st->trace_id = (ProtobufCBinaryData){16, f->trace_id};
	st->header_digest = (ProtobufCBinaryData){32, f->header_digest};
	st->seal_index = f->seals;
	st->first_record = f->seg_first;
	st->segment_root = (ProtobufCBinaryData){32, root};
	st->prev_seal_digest = (ProtobufCBinaryData){32, f->prev};
	st->seal_record = f->index;
	st->seal_offset = f->out.len;
	f->now += 1000000;
	tl_clock_fill(f->now, cs);
	st->clock = cs;
	st->loss = &f->loss;
	if (f->signer)
		st->key_id = (ProtobufCBinaryData){8, f->key_id};
	st->flags = flags;
	st->end_reason = flags & MCPT_SEAL_FINAL ? MCPT__END_REASON__END_CLEAN : 0;
}

void forge_seal_ex(struct forge *f, uint32_t flags, forge_stmt_fn sf, forge_bytes_fn bf, void *ctx,
		   size_t sig_len)
{
	Mcpt__SealStatement st = MCPT__SEAL_STATEMENT__INIT;
	Mcpt__ClockSample cs = MCPT__CLOCK_SAMPLE__INIT;
	Mcpt__Seal seal = MCPT__SEAL__INIT;
	struct mcpt_buf stmt = {0}, body = {0};
	uint8_t root[32], sig[128] = {0};
	size_t at = f->out.len;

	statement(f, flags, &st, &cs, root);
	if (sf)
		sf(&st, ctx);
	ck_assert_int_eq(mcpt_buf_reserve(&stmt, mcpt__seal_statement__get_packed_size(&st)), 0);
	stmt.len = mcpt__seal_statement__pack(&st, stmt.p);
	if (bf)
		bf(&stmt, ctx);
	if (f->signer) {
		sign(f, &stmt, sig);
		ck_assert_uint_le(sig_len, sizeof(sig));
		seal.signature = (ProtobufCBinaryData){sig_len, sig};
		seal.key_id = (ProtobufCBinaryData){8, f->key_id};
	}
	seal.statement = (ProtobufCBinaryData){stmt.len, stmt.p};
	ck_assert_int_eq(mcpt_buf_reserve(&body, mcpt__seal__get_packed_size(&seal)), 0);
	body.len = mcpt__seal__pack(&seal, body.p);
	{
		uint8_t head[16];
		size_t hl = mcpt_frame_head(head, MCPT_T_SEAL, body.len);

		forge_raw(f, head, hl);
		forge_raw(f, body.p, body.len);
	}
	mcpt_seal_digest(f->out.p + at, f->out.len - at, f->prev);
	f->index++;
	f->seals++;
	f->seg_first = f->index;
	mcpt_buf_free(&stmt);
	mcpt_buf_free(&body);
}

void forge_seal(struct forge *f, uint32_t flags)
{
	forge_seal_ex(f, flags, NULL, NULL, NULL, 64);
}
