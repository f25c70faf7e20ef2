/*
 * mcpt.h - the trace library shared by the collector and the analyzer.
 *
 * Implements TRACE-FORMAT.md (static-key mode): the 12-byte preamble and delimited framing,
 * Ed25519 keys in minisign-compatible files, the writer (chunk leaves, per-segment RFC 9162
 * Merkle roots, Seal statements signed over the DSSE PAE and linked by the previous seal's
 * digest, FINAL seal on every orderly stop) and a streaming reader/verifier that classifies a
 * trace into the verdicts of TRACE-FORMAT.md 4.11 while handing each record to a callback.
 *
 * Conventions: int functions return 0 or a negative errno; constructors return NULL and set
 * errno; functions that read user-supplied files also fill a caller-owned message buffer with
 * one line naming the file and what is wrong. Secrets never appear in messages.
 */
#ifndef MCPT_H
#define MCPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "excerpt.pb-c.h"
#include "trace.pb-c.h"

#define MCPT_MAGIC	       "\x89MCPT\r\n\x1a"
#define MCPT_MAGIC_LEN	       8
#define MCPT_PREAMBLE_LEN      12
#define MCPT_FORMAT_MAJOR      1
#define MCPT_FORMAT_MINOR      0
#define MCPT_SCHEMA_ID	       "mcpwitness.trace.v1"
#define MCPT_MAX_RECORD_LEN    (1u << 20)  /* default Header.max_record_len */
#define MCPT_HARD_RECORD_LEN   (16u << 20) /* no reader accepts a longer frame */
#define MCPT_HEADER_MAX	       (64u << 10)
#define MCPT_SEAL_PAYLOAD_TYPE "application/vnd.mcpwitness.trace-seal.v1+protobuf"
#define MCPT_HASH_LEN	       32
#define MCPT_KEY_ID_LEN	       8
#define MCPT_TRACE_ID_LEN      16

/* Record types = field numbers of Record's oneof (trace.proto). */
enum mcpt_type {
	MCPT_T_HEADER = 1,
	MCPT_T_EVENT = 2,
	MCPT_T_MARK = 3,
	MCPT_T_STDIO = 4,
	MCPT_T_LOSS = 5,
	MCPT_T_PROC = 6,
	MCPT_T_NOTE = 7,
	MCPT_T_PATH_DEF = 8, /* value table: Header.incompatible_features MCPT_FEAT_VALUE_TABLE */
	MCPT_T_TASK_DEF = 9, /* task table: Header.incompatible_features MCPT_FEAT_TASK_TABLE */
	MCPT_T_EPOCH_CERT = 13,
	MCPT_T_SEAL = 15,
};

/* Header.incompatible_features bits this library implements (a reader refuses any other). */
#define MCPT_FEAT_VALUE_TABLE 1ull /* PathDef records and Event *_ref fields (valtab.c) */
#define MCPT_FEAT_TASK_TABLE  2ull /* TaskDef records and Event task_ref (valtab.c) */
#define MCPT_FEAT_TS_DELTA    4ull /* Event ts_delta: ts from the chunk's previous Event */
#define MCPT_FEAT_FORK_TASK   8ull /* Event child_task: a fork defines its child's task */
#define MCPT_FEATURES_KNOWN                                                                      \
	(MCPT_FEAT_VALUE_TABLE | MCPT_FEAT_TASK_TABLE | MCPT_FEAT_TS_DELTA | MCPT_FEAT_FORK_TASK)
/* Bounds of one chunk's value table (trace.proto, PathDef) and task table (TaskDef): past them
 * a writer writes values or tasks inline and a reader refuses the definition. */
#define MCPT_VT_MAX_VALUES 1024u
#define MCPT_VT_MAX_BYTES  (64u << 10)
#define MCPT_VT_MAX_TASKS  1024u

/* SealStatement.flags */
enum mcpt_seal_flags {
	MCPT_SEAL_FINAL = 1,
	MCPT_SEAL_HEARTBEAT = 2,
	MCPT_SEAL_MARK = 4,
	MCPT_SEAL_SIGNAL = 8,
	MCPT_SEAL_ROTATE = 16,
};

/* ---------------------------------------------------------------------------------------- */
/* Keys (TRACE-FORMAT.md 4.10, static mode)                                                  */

struct mcpt_signer; /* opaque: the seed lives in sodium_malloc'd memory, no-access between uses */

struct mcpt_pubkey {
	uint8_t key_id[MCPT_KEY_ID_LEN];
	uint8_t pk[32];
};

