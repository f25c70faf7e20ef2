/*
 * internal.h - private interfaces shared by the files of the trace library (not installed,
 * not for the collector or the analyzer; unit tests include it to reach the building blocks).
 *
 * framing.c: minimal uvarint32, preamble, the one-field Record rule. merkle.c: BLAKE2b-256
 * helpers, chunk leaves, RFC 9162 compact ranges and the chunk rule of TRACE-FORMAT.md 4.5
 * (one implementation used by the writer and the verifier; the unit tests recompute it
 * independently). seal.c: DSSE PAE, growable buffers. keys.c: the signer. arena.c: a bump
 * allocator with a budget for protobuf-c. reader.c: a buffered fd reader for the verifier.
 */
#ifndef MCPT_INTERNAL_H
#define MCPT_INTERNAL_H

#include <sodium.h>
#include <sys/types.h>

#include "mcpt.h"

#define MCPT_VARINT_MAX	      5 /* uvarint32 */
#define MCPT_SEAL_SIG_LEN     64
#define MCPT_SKEW_NS	      (5ull * 1000000000ull) /* clock skew allowed by the verifier (4.9) */
#define MCPT_MARK_SEAL_GAP_NS 10000000ull	     /* MARK seals: at most 100 per second (4.7) */

/* Bounds on Header.seal_policy and max_record_len, shared by the writer and the verifier. */
#define MCPT_CHUNK_RECORDS_MAX	 65536u
#define MCPT_CHUNK_BYTES_MIN	 1024u
#define MCPT_CHUNK_BYTES_MAX	 (16u << 20)
#define MCPT_SEGMENT_RECORDS_MAX (1u << 24)
#define MCPT_POLICY_NS_MIN	 1000000ull	   /* 1 ms */
#define MCPT_POLICY_NS_MAX	 86400000000000ull /* 24 h */
#define MCPT_RECORD_LEN_MIN	 1024u

/* ---- framing.c ---- */

/* Bytes of v as a uvarint: one per started group of 7 bits, i.e. floor(log2 v) / 7 + 1, here
 * (b * 9 + 73) / 64 for b = floor(log2 v), exact for b in 0..63 (inline: the writer asks
 * several times per record, mostly for values under 128). */
static inline size_t mcpt_uvarint_len(uint64_t v)
{
	if (v < 0x80)
		return 1;
	return ((size_t)(63 ^ __builtin_clzll(v)) * 9 + 73) >> 6;
}
size_t mcpt_uvarint_put(uint8_t *out, uint32_t v);
/* Decodes a minimal uvarint32 from p[0..n). 0 and *used on success; -EAGAIN when n ends inside
 * the varint; -EOVERFLOW for more than 5 bytes or a value >= 2^32; -EINVAL when not minimal. */
int mcpt_uvarint_get(const uint8_t *p, size_t n, uint32_t *v, size_t *used);

void mcpt_preamble(uint8_t out[MCPT_PREAMBLE_LEN], uint16_t minor);
/* Checks the first n bytes of a stream (n < 12 only at EOF). Returns MCPT_OK, MCPT_E_TRUNCATED
 * (a proper prefix of a preamble), MCPT_E_NOT_A_TRACE (with a hint) or MCPT_E_VERSION. */
enum mcpt_code mcpt_preamble_check(const uint8_t *p, size_t n, char *msg, size_t len);

struct mcpt_record_view {
	uint32_t type;
	size_t body_off; /* inner message offset within the Record bytes */
	size_t body_len;
};

/* Splits the L bytes of a Record (the frame without its length prefix) into type and inner
 * message per TRACE-FORMAT.md 4.2: exactly one field, wire type 2, minimal varints, field
 * number >= 1, lengths adding up. 0, or -EBADMSG with the reason in why. */
int mcpt_record_split(const uint8_t *rec, size_t len, struct mcpt_record_view *out, char *why,
		      size_t whylen);
