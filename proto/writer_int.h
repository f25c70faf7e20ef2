/*
 * writer_int.h - the writer's state, shared by writer.c (records, buffering, cadence) and
 * writer_seal.c (statements, signatures, seal frames). Private to the library.
 */
#ifndef MCPT_WRITER_INT_H
#define MCPT_WRITER_INT_H

#include "internal.h"

#define MCPT_FLUSH_AGE_NS     100000000ull /* buffered bytes are written within 100 ms */
/* Seal syncs are paced: at most one fdatasync every MCPT_SYNC_GAP_NS, or every
 * MCPT_SYNC_SHARE times the last one's duration when that is longer, so that a disk with slow
 * syncs holds the single-threaded collector (which drains the ring between them) for at most
 * one part in MCPT_SYNC_SHARE + 1 of its time. A seal that comes sooner is written at once and
 * synced by the next paced sync (tick); the FINAL seal is synced at once. */
#define MCPT_SYNC_GAP_NS      100000000ull
#define MCPT_SYNC_SHARE	      4

struct mcpt_writer {
	int fd;
	int err; /* sticky -errno: the first write/sync/sign failure */
	bool is_reg, fsync, finished;
	struct mcpt_signer *signer; /* NULL: unsigned trace */
	struct mcpt_clock clock;

	uint32_t max_record_len, max_seg_records;
	uint64_t max_seg_ns, heartbeat_ns;
	size_t flush_bytes;

	uint8_t trace_id[MCPT_TRACE_ID_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];
	uint8_t header_digest[MCPT_HASH_LEN];
	uint8_t prev_seal[MCPT_HASH_LEN]; /* SEAL_DIGEST of the last seal; zeros before seal 0 */

	uint64_t records; /* records written, header included = index of the next record */
	uint64_t offset;  /* stream bytes produced (written or buffered) */
	uint64_t seals;

	struct mcpt_segment seg;
	uint64_t chunk_seq; /* ordinal of the last chunk opened (0 before the first) */
	struct mcpt_wvt *vt; /* value table (opts.value_table), else NULL */
	struct mcpt_wtt *tt; /* task table (opts.task_table), else NULL */
	bool ts_delta;	     /* opts.ts_delta: Events after a chunk's first carry ts_delta */
	bool fork_task;	     /* opts.fork_task (with tt): forks may define their child's task */
	uint64_t ts_chunk, ts_last; /* chunk of the last Event appended, and its ts */
	uint64_t seg_first; /* index of the segment's first record */
	uint64_t min_ts, max_ts;
	Mcpt__LossTotals loss;

	uint64_t last_seal_ns;	/* monotonic */
	uint64_t buf_since_ns;	/* monotonic time the buffer became non-empty */
	uint32_t pending_flags; /* a MARK seal held back by the rate limit */
	bool sync_pending;	/* a seal written since the last fdatasync (fsync on) */
	uint64_t synced_ns;	/* monotonic end of the last fdatasync (0: none yet) */
	uint64_t sync_gap_ns;	/* the pacing gap after it (MCPT_SYNC_GAP_NS or longer) */
	uint64_t syncs;		/* fdatasyncs and fsyncs made */

	struct mcpt_buf out; /* bytes not yet written */
	struct mcpt_buf stmt, pae;
};

/* writer.c */
int mcpt_writer_flush(struct mcpt_writer *w);
/* Makes room for a frame of n bytes at the end of the output buffer (flushing first when the
 * buffer is over its threshold). 0 or -errno (sticky). */
int mcpt_writer_room(struct mcpt_writer *w, size_t n);
/* Appends PathDef{id, value} as protobuf-c packs it (id and len > 0), packed in place: the
 * generic packer cost a thousand instructions a definition, and a busy server's chunks define
 * nearly one value per event. */
int mcpt_writer_path_def(struct mcpt_writer *w, uint32_t id, const uint8_t *value, size_t len);

/* writer_vt.c: the writer's value table (NULL and errno on allocation failure). */
struct mcpt_wvt;
struct mcpt_wvt *mcpt_wvt_new(uint64_t seed);

/* writer_tt.c: the writer's task table (NULL and errno on allocation failure), and what it
 * decides for one event: its entry (-1: not a candidate, or the table is full), whether to
 * define it now, and the frame bytes of that definition. */
struct mcpt_wtt;
struct mcpt_wtt *mcpt_wtt_new(void);
struct wtt_plan {
	int ent;
	bool define;
	size_t def_bytes;
};
/* Looks ev's task up in the table of chunk `chunk` (emptied when the chunk changes), entering
 * it when met for the first time; plans its definition when met before and not defined. */
void mcpt_wtt_plan(struct mcpt_wtt *t, uint64_t chunk, const Mcpt__Event *ev, struct wtt_plan *p);
/* Appends the TaskDef planned in p (p->define). 0 or -errno, as mcpt_writer__append. */
int mcpt_wtt_define(struct mcpt_writer *w, const struct wtt_plan *p);
/* When p's task is defined: sets ev->task_ref and clears ev's pid, tid, pstart, uid, gid. */
void mcpt_wtt_ref(const struct mcpt_wtt *t, const struct wtt_plan *p, Mcpt__Event *ev);

/* When ev (a fork: mcpt_fork_child) may define its child's task in the table of chunk
 * `chunk`, the chunk ev will fall in, and the task is worth it (not defined yet, long enough
 * inline): enters the task as the chunk's next definition and sets ev->child_task. uid and gid
 * are ev's own, before mcpt_wtt_ref cleared them. Call it last, just before ev is appended. */
void mcpt_wtt_fork(struct mcpt_wtt *t, uint64_t chunk, Mcpt__Event *ev, uint32_t uid,
		   uint32_t gid);

/* writer_tt.c: replaces ev's ts by its delta from the last Event appended when that one is
 * in `chunk` (the chunk ev will fall in) and the delta is shorter. */
void mcpt_wts_delta(struct mcpt_writer *w, uint64_t chunk, Mcpt__Event *ev);

/* writer_seal.c: closes the segment and writes its seal (flags include FINAL for the last one),
 * then flushes and, on regular files with fsync on, syncs: now when paced syncs allow it (see
 * MCPT_SYNC_GAP_NS) or the seal is FINAL (fsync), else later through mcpt_writer_sync_due.
 * 0 or -errno (sticky). */
int mcpt_writer_seal_now(struct mcpt_writer *w, uint32_t flags, uint32_t end_reason);
/* Nanoseconds from now until the pending sync is due (0: due now), or UINT64_MAX when no sync
 * is pending. */
uint64_t mcpt_writer_sync_wait(const struct mcpt_writer *w, uint64_t now);
/* Makes the pending sync when it is due. 0 or -errno (sticky). */
int mcpt_writer_sync_due(struct mcpt_writer *w, uint64_t now);

#endif /* MCPT_WRITER_INT_H */