/* Generates a key pair into dir/signing.key (seed-only, 0600, created O_EXCL|O_NOFOLLOW) and
 * dir/signing.pub (0644, minisign-compatible); dir is created 0700 when missing (an existing
 * dir keeps its mode). Writes the key id as 16 hex digits into keyid_hex. Refuses to overwrite
 * either file (-EEXIST; a secret file created before a failure is removed). 0 or -errno. */
int mcpt_key_generate(const char *dir, char keyid_hex[17], char *err, size_t errlen);

/* Loads a secret key file. Refuses (NULL, errno, message) a file that is not a regular file, is
 * a symlink, is not owned by the caller's euid or root, has group/other permission bits, is
 * malformed, or whose checksum or key id does not match. */
struct mcpt_signer *mcpt_signer_load(const char *path, char *err, size_t errlen);
/* Wipes and frees the key (sodium_free). Accepts NULL. */
void mcpt_signer_free(struct mcpt_signer *s);
/* The signer's key id and public key (derived from the seed, never read from a file). */
void mcpt_signer_key_id(const struct mcpt_signer *s, uint8_t out[MCPT_KEY_ID_LEN]);
void mcpt_signer_pubkey(const struct mcpt_signer *s, struct mcpt_pubkey *out);

/* Loads a public key file (minisign format: comment line + base64("Ed" || key_id || pk)).
 * Refuses (-errno, message) a file that is not regular, malformed, not an Ed25519 point, or
 * whose key id is not KEY_ID(pk) (a minisign-generated key has a random id: not ours). */
int mcpt_pubkey_load(struct mcpt_pubkey *out, const char *path, char *err, size_t errlen);

/* KEY_ID(pk) = first 8 bytes of BLAKE2b-256("MCPT-v1 keyid" || "Ed" || pk). */
void mcpt_key_id(const uint8_t pk[32], uint8_t out[MCPT_KEY_ID_LEN]);
/* 16 lower-case hex digits of the little-endian u64, as minisign shows key ids. */
void mcpt_key_id_hex(const uint8_t id[MCPT_KEY_ID_LEN], char out[17]);

/* ---------------------------------------------------------------------------------------- */
/* Writer                                                                                    */

/* Clock source. Tests inject a fake one to make traces byte-identical run after run. */
struct mcpt_clock {
	uint64_t (*monotonic_ns)(void *ctx);
	void (*sample)(void *ctx, Mcpt__ClockSample *out); /* fills every ClockSample field */
	void *ctx;
};

/* The real clock sample: CLOCK_REALTIME read between two CLOCK_BOOTTIME reads, then
 * CLOCK_MONOTONIC, then adjtimex() for ntp_synced/esterror_us (e.g. for Header.clock). */
void mcpt_clock_sample(Mcpt__ClockSample *out);

struct mcpt_writer_opts {
	/* seal policy; 0 = default (64 records, 16 KiB, 4096 records, 1 s, 10 s) */
	uint32_t chunk_records;
	uint32_t chunk_bytes;
	uint32_t max_segment_records;
	uint64_t max_segment_ns;
	uint64_t heartbeat_ns;
	bool fsync_seals;		/* fdatasync seals (regular files), paced: at most one
					 * sync per 100 ms (or 4x the last sync's duration),
					 * a seal that comes sooner is synced by the next
					 * tick; NOTE: a NULL opts means true, a zeroed struct
					 * means false. The FINAL seal is fsynced either way */
	size_t flush_bytes;		/* write() once this much is buffered; 0 = 64 KiB */
	const struct mcpt_clock *clock; /* NULL = the real clocks */
	bool value_table; /* set MCPT_FEAT_VALUE_TABLE: mcpt_writer__event_refs may define values */
	bool task_table;  /* set MCPT_FEAT_TASK_TABLE: mcpt_writer__event_refs may define tasks */
	bool ts_delta;	  /* set MCPT_FEAT_TS_DELTA: mcpt_writer__event_refs may write ts_delta */
	bool fork_task;	  /* with task_table, set MCPT_FEAT_FORK_TASK: mcpt_writer__event_refs
			   * may mark a fork as defining its child's task (child_task) */
	const uint8_t *trace_id;	/* NULL = random; 16 bytes otherwise (tests) */
	uint32_t max_record_len;	/* Header.max_record_len; 0 = 1 MiB (1 KiB..16 MiB) */
};

struct mcpt_writer;

