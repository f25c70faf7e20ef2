/*
 * trace_testlib.h - helpers for the trace library's unit suites: a deterministic fake clock, a
 * fixed test key, traces written to memory, verification of byte buffers through a memfd or a
 * pipe fed in small pieces, a frame lister that does not use the library's parser, and the
 * "forge" (trace_forge.c) that builds traces frame by frame, signing statements the library's
 * writer would never produce.
 */
#ifndef TRACE_TESTLIB_H
#define TRACE_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "mcpt.h"
#include "writer_int.h"

/* A clock that moves only when told: monotonic = now; boottime = now + 1000 (before) and
 * + 2000 (after); realtime = 1.7e18 + now; NTP synced. */
struct tl_clock {
	uint64_t now;
	struct mcpt_clock clock;
};

void tl_clock_init(struct tl_clock *c, uint64_t start);
void tl_clock_fill(uint64_t now, Mcpt__ClockSample *cs);

/* Signer from seed byte b repeated (b = 1 is "the test key"). */
struct mcpt_signer *tl_signer(uint8_t b);
void tl_pubkey(uint8_t b, struct mcpt_pubkey *out);

/* A fixed Header: host, kernel, boot id, BOOTTIME event clock, clock sample at t. */
void tl_header(Mcpt__Header *h, Mcpt__Host *host, Mcpt__Kernel *k, Mcpt__ClockSample *cs);

struct tl_bytes {
	uint8_t *p;
	size_t len;
};

void tl_bytes_free(struct tl_bytes *b);
/* Reads everything written to fd (a memfd) back into memory. */
void tl_slurp(int fd, struct tl_bytes *out);
int tl_memfd(const uint8_t *p, size_t n); /* a memfd holding p, offset 0 */

/* Appends Event i (ts and contents derived from i, size varies with i). */
int tl_append_event(struct mcpt_writer *w, uint64_t i);

/* The standard multi-segment trace: n events with the fake clock advancing 1 ms each, an
 * explicit seal every `seal_every` events (0 = none), max_segment_records seg_max, FINAL. */
struct tl_trace_opts {
	uint64_t n;
	uint32_t seg_max, chunk_records, chunk_bytes;
	uint64_t seal_every;
	uint8_t key;	       /* signer seed byte; 0 = unsigned */
	uint8_t trace_id_byte; /* trace id = this byte x16 */
	bool no_final;
};

void tl_make_trace(const struct tl_trace_opts *o, struct tl_bytes *out);

/* Verifies bytes (memfd) with key seed byte kb (0 = no key). */
struct tl_verify {
	uint8_t key;
	bool allow_unsigned, hold;
	size_t hold_max;
	bool (*want_event)(void *ctx, uint32_t op); /* mcpt_verify_opts.want_event (ctx NULL) */
};

int tl_verify(const uint8_t *p, size_t n, const struct tl_verify *o, mcpt_record_cb cb, void *ctx,
	      struct mcpt_report *rep);
/* The same through a pipe written by a child in pieces of 1..max_piece bytes, with SIGALRM
 * interrupting the reader every 50 us (EINTR). */
int tl_verify_pipe(const uint8_t *p, size_t n, const struct tl_verify *o, size_t max_piece,
		   struct mcpt_report *rep);

/* Frames of a trace, found with a parser independent of the library's. */
struct tl_frame {
	size_t off, len;   /* whole frame */
	size_t body, blen; /* inner message */
	uint32_t type;
};

size_t tl_frames(const uint8_t *p, size_t n, struct tl_frame *out, size_t max);
/* The Header's incompatible_features of the trace t (its first frame). */
uint64_t tl_header_features(const struct tl_bytes *t);

/* Does the report list a bad segment with this code? */
bool tl_has_bad(const struct mcpt_report *rep, enum mcpt_code code);
bool tl_has_warning(const struct mcpt_report *rep, enum mcpt_code code);

/* A writer of the value- and task-table suites (check_valtab.c, check_tasktab.c): a memfd,
 * the fake clock, test key 1, chunks of chunk_records records (16 MiB), segments of seg_max. */
struct tl_tab {
	struct tl_clock clk;
	struct mcpt_signer *s;
	struct mcpt_writer *w;
	int fd;
};

void tl_tab_open(struct tl_tab *f, uint32_t chunk_records, uint32_t seg_max, bool values,
		 bool tasks);
/* The same with any writer options (trace_id, clock and the chunk and segment sizes are
 * set here) and the fake clock starting at clock_start. */
