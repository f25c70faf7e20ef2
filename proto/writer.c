/*
 * writer.c - the trace writer of the collector (TRACE-FORMAT.md 4.8): preamble and Header,
 * then one frame per record, hashed into the open chunk as it is built (nothing per record is
 * stored for integrity), buffered and written in batches (64 KiB or 100 ms), sealed by count
 * (max_segment_records), by time (1 s with records pending, 10 s heartbeat, both on
 * CLOCK_MONOTONIC via mcpt_writer__tick), on demand (MARK seals rate-limited to 100/s) and
 * finally with a FINAL seal. The first write, sync or signing failure is sticky: every later
 * call returns it, so a collector notices a full disk or a closed pipe once and stops cleanly.
 * EPIPE raises SIGPIPE unless the caller ignores it (the collector should).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer_int.h"

static const struct mcpt_clock real_clock = {
	.monotonic_ns = mcpt_clock_real_monotonic,
	.sample = mcpt_clock_real_sample,
};

static int wait_writable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};

	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int mcpt_writer_flush(struct mcpt_writer *w)
{
	size_t done = 0;

	if (w->err)
		return w->err;
	while (done < w->out.len) {
		ssize_t n = write(w->fd, w->out.p + done, w->out.len - done);

		if (n > 0) {
			done += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			w->err = wait_writable(w->fd);
		} else if (n == 0 || errno != EINTR) {
			w->err = n == 0 ? -EIO : -errno;
		}
		if (w->err)
			break;
	}
	w->out.len = 0;
	return w->err;
}

int mcpt_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int mcpt_writer_room(struct mcpt_writer *w, size_t n)
{
	int err;

	if (w->out.len && w->out.len + n > w->flush_bytes) {
		err = mcpt_writer_flush(w);
		if (err)
			return err;
	}
	if (w->out.len == 0)
		w->buf_since_ns = w->clock.monotonic_ns(w->clock.ctx);
	if (mcpt_buf_reserve(&w->out, n)) {
		w->err = -ENOMEM;
		return w->err;
	}
	return 0;
}

static int policy_from_opts(struct mcpt_writer *w, const struct mcpt_writer_opts *o)
{
	uint32_t cr = o && o->chunk_records ? o->chunk_records : 64;
	uint32_t cb = o && o->chunk_bytes ? o->chunk_bytes : 16u << 10;

	w->max_seg_records = o && o->max_segment_records ? o->max_segment_records : 4096;
	w->max_seg_ns = o && o->max_segment_ns ? o->max_segment_ns : 1000000000ull;
	w->heartbeat_ns = o && o->heartbeat_ns ? o->heartbeat_ns : 10000000000ull;
	w->max_record_len = o && o->max_record_len ? o->max_record_len : MCPT_MAX_RECORD_LEN;
	w->flush_bytes = o && o->flush_bytes ? o->flush_bytes : 64u << 10;
	w->fsync = o ? o->fsync_seals : true;
	w->clock = o && o->clock ? *o->clock : real_clock;
	if (cr > MCPT_CHUNK_RECORDS_MAX || cb < MCPT_CHUNK_BYTES_MIN || cb > MCPT_CHUNK_BYTES_MAX ||
	    w->max_seg_records > MCPT_SEGMENT_RECORDS_MAX || w->max_seg_ns < MCPT_POLICY_NS_MIN ||
	    w->max_seg_ns > MCPT_POLICY_NS_MAX || w->heartbeat_ns < MCPT_POLICY_NS_MIN ||
	    w->heartbeat_ns > MCPT_POLICY_NS_MAX || w->max_record_len < MCPT_RECORD_LEN_MIN ||
	    w->max_record_len > MCPT_HARD_RECORD_LEN || !w->clock.monotonic_ns || !w->clock.sample)
		return -EINVAL;
	mcpt_segment_init(&w->seg, cr, cb);
	return 0;
}

/* Preamble + Header frame into the output buffer; the library's fields are set on a copy. */
static int write_header(struct mcpt_writer *w, const Mcpt__Header *hdr)
{
	Mcpt__Header h = *hdr;
	Mcpt__Signer sg = MCPT__SIGNER__INIT;
	Mcpt__SealPolicy sp = MCPT__SEAL_POLICY__INIT;
	Mcpt__ClockSample cs = MCPT__CLOCK_SAMPLE__INIT;
	size_t body, len, head;
	uint8_t *p;
	int err;

	if (h.incompatible_features)
		return -EINVAL; /* the library sets the bits of the features it uses */
	if (w->vt)
		h.incompatible_features |= MCPT_FEAT_VALUE_TABLE;
	if (w->tt)
		h.incompatible_features |= MCPT_FEAT_TASK_TABLE;
	if (w->ts_delta)
		h.incompatible_features |= MCPT_FEAT_TS_DELTA;
	if (w->fork_task)
		h.incompatible_features |= MCPT_FEAT_FORK_TASK;
	h.format_major = MCPT_FORMAT_MAJOR;
	h.format_minor = MCPT_FORMAT_MINOR;
	h.trace_id = (ProtobufCBinaryData){MCPT_TRACE_ID_LEN, w->trace_id};
	h.schema_id = (char *)MCPT_SCHEMA_ID;
	sg.alg = (char *)"ed25519";
	sg.key_id = (ProtobufCBinaryData){MCPT_KEY_ID_LEN, w->key_id};
	sg.mode = MCPT__SIGN_MODE__SIGN_STATIC;
	h.signer = w->signer ? &sg : NULL;
	sp.chunk_records = w->seg.max_records;
	sp.chunk_bytes = w->seg.max_bytes;
	sp.max_segment_records = w->max_seg_records;
	sp.max_segment_ns = w->max_seg_ns;
	sp.heartbeat_ns = w->heartbeat_ns;
	h.seal_policy = &sp;
	h.max_record_len = w->max_record_len;
	if (!h.clock) {
		w->clock.sample(w->clock.ctx, &cs);
		h.clock = &cs;
	}
	body = mcpt__header__get_packed_size(&h);
	len = mcpt_record_len(MCPT_T_HEADER, body);
	if (len > MCPT_HEADER_MAX)
		return -EMSGSIZE;
	len += mcpt_uvarint_len((uint32_t)len);
	err = mcpt_writer_room(w, MCPT_PREAMBLE_LEN + len);
	if (err)
		return err;
	p = w->out.p;
	mcpt_preamble(p, MCPT_FORMAT_MINOR);
	head = mcpt_frame_head(p + MCPT_PREAMBLE_LEN, MCPT_T_HEADER, body);
	if (mcpt__header__pack(&h, p + MCPT_PREAMBLE_LEN + head) != body)
		return -EINVAL;
	mcpt_header_digest(p, p + MCPT_PREAMBLE_LEN, len, w->header_digest);
	w->out.len = MCPT_PREAMBLE_LEN + len;
	w->offset = w->out.len;
	w->records = 1;
	w->seg_first = 1;
	return 0;
}

