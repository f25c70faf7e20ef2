/*
 * unwire_flat.c - a hand-written decoder for the flat record types (PathDef, TaskDef,
 * StdioFrame and any other message whose fields are all plain scalars or bytes), driven by
 * the message's own protobuf-c descriptor. PathDef records can be as many as the Events in a
 * trace whose paths rarely repeat within a chunk, and StdioFrame carries the channel; the
 * generic unpack of protobuf-c was the largest cost of reading them.
 *
 * As unwire.c does for Events, it decodes what writers write, each field at most once with
 * its own wire type, to exactly the message protobuf-c's unpack gives (its truncation of
 * varints to the field's width, its zigzag, its reading of a bool as "any value bit set",
 * byte strings copied and NULL when empty, the same allocator), and declines everything else
 * without allocating: an unknown or repeated field, a wrong wire type, a bad varint or length,
 * a message with a string, sub-message, repeated, optional-with-presence or oneof field. The
 * caller then hands the record to protobuf-c. test/unit/check_unwire.c and the fuzz target
 * fuzz_unwire hold it to that.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unwire_int.h"

#define FLAT_FIELDS 16 /* the highest field number handled (a 32-bit "seen" mask suffices) */

/* protobuf-c's parse_boolean: true when any of the value bits is set, however far. */
static protobuf_c_boolean varint_bool(const uint8_t *p, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (p[i] & 0x7f)
			return 1;
	return 0;
}

static uint64_t le_bytes(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The wire type a field of this type takes, or -1 for a type this decoder does not handle. */
static int wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return 0;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_BYTES:
		return 2;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	default: /* strings (protobuf-c's empty-string default), messages */
		return -1;
	}
}

/* Field number f of d when d is flat and numbers its fields 1..n in order, else NULL. */
static const ProtobufCFieldDescriptor *flat_field(const ProtobufCMessageDescriptor *d, unsigned f)
{
	const ProtobufCFieldDescriptor *fd;

	if (f < 1 || f > d->n_fields || f > FLAT_FIELDS)
		return NULL;
	fd = &d->fields[f - 1];
	if (fd->id != f || fd->label != PROTOBUF_C_LABEL_NONE || fd->quantifier_offset ||
	    (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) || wire_type_of(fd->type) < 0)
		return NULL;
	return fd;
}

/* Where each field lies, before anything is allocated. */
struct flat_scan {
	uint64_t num[FLAT_FIELDS + 1];	    /* varints, decoded */
	const uint8_t *at[FLAT_FIELDS + 1]; /* raw bytes: the varint, fixed width or bytes */
	size_t len[FLAT_FIELDS + 1];
	uint32_t seen;
};

/* Scalar field f of s where protobuf-c puts it in m. */
static void store_scalar(const ProtobufCFieldDescriptor *fd, void *m, const struct flat_scan *s,
			 unsigned f)
{
	char *at = (char *)m + fd->offset;
	const uint8_t *v = s->at[f];
	size_t k = s->len[f];
	uint64_t u;
	uint32_t u32;

	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_ENUM:
		*(int32_t *)(void *)at = (int32_t)(uint32_t)s->num[f];
		break;
	case PROTOBUF_C_TYPE_UINT32:
		*(uint32_t *)(void *)at = (uint32_t)s->num[f];
		break;
	case PROTOBUF_C_TYPE_SINT32:
		u32 = (uint32_t)s->num[f];
		*(int32_t *)(void *)at = (int32_t)(u32 >> 1) ^ -(int32_t)(u32 & 1);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
		*(uint64_t *)(void *)at = s->num[f];
		break;
	case PROTOBUF_C_TYPE_SINT64:
		u = s->num[f];
		*(int64_t *)(void *)at = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)(void *)at = varint_bool(v, k);
		break;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		u = le_bytes(v, 8);
		memcpy(at, &u, 8);
		break;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		u32 = (uint32_t)le_bytes(v, 4);
		memcpy(at, &u32, 4);
		break;
	default:
		break;
	}
}


/* The value of a field of wire type wt at p: its extent into s. Returns the bytes it takes,
 * 0 when malformed. */
