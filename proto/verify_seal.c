/*
 * verify_seal.c - one Seal record (TRACE-FORMAT.md 4.6, 4.11), checked in the order of the spec
 * so the first failing check names the segment's problem: outer Seal (canonical, key id hint
 * naming the trusted key), Ed25519 over the DSSE PAE of the exact statement bytes, statement
 * (canonical, no unknown fields, sane lengths), trace id / header digest (splice), seal index and
 * previous seal digest (missing or reordered segments), counts and positions (insertions,
 * deletions), segment root (modified records), record parse errors (signed but malformed), clocks,
 * loss totals. A failing seal makes its segment BAD; reading goes on, since segments verify
 * independently. Positions are compared relative to the last readable seal, and the expected
 * index resyncs on the signed one, so one deletion is reported once instead of cascading.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

__attribute__((format(printf, 3, 4))) static bool fail(struct seal_check *c, enum mcpt_code code,
						       const char *fmt, ...)
{
	va_list ap;

	c->code = code;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return false;
}

static bool check_outer(struct vstate *v, struct seal_check *c)
{
	const uint8_t *body = c->f->p + c->f->rv.body_off;
	size_t len = c->f->rv.body_len;
	char have[17], want[17];

	c->seal = mcpt__seal__unpack(&v->arena.pb, len, body);
	if (!c->seal)
		return fail(c, MCPT_E_SEAL_PARSE, "the seal record does not parse");
	if (!mcpt_canonical(&c->seal->base, body, len, &v->scratch))
		return fail(c, MCPT_E_SEAL_PARSE, "the seal record is not canonically encoded");
	if (!v->signed_trace) {
		if (c->seal->key_id.len || c->seal->signature.len)
			return fail(c, MCPT_E_SEAL_PARSE, "a signed seal in an unsigned trace");
		return true;
	}
	if (c->seal->key_id.len != MCPT_KEY_ID_LEN)
		return fail(c, MCPT_E_SEAL_PARSE, "the key id hint has %zu bytes",
			    c->seal->key_id.len);
	if (memcmp(c->seal->key_id.data, v->key_id, MCPT_KEY_ID_LEN) != 0) {
		mcpt_key_id_hex(c->seal->key_id.data, have);
		mcpt_key_id_hex(v->key_id, want);
		return fail(c, MCPT_E_SEAL_SIG, "the seal names key %s, the trace's key is %s",
			    have, want);
	}
	if (c->seal->signature.len != MCPT_SEAL_SIG_LEN)
		return fail(c, MCPT_E_SEAL_SIG, "the signature has %zu bytes, not 64",
			    c->seal->signature.len);
	return true;
}

static bool check_signature(struct vstate *v, struct seal_check *c)
{
	const ProtobufCBinaryData *st = &c->seal->statement;

	if (!v->check_sigs)
		return true;
	if (mcpt_pae(&v->pae, st->data, st->len))
		return fail(c, MCPT_E_SEAL_SIG, "out of memory");
	if (crypto_sign_verify_detached(c->seal->signature.data, v->pae.p, v->pae.len,
					v->opts.key->pk) != 0)
		return fail(c, MCPT_E_SEAL_SIG, "the signature does not verify");
	return true;
}

static bool check_statement(struct vstate *v, struct seal_check *c)
{
	const ProtobufCBinaryData *b = &c->seal->statement;
	Mcpt__SealStatement *st;

	st = mcpt__seal_statement__unpack(&v->arena.pb, b->len, b->data);
	if (!st)
		return fail(c, MCPT_E_SEAL_PARSE, "the statement does not parse");
	if (!mcpt_canonical(&st->base, b->data, b->len, &v->scratch) ||
	    (st->clock && st->clock->base.n_unknown_fields) ||
	    (st->loss && st->loss->base.n_unknown_fields))
		return fail(c, MCPT_E_SEAL_PARSE,
			    "the statement is not canonical (unknown or repeated fields, "
			    "non-minimal encoding)");
	if (st->trace_id.len != MCPT_TRACE_ID_LEN || st->header_digest.len != MCPT_HASH_LEN ||
	    st->segment_root.len != MCPT_HASH_LEN || st->prev_seal_digest.len != MCPT_HASH_LEN)
		return fail(c, MCPT_E_SEAL_PARSE,
			    "a digest or id in the statement has the wrong "
			    "length");
	if (!st->clock || !st->loss)
		return fail(c, MCPT_E_SEAL_PARSE,
			    "the statement lacks its clock sample or loss "
			    "totals");
	if (st->key_id.len != c->seal->key_id.len ||
	    (st->key_id.len && memcmp(st->key_id.data, c->seal->key_id.data, st->key_id.len)))
		return fail(c, MCPT_E_SEAL_PARSE, "the statement's key id differs from the hint");
	if (st->epoch)
		return fail(c, MCPT_E_SEAL_PARSE, "an epoch in a static-key trace");
	c->st = st;
	return true;
}

static bool check_trace(struct vstate *v, struct seal_check *c)
{
	const Mcpt__SealStatement *st = c->st;

	if (memcmp(st->trace_id.data, v->trace_id, MCPT_TRACE_ID_LEN) != 0)
		return fail(c, MCPT_E_SEAL_TRACE, "the seal belongs to another trace (trace id)");
	if (memcmp(st->header_digest.data, v->header_digest, MCPT_HASH_LEN) != 0)
		return fail(c, MCPT_E_SEAL_TRACE, "the header digest does not match the Header");
	return true;
}

static bool check_chain(struct vstate *v, struct seal_check *c)
{
	const Mcpt__SealStatement *st = c->st;

	if (st->seal_index != v->expect_seal)
		return fail(c, MCPT_E_SEAL_CHAIN, "seal index %llu where %llu was expected (%s)",
			    (unsigned long long)st->seal_index, (unsigned long long)v->expect_seal,
			    st->seal_index > v->expect_seal ? "seals are missing"
							    : "repeated or reordered");
	/* after a damaged seal frame the link to it cannot match: that is the damaged seal's
	 * fault, already reported, not this segment's */
	if (!v->prev_damaged && memcmp(st->prev_seal_digest.data, v->prev_digest, MCPT_HASH_LEN))
		return fail(c, MCPT_E_SEAL_CHAIN,
			    "the previous-seal digest does not match the preceding seal");
	return true;
}