/* Starts a trace on fd: writes the preamble and the Header record. The library sets the fields
 * it owns (format version, trace_id, schema_id, signer, seal_policy, max_record_len, and clock
 * when hdr->clock is NULL) on a private copy: hdr is not modified and need not outlive the
 * call (read the trace id back with mcpt_writer__trace_id). The caller fills everything else
 * (host, kernel, target, collector...); incompatible_features must be 0 (the library sets
 * MCPT_FEAT_VALUE_TABLE itself when opts->value_table, MCPT_FEAT_TASK_TABLE when
 * opts->task_table, MCPT_FEAT_TS_DELTA when opts->ts_delta, MCPT_FEAT_FORK_TASK when
 * opts->fork_task and opts->task_table). The writer keeps a
 * reference to signer, not ownership; signer NULL writes an unsigned trace (tests only:
 * verify refuses it without allow_unsigned). Policy values out of the verifier's bounds ->
 * EINVAL; a header over 64 KiB -> EMSGSIZE; a write error -> its errno. NULL and errno on
 * failure. */
struct mcpt_writer *mcpt_writer__new(int fd, const Mcpt__Header *hdr, struct mcpt_signer *signer,
				     const struct mcpt_writer_opts *opts);

/* Appends one record: packs msg (the inner message of Record member `type`), frames it, feeds
 * the chunk hash, and seals when the segment reaches max_segment_records. ts (0 = none) feeds
 * the segment's min/max event time; for an Event it must be the event's
 * absolute timestamp (the base of the next Event's ts_delta). */
int mcpt_writer__append(struct mcpt_writer *w, enum mcpt_type type, const ProtobufCMessage *msg,
			uint64_t ts);
/* The same for an inner message already packed (or a type this library does not know, e.g.
 * vendor types 1024..2047). -EINVAL for Header/Seal/EpochCert or type 0 / >= 2^29; -EMSGSIZE
 * past max_record_len (not sticky: the record is skipped, the trace goes on). */
int mcpt_writer__append_raw(struct mcpt_writer *w, uint32_t type, const uint8_t *body, size_t len,
			    uint64_t ts);

/* Value and task tables (trace.proto, PathDef and TaskDef; writer_vt.c, writer_tt.c). Call it
 * on an Event just before appending it, with no other append, seal or tick in between: each
 * byte field whose value this chunk has already met (in an earlier record or in another field
 * of ev) is replaced by a reference (ev's bytes cleared, its *_ref set), and so is the task
 * (pid, tid, pstart, uid, gid cleared, task_ref set) when this chunk has met it before; the
 * PathDef and TaskDef records defining them are appended first. Values and tasks met for the
 * first time stay inline. It defines them only when all the definitions and the event will
 * share a chunk (mcpt_writer__chunk_room) and the chunk's tables have room. ev's byte fields
 * are only re-pointed, never freed. With opts.ts_delta, ev's ts is then replaced by ts_delta,
 * its difference from the chunk's previous Event, when ev is not the chunk's first Event and
 * the delta takes fewer bytes (pass the absolute ts to mcpt_writer__append). With
 * opts.fork_task, a fork whose child's task the chunk's table can take gets child_task set: it
 * defines that task (pid, tid, pstart from its args, its own uid and gid) as the chunk's next,
 * and the child's records name it from then on. A table the writer was not opened with
 * (opts.value_table, opts.task_table, opts.ts_delta, opts.fork_task) is not used. 0 or
 * -errno: -EINVAL when ev already holds a reference, a ts_delta or child_task; a failed append (sticky as
 * for mcpt_writer__append). */
int mcpt_writer__event_refs(struct mcpt_writer *w, Mcpt__Event *ev);
/* Whether `records` more records of `bytes` frame bytes in all, appended now, would all fall
 * in the chunk open now (or about to open) with room left for one more record after them: no
 * chunk closes and no seal is due on the way. */
bool mcpt_writer__chunk_room(const struct mcpt_writer *w, uint32_t records, size_t bytes);
/* Ordinal of the chunk the next record will fall in (1 for the first chunk of the trace). */
uint64_t mcpt_writer__chunk(const struct mcpt_writer *w);

/* Cumulative loss total for one source, carried in every following seal; must not decrease. */
int mcpt_writer__set_loss(struct mcpt_writer *w, Mcpt__LossSource src, uint64_t cumulative);

