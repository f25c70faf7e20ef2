/*
 * unwire.c - a hand-written decoder of the Event record, the reader's counterpart of the
 * collector's packer (collector/wire.c). protobuf-c's generic unpack walks the message
 * descriptor for every field of every record and was the largest single cost of verify and
 * analyze (both read every Event strictly, see verify.c).
 *
 * It decodes what writers write: fields 1..31 each at most once, with their own wire types,
 * args packed. For those it gives exactly the message protobuf-c's unpack gives (same values,
 * including protobuf-c's truncation of over-long varints to the field's width; byte strings
 * copied, NULL when empty; the same allocator). Anything else (an unknown or repeated field, a
 * wrong wire type, a bad varint or length, args not packed...) it declines without allocating
 * anything, and the caller hands the record to protobuf-c, which accepts or rejects it as it
 * always did. So the set of accepted records and their decoding do not change;
 * test/unit/check_unwire.c holds it to that on random, edge-case and damaged records.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unwire_int.h"

#define EV_FIELDS 31 /* Event's highest field number (seen is a 32-bit mask) */

/* Where each field's value lies in the record, before anything is allocated. */
struct scan {
	uint64_t num[EV_FIELDS + 1];	  /* varint fields */
	const uint8_t *at[EV_FIELDS + 1]; /* length-delimited fields: bytes, args */
	size_t len[EV_FIELDS + 1];
	uint32_t seen;
};

/* Wire type of each field number: 0 varint, 2 length-delimited (bytes, packed args): fields
 * 8, 9, 10 (paths), 13 (args), 14 (data) and 18..21; every other field 1..31 is a varint. */
#define WT_OF(f) ((f) == 8 || (f) == 9 || (f) == 10 || (f) == 13 || (f) == 14 || \
		  ((f) >= 18 && (f) <= 21) ? 2u : 0u)

/* The field a tag names, by its value v = (field << 3 | wire type) of 0..255 (a tag of one
 * byte, or of two bytes whose second is 0 or 1): the field when 1..EV_FIELDS with its own
 * wire type, else 0 (declined). */
#define TAG_FIELD(v) ((v) >> 3 >= 1 && ((v) & 7) == WT_OF((v) >> 3) ? (uint8_t)((v) >> 3) : 0)
#define TAG8(v)                                                                                   \
	TAG_FIELD(v), TAG_FIELD((v) + 1), TAG_FIELD((v) + 2), TAG_FIELD((v) + 3),                \
		TAG_FIELD((v) + 4), TAG_FIELD((v) + 5), TAG_FIELD((v) + 6), TAG_FIELD((v) + 7)
#define TAG64(v) TAG8(v), TAG8((v) + 8), TAG8((v) + 16), TAG8((v) + 24), TAG8((v) + 32), \
		 TAG8((v) + 40), TAG8((v) + 48), TAG8((v) + 56)
static const uint8_t tag_field[256] = {TAG64(0), TAG64(64), TAG64(128), TAG64(192)};
_Static_assert(EV_FIELDS == 31, "tag_field covers fields 1..31");

/* protobuf-c's length prefix: at most 5 bytes, at most INT_MAX, within the data. */
static size_t delimited(const uint8_t *p, size_t n, size_t *len)
{
	uint64_t v;
	size_t k = mcpt_uw_varint(p, n < 5 ? n : 5, &v);

	if (!k || v > INT_MAX || v > n - k)
		return 0;
	*len = (size_t)v;
	return k;
}

/* Fills s from the record; false for anything this decoder declines. One-byte tags, varints
 * and length prefixes, nearly every field of a writer's record, take the short way. */
static bool scan(struct scan *s, const uint8_t *p, size_t n)
{
	size_t off = 0, k, len;
	unsigned v, f;
	uint32_t seen = 0;

	while (off < n) {
		v = p[off];
		if (v < 0x80) {
			off++;
		} else if (n - off >= 2 && p[off + 1] <= 1) { /* two bytes: fields up to 31 */
			v = (v & 0x7f) | (unsigned)p[off + 1] << 7;
			off += 2;
		} else {
			return false; /* a longer tag, or a field past 31 */
		}
		f = tag_field[v];
		if (!f || (seen & (1u << f)))
			return false;
		seen |= 1u << f;
		if (!(v & 7)) { /* a varint */
			if (off < n && p[off] < 0x80) {
				s->num[f] = p[off++];
				continue;
			}
			/* a longer bool is protobuf-c's to judge (bits past 64) */
			k = f == 31 ? 0 : mcpt_uw_varint(p + off, n - off, &s->num[f]);
			if (!k)
				return false;
			off += k;
			continue;
		}
		if (off < n && p[off] < 0x80) { /* a one-byte length prefix */
			len = p[off++];
			if (len > n - off)
				return false;
		} else {
			k = delimited(p + off, n - off, &len);
			if (!k)
				return false;
			off += k;
		}
		s->len[f] = len;
		s->at[f] = p + off;
		off += len;
	}
	s->seen = seen;
	return true;
}

