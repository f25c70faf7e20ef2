/*
 * verify.c - the streaming reader and verifier of TRACE-FORMAT.md 4.11: the preamble, then one
 * frame at a time (strict framing, caps, dispatch on the Record's field number), data records
 * hashed into the open segment's chunks and strictly parsed when their type is known, seals
 * handed to verify_seal.c, everything handed to the caller's callback as it goes (or, with
 * hold_segments, once its segment verified).
 *
 * The tail of a stream is classified, not just rejected: EOF inside a frame is a torn tail, and
 * zero bytes to EOF where a frame (or the rest of a frame) should be, covering a sector
 * boundary, are the zero-filled tail a crash leaves on many filesystems. Both can only affect
 * data after the last seal, since no seal follows them. Anything else that breaks framing stops
 * reading (no resync): it is INVALID.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

#define ZERO_TAIL_ALIGN 512u /* the smallest unit a crash leaves unwritten: a sector */

int mcpt_v_deliver(struct vstate *v, uint64_t index, uint64_t offset, uint32_t type,
		   const uint8_t *body, size_t len, bool provisional)
{
	struct mcpt_record rec = {
		.index = index,
		.offset = offset,
		.type = (enum mcpt_type)type,
		.body = body,
		.body_len = len,
		.provisional = provisional,
		.msg = v->offer_msg,
		.chunk = v->offer_chunk,
	};
	int r;

	if (!v->cb || v->cb_ret)
		return 0;
	r = v->cb(v->ctx, &rec);
	if (r) {
		v->cb_ret = r; /* mcpt_verify returns it once this frame is accounted for */
		v->done = true;
	}
	return 0;
}

/* A record of the open segment: to the caller now (provisional) or into the hold. */
int mcpt_v_offer(struct vstate *v, const struct vframe *f)
{
	const uint8_t *body = f->p + f->rv.body_off;
	int err;

	if (!v->opts.hold_segments)
		return mcpt_v_deliver(v, f->index, f->offset, f->rv.type, body, f->rv.body_len,
				      true);
	err = mcpt_hold_push(&v->hold, f->index, f->offset, f->rv.type, body, f->rv.body_len,
			     v->offer_chunk);
	if (err == -ENOBUFS)
		mcpt_v_fatal(v, MCPT_E_LIMIT, f->index, f->offset,
			     "the segment starting at record %llu exceeds the hold buffer "
			     "(%zu bytes); cannot verify it before release",
			     (unsigned long long)v->seg_first, v->hold.max);
	return err;
}

static int io_error(struct vstate *v, int err)
{
	mcpt_v_fatal(v, MCPT_E_IO, v->index, v->rd.pos, "read error at offset %llu: %s",
		     (unsigned long long)v->rd.pos, strerror(-err));
	return err;
}

/* Bytes [z, reader position) are zero. Skips further zeros: 1 and a zero tail when they run to
 * EOF and cover a 512-byte-aligned offset, 0 otherwise (a non-zero byte follows, or a short
 * unaligned run such as the last byte of a damaged frame that happens to be 00), -errno.
 * Crash zero-fill comes from sectors or blocks that were never written, so it always starts at
 * or before an aligned offset; requiring one keeps tampering from passing for a crash. */
static int zero_tail_from(struct vstate *v, uint64_t z, uint64_t frame_at)
{
	uint64_t skipped, aligned;
	int r = mcpt_reader_skip_zeros(&v->rd, &skipped);

	/* zeros from a frame boundary may have begun inside the frame before it, which still
	 * parsed (they fell in a bytes field or a varint): the run starts there */
	if (z == v->good_end && v->good_zeros)
		z -= v->good_zeros;
	aligned = (z + ZERO_TAIL_ALIGN - 1) & ~(uint64_t)(ZERO_TAIL_ALIGN - 1);

	if (r < 0)
		return io_error(v, r);
	if (r == 0 || aligned >= v->rd.pos)
		return 0;
	v->rep->zero_tail = true;
	v->rep->trailing_bytes = v->rd.pos - frame_at;
	v->zero_at = z;
	v->tail_at = frame_at;
	v->done = true;
	return 1;
}