static size_t value(struct flat_scan *s, unsigned f, unsigned wt, const uint8_t *p, size_t n)
{
	size_t k;
	uint64_t L;

	switch (wt) {
	case 0:
		k = mcpt_uw_varint(p, n, &s->num[f]);
		s->at[f] = p;
		s->len[f] = k;
		return k;
	case 1:
	case 5:
		k = wt == 1 ? 8 : 4;
		if (n < k)
			return 0;
		s->at[f] = p;
		s->len[f] = k;
		return k;
	default: /* 2: protobuf-c's length prefix, at most 5 bytes and INT_MAX */
		k = mcpt_uw_varint(p, n < 5 ? n : 5, &L);
		if (!k || L > INT_MAX || L > n - k)
			return 0;
		s->at[f] = p + k;
		s->len[f] = (size_t)L;
		return k + (size_t)L;
	}
}

static bool scan(const ProtobufCMessageDescriptor *d, struct flat_scan *s, const uint8_t *p,
		 size_t n)
{
	const ProtobufCFieldDescriptor *fd;
	size_t off = 0, k;
	unsigned f, wt;

	s->seen = 0;
	while (off < n) {
		k = mcpt_uw_tag(p + off, n - off, &f, &wt);
		if (!k || !(fd = flat_field(d, f)) || (int)wt != wire_type_of(fd->type) ||
		    (s->seen & (1u << f)))
			return false;
		s->seen |= 1u << f;
		off += k;
		k = value(s, f, wt, p + off, n - off);
		if (!k)
			return false;
		off += k;
	}
	return true;
}

bool mcpt_unwire_path_def_view(size_t len, const uint8_t *data, Mcpt__PathDef *out)
{
	uint64_t id, vlen;
	size_t k, off = 0;

	mcpt__path_def__init(out);
	if (len < 2 || data[0] != 0x08) /* field 1, varint */
		return false;
	off = 1;
	k = mcpt_uw_varint(data + off, len - off, &id);
	if (!k)
		return false;
	off += k;
	if (off >= len || data[off] != 0x12) /* field 2, length-delimited */
		return false;
	off++;
	k = mcpt_uw_varint(data + off, len - off < 5 ? len - off : 5, &vlen);
	if (!k || vlen > INT_MAX || vlen != len - off - k)
		return false;
	out->id = (uint32_t)id;
	out->value.len = (size_t)vlen;
	out->value.data = vlen ? (uint8_t *)data + off + k : NULL;
	return true;
}

ProtobufCMessage *mcpt_unwire_flat(const ProtobufCMessageDescriptor *d, ProtobufCAllocator *a,
				   size_t len, const uint8_t *data)
{
	struct flat_scan s;
	ProtobufCMessage *m;
	ProtobufCBinaryData *b;
	unsigned f, copied = 0;

	if (!scan(d, &s, data, len))
		return NULL;
	m = mcpt_uw_alloc(a, d->sizeof_message);
	if (!m)
		return NULL;
	d->message_init(m);
	for (uint32_t left = s.seen; left; left &= left - 1) {
		const ProtobufCFieldDescriptor *fd;

		f = (unsigned)__builtin_ctz(left);
		fd = &d->fields[f - 1];
		if (fd->type != PROTOBUF_C_TYPE_BYTES) {
			store_scalar(fd, m, &s, f);
			continue;
		}
		b = (ProtobufCBinaryData *)(void *)((char *)m + fd->offset);
		b->len = s.len[f];
		b->data = NULL;
		if (!b->len)
			continue;
		b->data = mcpt_uw_alloc(a, b->len);
		if (!b->data)
			goto nomem;
		memcpy(b->data, s.at[f], b->len);
		copied |= 1u << f;
	}
	return m;
nomem:
	for (f = 1; f <= FLAT_FIELDS; f++)
		if (copied & (1u << f))
			mcpt_uw_release(a,
					((ProtobufCBinaryData *)(void *)((char *)m +
									 d->fields[f - 1].offset))
						->data);
	mcpt_uw_release(a, m);
	return NULL;
}
