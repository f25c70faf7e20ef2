/*
 * wire.c - hand-written protobuf encoder for Event and StdioFrame (see wire.h).
 *
 * Field numbers and types are those of proto/trace.proto; a change there needs a change here
 * (the byte-equality test against protobuf-c fails otherwise).
 */
#include <string.h>

#include "wire.h"

#define VARINT_MAX 10
#define WT_VARINT  0
#define WT_LEN	   2

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A tag of a field numbered below 2048 (every field here). */
static inline uint8_t *put_tag(uint8_t *p, uint32_t field, uint32_t wt)
{
	return put_varint(p, (uint64_t)(field << 3 | wt));
}

static inline uint8_t *put_u64(uint8_t *p, uint32_t field, uint64_t v)
{
	if (!v)
		return p;
	p = put_tag(p, field, WT_VARINT);
	return put_varint(p, v);
}

/* int32/enum: negative values are sign-extended to 64 bits, as protobuf-c does. */
static inline uint8_t *put_i32(uint8_t *p, uint32_t field, int32_t v)
{
	return put_u64(p, field, (uint64_t)(int64_t)v);
}

static inline uint8_t *put_bytes(uint8_t *p, uint32_t field, const ProtobufCBinaryData *b)
{
	if (!b->len)
		return p;
	p = put_tag(p, field, WT_LEN);
	p = put_varint(p, b->len);
	memcpy(p, b->data, b->len);
	return p + b->len;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t wire_event_max(const Mcpt__Event *e)
{
	/* 31 fields of at most a 2-byte tag and a 10-byte varint, plus the byte strings and
	 * the packed arguments (10 bytes each) */
	return 31 * (2 + VARINT_MAX) + e->path.len + e->abs_path.len + e->opened_path.len +
	       e->data.len + e->path2.len + e->abs_path2.len + e->data2.len + e->payload.len +
	       e->n_args * VARINT_MAX;
}

size_t wire_event_pack(const Mcpt__Event *e, uint8_t *out)
{
	uint8_t *p = out;
	size_t i, alen = 0;

	p = put_u64(p, 1, e->seq);
	p = put_u64(p, 2, e->ts);
	p = put_u64(p, 3, e->pid);
	p = put_u64(p, 4, e->tid);
	p = put_i32(p, 5, (int32_t)e->op);
	if (e->ret)
		p = put_varint(put_tag(p, 6, WT_VARINT), zigzag(e->ret));
	p = put_u64(p, 7, e->flags);
	p = put_bytes(p, 8, &e->path);
	p = put_bytes(p, 9, &e->abs_path);
	p = put_bytes(p, 10, &e->opened_path);
	p = put_u64(p, 11, e->dev);
	p = put_u64(p, 12, e->ino);
	if (e->n_args) {
		for (i = 0; i < e->n_args; i++)
			alen += varint_len(zigzag(e->args[i]));
		p = put_varint(put_tag(p, 13, WT_LEN), alen);
		for (i = 0; i < e->n_args; i++)
			p = put_varint(p, zigzag(e->args[i]));
	}
	p = put_bytes(p, 14, &e->data);
	p = put_u64(p, 15, e->pstart);
	p = put_u64(p, 16, e->uid);
	p = put_u64(p, 17, e->gid);
	p = put_bytes(p, 18, &e->path2);
	p = put_bytes(p, 19, &e->abs_path2);
	p = put_bytes(p, 20, &e->data2);
	p = put_bytes(p, 21, &e->payload);
	p = put_u64(p, 22, e->path_ref);
	p = put_u64(p, 23, e->abs_path_ref);
	p = put_u64(p, 24, e->opened_path_ref);
	p = put_u64(p, 25, e->data_ref);
	p = put_u64(p, 26, e->path2_ref);
	p = put_u64(p, 27, e->abs_path2_ref);
	p = put_u64(p, 28, e->data2_ref);
	p = put_u64(p, 29, e->task_ref);
	if (e->ts_delta)
		p = put_varint(put_tag(p, 30, WT_VARINT), zigzag(e->ts_delta));
	p = put_u64(p, 31, e->child_task);
	return (size_t)(p - out);
}

size_t wire_stdio_max(const Mcpt__StdioFrame *f)
{
	return 13 * (1 + VARINT_MAX) + f->data.len;
}

size_t wire_stdio_pack(const Mcpt__StdioFrame *f, uint8_t *out)
{
	uint8_t *p = out;

	p = put_u64(p, 1, f->ts);
	p = put_u64(p, 2, f->pid);
	p = put_u64(p, 3, f->tid);
	if (f->fd)
		p = put_varint(put_tag(p, 4, WT_VARINT), zigzag(f->fd));
	p = put_i32(p, 5, (int32_t)f->dir);
	p = put_u64(p, 6, f->stream_offset);
	p = put_bytes(p, 7, &f->data);
	p = put_u64(p, 8, f->orig_len);
	p = put_u64(p, 9, f->chunk);
	p = put_u64(p, 10, f->last ? 1 : 0);
	p = put_u64(p, 11, f->seq);
	p = put_u64(p, 12, f->flags);
	p = put_u64(p, 13, f->gap_len);
	return (size_t)(p - out);
}