int mcpt_v_zero_tail_after(struct vstate *v, struct vframe *f)
{
	size_t t = 0;
	int r;

	while (t < f->len && f->p[f->len - 1 - t] == 0)
		t++;
	if (t == 0)
		return 0;
	if (!f->consumed) {
		v->side.len = 0;
		if (mcpt_buf_reserve(&v->side, f->len))
			return io_error(v, -ENOMEM);
		memcpy(v->side.p, f->p, f->len);
		mcpt_reader_consume(&v->rd, f->len);
		f->p = v->side.p;
		f->consumed = true;
	}
	r = zero_tail_from(v, f->offset + f->len - t, f->offset);
	if (r == 0 && v->rd.pos > f->offset + f->len)
		v->pending_zero_at = f->offset + f->len + 1; /* the next frame starts with 00 */
	return r;
}

int mcpt_v_unpack_check(struct vstate *v, uint32_t type, const uint8_t *body, size_t len)
{
	const ProtobufCMessageDescriptor *d = mcpt_type_descriptor(type);
	ProtobufCMessage *m;

	v->parsed = NULL;
	if (!d)
		return 0; /* unknown types are counted, not parsed */
	/* A PathDef as a view of its bytes (their lifetime is the record's, as the parse's is:
	 * the callback has it now, a held record is parsed again when released) */
	if (type == MCPT_T_PATH_DEF && mcpt_unwire_path_def_view(len, body, &v->path_def)) {
		v->parsed = &v->path_def.base;
		return 0;
	}
	mcpt_arena_reset(&v->arena, mcpt_arena_budget(len));
	/* By hand (unwire.c for Events, unwire_flat.c for the flat types: the same result, much
	 * faster); what they decline by protobuf-c */
	m = type == MCPT_T_EVENT ? (ProtobufCMessage *)mcpt_unwire_event(&v->arena.pb, len, body)
				 : mcpt_unwire_flat(d, &v->arena.pb, len, body);
	if (!m)
		m = protobuf_c_message_unpack(d, &v->arena.pb, len, body);
	v->parsed = m; /* no free_unpacked: the next arena reset releases it all */
	return m ? 0 : -EBADMSG;
}

static int torn(struct vstate *v, uint64_t at)
{
	v->rep->truncated = true;
	v->rep->trailing_bytes = v->rd.pos + v->rd.len - at;
	v->tail_at = at;
	v->done = true;
	return 1;
}

/* A frame that begins with 00, a bad varint or a length out of bounds; examined bytes are
 * consumed (reading stops here either way). */
static int bad_prefix(struct vstate *v, uint64_t o, size_t k, size_t zeros, enum mcpt_code code,
		      const char *what)
{
	int r;

	mcpt_reader_consume(&v->rd, k);
	r = zero_tail_from(v, o + k - zeros, o);
	if (r)
		return r;
	mcpt_v_fatal(v, code, v->index, o, "%s at offset %llu", what, (unsigned long long)o);
	return 1;
}