struct mcpt_writer *mcpt_writer__new(int fd, const Mcpt__Header *hdr, struct mcpt_signer *signer,
				     const struct mcpt_writer_opts *opts)
{
	Mcpt__LossTotals zero = MCPT__LOSS_TOTALS__INIT;
	struct mcpt_writer *w;
	struct stat st;
	uint64_t seed; /* the value table's hash */
	int err = -EINVAL;

	if (fd < 0 || !hdr || sodium_init() < 0) {
		errno = fd < 0 || !hdr ? EINVAL : EIO;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->signer = signer;
	w->loss = zero;
	if (policy_from_opts(w, opts))
		goto fail;
	if (opts && opts->trace_id)
		memcpy(w->trace_id, opts->trace_id, MCPT_TRACE_ID_LEN);
	else
		randombytes_buf(w->trace_id, MCPT_TRACE_ID_LEN);
	if (signer)
		mcpt_signer_key_id(signer, w->key_id);
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto fail;
	}
	w->is_reg = S_ISREG(st.st_mode);
	w->ts_delta = opts && opts->ts_delta;
	seed = randombytes_random() | (uint64_t)randombytes_random() << 32;
	if ((opts && opts->value_table && !(w->vt = mcpt_wvt_new(seed))) ||
	    (opts && opts->task_table && !(w->tt = mcpt_wtt_new()))) {
		err = -ENOMEM;
		goto fail;
	}
	w->fork_task = w->tt && opts->fork_task;
	err = write_header(w, hdr);
	if (!err)
		err = mcpt_writer_flush(w); /* surface EBADF/EPIPE at open, not later */
	if (err)
		goto fail;
	w->last_seal_ns = w->clock.monotonic_ns(w->clock.ctx);
	return w;
fail:
	mcpt_writer__free(w);
	errno = -err;
	return NULL;
}

/* Reserves a frame for a body of len bytes; *body is where the inner message goes. */
static int frame_begin(struct mcpt_writer *w, uint32_t type, size_t len, uint8_t **body,
		       size_t *frame_len)
{
	size_t rlen, head;
	int err;

	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	if (len > MCPT_HARD_RECORD_LEN)
		return -EMSGSIZE;
	rlen = mcpt_record_len(type, len);
	if (rlen > w->max_record_len)
		return -EMSGSIZE;
	*frame_len = rlen + mcpt_uvarint_len((uint32_t)rlen);
	err = mcpt_writer_room(w, *frame_len);
	if (err)
		return err;
	head = mcpt_frame_head(w->out.p + w->out.len, type, len);
	*body = w->out.p + w->out.len + head;
	return 0;
}