/* Length of the Record (L) wrapping an inner message of body_len bytes as field `type`. */
size_t mcpt_record_len(uint32_t type, size_t body_len);
/* Writes uvarint(L) || tag || uvarint(body_len) into out (<= 15 bytes); returns its length. */
size_t mcpt_frame_head(uint8_t *out, uint32_t type, size_t body_len);
/* Formats one line into a caller's message buffer (err may be NULL). */
__attribute__((format(printf, 3, 4))) void mcpt_errf(char *err, size_t errlen, const char *fmt,
						      ...);
/* The inner message of a data record type (not Header or Seal); NULL for unknown types. */
const ProtobufCMessageDescriptor *mcpt_type_descriptor(uint32_t type);

/* ---- merkle.c ---- */

/* BLAKE2b-256 of a || b (either may be empty). */
void mcpt_hash2(uint8_t out[MCPT_HASH_LEN], const void *a, size_t an, const void *b, size_t bn);
void mcpt_header_digest(const uint8_t pre[MCPT_PREAMBLE_LEN], const uint8_t *frame, size_t len,
			uint8_t out[MCPT_HASH_LEN]);
void mcpt_seal_digest(const uint8_t *frame, size_t len, uint8_t out[MCPT_HASH_LEN]);
void mcpt_node_hash(const uint8_t l[MCPT_HASH_LEN], const uint8_t r[MCPT_HASH_LEN],
		    uint8_t out[MCPT_HASH_LEN]);

/* RFC 9162 compact range: one subtree root per set bit of the leaf count. */
struct mcpt_range {
	uint64_t leaves;
	uint8_t node[64][MCPT_HASH_LEN];
};

void mcpt_range_init(struct mcpt_range *r);
void mcpt_range_push(struct mcpt_range *r, const uint8_t leaf[MCPT_HASH_LEN]);
/* MTH of the leaves pushed so far; H("") when there are none. */
void mcpt_range_root(const struct mcpt_range *r, uint8_t out[MCPT_HASH_LEN]);

/* A segment under construction: the open chunk and the compact range of closed leaves. */
struct mcpt_segment {
	crypto_generichash_state chunk;
	uint32_t chunk_n;     /* records in the open chunk */
	uint64_t chunk_bytes; /* frame bytes in the open chunk */
	uint32_t max_records; /* chunk rule parameters from the header */
	uint32_t max_bytes;
	uint64_t records; /* records in the segment */
	struct mcpt_range range;
	/* called with each leaf as its chunk closes (the excerpt exporter keeps them); NULL for
	 * the writer and the verifier, which need only the compact range. Kept across resets. */
	void (*on_leaf)(void *ctx, const uint8_t leaf[MCPT_HASH_LEN]);
	void *leaf_ctx;
	/* records and chunks are counted, not hashed (a skimming read): the root means
	 * nothing. Kept across resets. */
	bool count_only;
};

void mcpt_segment_init(struct mcpt_segment *s, uint32_t chunk_records, uint32_t chunk_bytes);
/* Adds one frame (length prefix included) and closes the chunk when the rule says so. */
void mcpt_segment_add(struct mcpt_segment *s, const uint8_t *frame, size_t len);
/* Closes the open chunk (if any) and writes the segment root; the segment is then reset. */
void mcpt_segment_finish(struct mcpt_segment *s, uint8_t root[MCPT_HASH_LEN], uint64_t *leaves);

/* RFC 9162 inclusion proofs over a segment's leaves (2.1.3). A path has at most 64 hashes. */
#define MCPT_PATH_MAX 64
/* Number of hashes in the audit path of leaf m among n (0 when n <= 1 or m >= n). */
size_t mcpt_audit_path_len(uint64_t n, uint64_t m);
/* PATH(m, D[0:n]), leaf level first, into out; returns its length. m < n. */
size_t mcpt_audit_path(const uint8_t (*leaves)[MCPT_HASH_LEN], uint64_t n, uint64_t m,
		       uint8_t (*out)[MCPT_HASH_LEN]);