/* The length prefix: 0 and *L / *vlen, or 1 when reading stops here. */
static int read_prefix(struct vstate *v, uint32_t cap, bool header, uint32_t *L, size_t *vlen)
{
	uint64_t o = v->rd.pos;
	const uint8_t *p;
	char what[120];
	ssize_t n;
	int err;

	n = mcpt_reader_fill(&v->rd, MCPT_MAGIC_LEN);
	if (n < 0)
		return io_error(v, (int)n);
	p = mcpt_reader_peek(&v->rd);
	if (n == 0) {
		v->done = true; /* clean EOF at a frame boundary */
		return 1;
	}
	if (p[0] == 0)
		return bad_prefix(v, o, 0, 0, MCPT_E_FRAME_LEN, "frame length 0");
	if (n >= MCPT_MAGIC_LEN && memcmp(p, MCPT_MAGIC, MCPT_MAGIC_LEN) == 0) {
		mcpt_v_fatal(v, MCPT_E_TRAILING, v->index, o,
			     "concatenated trace at offset %llu (a second preamble)",
			     (unsigned long long)o);
		return 1;
	}
	err = mcpt_uvarint_get(p, (size_t)n, L, vlen);
	if (err == -EAGAIN)
		return torn(v, o);
	if (err == -EINVAL) {
		size_t k = 0;

		while (p[k] & 0x80)
			k++;
		return bad_prefix(v, o, k + 1, 1, MCPT_E_FRAME_VARINT, "non-minimal length varint");
	}
	if (err)
		return bad_prefix(v, o, 0, 0, MCPT_E_FRAME_VARINT,
				  "length varint longer than 5 bytes or above 2^32-1");
	if (*L >= 2 && *L <= cap)
		return 0;
	snprintf(what, sizeof(what), "frame length %u %s %u", *L, *L < 2 ? "below" : "above",
		 *L < 2 ? 2 : cap);
	return bad_prefix(v, o, *vlen, 0, header && *L > cap ? MCPT_E_HEADER : MCPT_E_FRAME_LEN,
			  what);
}

/* Reads one whole frame into f (not consumed): 0, 1 when reading stops, -errno. */
static int read_frame(struct vstate *v, struct vframe *f, uint32_t cap, bool header)
{
	char why[120];
	uint32_t L;
	size_t vlen;
	ssize_t n;
	int r;

	if (v->pending_zero_at) {
		mcpt_v_fatal(v, MCPT_E_FRAME_LEN, v->index, v->pending_zero_at - 1,
			     "frame length 0 (zero bytes) at offset %llu",
			     (unsigned long long)v->pending_zero_at - 1);
		return 1;
	}
	r = read_prefix(v, cap, header, &L, &vlen);
	if (r)
		return r;
	n = mcpt_reader_fill(&v->rd, vlen + L);
	if (n < 0)
		return io_error(v, (int)n);
	if ((size_t)n < vlen + L)
		return torn(v, v->rd.pos);
	*f = (struct vframe){.p = mcpt_reader_peek(&v->rd),
			     .len = vlen + L,
			     .offset = v->rd.pos,
			     .index = v->index};
	if (mcpt_record_split(f->p + vlen, L, &f->rv, why, sizeof(why)) == 0) {
		f->rv.body_off += vlen;
		return 0;
	}
	r = mcpt_v_zero_tail_after(v, f);
	if (r)
		return r;
	mcpt_v_fatal(v, MCPT_E_FRAME_STRUCT, f->index, f->offset,
		     "malformed record at offset %llu: %s", (unsigned long long)f->offset, why);
	return 1;
}

static const char undeclared_ts_delta[] =
	"ts_delta in a trace whose header does not declare timestamp deltas "
	"(incompatible_features bit 2)";