void tl_tab_open_opts(struct tl_tab *f, uint32_t chunk_records, uint32_t seg_max,
		      struct mcpt_writer_opts wo, uint64_t clock_start);
/* Finishes the trace (FINAL seal) and reads it into out. */
void tl_tab_close(struct tl_tab *f, struct tl_bytes *out);
/* event_refs then append, as the collector does; returns the records event_refs added. */
uint64_t tl_tab_put(struct tl_tab *f, Mcpt__Event *e);
/* The same with the event stamped ts (the clock is not moved). */
uint64_t tl_tab_put_at(struct tl_tab *f, Mcpt__Event *e, uint64_t ts);
/* Exports record `index` of the trace t (key 1) as an excerpt, checks that it verifies, and
 * returns its Event unpacked, references resolved from the excerpt's chunk through vt (free
 * with tl_excerpt_event_free before vt). */
Mcpt__Event *tl_excerpt_event(const struct tl_bytes *t, size_t index, struct mcpt_valtab *vt);
void tl_excerpt_event_free(struct mcpt_valtab *vt, Mcpt__Event *e);
/* For every Event of t (at most 255 frames): its record as written and, through an excerpt of
 * it, resolved from its chunk; n counts the events from 0. Returns how many there were. */
typedef void (*tl_excerpt_fn)(void *ctx, const Mcpt__Event *raw, const Mcpt__Event *resolved,
			      size_t n);
size_t tl_excerpt_each(const struct tl_bytes *t, tl_excerpt_fn each, void *ctx);
/* Verifies t with key 1 (streamed, or held: records unpacked here), VALID_COMPLETE, feeding
 * every PathDef, TaskDef and Event to one value table and handing each, resolved, to each. */
typedef void (*tl_resolved_fn)(void *ctx, enum mcpt_type type, const ProtobufCMessage *m);
void tl_verify_resolved(const struct tl_bytes *t, bool hold, tl_resolved_fn each, void *ctx);
struct forge;
/* Verifies a forged trace with key 1: INVALID, E_RECORD_PARSE, exactly n_bad bad segments of
 * that code with the reasons want[], one line of message (rep is the caller's to fini); and
 * the same reasons when PathDefs only feed the table (opts.want_event, every Event wanted). */
void tl_verify_bad_refs(const struct forge *f, const char *const *want, size_t n_bad,
			struct mcpt_report *rep);

/* ---- trace_forge.c ---- */

struct forge {
	struct mcpt_buf out;
	struct mcpt_signer *signer; /* NULL: unsigned */
	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];
	uint8_t header_digest[MCPT_HASH_LEN];
	uint8_t prev[MCPT_HASH_LEN];
	uint64_t index, seals, seg_first, now;
	struct mcpt_segment seg;
	Mcpt__LossTotals loss;
	int sig_mode; /* FORGE_SIG_*: what the next seals' signatures cover */
};

enum {
	FORGE_SIG_PAE,
	FORGE_SIG_RAW,
	FORGE_SIG_OTHER_TYPE,
	FORGE_SIG_ZERO,
	FORGE_SIG_HIGH_S,
	FORGE_SIG_SMALL_R, /* R = the identity point (01 00..00), S = 0: lenient verifiers pass it
			    */
};

/* Header tweak hook: runs on the Header before it is packed. */
typedef void (*forge_header_fn)(Mcpt__Header *h, void *ctx);
/* Statement hooks: on the message before packing, then on the packed bytes (may grow). */
typedef void (*forge_stmt_fn)(Mcpt__SealStatement *st, void *ctx);
typedef void (*forge_bytes_fn)(struct mcpt_buf *stmt, void *ctx);

/* A forge_header_fn setting incompatible_features to *(const uint64_t *)ctx. */
void tl_features(Mcpt__Header *h, void *ctx);
void forge_init(struct forge *f, uint8_t key, uint16_t minor, forge_header_fn hf, void *ctx);
void forge_fini(struct forge *f);
void forge_raw(struct forge *f, const void *bytes, size_t n); /* not hashed, not counted */
void forge_record(struct forge *f, uint32_t type, const uint8_t *body, size_t len);
void forge_event(struct forge *f, uint64_t i);
/* Seal with flags; sf/bf may be NULL. sig_len != 64 writes a signature of that length. */
void forge_seal_ex(struct forge *f, uint32_t flags, forge_stmt_fn sf, forge_bytes_fn bf, void *ctx,
		   size_t sig_len);
void forge_seal(struct forge *f, uint32_t flags);

#endif /* TRACE_TESTLIB_H */