/* Whether path (k hashes) proves that leaf is leaf m of a tree of n leaves with this root. */
bool mcpt_audit_path_verify(const uint8_t leaf[MCPT_HASH_LEN], uint64_t m, uint64_t n,
			    const uint8_t (*path)[MCPT_HASH_LEN], size_t k,
			    const uint8_t root[MCPT_HASH_LEN]);

/* ---- seal.c ---- */

struct mcpt_buf {
	uint8_t *p;
	size_t len, cap;
};

int mcpt_buf_reserve(struct mcpt_buf *b, size_t n); /* room for n more bytes; 0 or -ENOMEM */
void mcpt_buf_free(struct mcpt_buf *b);
/* b = DSSE v1 PAE(MCPT_SEAL_PAYLOAD_TYPE, body). 0 or -ENOMEM. */
int mcpt_pae(struct mcpt_buf *b, const uint8_t *body, size_t len);
/* pack(msg) == bytes[0..len): rejects duplicate fields, non-minimal varints, explicit defaults
 * and field order games. protobuf-c keeps and re-emits unknown fields, so this alone accepts
 * them (newer minor versions may add fields to the Header). */
bool mcpt_packs_to(const ProtobufCMessage *msg, const uint8_t *bytes, size_t len,
		   struct mcpt_buf *scratch);
/* mcpt_packs_to and no unknown field in msg (top level; callers check nested messages). */
bool mcpt_canonical(const ProtobufCMessage *msg, const uint8_t *bytes, size_t len,
		    struct mcpt_buf *scratch);
uint64_t *mcpt_loss_field(Mcpt__LossTotals *t, unsigned src); /* NULL for an unknown source */
const char *mcpt_loss_name(unsigned src);
#define MCPT_LOSS_SOURCES 10 /* LossSource values 1..9 are counted */

/* ---- keys.c ---- */

struct mcpt_signer {
	uint8_t *sk; /* seed || pk (pk derived, never read from a file); sodium_malloc, no-access */
	uint8_t pk[32];
	uint8_t key_id[MCPT_KEY_ID_LEN];
};

/* chk = H("MCPT-v1 seckey" || "Ed" || key_id || seed) of a secret key file. */
void mcpt_seckey_checksum(const uint8_t id[MCPT_KEY_ID_LEN], const uint8_t seed[32],
			  uint8_t out[MCPT_HASH_LEN]);
/* Builds a signer from a seed (tests, golden traces). NULL and errno on failure. */
struct mcpt_signer *mcpt_signer_from_seed(const uint8_t seed[32]);
/* Ed25519 over m; the key is readable only during the call. 0, -EIO if the key is unusable. */
int mcpt_signer_sign(struct mcpt_signer *s, const uint8_t *m, size_t n,
		     uint8_t sig[MCPT_SEAL_SIG_LEN]);

/* ---- unwire.c ---- */

/* An Event decoded by hand exactly as protobuf-c's mcpt__event__unpack(a, len, data) would
 * decode it (a NULL: malloc), for records made of fields 1..21 each at most once with their
 * own wire types. NULL when the record is anything else, or on allocation failure: then call
 * protobuf-c, which accepts or rejects it. Free it like protobuf-c's own. */
Mcpt__Event *mcpt_unwire_event(ProtobufCAllocator *a, size_t len, const uint8_t *data);

/* ---- unwire_flat.c ---- */

/* A record of type d decoded by hand exactly as protobuf_c_message_unpack(d, a, len, data)
 * would, when its fields are each present at most once and all plain scalars or bytes (field
 * numbers 1..16, numbered densely); NULL otherwise or on allocation failure: then call
 * protobuf-c. */
ProtobufCMessage *mcpt_unwire_flat(const ProtobufCMessageDescriptor *d, ProtobufCAllocator *a,
				   size_t len, const uint8_t *data);