/* Why a record uses a table (or ts_delta) its Header does not declare, or NULL. */
static const char *undeclared(uint64_t features, uint32_t type, const ProtobufCMessage *m)
{
	const Mcpt__Event *e = (const Mcpt__Event *)m;
	bool ev = type == MCPT_T_EVENT && m && m->descriptor == &mcpt__event__descriptor;

	if (!(features & MCPT_FEAT_VALUE_TABLE)) {
		if (type == MCPT_T_PATH_DEF)
			return "PathDef in a trace whose header does not declare the value table "
			       "(incompatible_features bit 0)";
		if (ev && (e->path_ref | e->abs_path_ref | e->opened_path_ref | e->data_ref |
			   e->path2_ref | e->abs_path2_ref | e->data2_ref))
			return "value reference in a trace whose header does not declare the value "
			       "table (incompatible_features bit 0)";
	}
	if (!(features & MCPT_FEAT_TASK_TABLE)) {
		if (type == MCPT_T_TASK_DEF)
			return "TaskDef in a trace whose header does not declare the task table "
			       "(incompatible_features bit 1)";
		if (ev && e->task_ref)
			return "task reference in a trace whose header does not declare the task "
			       "table (incompatible_features bit 1)";
	}
	if (!(features & MCPT_FEAT_TS_DELTA) && ev && e->ts_delta)
		return undeclared_ts_delta;
	if (!(features & MCPT_FEAT_FORK_TASK) && ev && e->child_task)
		return "child_task in a trace whose header does not declare fork tasks "
		       "(incompatible_features bit 3)";
	return NULL;
}

/* Widens the segment's Event time range by the Event just resolved (its seal must cover it). */
static void note_event_ts(struct vstate *v)
{
	uint64_t ts = mcpt_valtab__last_ts(v->vt);

	if (!ts)
		return;
	if (!v->seg_ev_min || ts < v->seg_ev_min)
		v->seg_ev_min = ts;
	if (ts > v->seg_ev_max)
		v->seg_ev_max = ts;
}

/* The first bad reference of the segment makes it BAD when its seal is checked. */
static void ref_error(struct vstate *v, uint64_t index, const char *why)
{
	if (v->seg_ref_err)
		return;
	v->seg_ref_err = index + 1;
	snprintf(v->seg_ref_why, sizeof(v->seg_ref_why), "record %llu: %s",
		 (unsigned long long)index, why);
}

/* The value and task tables: definitions and references of the chunk (valtab.c), resolved in
 * m, the record of that index. false when they do not resolve. */
static bool check_refs(struct vstate *v, uint64_t index, uint32_t type, ProtobufCMessage *m)
{
	const char *undecl = undeclared(v->features, type, m);
	char why[120];

	if (undecl)
		ref_error(v, index, undecl);
	else if (mcpt_valtab__feed(v->vt, v->chunk_seq, (enum mcpt_type)type, m, why, sizeof(why)))
		ref_error(v, index, why);
	else {
		if (type == MCPT_T_EVENT)
			note_event_ts(v);
		return true;
	}
	return false;
}

/* The chunk a data record falls in: a new one when the open chunk is empty. */
static void enter_chunk(struct vstate *v)
{
	if (v->seg.chunk_n == 0)
		v->chunk_seq++;
}

/* An Event the caller does not want (opts.want_event): hashed and counted, its clock kept,
 * nothing else. false when it is to be read like any other record (wanted, not an Event, a
 * fork that may define its child's task, or one the hand decoder declines: protobuf-c judges
 * it then). */
static bool skip_event(struct vstate *v, const struct vframe *f)
{
	struct mcpt_event_head h;
	char why[120];

	if (f->rv.type != MCPT_T_EVENT || !v->opts.want_event ||
	    !mcpt_unwire_event_head(f->rv.body_len, f->p + f->rv.body_off, &h) ||
	    (h.op == MCPT__OP__OP_FORK && (v->features & MCPT_FEAT_FORK_TASK)) ||
	    v->opts.want_event(v->opts.want_ctx, h.op))
		return false;
	enter_chunk(v);
	if (h.ts_delta && !(v->features & MCPT_FEAT_TS_DELTA))
		ref_error(v, f->index, undeclared_ts_delta);
	else if (mcpt_valtab__clock(v->vt, v->chunk_seq, h.ts, h.ts_delta, why, sizeof(why)))
		ref_error(v, f->index, why);
	else
		note_event_ts(v);
	mcpt_segment_add(&v->seg, f->p, f->len);
	return true;
}

