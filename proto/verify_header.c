/*
 * verify_header.c - record 0 (TRACE-FORMAT.md 4.4, 4.11): it must be a Header, at most 64 KiB,
 * canonically encoded, agreeing with the preamble, with sane bounds on everything the verifier
 * relies on (chunk rule, record cap, identifier lengths) and no incompatible feature this reader
 * does not know. Then the key: the header's key id is a hint that must name the trusted key
 * (else WRONG_KEY, both ids printed); a header without a signer is UNSIGNED, refused unless the
 * caller allows it; forward-secure mode is reserved and reported as unsupported. Finally the
 * header digest that every seal must carry.
 */
#include <errno.h>
#include <string.h>

#include "verify_int.h"

static bool len_ok(const ProtobufCBinaryData *b, size_t a, size_t c)
{
	return b->len == a || b->len == c;
}

static enum mcpt_code check_policy(const Mcpt__Header *h, char *msg, size_t len)
{
	const Mcpt__SealPolicy *p = h->seal_policy;

	if (!p) {
		snprintf(msg, len, "the Header has no seal policy");
		return MCPT_E_HEADER;
	}
	if (p->chunk_records < 1 || p->chunk_records > MCPT_CHUNK_RECORDS_MAX ||
	    p->chunk_bytes < MCPT_CHUNK_BYTES_MIN || p->chunk_bytes > MCPT_CHUNK_BYTES_MAX) {
		snprintf(msg, len, "chunk parameters out of bounds (%u records, %u bytes)",
			 p->chunk_records, p->chunk_bytes);
		return MCPT_E_HEADER;
	}
	if (p->max_segment_records < 1 || p->max_segment_records > MCPT_SEGMENT_RECORDS_MAX ||
	    p->max_segment_ns < MCPT_POLICY_NS_MIN || p->max_segment_ns > MCPT_POLICY_NS_MAX ||
	    p->heartbeat_ns < MCPT_POLICY_NS_MIN || p->heartbeat_ns > MCPT_POLICY_NS_MAX) {
		snprintf(msg, len, "seal policy out of bounds");
		return MCPT_E_HEADER;
	}
	if (h->max_record_len < MCPT_RECORD_LEN_MIN || h->max_record_len > MCPT_HARD_RECORD_LEN) {
		snprintf(msg, len, "max_record_len %u out of bounds (1 KiB..16 MiB)",
			 h->max_record_len);
		return MCPT_E_HEADER;
	}
	return MCPT_OK;
}

static enum mcpt_code check_fields(const struct vstate *v, const Mcpt__Header *h, char *msg,
				   size_t len)
{
	unsigned minor = v->preamble[10] | v->preamble[11] << 8;
	char esc[64];

	if (h->format_major != MCPT_FORMAT_MAJOR || h->format_minor != minor) {
		snprintf(msg, len, "the Header says format %u.%u, the preamble %u.%u",
			 h->format_major, h->format_minor, MCPT_FORMAT_MAJOR, minor);
		return MCPT_E_HEADER;
	}
	if (h->incompatible_features & ~MCPT_FEATURES_KNOWN) {
		snprintf(msg, len, "unknown incompatible feature bits 0x%llx",
			 (unsigned long long)(h->incompatible_features & ~MCPT_FEATURES_KNOWN));
		return MCPT_E_FEATURE;
	}
	if ((h->incompatible_features & MCPT_FEAT_FORK_TASK) &&
	    !(h->incompatible_features & MCPT_FEAT_TASK_TABLE)) {
		snprintf(msg, len, "incompatible feature bit 3 (fork tasks) without bit 1 (the task "
			 "table it defines tasks in)");
		return MCPT_E_HEADER;
	}
	if (strcmp(h->schema_id, MCPT_SCHEMA_ID) != 0) {
		snprintf(msg, len, "schema \"%s\" is not supported (this reader: %s)",
			 mcpt_escape(esc, sizeof(esc), h->schema_id, strlen(h->schema_id)),
			 MCPT_SCHEMA_ID);
		return MCPT_E_VERSION;
	}
	if (h->trace_id.len != MCPT_TRACE_ID_LEN || !len_ok(&h->boot_id, 0, 16) ||
	    !len_ok(&h->prev_trace_id, 0, 16) || !len_ok(&h->prev_final_digest, 0, 32) ||
	    (h->host && !len_ok(&h->host->machine_id, 0, 16))) {
		snprintf(msg, len, "an identifier in the Header has the wrong length");
		return MCPT_E_HEADER;
	}
	return check_policy(h, msg, len);
}

static enum mcpt_code check_signer(struct vstate *v, const Mcpt__Header *h, char *msg, size_t len)
{
	const Mcpt__Signer *s = h->signer;
	char esc[64];