static bool check_counts(struct vstate *v, struct seal_check *c)
{
	const Mcpt__SealStatement *st = c->st;
	uint64_t first = v->seg_first + v->rec_delta, at = c->f->index + v->rec_delta;
	uint64_t off = c->f->offset + v->off_delta;

	if (st->first_record != first)
		return fail(c, MCPT_E_SEAL_COUNT, "first_record %llu, expected %llu",
			    (unsigned long long)st->first_record, (unsigned long long)first);
	if (st->record_count != c->records)
		return fail(c, MCPT_E_SEAL_COUNT, "record_count %llu, the segment has %llu records",
			    (unsigned long long)st->record_count, (unsigned long long)c->records);
	if (st->leaf_count != c->leaves)
		return fail(c, MCPT_E_SEAL_COUNT, "leaf_count %llu, the segment has %llu chunks",
			    (unsigned long long)st->leaf_count, (unsigned long long)c->leaves);
	if (st->seal_record != at || st->seal_record != st->first_record + st->record_count)
		return fail(c, MCPT_E_SEAL_COUNT, "seal_record %llu, expected %llu",
			    (unsigned long long)st->seal_record, (unsigned long long)at);
	if (st->seal_offset != off)
		return fail(c, MCPT_E_SEAL_COUNT, "seal_offset %llu, expected %llu",
			    (unsigned long long)st->seal_offset, (unsigned long long)off);
	if (!v->opts.skim && memcmp(st->segment_root.data, c->root, MCPT_HASH_LEN) != 0)
		return fail(c, MCPT_E_SEAL_ROOT, "the segment root does not match its records");
	if (v->seg_parse_err)
		return fail(c, MCPT_E_RECORD_PARSE, "record %llu is signed but does not parse",
			    (unsigned long long)v->seg_parse_err - 1);
	if (v->seg_ref_err)
		return fail(c, MCPT_E_RECORD_PARSE, "%s", v->seg_ref_why);
	return true;
}