static int data_record(struct vstate *v, struct vframe *f)
{
	uint32_t type = f->rv.type;
	int r;

	if (skip_event(v, f))
		return 0;
	if (mcpt_v_unpack_check(v, type, f->p + f->rv.body_off, f->rv.body_len)) {
		r = mcpt_v_zero_tail_after(v, f);
		if (r)
			return r;
		if (!v->seg_parse_err)
			v->seg_parse_err = f->index + 1;
	}
	if (!mcpt_type_descriptor(type)) {
		if (!v->rep->unknown_types++) {
			v->first_unknown = type;
			v->first_unknown_at = f->index;
		}
	}
	enter_chunk(v);
	if (v->parsed && !check_refs(v, f->index, type, (ProtobufCMessage *)v->parsed))
		v->parsed = NULL; /* not handed over half resolved */
	mcpt_segment_add(&v->seg, f->p, f->len);
	/* a caller that wants only some Events has their values: PathDefs only feed the table */
	if (type == MCPT_T_PATH_DEF && v->opts.want_event)
		return 0;
	v->offer_msg = v->parsed; /* delivered now (not held): the callback may use it */
	v->offer_chunk = v->chunk_seq;
	r = mcpt_v_offer(v, f);
	v->offer_msg = NULL;
	v->offer_chunk = 0;
	return r;
}

/* Anything after a FINAL seal is E_TRAILING; say what it looks like. Zeros right after the
 * FINAL frame may have been skipped already (pending_zero_at, see mcpt_v_zero_tail_after). */
static int after_final(struct vstate *v)
{
	uint64_t o = v->pending_zero_at ? v->pending_zero_at - 1 : v->rd.pos, n = 0;
	ssize_t have = mcpt_reader_fill(&v->rd, MCPT_MAGIC_LEN);
	bool magic, zero;
	int err;

	if (have < 0)
		return io_error(v, (int)have);
	v->done = true;
	if (have == 0 && v->rd.pos == o)
		return 0;
	magic = v->rd.pos == o && have >= MCPT_MAGIC_LEN &&
		memcmp(mcpt_reader_peek(&v->rd), MCPT_MAGIC, MCPT_MAGIC_LEN) == 0;
	err = mcpt_reader_drain(&v->rd, &n, &zero);
	if (err)
		return io_error(v, err);
	n = v->rd.pos - o;
	v->rep->trailing_bytes = n;
	if (magic)
		mcpt_v_fatal(v, MCPT_E_TRAILING, v->index, o,
			     "concatenated trace at offset %llu after the FINAL seal",
			     (unsigned long long)o);
	else
		mcpt_v_fatal(v, MCPT_E_TRAILING, v->index, o,
			     "%llu %sbytes after the FINAL seal, from offset %llu",
			     (unsigned long long)n, zero ? "zero " : "", (unsigned long long)o);
	return 0;
}

/* One frame after the header. */
static int step(struct vstate *v)
{
	struct vframe f;
	size_t zeros;
	int r;

	if (v->rep->final)
		return after_final(v);
	r = read_frame(v, &f, v->max_record_len, false);
	if (r)
		return r < 0 ? r : 0;
	if (f.rv.type == MCPT_T_HEADER) {
		mcpt_v_fatal(v, MCPT_E_HEADER, f.index, f.offset, "a second Header at record %llu",
			     (unsigned long long)f.index);
		return 0;
	}
	r = f.rv.type == MCPT_T_SEAL ? mcpt_v_seal(v, &f) : data_record(v, &f);
	zeros = 0;
	while (zeros < f.len && f.p[f.len - 1 - zeros] == 0)
		zeros++;
	if (!f.consumed)
		mcpt_reader_consume(&v->rd, f.len);
	if (r)
		return r < 0 ? r : 0;
	v->index++;
	v->good_end = f.offset + f.len;
	v->good_zeros = (uint32_t)zeros;
	return 0;
}

