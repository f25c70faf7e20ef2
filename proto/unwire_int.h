/*
 * unwire_int.h - the pieces the hand-written decoders share (unwire.c for Events,
 * unwire_flat.c for the flat record types): protobuf-c's varint scan and its allocator
 * convention. Private to the library.
 */
#ifndef MCPT_UNWIRE_INT_H
#define MCPT_UNWIRE_INT_H

#include <stdint.h>
#include <stdlib.h>

#include <protobuf-c/protobuf-c.h>

/* protobuf-c's scan_varint and parse_uint64: at most 10 bytes, bits past 64 dropped. Returns
 * the length, 0 for a varint not ended within 10 bytes or the data. */
static inline size_t mcpt_uw_varint(const uint8_t *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t max = n < 10 ? n : 10;

	if (n && p[0] < 0x80) { /* most fields: one byte */
		*out = p[0];
		return 1;
	}
	for (size_t i = 0; i < max; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*out = v;
			return i + 1;
		}
	}
	return 0;
}

/* A tag of one or two bytes (fields up to 2047): its length, 0 for a longer one (declined:
 * writers do not make them). *field and *wt are set when it returns non-zero. */
static inline size_t mcpt_uw_tag(const uint8_t *p, size_t n, unsigned *field, unsigned *wt)
{
	unsigned v;
	size_t k;

	*field = 0;
	if (p[0] < 0x80) {
		v = p[0];
		k = 1;
	} else if (n >= 2 && p[1] < 0x80) {
		v = (p[0] & 0x7fu) | (unsigned)p[1] << 7;
		k = 2;
	} else {
		return 0;
	}
	*field = v >> 3;
	*wt = v & 7;
	return k;
}

/* protobuf-c's allocation: the given allocator, or malloc/free for NULL. */
static inline void *mcpt_uw_alloc(ProtobufCAllocator *a, size_t size)
{
	return a ? a->alloc(a->allocator_data, size) : malloc(size);
}

static inline void mcpt_uw_release(ProtobufCAllocator *a, void *p)
{
	if (a)
		a->free(a->allocator_data, p);
	else
		free(p);
}

#endif /* MCPT_UNWIRE_INT_H */