static bool check_time(struct vstate *v, struct seal_check *c)
{
	const Mcpt__SealStatement *st = c->st;
	const Mcpt__ClockSample *cs = st->clock;
	uint64_t limit = 0;

	if (cs->boottime_before_ns > cs->boottime_after_ns)
		return fail(c, MCPT_E_SEAL_TIME, "clock sample: boottime before > after");
	/* each reading non-decreasing rather than strictly increasing: two seals may fall in one
	 * tick of a coarse clocksource */
	if (v->prev.have &&
	    (cs->boottime_before_ns < v->prev.boottime_before ||
	     cs->boottime_after_ns < v->prev.boottime || cs->monotonic_ns < v->prev.monotonic))
		return fail(c, MCPT_E_SEAL_TIME, "the seal clock went backwards");
	if ((st->min_event_ts == 0) != (st->max_event_ts == 0) ||
	    st->min_event_ts > st->max_event_ts)
		return fail(c, MCPT_E_SEAL_TIME, "inconsistent event time range");
	if (v->event_clock == MCPT__CLOCK_ID__CLOCK_BOOTTIME)
		limit = cs->boottime_after_ns;
	else if (v->event_clock == MCPT__CLOCK_ID__CLOCK_MONOTONIC)
		limit = cs->monotonic_ns;
	if (limit && st->max_event_ts > limit + MCPT_SKEW_NS)
		return fail(c, MCPT_E_SEAL_TIME, "events stamped after their seal");
	/* a range, when the seal gives one, covers every Event sealed (the writer's also covers
	 * other records' times) */
	if (v->seg_ev_max && st->max_event_ts &&
	    (v->seg_ev_min < st->min_event_ts || v->seg_ev_max > st->max_event_ts))
		return fail(c, MCPT_E_SEAL_TIME, "an event stamped outside its seal's time range");
	return true;
}

static bool check_loss(struct vstate *v, struct seal_check *c)
{
	for (unsigned s = 1; s < MCPT_LOSS_SOURCES && v->prev.have; s++) {
		uint64_t now = *mcpt_loss_field(c->st->loss, s);

		if (now < v->prev.loss[s])
			return fail(c, MCPT_E_LOSS_REGRESSION,
				    "loss total %s went from %llu to %llu", mcpt_loss_name(s),
				    (unsigned long long)v->prev.loss[s], (unsigned long long)now);
	}
	return true;
}

bool mcpt_v_seal_open(struct vstate *v, struct seal_check *c)
{
	mcpt_arena_reset(&v->arena, mcpt_arena_budget(c->f->rv.body_len));
	if (!check_outer(v, c) || !check_signature(v, c) || !check_statement(v, c))
		return false;
	c->usable = true;
	return check_trace(v, c);
}

static void run_checks(struct vstate *v, struct seal_check *c)
{
	if (mcpt_v_seal_open(v, c) && check_chain(v, c) && check_counts(v, c) && check_time(v, c))
		check_loss(v, c);
}

/* A writer seals an empty segment only for a heartbeat, a rate-limited MARK seal (>= 10 ms
 * apart, or the heartbeat if shorter) or FINAL: a signed empty seal sooner than that after the
 * previous one is beyond its
 * policy (TRACE-FORMAT.md 5.14, "millions of tiny seals"); counted here, warned once at the end. */
static void flood_check(struct vstate *v, const struct seal_check *c)
{
	const Mcpt__SealStatement *st = c->st;
	uint64_t gap;

	if (c->code != MCPT_OK || c->records || (st->flags & MCPT_SEAL_FINAL) || !v->prev.have)
		return;
	gap = v->heartbeat_ns < MCPT_MARK_SEAL_GAP_NS ? v->heartbeat_ns : MCPT_MARK_SEAL_GAP_NS;
	if (st->clock->monotonic_ns - v->prev.monotonic >= gap)
		return;
	if (!v->flood_seals++)
		v->first_flood = st->seal_index;
}

/* Warnings from a readable statement, against the previous one (or the Header's sample). */
static void clock_warnings(struct vstate *v, const struct seal_check *c)
{
	const Mcpt__ClockSample *cs = c->st->clock;
	const struct vprev *p = v->prev.have ? &v->prev : &v->header_clock;
	unsigned long long idx = (unsigned long long)c->st->seal_index;
	int64_t dr, db;

	if (!cs->ntp_synced && !v->ntp_warned) {
		v->ntp_warned = true;
		mcpt_v_warn(v, MCPT_W_NTP_UNSYNC,
			    "the host clock was not NTP-synchronised at seal %llu", idx);
	}
	if (!p->have)
		return;
	if (cs->monotonic_ns > p->monotonic &&
	    cs->monotonic_ns - p->monotonic > v->heartbeat_ns + MCPT_SKEW_NS)
		mcpt_v_warn(v, MCPT_W_SEAL_GAP,
			    "no seal for %.1f s before seal %llu (heartbeat %.0f s)",
			    (double)(cs->monotonic_ns - p->monotonic) / 1e9, idx,
			    (double)v->heartbeat_ns / 1e9);
	dr = (int64_t)(cs->realtime_ns - p->realtime);
	db = (int64_t)(cs->boottime_after_ns - p->boottime);
	if (llabs(dr - db) > 1000000000ll)
		mcpt_v_warn(v, MCPT_W_CLOCK_STEP,
			    "the realtime clock stepped by %+.3f s before seal %llu",
			    (double)(dr - db) / 1e9, idx);
}