/* Seals now when the time policy says so (1 s since the last seal with records pending, or a
 * heartbeat; a MARK seal held back by the 100/s rate limit), writes out buffered bytes older
 * than 100 ms and makes a paced seal sync that is due (fsync_seals). Call it after each batch
 * of appends and whenever the returned delay elapses.
 * Returns how many milliseconds may pass before the next call is due (0..100), or -errno. */
int mcpt_writer__tick(struct mcpt_writer *w);

/* Seals the current segment now (flags: MCPT_SEAL_MARK after a call end, HEARTBEAT, SIGNAL;
 * FINAL only through mcpt_writer__finish -> -EINVAL). An empty segment is allowed. MARK seals
 * are rate-limited to 100/s: one that comes too soon is merged into the next seal, which tick
 * writes within 10 ms. 0 or -errno (sticky write/sync/sign error). */
int mcpt_writer__seal(struct mcpt_writer *w, uint32_t flags);

/* Writes the FINAL seal with its end reason (SIGNAL/ROTATE flags follow END_SIGNAL/END_ROTATED),
 * flushes, fsyncs a regular file. After it only mcpt_writer__free and the accessors are valid
 * (others return -EINVAL). Returns the sticky error if an earlier write failed: then no FINAL
 * seal could be written. */
int mcpt_writer__finish(struct mcpt_writer *w, Mcpt__EndReason reason);

/* Frees the writer; never writes; never closes fd. Accepts NULL. */
void mcpt_writer__free(struct mcpt_writer *w);

/* Writes all n bytes of p to the blocking fd, going on after a short write or EINTR. 0, or
 * -errno of the failed write (-EIO when one wrote nothing). */
int mcpt_write_all(int fd, const void *p, size_t n);

uint64_t mcpt_writer__records(const struct mcpt_writer *w); /* records written, header included */
uint64_t mcpt_writer__seals(const struct mcpt_writer *w);
uint64_t mcpt_writer__syncs(const struct mcpt_writer *w); /* fdatasyncs and fsyncs made */
void mcpt_writer__trace_id(const struct mcpt_writer *w, uint8_t out[MCPT_TRACE_ID_LEN]);
/* SEAL_DIGEST of the last seal written (zeros before the first): with the trace id, what to
 * anchor off-host after mcpt_writer__finish (TRACE-FORMAT.md 4.10). */
void mcpt_writer__seal_digest(const struct mcpt_writer *w, uint8_t out[MCPT_HASH_LEN]);

/* ---------------------------------------------------------------------------------------- */
/* Reader and verifier (TRACE-FORMAT.md 4.11)                                                */

enum mcpt_verdict {
	MCPT_VALID_COMPLETE = 0,
	MCPT_INVALID = 1,
	MCPT_WRONG_KEY = 3, /* also UNSIGNED: see report.code */
	MCPT_UNSUPPORTED = 4,
	MCPT_VALID_PREFIX = 5, /* also UNVERIFIED (no seal at all): see report.code */
};

enum mcpt_code {
	MCPT_OK = 0,
	MCPT_E_IO,
	MCPT_E_NOT_A_TRACE,
	MCPT_E_VERSION,
	MCPT_E_HEADER,
	MCPT_E_FEATURE,
	MCPT_E_WRONG_KEY,
	MCPT_E_UNSIGNED,
	MCPT_E_FRAME_VARINT,
	MCPT_E_FRAME_LEN,
	MCPT_E_FRAME_STRUCT,
	MCPT_E_TRUNCATED,
	MCPT_E_ZERO_TAIL,
	MCPT_E_SEAL_SIG,
	MCPT_E_SEAL_PARSE,
	MCPT_E_SEAL_TRACE,
	MCPT_E_SEAL_CHAIN,
	MCPT_E_SEAL_COUNT,
	MCPT_E_SEAL_ROOT,
	MCPT_E_SEAL_TIME,
	MCPT_E_LOSS_REGRESSION,
	MCPT_E_TRAILING,
	MCPT_E_RECORD_PARSE,
	MCPT_E_UNVERIFIED, /* no seal at all */
	MCPT_E_NO_FINAL,   /* seals verify but the FINAL seal is missing */
	MCPT_W_LOSS,
	MCPT_W_UNKNOWN_TYPE,
	MCPT_W_CLOCK_STEP,
	MCPT_W_NTP_UNSYNC,
	MCPT_W_SEAL_GAP,
	MCPT_W_UNSEALED_TAIL,
	MCPT_E_LIMIT,	   /* a resource limit of the reader (hold buffer, seal caps) was reached */
	MCPT_W_SEAL_FLOOD, /* signed empty seals closer together than the writer's policy allows */
	MCPT_E_EXCERPT,	   /* an excerpt's proof is malformed or does not hold */
	MCPT_CODE_COUNT,
};

