/*
 * writer_int.h - the writer's state, shared by writer.c (records, buffering, cadence) and
 * writer_seal.c (statements, signatures, seal frames). Private to the library.
 */
#ifndef MCPT_WRITER_INT_H
#define MCPT_WRITER_INT_H

#include "internal.h"

#define MCPT_FLUSH_AGE_NS     100000000ull /* buffered bytes are written within 100 ms */

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
	uint64_t seg_first; /* index of the segment's first record */
	uint64_t min_ts, max_ts;
	Mcpt__LossTotals loss;

	uint64_t last_seal_ns;	/* monotonic */
	uint64_t buf_since_ns;	/* monotonic time the buffer became non-empty */
	uint32_t pending_flags; /* a MARK seal held back by the rate limit */

	struct mcpt_buf out; /* bytes not yet written */
	struct mcpt_buf stmt, pae;
};

/* writer.c */
int mcpt_writer_flush(struct mcpt_writer *w);
/* Makes room for a frame of n bytes at the end of the output buffer (flushing first when the
 * buffer is over its threshold). 0 or -errno (sticky). */
int mcpt_writer_room(struct mcpt_writer *w, size_t n);

/* writer_vt.c: the writer's value table (NULL and errno on allocation failure). */
struct mcpt_wvt;
struct mcpt_wvt *mcpt_wvt_new(void);

/* writer_seal.c: closes the segment and writes its seal (flags include FINAL for the last one),
 * then flushes and, on regular files, fdatasyncs. 0 or -errno (sticky). */
int mcpt_writer_seal_now(struct mcpt_writer *w, uint32_t flags, uint32_t end_reason);

#endif /* MCPT_WRITER_INT_H */