static int account(struct vstate *v, const struct seal_check *c, const uint8_t *digest)
{
	struct mcpt_report *rep = v->rep;
	const Mcpt__SealStatement *st = c->st;

	rep->seals++;
	if (c->usable && (st->flags & MCPT_SEAL_FINAL)) {
		rep->final = true;
		rep->end_reason = (Mcpt__EndReason)st->end_reason;
	}
	if (c->code != MCPT_OK) {
		v->contiguous = false;
		return mcpt_v_bad_segment(v, c->usable ? st->seal_index : v->expect_seal, c->code,
					  c->why);
	}
	rep->seals_ok++;
	rep->loss = *st->loss; /* no unknown fields: nothing points into the arena */
	if (st->min_event_ts && (!rep->min_event_ts || st->min_event_ts < rep->min_event_ts))
		rep->min_event_ts = st->min_event_ts;
	if (st->max_event_ts > rep->max_event_ts)
		rep->max_event_ts = st->max_event_ts;
	if (v->contiguous) {
		rep->verified_through_record = c->f->index;
		memcpy(rep->last_seal_digest, digest, MCPT_HASH_LEN);
	}
	return 0;
}

static void advance_chain(struct vstate *v, const struct seal_check *c, const uint8_t *digest)
{
	const Mcpt__SealStatement *st = c->st;

	memcpy(v->prev_digest, digest, MCPT_HASH_LEN);
	v->prev_damaged = c->code == MCPT_E_SEAL_SIG || c->code == MCPT_E_SEAL_PARSE;
	if (!c->usable) {
		v->expect_seal++;
		return;
	}
	v->expect_seal = st->seal_index + 1; /* resync on the signed index */
	v->rec_delta = st->seal_record - c->f->index;
	v->off_delta = st->seal_offset - c->f->offset;
	v->prev.have = true;
	v->prev.boottime = st->clock->boottime_after_ns;
	v->prev.boottime_before = st->clock->boottime_before_ns;
	v->prev.monotonic = st->clock->monotonic_ns;
	v->prev.realtime = st->clock->realtime_ns;
	for (unsigned s = 1; s < MCPT_LOSS_SOURCES; s++)
		v->prev.loss[s] = *mcpt_loss_field(st->loss, s);
}

/* The seal record, and with hold_segments the segment it verified (or nothing if it failed). */
static int deliver(struct vstate *v, const struct seal_check *c)
{
	const struct vframe *f = c->f;
	bool ok = c->code == MCPT_OK;
	bool provisional = !(ok && v->check_sigs);
	int err;

	if (v->opts.hold_segments) {
		if (!ok) {
			mcpt_hold_drop(&v->hold);
			return 0;
		}
		err = mcpt_hold_release(&v->hold, v, provisional);
		if (err || v->cb_ret)
			return err;
	}
	return mcpt_v_deliver(v, f->index, f->offset, MCPT_T_SEAL, f->p + f->rv.body_off,
			      f->rv.body_len, provisional);
}

int mcpt_v_seal(struct vstate *v, struct vframe *f)
{
	struct seal_check c = {.f = f};
	uint8_t digest[MCPT_HASH_LEN];
	int r;

	c.records = v->seg.records;
	if (!c.records && ++v->empty_seals > v->opts.max_empty_seals) {
		mcpt_v_fatal(v, MCPT_E_LIMIT, f->index, f->offset,
			     "more than %llu seals over empty segments (at record %llu): reading "
			     "stopped, each costs a signature check",
			     (unsigned long long)v->opts.max_empty_seals,
			     (unsigned long long)f->index);
		return 1;
	}
	mcpt_segment_finish(&v->seg, c.root, &c.leaves);
	mcpt_seal_digest(f->p, f->len, digest);
	run_checks(v, &c);
	if (c.code != MCPT_OK) {
		r = mcpt_v_zero_tail_after(v, f); /* a seal torn by a crash is not tampering */
		if (r)
			return r;
	}
	if (c.usable) {
		clock_warnings(v, &c);
		flood_check(v, &c);
	}
	r = account(v, &c, digest);
	if (r)
		return r;
	advance_chain(v, &c, digest);
	r = deliver(v, &c);
	v->seg_first = f->index + 1;
	v->seg_offset = f->offset + f->len;
	v->seg_parse_err = 0;
	v->seg_ref_err = 0;
	v->seg_ev_min = v->seg_ev_max = 0;
	return r;
}