	if (!s || s->mode == MCPT__SIGN_MODE__SIGN_UNSPECIFIED) {
		v->signed_trace = false;
		return MCPT_OK;
	}
	if (s->mode == MCPT__SIGN_MODE__SIGN_FS) {
		snprintf(msg, len, "forward-secure signing mode is not supported by this verifier");
		return MCPT_E_FEATURE;
	}
	if (s->mode != MCPT__SIGN_MODE__SIGN_STATIC || strcmp(s->alg, "ed25519") != 0 ||
	    s->key_id.len != MCPT_KEY_ID_LEN) {
		snprintf(msg, len, "unknown signer (mode %d, alg \"%s\", %zu-byte key id)",
			 (int)s->mode, mcpt_escape(esc, sizeof(esc), s->alg, strlen(s->alg)),
			 s->key_id.len);
		return MCPT_E_HEADER;
	}
	v->signed_trace = true;
	memcpy(v->key_id, s->key_id.data, MCPT_KEY_ID_LEN);
	memcpy(v->rep->key_id, s->key_id.data, MCPT_KEY_ID_LEN);
	return MCPT_OK;
}

/* WRONG_KEY / UNSIGNED, or which checks apply: signatures only with a key and a signed trace. */
static enum mcpt_code check_key(struct vstate *v, char *msg, size_t len)
{
	const struct mcpt_pubkey *key = v->opts.key;
	char have[17], want[17];

	if (!key)
		return MCPT_OK; /* structure only */
	mcpt_key_id(key->pk, v->rep->trusted_key_id);
	if (!v->signed_trace) {
		snprintf(msg, len, "the trace is unsigned (its Header declares no signer)%s",
			 v->opts.allow_unsigned ? "" : "; refused without --allow-unsigned");
		return v->opts.allow_unsigned ? MCPT_OK : MCPT_E_UNSIGNED;
	}
	if (memcmp(v->key_id, v->rep->trusted_key_id, MCPT_KEY_ID_LEN) != 0) {
		mcpt_key_id_hex(v->key_id, have);
		mcpt_key_id_hex(v->rep->trusted_key_id, want);
		snprintf(msg, len, "the trace is signed by key %s, the trusted key is %s", have,
			 want);
		return MCPT_E_WRONG_KEY;
	}
	v->check_sigs = true;
	v->rep->signatures_checked = true;
	return MCPT_OK;
}

static void keep_header(struct vstate *v, const Mcpt__Header *h)
{
	memcpy(v->trace_id, h->trace_id.data, MCPT_TRACE_ID_LEN);
	memcpy(v->rep->trace_id, h->trace_id.data, MCPT_TRACE_ID_LEN);
	v->rep->have_header = true;
	v->max_record_len = h->max_record_len;
	v->features = h->incompatible_features;
	v->heartbeat_ns = h->seal_policy->heartbeat_ns;
	v->event_clock = h->event_clock;
	if (h->clock) {
		v->header_clock.have = true;
		v->header_clock.boottime = h->clock->boottime_after_ns;
		v->header_clock.monotonic = h->clock->monotonic_ns;
		v->header_clock.realtime = h->clock->realtime_ns;
	}
	mcpt_segment_init(&v->seg, h->seal_policy->chunk_records, h->seal_policy->chunk_bytes);
	v->seg.count_only = v->opts.skim; /* a skimming read hashes nothing */
}

static enum mcpt_code parse(struct vstate *v, const struct vframe *f, char *msg, size_t len)
{
	const uint8_t *body = f->p + f->rv.body_off;
	enum mcpt_code code;
	Mcpt__Header *h;

	if (f->rv.type != MCPT_T_HEADER) {
		snprintf(msg, len, "record 0 is of type %u, not a Header", f->rv.type);
		return MCPT_E_HEADER;
	}
	mcpt_arena_reset(&v->arena, mcpt_arena_budget(f->rv.body_len));
	h = mcpt__header__unpack(&v->arena.pb, f->rv.body_len, body);
	if (!h) {
		snprintf(msg, len, "the Header does not parse");
		return MCPT_E_HEADER;
	}
	if (!mcpt_packs_to(&h->base, body, f->rv.body_len, &v->scratch)) {
		snprintf(msg, len, "the Header is not canonically encoded");
		return MCPT_E_HEADER;
	}
	code = check_fields(v, h, msg, len);
	if (code == MCPT_OK)
		code = check_signer(v, h, msg, len);
	if (code == MCPT_OK)
		code = check_key(v, msg, len);
	if (code == MCPT_OK)
		keep_header(v, h);
	return code;
}

int mcpt_v_header(struct vstate *v, struct vframe *f, bool torn_ok)
{
	enum mcpt_code code;
	char msg[200];
	int r;

	code = parse(v, f, msg, sizeof(msg));
	if (code != MCPT_OK) {
		/* the Header's sectors never reached the disk (a crash after the preamble): no
		 * Header, as when the stream ends before it, not a bad one */
		if (torn_ok && (r = mcpt_v_zero_tail_after(v, f)) != 0)
			return r;
		mcpt_v_fatal(v, code, 0, f->offset, "%s", msg);
		return 1;
	}
	mcpt_header_digest(v->preamble, f->p, f->len, v->header_digest);
	v->seg_first = 1;
	v->seg_offset = f->offset + f->len;
	return mcpt_v_offer(v, f);
}