/* One record handed to the caller. body points into the reader's buffer: valid only during the
 * callback. provisional = its segment's seal has not been verified (yet): without hold_segments
 * the Header and data records always arrive provisional (their seal comes after them) and a
 * Seal record arrives once checked, provisional unless it verified; with hold_segments only
 * records whose seal verified are delivered, not provisional. Where nothing can be verified
 * (no key, or an unsigned trace allowed) every record is provisional. */
struct mcpt_record {
	uint64_t index;	 /* record index; the Header is 0 */
	uint64_t offset; /* byte offset of the frame in the stream */
	enum mcpt_type type;
	const uint8_t *body; /* the inner message bytes (unpack with the type's descriptor) */
	size_t body_len;
	bool provisional;
	/* the body already unpacked by the verifier's strict parse (a data record of a known
	 * type delivered as it is read, i.e. without hold_segments), its value and task
	 * references and ts_delta resolved, else NULL (also when they do not resolve): valid
	 * during the callback only, read-only. Saves the caller a second unpack of the same
	 * bytes and a table of its own. */
	const ProtobufCMessage *msg;
	/* ordinal of the hash chunk holding the record, from 1; 0 for the Header and Seals, which
	 * are in none. Value-table definitions are valid within one chunk (mcpt_valtab__feed). */
	uint64_t chunk;
};

/* Return 0 to go on, non-zero to stop reading (mcpt_verify then returns that value). */
typedef int (*mcpt_record_cb)(void *ctx, const struct mcpt_record *rec);

struct mcpt_verify_opts {
	/* trusted key; NULL = structure only (analyze --no-verify, dump): framing, hashes, chain
	 * and counts are still checked, signatures are not, and the verdict is at best
	 * VALID_PREFIX with MCPT_E_UNVERIFIED ("structure only" in the message) */
	const struct mcpt_pubkey *key;
	bool allow_unsigned;
	/* deliver each segment's records only after its seal verifies (--verify-before-release);
	 * records of a segment whose seal fails are never delivered, nor an unsealed tail */
	bool hold_segments;
	/* most bytes one held segment may take (inner messages + ~40 B per record); 0 = 128 MiB.
	 * Past it mcpt_verify stops with -ENOBUFS and code MCPT_E_LIMIT. */
	size_t hold_max_bytes;
	/* TRACE-FORMAT.md 5.14, each seal costs a signature check (~49 us): reading stops (code
	 * MCPT_E_LIMIT, verdict INVALID) after this many seals over empty segments, the most a
	 * writer can add beyond one seal per record; 0 = MCPT_EMPTY_SEALS_MAX. Bad segments are
	 * capped too: reading stops after max_bad_segments (0 = MCPT_BAD_SEGMENTS_MAX). */
	uint64_t max_empty_seals;
	uint64_t max_bad_segments;
	/* called with each run of bytes as it is read from fd, before any of it is parsed (NULL:
	 * none): a digest of exactly the bytes this read verified, with no second read */
	void (*on_read)(void *ctx, const uint8_t *p, size_t n);
	void *on_read_ctx;
	/* NULL: every record is parsed and delivered. Otherwise an Event whose op (Mcpt__Op) it
	 * refuses is framed, hashed and counted, its timestamp kept as the base of the next
	 * Event's ts_delta, but the rest of it is neither parsed nor checked and it is not
	 * delivered (forks of a trace with MCPT_FEAT_FORK_TASK are always read and delivered:
	 * they may define tasks); and PathDefs only define their values for the Events delivered
	 * (resolved as always), without a delivery of their own: for a read that needs a few
	 * kinds of events and whose bytes a verifying read then proves (e.g. by a digest of on_read). Its report may then miss what only
	 * those events' contents would have made it say; do not present it as a verdict. */
	bool (*want_event)(void *ctx, uint32_t op);
	void *want_ctx;
	/* Framing, the Header, the seal chain and counts as usual, but the records are not
	 * hashed, so a segment's root is neither computed nor compared: for the same kind of read
	 * as want_event. The verdict is at best VALID_PREFIX with MCPT_E_UNVERIFIED. Not with a
	 * key (mcpt_verify returns -EINVAL). */
	bool skim;
};

#define MCPT_EMPTY_SEALS_MAX  (1ull << 20) /* ~51 s of checks; 121 days of 10 s heartbeats */
#define MCPT_BAD_SEGMENTS_MAX 65536u	   /* ~3 s of checks on a hostile file */