/* A PathDef written as writers write it (id, then value, each once) into out, its value
 * pointing into data (no copy: use it before data goes); false for any other layout (then
 * decode it in full). What it gives is what protobuf-c's unpack gives. */
bool mcpt_unwire_path_def_view(size_t len, const uint8_t *data, Mcpt__PathDef *out);

/* What a reader that skips an Event still needs of it: its op, ts and ts_delta, as
 * mcpt_unwire_event would decode them. false when mcpt_unwire_event would decline the record
 * (then parse it whole). Allocates nothing. */
struct mcpt_event_head {
	uint32_t op;
	uint64_t ts;
	int64_t ts_delta;
};
bool mcpt_unwire_event_head(size_t len, const uint8_t *data, struct mcpt_event_head *out);

/* ---- valtab.c (reader side, beyond mcpt.h) ---- */

/* The clock of an Event that is not fed (a skipped one, mcpt_verify_opts.want_event): its ts
 * or ts_delta as mcpt_valtab__feed would take it, in chunk `chunk`. 0 or -EBADMSG with why. */
int mcpt_valtab__clock(struct mcpt_valtab *t, uint64_t chunk, uint64_t ts, int64_t ts_delta,
		       char *why, size_t whylen);
/* The resolved ts of the last Event fed or clocked in the open chunk (0: none). */
uint64_t mcpt_valtab__last_ts(const struct mcpt_valtab *t);

/* ---- arena.c ---- */

struct mcpt_arena_block;

struct mcpt_arena {
	ProtobufCAllocator pb; /* hand &pb to protobuf-c */
	struct mcpt_arena_block *head;
	size_t used, budget;
};

void mcpt_arena_init(struct mcpt_arena *a);
/* Frees everything handed out and sets the byte budget for what follows. */
void mcpt_arena_reset(struct mcpt_arena *a, size_t budget);
void mcpt_arena_fini(struct mcpt_arena *a);
/* Budget for unpacking one record of len bytes (TRACE-FORMAT.md 5.8). */
static inline size_t mcpt_arena_budget(size_t len)
{
	return 8 * len + (64u << 10);
}

/* ---- reader.c ---- */

struct mcpt_reader {
	int fd;
	uint8_t *buf;
	size_t cap, off, len; /* valid bytes: buf[off .. off + len) */
	uint64_t pos;	      /* stream offset of buf[off] */
	bool eof;
	void (*on_read)(void *ctx, const uint8_t *p, size_t n); /* mcpt_verify_opts.on_read */
	void *on_read_ctx;
};

int mcpt_reader_init(struct mcpt_reader *r, int fd);
void mcpt_reader_fini(struct mcpt_reader *r);
/* Makes n bytes available at mcpt_reader_peek (fewer only at EOF). Returns the number
 * available (>= 0) or -errno; short reads, EINTR and EAGAIN (poll) are handled. */
ssize_t mcpt_reader_fill(struct mcpt_reader *r, size_t n);
static inline const uint8_t *mcpt_reader_peek(const struct mcpt_reader *r)
{
	return r->buf + r->off;
}
void mcpt_reader_consume(struct mcpt_reader *r, size_t n);
/* Consumes zero bytes. 1 when only zeros were left before EOF, 0 when a non-zero byte is next
 * (not consumed), -errno on a read error. *skipped counts the zeros consumed. */
int mcpt_reader_skip_zeros(struct mcpt_reader *r, uint64_t *skipped);
/* Consumes everything to EOF; *n bytes, *all_zero whether they were all zero. */
int mcpt_reader_drain(struct mcpt_reader *r, uint64_t *n, bool *all_zero);

/* ---- report.c ---- */

const char *mcpt_end_reason_name(unsigned r);

/* ---- clock.c ---- */

uint64_t mcpt_clock_real_monotonic(void *ctx);
void mcpt_clock_real_sample(void *ctx, Mcpt__ClockSample *out);

#endif /* MCPT_INTERNAL_H */