/* The packed args: the number of varints, or -1 when one is bad (protobuf-c refuses those). */
static ssize_t args_count(const uint8_t *p, size_t n)
{
	ssize_t c = 0;
	uint64_t v;
	size_t k;

	for (size_t off = 0; off < n; off += k, c++)
		if (!(k = mcpt_uw_varint(p + off, n - off, &v)))
			return -1;
	return c;
}

/* A byte string as protobuf-c keeps it: a copy, NULL when empty. */
static bool copy_bytes(ProtobufCAllocator *a, const struct scan *s, unsigned f,
		       ProtobufCBinaryData *out)
{
	out->len = s->seen & (1u << f) ? s->len[f] : 0;
	out->data = NULL;
	if (!out->len)
		return true;
	out->data = mcpt_uw_alloc(a, out->len);
	if (!out->data)
		return false;
	memcpy(out->data, s->at[f], out->len);
	return true;
}

static bool fill_args(ProtobufCAllocator *a, const struct scan *s, size_t count, Mcpt__Event *e)
{
	const uint8_t *p = s->at[13];
	uint64_t v = 0;

	if (!count)
		return true;
	e->args = mcpt_uw_alloc(a, count * sizeof(*e->args));
	if (!e->args)
		return false;
	for (size_t off = 0; e->n_args < count; e->n_args++) {
		off += mcpt_uw_varint(p + off, s->len[13] - off, &v);
		e->args[e->n_args] = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	}
	return true;
}

static void fill_numbers(const struct scan *s, Mcpt__Event *e)
{
	e->seq = s->num[1];
	e->ts = s->num[2];
	e->pid = (uint32_t)s->num[3];
	e->tid = (uint32_t)s->num[4];
	e->op = (Mcpt__Op)(int32_t)(uint32_t)s->num[5];
	e->ret = (int64_t)(s->num[6] >> 1) ^ -(int64_t)(s->num[6] & 1);
	e->flags = (uint32_t)s->num[7];
	e->dev = s->num[11];
	e->ino = s->num[12];
	e->pstart = s->num[15];
	e->uid = (uint32_t)s->num[16];
	e->gid = (uint32_t)s->num[17];
	e->path_ref = (uint32_t)s->num[22];
	e->abs_path_ref = (uint32_t)s->num[23];
	e->opened_path_ref = (uint32_t)s->num[24];
	e->data_ref = (uint32_t)s->num[25];
	e->path2_ref = (uint32_t)s->num[26];
	e->abs_path2_ref = (uint32_t)s->num[27];
	e->data2_ref = (uint32_t)s->num[28];
	e->task_ref = (uint32_t)s->num[29];
	e->ts_delta = (int64_t)(s->num[30] >> 1) ^ -(int64_t)(s->num[30] & 1);
	e->child_task = s->num[31] != 0;
}

bool mcpt_unwire_event_head(size_t len, const uint8_t *data, struct mcpt_event_head *out)
{
	struct scan s;

	memset(s.num, 0, sizeof(s.num));
	if (!scan(&s, data, len))
		return false;
	if ((s.seen & (1u << 13)) && args_count(s.at[13], s.len[13]) < 0)
		return false;
	out->op = (uint32_t)s.num[5];
	out->ts = s.num[2];
	out->ts_delta = (int64_t)(s.num[30] >> 1) ^ -(int64_t)(s.num[30] & 1);
	return true;
}

Mcpt__Event *mcpt_unwire_event(ProtobufCAllocator *a, size_t len, const uint8_t *data)
{
	static const unsigned bytes_fields[] = {8, 9, 10, 14, 18, 19, 20, 21};
	struct scan s;
	ProtobufCBinaryData *b[8];
	Mcpt__Event *e;
	ssize_t count = 0;

	memset(s.num, 0, sizeof(s.num));
	if (!scan(&s, data, len))
		return NULL;
	if ((s.seen & (1u << 13)) && (count = args_count(s.at[13], s.len[13])) < 0)
		return NULL;
	e = mcpt_uw_alloc(a, sizeof(*e));
	if (!e)
		return NULL;
	mcpt__event__init(e);
	fill_numbers(&s, e);
	b[0] = &e->path, b[1] = &e->abs_path, b[2] = &e->opened_path, b[3] = &e->data;
	b[4] = &e->path2, b[5] = &e->abs_path2, b[6] = &e->data2, b[7] = &e->payload;
	for (size_t i = 0; i < 8; i++)
		if (!copy_bytes(a, &s, bytes_fields[i], b[i]))
			goto nomem;
	if (!fill_args(a, &s, (size_t)count, e))
		goto nomem;
	return e;
nomem:
	/* freed as protobuf-c frees its own messages (NULL members are skipped) */
	for (size_t i = 0; i < 8; i++)
		if (b[i]->data)
			mcpt_uw_release(a, b[i]->data);
	if (e->args)
		mcpt_uw_release(a, e->args);
	mcpt_uw_release(a, e);
	return NULL;
}