struct mcpt_bad_segment {
	uint64_t seal_index;
	uint64_t first_record;
	uint64_t record_count;
	enum mcpt_code code;
	char reason[160];
};

struct mcpt_warning {
	enum mcpt_code code;
	char text[160];
};

struct mcpt_report {
	enum mcpt_verdict verdict;
	enum mcpt_code code; /* the error that decided the verdict, MCPT_OK when complete */
	char message[256];   /* one line: what holds and what does not */

	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];	 /* as the header names it */
	uint8_t trusted_key_id[MCPT_KEY_ID_LEN]; /* of opts.key */
	bool have_header;
	bool signatures_checked; /* false: no key given (structure only) or unsigned trace */
	bool truncated;		 /* torn tail: EOF inside a frame (or the preamble/header) */
	bool zero_tail;		 /* all-zero bytes to EOF where a frame was expected */

	uint64_t records; /* frames read, header included */
	uint64_t bytes;	  /* bytes read, preamble included */
	uint64_t seals;
	uint64_t seals_ok;
	bool final;
	Mcpt__EndReason end_reason;
	/* index of the last seal of the longest run of seals from seal 0 that all verified (the
	 * seal record itself included); 0 = none */
	uint64_t verified_through_record;
	uint64_t unsealed_records; /* after the last seal */
	uint64_t unsealed_bytes;
	uint64_t unsealed_from_record; /* index of the first record after the last seal */
	uint64_t trailing_bytes;       /* after the FINAL seal (E_TRAILING) or the zero tail */
	uint8_t last_seal_digest[MCPT_HASH_LEN]; /* SEAL_DIGEST of the last verified seal */
	uint64_t first_bad_record; /* INVALID: first record of the first bad segment or the frame */
	uint64_t first_bad_offset;
	uint64_t unknown_types;

	struct mcpt_bad_segment *bad_segments; /* the first MCPT_REPORT_MAX_LIST */
	size_t n_bad_segments;
	uint64_t bad_segments_total;   /* all of them */
	struct mcpt_warning *warnings; /* the first MCPT_REPORT_MAX_LIST */
	size_t n_warnings;
	uint64_t warnings_dropped;

	Mcpt__LossTotals loss; /* from the last good seal */
	uint64_t min_event_ts, max_event_ts;
};

#define MCPT_REPORT_MAX_LIST 256

/* Reads a trace from fd to EOF (pipes welcome: short reads and EINTR are handled), verifying as
 * it goes, and calls cb (may be NULL) for every record in stream order (the Header first).
 * Fills rep (overwritten: fini an earlier report first); returns 0 when a verdict was reached,
 * the callback's non-zero value if it stopped (rep then describes what was read), or -errno
 * on an I/O error or when a held segment outgrows hold_max_bytes (rep.code MCPT_E_IO /
 * MCPT_E_LIMIT). Reading stops early for verdicts that make the rest meaningless: UNSUPPORTED,
 * WRONG_KEY/UNSIGNED, a framing error; and at the seal caps of mcpt_verify_opts (returning 0,
 * verdict INVALID: the first error found, or E_LIMIT when the trace was sound until then).
 * Memory: one frame plus O(log n), or one segment with hold_segments. opts NULL = key NULL.
 * rep must be released with mcpt_report__fini. */
int mcpt_verify(int fd, const struct mcpt_verify_opts *opts, mcpt_record_cb cb, void *ctx,
		struct mcpt_report *rep);
void mcpt_report__fini(struct mcpt_report *rep);

/* The descriptor to unpack a record's body with: every record type this library knows,
 * Header and Seal included; NULL for a type it does not know (skip it). */
const ProtobufCMessageDescriptor *mcpt_record_descriptor(enum mcpt_type type);

/* The reader's value and task table (valtab.c, trace.proto PathDef and TaskDef): one chunk's
 * definitions, at most MCPT_VT_MAX_VALUES values of MCPT_VT_MAX_BYTES in all and
 * MCPT_VT_MAX_TASKS tasks (~97 KiB). */
