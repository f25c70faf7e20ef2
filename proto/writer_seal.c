/*
 * writer_seal.c - closing a segment (TRACE-FORMAT.md 4.6-4.8): fold the segment's compact range
 * into its root, fill the SealStatement (counts, positions, chain link, clock sample, event time
 * range, cumulative loss totals, flags, end reason), sign DSSE-PAE(payload type, statement) with
 * Ed25519, append the Seal frame, chain its digest, then write everything out and fdatasync a
 * regular file so that what is sealed is durable: at once for the FINAL seal, paced for the
 * others (MCPT_SYNC_GAP_NS).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "writer_int.h"

static int pack_statement(struct mcpt_writer *w, uint32_t flags, uint32_t end_reason,
			  Mcpt__ClockSample *cs)
{
	Mcpt__SealStatement st = MCPT__SEAL_STATEMENT__INIT;
	uint8_t root[MCPT_HASH_LEN];
	size_t n;

	st.record_count = w->seg.records;
	mcpt_segment_finish(&w->seg, root, &st.leaf_count);
	st.trace_id = (ProtobufCBinaryData){MCPT_TRACE_ID_LEN, w->trace_id};
	st.header_digest = (ProtobufCBinaryData){MCPT_HASH_LEN, w->header_digest};
	st.seal_index = w->seals;
	st.first_record = w->seg_first;
	st.segment_root = (ProtobufCBinaryData){MCPT_HASH_LEN, root};
	st.prev_seal_digest = (ProtobufCBinaryData){MCPT_HASH_LEN, w->prev_seal};
	st.seal_record = w->records;
	st.seal_offset = w->offset;
	st.clock = cs;
	st.min_event_ts = w->min_ts;
	st.max_event_ts = w->max_ts;
	st.loss = &w->loss;
	if (w->signer)
		st.key_id = (ProtobufCBinaryData){MCPT_KEY_ID_LEN, w->key_id};
	st.flags = flags;
	st.end_reason = end_reason;

	n = mcpt__seal_statement__get_packed_size(&st);
	w->stmt.len = 0;
	if (mcpt_buf_reserve(&w->stmt, n))
		return -ENOMEM;
	w->stmt.len = mcpt__seal_statement__pack(&st, w->stmt.p);
	return w->stmt.len == n ? 0 : -EIO;
}

/* Appends the Seal frame {statement, signature, key_id} to the output buffer. */
static int append_seal_frame(struct mcpt_writer *w, const uint8_t sig[MCPT_SEAL_SIG_LEN])
{
	Mcpt__Seal seal = MCPT__SEAL__INIT;
	size_t body, head, len;
	uint8_t *frame;
	int err;

	seal.statement = (ProtobufCBinaryData){w->stmt.len, w->stmt.p};
	if (w->signer) {
		seal.signature = (ProtobufCBinaryData){MCPT_SEAL_SIG_LEN, (uint8_t *)sig};
		seal.key_id = (ProtobufCBinaryData){MCPT_KEY_ID_LEN, w->key_id};
	}
	body = mcpt__seal__get_packed_size(&seal);
	len = mcpt_record_len(MCPT_T_SEAL, body);
	if (len > w->max_record_len)
		return -EMSGSIZE; /* impossible with max_record_len >= 1 KiB */
	len += mcpt_uvarint_len((uint32_t)len);
	err = mcpt_writer_room(w, len);
	if (err)
		return err;
	frame = w->out.p + w->out.len;
	head = mcpt_frame_head(frame, MCPT_T_SEAL, body);
	if (mcpt__seal__pack(&seal, frame + head) != body)
		return -EIO;
	mcpt_seal_digest(frame, len, w->prev_seal);
	w->out.len += len;
	w->offset += len;
	return 0;
}

/* fdatasync (fsync with full) of what is written, then the pacing gap from its duration. */
static int sync_now(struct mcpt_writer *w, bool full)
{
	uint64_t t0 = w->clock.monotonic_ns(w->clock.ctx), took;

	if ((full ? fsync(w->fd) : fdatasync(w->fd)) != 0) {
		w->err = -errno;
		return w->err;
	}
	w->syncs++;
	w->sync_pending = false;
	w->synced_ns = w->clock.monotonic_ns(w->clock.ctx);
	took = w->synced_ns > t0 ? w->synced_ns - t0 : 0;
	w->sync_gap_ns = took > MCPT_SYNC_GAP_NS / MCPT_SYNC_SHARE ? took * MCPT_SYNC_SHARE :
								      MCPT_SYNC_GAP_NS;
	return 0;
}

uint64_t mcpt_writer_sync_wait(const struct mcpt_writer *w, uint64_t now)
{
	uint64_t since;

	if (!w->sync_pending)
		return UINT64_MAX;
	if (!w->synced_ns)
		return 0;
	since = now - w->synced_ns;
	return since < w->sync_gap_ns ? w->sync_gap_ns - since : 0;
}

int mcpt_writer_sync_due(struct mcpt_writer *w, uint64_t now)
{
	int err;

	if (mcpt_writer_sync_wait(w, now) != 0)
		return 0;
	err = mcpt_writer_flush(w);
	return err ? err : sync_now(w, false);
}

/* Writes everything out; on a regular file, fsyncs the FINAL seal, and with fsync on, syncs any
 * other now when the pacing allows, else marks it pending for mcpt_writer_sync_due. */
static int sync_out(struct mcpt_writer *w, bool final)
{
	int err = mcpt_writer_flush(w);

	if (err || !w->is_reg)
		return err;
	if (final)
		return sync_now(w, true);
	if (!w->fsync)
		return 0;
	w->sync_pending = true;
	return mcpt_writer_sync_due(w, w->last_seal_ns); /* the seal's own time */
}

int mcpt_writer_seal_now(struct mcpt_writer *w, uint32_t flags, uint32_t end_reason)
{
	Mcpt__ClockSample cs = MCPT__CLOCK_SAMPLE__INIT;
	uint8_t sig[MCPT_SEAL_SIG_LEN] = {0};
	int err;

	if (w->err)
		return w->err;
	w->clock.sample(w->clock.ctx, &cs);
	err = pack_statement(w, flags, end_reason, &cs);
	if (!err && w->signer) {
		err = mcpt_pae(&w->pae, w->stmt.p, w->stmt.len);
		if (!err)
			err = mcpt_signer_sign(w->signer, w->pae.p, w->pae.len, sig);
	}
	if (!err)
		err = append_seal_frame(w, sig);
	if (err) {
		w->err = err; /* the segment is gone from memory: nothing later could be sealed */
		return err;
	}
	w->records++;
	w->seals++;
	w->seg_first = w->records;
	w->min_ts = w->max_ts = 0;
	w->last_seal_ns = w->clock.monotonic_ns(w->clock.ctx);
	return sync_out(w, flags & MCPT_SEAL_FINAL);
}