/* Hashes the frame just built, counts it, and seals or flushes when due. An Event's ts is its
 * chunk's last event time, the base of the next one's ts_delta (writer_tt.c). */
static int frame_end(struct mcpt_writer *w, uint32_t type, size_t frame_len, uint64_t ts)
{
	if (w->seg.chunk_n == 0)
		w->chunk_seq++; /* this record opens a chunk */
	if (type == MCPT_T_EVENT) {
		w->ts_chunk = w->chunk_seq;
		w->ts_last = ts;
	}
	mcpt_segment_add(&w->seg, w->out.p + w->out.len, frame_len);
	w->out.len += frame_len;
	w->offset += frame_len;
	w->records++;
	if (ts) {
		if (!w->min_ts || ts < w->min_ts)
			w->min_ts = ts;
		if (ts > w->max_ts)
			w->max_ts = ts;
	}
	if (w->seg.records >= w->max_seg_records) {
		uint32_t flags = w->pending_flags; /* a held-back MARK seal goes with this one */

		w->pending_flags = 0;
		return mcpt_writer_seal_now(w, flags, 0);
	}
	if (w->out.len >= w->flush_bytes)
		return mcpt_writer_flush(w);
	return 0;
}

int mcpt_writer__append(struct mcpt_writer *w, enum mcpt_type type, const ProtobufCMessage *msg,
			uint64_t ts)
{
	/* Header and Seal are the library's own; EpochCert is reserved for the FS mode */
	const ProtobufCMessageDescriptor *d =
		type == MCPT_T_EPOCH_CERT ? NULL : mcpt_type_descriptor(type);
	size_t len, frame_len;
	uint8_t *body;
	int err;

	if (!w || !msg || !d || msg->descriptor != d)
		return -EINVAL;
	len = protobuf_c_message_get_packed_size(msg);
	err = frame_begin(w, type, len, &body, &frame_len);
	if (err)
		return err;
	if (protobuf_c_message_pack(msg, body) != len)
		return -EINVAL; /* msg changed under us; nothing was committed */
	return frame_end(w, type, frame_len, ts);
}

int mcpt_writer__append_raw(struct mcpt_writer *w, uint32_t type, const uint8_t *body, size_t len,
			    uint64_t ts)
{
	size_t frame_len;
	uint8_t *dst;
	int err;

	if (!w || (!body && len) || type == 0 || type >= (1u << 29) || type == MCPT_T_HEADER ||
	    type == MCPT_T_SEAL || type == MCPT_T_EPOCH_CERT)
		return -EINVAL;
	err = frame_begin(w, type, len, &dst, &frame_len);
	if (err)
		return err;
	if (len)
		memcpy(dst, body, len);
	return frame_end(w, type, frame_len, ts);
}

int mcpt_writer_path_def(struct mcpt_writer *w, uint32_t id, const uint8_t *value, size_t len)
{
	size_t body = 1 + mcpt_uvarint_len(id) + 1 + mcpt_uvarint_len(len) + len, frame_len;
	uint8_t *p;
	int err;

	if (!id || !len || len > UINT32_MAX)
		return -EINVAL; /* proto3 would leave a zero field out */
	err = frame_begin(w, MCPT_T_PATH_DEF, body, &p, &frame_len);
	if (err)
		return err;
	*p++ = 1 << 3 | 0; /* id: varint */
	p += mcpt_uvarint_put(p, id);
	*p++ = 2 << 3 | 2; /* value: length-delimited */
	p += mcpt_uvarint_put(p, (uint32_t)len);
	memcpy(p, value, len);
	return frame_end(w, MCPT_T_PATH_DEF, frame_len, 0);
}

int mcpt_writer__set_loss(struct mcpt_writer *w, Mcpt__LossSource src, uint64_t cumulative)
{
	uint64_t *f;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	f = mcpt_loss_field(&w->loss, (unsigned)src);
	if (!f || cumulative < *f)
		return -EINVAL;
	*f = cumulative;
	return 0;
}

/* Milliseconds until the next deadline: a held MARK seal, the segment or heartbeat timer, and
 * the age limit of buffered bytes; at most 100 so callers that loop on it stay responsive. */
static int next_due_ms(const struct mcpt_writer *w, uint64_t now)
{
	uint64_t since = now - w->last_seal_ns, due;

	if (w->pending_flags)
		due = MCPT_MARK_SEAL_GAP_NS;
	else if (w->seg.records > 0 || w->seals == 0)
		due = w->max_seg_ns;
	else
		due = w->heartbeat_ns;
	due = due > since ? due - since : 0;
	since = mcpt_writer_sync_wait(w, now);
	due = since < due ? since : due;
	if (w->out.len) {
		uint64_t age = now - w->buf_since_ns;
		uint64_t left = age < MCPT_FLUSH_AGE_NS ? MCPT_FLUSH_AGE_NS - age : 0;

		due = left < due ? left : due;
	}
	if (due > MCPT_FLUSH_AGE_NS)
		due = MCPT_FLUSH_AGE_NS;
	return (int)((due + 999999) / 1000000);
}