struct mcpt_valtab;
struct mcpt_valtab *mcpt_valtab__new(void); /* NULL and errno */
void mcpt_valtab__free(struct mcpt_valtab *t); /* accepts NULL */
/* Feeds one unpacked record of chunk `chunk` (mcpt_record.chunk; a new chunk empties the
 * table). A PathDef defines the chunk's next value id, a TaskDef its next task id (its id must
 * be that one; bounds above). An Event has each reference replaced by the value (the bytes
 * field points into the table, valid until the table moves to another chunk or is freed; the
 * *_ref field is cleared) and its task reference by the task's pid, tid, pstart, uid and gid
 * (task_ref cleared), and a ts_delta by the absolute ts (the chunk's previous Event's plus
 * the delta; ts_delta cleared), so feeding it twice is harmless. Other types pass. 0, or
 * -EBADMSG with one line in why (without the record's index, which the caller adds): an id
 * not defined yet in the chunk, a field with both bytes and a reference, a task reference
 * beside any of the five fields, a definition out of order, empty or over the bounds, a
 * ts_delta on the chunk's first Event, beside a ts, or summing to 0 or past 2^64-1. */
int mcpt_valtab__feed(struct mcpt_valtab *t, uint64_t chunk, enum mcpt_type type,
		      ProtobufCMessage *msg, char *why, size_t whylen);
/* Call before protobuf_c_message_free_unpacked on a message resolved by t: clears the fields
 * that point into t's values (protobuf-c would free them). */
void mcpt_valtab__detach(const struct mcpt_valtab *t, ProtobufCMessage *msg);

/* Exit code of `mcpwitness verify` for a verdict (TRACE-FORMAT.md 4.11). */
int mcpt_verdict_exit_code(enum mcpt_verdict v);
const char *mcpt_verdict_name(enum mcpt_verdict v); /* "VALID_COMPLETE", ... */
const char *mcpt_code_name(enum mcpt_code c);	    /* "E_SEAL_ROOT", ... */
/* The verdict as `verify` prints it: UNSIGNED and UNVERIFIED refine WRONG_KEY and VALID_PREFIX. */
const char *mcpt_report_verdict_name(const struct mcpt_report *rep);

/* Text from a trace, made printable (escape.c). mcpt_escape writes n bytes of p as printable
 * ASCII: '\\' and '"' escaped, \n \r \t as such, other control and all non-ASCII bytes as \xHH;
 * it cuts at a whole escape to fit outlen and always NUL-terminates. Every string of a trace
 * that the library puts into a message has been through it. mcpt_sanitize (into a buffer) and
 * mcpt_fputs_safe (to a stream) only turn bytes outside printable ASCII into \xHH: applied to
 * every message at the point of printing, they change nothing on text escaped at its source.
 * The first two return out. */
const char *mcpt_escape(char *out, size_t outlen, const void *p, size_t n);
const char *mcpt_sanitize(char *out, size_t outlen, const char *s);
void mcpt_fputs_safe(FILE *f, const char *s);

/* Human-readable and JSON renderings of a report (the JSON is one object, no trailing
 * newline); both are stable for golden tests. */
void mcpt_report_print(FILE *out, const struct mcpt_report *rep);
void mcpt_report_print_json(FILE *out, const struct mcpt_report *rep);

/* ---------------------------------------------------------------------------------------- */
/* Evidence for tickets (TRACE-FORMAT.md 4.12): DSSE envelopes and excerpts                  */

/* DSSE envelope of a FINAL seal (dsse.c). Verifies the trace on fd with opts (a key is
 * required) and, when it is VALID_COMPLETE, writes the envelope of its FINAL seal, one JSON
 * object without a newline, to *json (malloc'd): {"payloadType": MCPT_SEAL_PAYLOAD_TYPE,
 * "payload": base64(statement), "signatures": [{"keyid": 16 hex digits, "sig": base64}]}.
 * No new signature: the seal's own signature is over the DSSE PAE already. rep is filled as by
 * mcpt_verify (fini it). 0; -EBADMSG when the trace is not VALID_COMPLETE (rep says why);
 * -EINVAL without a key; -errno of reading or allocating. */
int mcpt_dsse_export(int fd, const struct mcpt_verify_opts *opts, struct mcpt_report *rep,
		     char **json);

/* What a verified envelope says. */
struct mcpt_dsse_info {
	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint64_t seal_index, seal_record;
	uint32_t flags, end_reason;
	uint8_t *statement; /* malloc'd (mcpt_dsse_info__fini): the signed bytes */
	size_t statement_len;
	uint8_t signature[64];
};

/* Checks an envelope (json[0..len)) against key: JSON shape, payloadType, base64, exactly one
 * signature whose keyid names the key and which verifies over PAE(payloadType, payload), a
 * canonical SealStatement by that key with the FINAL flag. 0 and info; -EBADMSG (malformed),
 * -EKEYREJECTED (a signature by another key or one that does not verify) with one line in err;
 * -ENOMEM. */
