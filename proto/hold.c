/*
 * hold.c - verify-before-release (TRACE-FORMAT.md 4.11, signify -z behaviour): the records of
 * the open segment (the Header included, for segment 0) are copied aside and handed to the
 * callback only once the segment's seal verified, or dropped when it did not. Memory is one
 * segment, bounded by hold.max (frames plus the per-record index); a larger segment stops the
 * verifier with -ENOBUFS rather than growing without limit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

void mcpt_hold_init(struct hold *h, size_t max)
{
	memset(h, 0, sizeof(*h));
	h->max = max;
}

void mcpt_hold_fini(struct hold *h)
{
	mcpt_buf_free(&h->bytes);
	free(h->recs);
	h->recs = NULL;
	h->n = h->cap = 0;
}

void mcpt_hold_drop(struct hold *h)
{
	h->bytes.len = 0;
	h->n = 0;
}

int mcpt_hold_push(struct hold *h, uint64_t index, uint64_t offset, uint32_t type,
		   const uint8_t *body, size_t len, uint64_t chunk)
{
	size_t used = h->bytes.len + (h->n + 1) * sizeof(struct hold_rec);

	if (len > h->max || used > h->max - len)
		return -ENOBUFS;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct hold_rec *r = realloc(h->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		h->recs = r;
		h->cap = cap;
	}
	if (mcpt_buf_reserve(&h->bytes, len))
		return -ENOMEM;
	if (len)
		memcpy(h->bytes.p + h->bytes.len, body, len);
	h->recs[h->n++] = (struct hold_rec){index, offset, type, h->bytes.len, len, chunk};
	h->bytes.len += len;
	return 0;
}

int mcpt_hold_release(struct hold *h, struct vstate *v, bool provisional)
{
	int err = 0;

	for (size_t i = 0; i < h->n && !err && !v->cb_ret; i++) {
		const struct hold_rec *r = &h->recs[i];

		v->offer_chunk = r->chunk;
		err = mcpt_v_deliver(v, r->index, r->offset, r->type, h->bytes.p + r->body_off,
				     r->body_len, provisional);
	}
	v->offer_chunk = 0;
	mcpt_hold_drop(h);
	return err;
}