/* The time policy. Segment 0 counts as pending even when empty, so the Header is covered by a
 * seal within max_segment_ns rather than waiting for the first heartbeat. */
int mcpt_writer__tick(struct mcpt_writer *w)
{
	uint64_t now, since;
	int err = 0;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	now = w->clock.monotonic_ns(w->clock.ctx);
	since = now - w->last_seal_ns;
	if (w->pending_flags && since >= MCPT_MARK_SEAL_GAP_NS) {
		uint32_t flags = w->pending_flags;

		w->pending_flags = 0;
		err = mcpt_writer_seal_now(w, flags, 0);
	} else if ((w->seg.records > 0 || w->seals == 0) && since >= w->max_seg_ns) {
		err = mcpt_writer_seal_now(w, 0, 0);
	} else if (since >= w->heartbeat_ns) {
		err = mcpt_writer_seal_now(w, MCPT_SEAL_HEARTBEAT, 0);
	}
	if (!err && w->out.len && now - w->buf_since_ns >= MCPT_FLUSH_AGE_NS)
		err = mcpt_writer_flush(w);
	if (!err)
		err = mcpt_writer_sync_due(w, now);
	if (err)
		return err;
	return next_due_ms(w, w->clock.monotonic_ns(w->clock.ctx));
}

int mcpt_writer__seal(struct mcpt_writer *w, uint32_t flags)
{
	const uint32_t allowed = MCPT_SEAL_HEARTBEAT | MCPT_SEAL_MARK | MCPT_SEAL_SIGNAL;

	if (!w || (flags & ~allowed))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	if ((flags & MCPT_SEAL_MARK) && w->seals > 0 &&
	    w->clock.monotonic_ns(w->clock.ctx) - w->last_seal_ns < MCPT_MARK_SEAL_GAP_NS) {
		w->pending_flags |= flags; /* rate limit: tick() seals it within 10 ms */
		return 0;
	}
	flags |= w->pending_flags;
	w->pending_flags = 0;
	return mcpt_writer_seal_now(w, flags, 0);
}

int mcpt_writer__finish(struct mcpt_writer *w, Mcpt__EndReason reason)
{
	uint32_t flags;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return -EINVAL;
	flags = MCPT_SEAL_FINAL | (w->pending_flags & ~MCPT_SEAL_HEARTBEAT);
	if (reason == MCPT__END_REASON__END_SIGNAL)
		flags |= MCPT_SEAL_SIGNAL;
	if (reason == MCPT__END_REASON__END_ROTATED)
		flags |= MCPT_SEAL_ROTATE;
	w->pending_flags = 0;
	w->finished = true;
	return mcpt_writer_seal_now(w, flags, (uint32_t)reason); /* fsyncs a regular file */
}

void mcpt_writer__free(struct mcpt_writer *w)
{
	if (!w)
		return;
	mcpt_buf_free(&w->out);
	mcpt_buf_free(&w->stmt);
	mcpt_buf_free(&w->pae);
	free(w->vt);
	free(w->tt);
	free(w);
}

uint64_t mcpt_writer__records(const struct mcpt_writer *w)
{
	return w->records;
}

uint64_t mcpt_writer__chunk(const struct mcpt_writer *w)
{
	return w->seg.chunk_n ? w->chunk_seq : w->chunk_seq + 1;
}

bool mcpt_writer__chunk_room(const struct mcpt_writer *w, uint32_t records, size_t bytes)
{
	const struct mcpt_segment *s = &w->seg;

	return (uint64_t)s->chunk_n + records < s->max_records &&
	       s->chunk_bytes + bytes < s->max_bytes && s->records + records < w->max_seg_records;
}

uint64_t mcpt_writer__seals(const struct mcpt_writer *w)
{
	return w->seals;
}

uint64_t mcpt_writer__syncs(const struct mcpt_writer *w)
{
	return w->syncs;
}

void mcpt_writer__trace_id(const struct mcpt_writer *w, uint8_t out[MCPT_TRACE_ID_LEN])
{
	memcpy(out, w->trace_id, MCPT_TRACE_ID_LEN);
}

void mcpt_writer__seal_digest(const struct mcpt_writer *w, uint8_t out[MCPT_HASH_LEN])
{
	memcpy(out, w->prev_seal, MCPT_HASH_LEN);
}