static int preamble(struct vstate *v)
{
	ssize_t n = mcpt_reader_fill(&v->rd, MCPT_PREAMBLE_LEN);
	enum mcpt_code code;
	char msg[160];

	if (n < 0)
		return io_error(v, (int)n);
	if (n > MCPT_PREAMBLE_LEN)
		n = MCPT_PREAMBLE_LEN;
	code = mcpt_preamble_check(mcpt_reader_peek(&v->rd), (size_t)n, msg, sizeof(msg));
	if (code == MCPT_OK) {
		memcpy(v->preamble, mcpt_reader_peek(&v->rd), MCPT_PREAMBLE_LEN);
		mcpt_reader_consume(&v->rd, MCPT_PREAMBLE_LEN);
		v->good_end = MCPT_PREAMBLE_LEN;
		return 0;
	}
	if (code == MCPT_E_TRUNCATED) {
		v->rep->truncated = true;
		v->rep->trailing_bytes = (uint64_t)n;
		v->done = true;
		return 0;
	}
	mcpt_v_fatal(v, code, 0, 0, "%s", msg);
	return 0;
}

static int run(struct vstate *v)
{
	struct vframe f;
	int r;

	r = preamble(v);
	if (r || v->done)
		return r;
	r = read_frame(v, &f, MCPT_HEADER_MAX, true);
	if (r)
		return r < 0 ? r : 0;
	r = mcpt_v_header(v, &f, true);
	if (!f.consumed)
		mcpt_reader_consume(&v->rd, f.len);
	if (r)
		return r < 0 ? r : 0;
	v->index = 1;
	v->good_end = f.offset + f.len;
	while (!v->done) {
		r = step(v);
		if (r)
			return r;
	}
	return 0;
}

static int vstate_init(struct vstate *v, const struct mcpt_verify_opts *opts, int fd)
{
	int err;

	if (opts)
		v->opts = *opts;
	if (!v->opts.hold_max_bytes)
		v->opts.hold_max_bytes = MCPT_HOLD_DEFAULT;
	if (!v->opts.max_empty_seals)
		v->opts.max_empty_seals = MCPT_EMPTY_SEALS_MAX;
	if (!v->opts.max_bad_segments)
		v->opts.max_bad_segments = MCPT_BAD_SEGMENTS_MAX;
	mcpt_arena_init(&v->arena);
	mcpt_hold_init(&v->hold, v->opts.hold_max_bytes);
	v->contiguous = true;
	v->vt = mcpt_valtab__new();
	if (!v->vt)
		return -ENOMEM;
	err = mcpt_reader_init(&v->rd, fd);
	if (err)
		return err;
	v->rd.on_read = v->opts.on_read;
	v->rd.on_read_ctx = v->opts.on_read_ctx;
	return 0;
}

static void vstate_fini(struct vstate *v)
{
	mcpt_reader_fini(&v->rd);
	mcpt_arena_fini(&v->arena);
	mcpt_buf_free(&v->scratch);
	mcpt_buf_free(&v->pae);
	mcpt_buf_free(&v->side);
	mcpt_hold_fini(&v->hold);
	mcpt_valtab__free(v->vt);
	free(v);
}

int mcpt_verify(int fd, const struct mcpt_verify_opts *opts, mcpt_record_cb cb, void *ctx,
		struct mcpt_report *rep)
{
	Mcpt__LossTotals zero = MCPT__LOSS_TOTALS__INIT;
	struct vstate *v;
	int err;

	if (!rep || (opts && opts->skim && opts->key))
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	rep->loss = zero;
	if (fd < 0)
		return -EBADF;
	if (sodium_init() < 0)
		return -EIO;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->rep = rep;
	v->cb = cb;
	v->ctx = ctx;
	err = vstate_init(v, opts, fd);
	if (err)
		io_error(v, err);
	else
		err = run(v);
	mcpt_v_finish(v);
	if (!err)
		err = v->cb_ret;
	vstate_fini(v);
	return err;
}