int mcpt_dsse_check(const char *json, size_t len, const struct mcpt_pubkey *key,
		    struct mcpt_dsse_info *info, char *err, size_t errlen);
void mcpt_dsse_info__fini(struct mcpt_dsse_info *info);

/* Excerpts (proto/EXCERPT.md): a small file proving that one record was in a signed trace:
 * the trace's preamble, a proof (audit path), its Header frame, the seal frame of the
 * record's segment and the frames of the record's chunk, all verbatim. */
#define MCPT_EXCERPT_MAGIC   "\x89MCPE\r\n\x1a"
#define MCPT_EXCERPT_MAJOR   1
#define MCPT_EXCERPT_MINOR   0
#define MCPT_EXCERPT_MAX_LEN (40u << 20) /* header + seal + one chunk, all at their caps */

/* Whether p[0..n) starts with the excerpt magic. */
bool mcpt_is_excerpt(const uint8_t *p, size_t n);

/* Builds the excerpt proving record `index` of the trace on fd into *out (malloc'd, *len
 * bytes), reading only up to that record's seal, then verifies it with opts (key required) so
 * an excerpt that would not verify is never returned. 0, or -errno with one line in err:
 * -ENOENT (the trace has no such record), -EINVAL (the record is the Header or a seal: not in a
 * chunk), -ENODATA (no seal follows the record: unsealed tail, torn or damaged trace),
 * -EBADMSG (not a trace, damaged framing, or the excerpt does not verify: the record's
 * segment is bad), -EFBIG (the segment has more leaves than an exporter keeps), -EIO, -ENOMEM. */
int mcpt_excerpt_export(int fd, uint64_t index, const struct mcpt_verify_opts *opts, uint8_t **out,
			size_t *len, char *err, size_t errlen);

/* The outcome of verifying an excerpt. verdict MCPT_VALID_COMPLETE means proven (exit 0); the
 * other verdicts and exit codes are those of a trace (INVALID 1, WRONG_KEY/UNSIGNED 3,
 * UNSUPPORTED 4; no key: VALID_PREFIX with E_UNVERIFIED, 5). Pointers go into the excerpt
 * bytes given to mcpt_excerpt_verify: valid as long as they are. */
struct mcpt_excerpt {
	enum mcpt_verdict verdict;
	enum mcpt_code code;
	char message[256]; /* one line; trace strings escaped */
	bool signatures_checked;
	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];
	uint8_t trusted_key_id[MCPT_KEY_ID_LEN];

	uint64_t record;	       /* the index the exporter gives */
	uint64_t index_min, index_max; /* what the seal and the proof allow (record is within) */
	uint64_t seal_index, seal_record, first_record, record_count;
	uint32_t seal_flags, end_reason;
	uint64_t leaf_index, leaf_count;
	uint32_t in_chunk, chunk_frames;
	uint8_t seal_digest[MCPT_HASH_LEN]; /* SEAL_DIGEST of the seal frame */

	const uint8_t *header; /* the Header's inner message (unpack with mcpt__header__unpack) */
	size_t header_len;
	struct mcpt_record rec; /* the proven record (rec.provisional is false once proven) */
	const uint8_t *chunk;	/* the frames of its chunk (for mcpt_excerpt_resolve) */
	size_t chunk_len;
};

/* Verifies the excerpt p[0..n) with opts (the key; allow_unsigned): the checks of proto/
 * EXCERPT.md, in order, the first failure deciding code and message. Returns 0 when a
 * verdict was reached (out->verdict), -EINVAL for NULL arguments, -ENOMEM. */
int mcpt_excerpt_verify(const uint8_t *p, size_t n, const struct mcpt_verify_opts *opts,
			struct mcpt_excerpt *out);
/* Resolves the value and task references and the ts_delta of msg, the proven record of x
 * unpacked by the caller, from the definitions and Events in the frames of its chunk before it
 * (t is emptied first). 0 or -EBADMSG with
 * one line in why (as mcpt_valtab__feed). */
int mcpt_excerpt_resolve(const struct mcpt_excerpt *x, struct mcpt_valtab *t, ProtobufCMessage *msg,
			 char *why, size_t whylen);
/* "PROVEN" for a proven excerpt, else as mcpt_report_verdict_name. */
const char *mcpt_excerpt_verdict_name(const struct mcpt_excerpt *x);

#endif /* MCPT_H */
