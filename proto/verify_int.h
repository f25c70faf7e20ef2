/*
 * verify_int.h - the verifier's state, shared by verify.c (stream, framing, data records),
 * verify_header.c (record 0 and the key), verify_seal.c (the checks of one seal), hold.c
 * (verify-before-release buffering) and verify_end.c (verdict, message, lists). Private.
 */
#ifndef MCPT_VERIFY_INT_H
#define MCPT_VERIFY_INT_H

#include "internal.h"

#define MCPT_HOLD_DEFAULT (128u << 20)

/* One frame being processed. p stays valid until the frame is consumed. */
struct vframe {
	const uint8_t *p; /* length prefix included */
	size_t len;
	uint64_t offset, index;
	struct mcpt_record_view rv; /* rv.body_off is relative to p */
	bool consumed;		    /* p points at v->side: the reader has moved on */
};

/* Records held back until their seal verifies (hold_segments). */
struct hold_rec {
	uint64_t index, offset;
	uint32_t type;
	size_t body_off, body_len; /* into hold.bytes */
	uint64_t chunk;
};

struct hold {
	struct mcpt_buf bytes;
	struct hold_rec *recs;
	size_t n, cap;
	size_t max;
};

/* What the last readable statement said, for checks across seals. */
struct vprev {
	bool have;
	uint64_t boottime, boottime_before, monotonic, realtime; /* boottime: the after read */
	uint64_t loss[MCPT_LOSS_SOURCES];
};

struct vstate {
	struct mcpt_verify_opts opts;
	struct mcpt_report *rep;
	mcpt_record_cb cb;
	void *ctx;
	int cb_ret;
	const ProtobufCMessage *parsed; /* the last mcpt_v_unpack_check result (in arena, or
					 * path_def, whose value points into the record) */
	Mcpt__PathDef path_def;
	const ProtobufCMessage *offer_msg; /* handed to the callback with the record offered */
	uint64_t offer_chunk;		   /* mcpt_record.chunk of the record offered */

	struct mcpt_reader rd;
	struct mcpt_arena arena;
	struct mcpt_buf scratch, pae, side;
	uint8_t preamble[MCPT_PREAMBLE_LEN];

	/* from the header */
	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint8_t header_digest[MCPT_HASH_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];
	uint32_t max_record_len;
	uint64_t features; /* Header.incompatible_features */
	uint64_t heartbeat_ns;
	Mcpt__ClockId event_clock;
	bool signed_trace, check_sigs;
	struct vprev header_clock;

	uint64_t index; /* index of the next record */

	/* the open segment */
	struct mcpt_segment seg;
	uint64_t seg_first, seg_offset;
	uint64_t seg_parse_err; /* index + 1 of the first record that does not parse, 0 = none */
	uint64_t seg_ev_min, seg_ev_max; /* the segment's Event timestamps (0: no Event yet) */
	uint64_t chunk_seq;	/* ordinal of the last chunk opened */
	struct mcpt_valtab *vt; /* the open chunk's value table */
	uint64_t seg_ref_err;	/* index + 1 of the first record with a bad value reference */
	char seg_ref_why[160];

	/* the seal chain */
	uint8_t prev_digest[MCPT_HASH_LEN];
	uint64_t expect_seal;
	bool prev_damaged;	       /* the last seal frame itself was bad (sig/parse) */
	uint64_t rec_delta, off_delta; /* signed minus observed positions, from the last seal */
	struct vprev prev;
	bool contiguous; /* every seal so far verified */

	/* outcome */
	bool done;
	enum mcpt_code fatal; /* MCPT_OK or the error that stopped reading */
	char fatal_msg[200];
	enum mcpt_code first_err; /* the first error in stream order decides the code */
	bool first_is_fatal;
	uint64_t pending_zero_at; /* + 1: zeros were skipped after a frame ending in zero */
	uint64_t good_end;	  /* offset after the last frame processed */
	uint32_t good_zeros;	  /* the zero bytes that frame ended with */
	uint64_t tail_at;	  /* torn or zero tail: offset of the frame it begins in */
	uint64_t zero_at;	  /* zero tail: offset of its first zero byte */
	uint32_t first_unknown;
	uint64_t first_unknown_at;
	bool ntp_warned;
	uint64_t empty_seals; /* seals over a segment without records (5.14 cap) */
	uint64_t flood_seals; /* verified empty non-FINAL seals sooner than the writer's gap */
	uint64_t first_flood; /* seal index of the first of them */

	struct hold hold;
};

/* verify.c: hands one record to the callback; a non-zero answer sets cb_ret and done. 0. */
int mcpt_v_deliver(struct vstate *v, uint64_t index, uint64_t offset, uint32_t type,
		   const uint8_t *body, size_t len, bool provisional);
/* A record of the open segment: to the callback now (provisional) or into the hold.
 * 0, -ENOBUFS (hold limit: fatal E_LIMIT recorded), -ENOMEM. */
int mcpt_v_offer(struct vstate *v, const struct vframe *f);
/* After an error in frame f: when f ends in zero bytes and only zeros follow to EOF, records a
 * zero tail and returns 1 (stop); otherwise 0 (f then lives in v->side), or -errno. */
int mcpt_v_zero_tail_after(struct vstate *v, struct vframe *f);
int mcpt_v_unpack_check(struct vstate *v, uint32_t type, const uint8_t *body, size_t len);

/* verify_header.c: frame 0. Sets v->fatal (and v->done) when the trace cannot be verified.
 * torn_ok (a stream, not an excerpt): a Header that does not parse and ends in zeros running
 * to EOF is a zero tail (mcpt_v_zero_tail_after), not an error. */
int mcpt_v_header(struct vstate *v, struct vframe *f, bool torn_ok);

/* verify_seal.c */
struct seal_check {
	const struct vframe *f;
	Mcpt__Seal *seal;	 /* in v->arena until its next reset */
	Mcpt__SealStatement *st; /* idem */
	bool usable; /* st can be relied on: signature verified, or no signatures in this mode */
	enum mcpt_code code;
	char why[160];
	uint8_t root[MCPT_HASH_LEN];
	uint64_t leaves, records;
};

/* The first checks of a seal frame (c->f), shared with the excerpt verifier: outer Seal, key id
 * hint, Ed25519 over the PAE of the statement (when v->check_sigs), canonical statement (then
 * c->usable), trace id and header digest. false with c->code and c->why at the first failure. */
bool mcpt_v_seal_open(struct vstate *v, struct seal_check *c);
int mcpt_v_seal(struct vstate *v, struct vframe *f);

/* verify_end.c */
void mcpt_v_fatal(struct vstate *v, enum mcpt_code code, uint64_t index, uint64_t offset,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void mcpt_v_warn(struct vstate *v, enum mcpt_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mcpt_v_bad_segment(struct vstate *v, uint64_t seal_index, enum mcpt_code code,
		       const char *reason);
void mcpt_v_finish(struct vstate *v);

/* hold.c */
void mcpt_hold_init(struct hold *h, size_t max);
void mcpt_hold_fini(struct hold *h);
void mcpt_hold_drop(struct hold *h);
/* 0, -ENOBUFS past h->max, -ENOMEM. */
int mcpt_hold_push(struct hold *h, uint64_t index, uint64_t offset, uint32_t type,
		   const uint8_t *body, size_t len, uint64_t chunk);
/* Hands every held record to the callback (provisional as given) and empties the hold. */
int mcpt_hold_release(struct hold *h, struct vstate *v, bool provisional);

#endif /* MCPT_VERIFY_INT_H */
