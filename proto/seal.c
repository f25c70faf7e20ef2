/*
 * seal.c - pieces of TRACE-FORMAT.md 4.6 used by both sides: the DSSE v1 pre-authentication
 * encoding that seals sign, the canonical-bytes test (pack(unpack(x)) == x) that a verifier
 * applies to signed statements, growable byte buffers, and the mapping between LossSource
 * values and LossTotals fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int mcpt_buf_reserve(struct mcpt_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

void mcpt_buf_free(struct mcpt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN in ASCII decimal. */
int mcpt_pae(struct mcpt_buf *b, const uint8_t *body, size_t len)
{
	const char *type = MCPT_SEAL_PAYLOAD_TYPE;
	char head[160];
	int n;

	n = snprintf(head, sizeof(head), "DSSEv1 %zu %s %zu ", strlen(type), type, len);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -EOVERFLOW;
	b->len = 0;
	if (mcpt_buf_reserve(b, (size_t)n + len))
		return -ENOMEM;
	memcpy(b->p, head, (size_t)n);
	if (len)
		memcpy(b->p + n, body, len);
	b->len = (size_t)n + len;
	return 0;
}

bool mcpt_packs_to(const ProtobufCMessage *msg, const uint8_t *bytes, size_t len,
		   struct mcpt_buf *scratch)
{
	if (protobuf_c_message_get_packed_size(msg) != len)
		return false;
	scratch->len = 0;
	if (mcpt_buf_reserve(scratch, len))
		return false;
	if (protobuf_c_message_pack(msg, scratch->p) != len)
		return false;
	return len == 0 || memcmp(scratch->p, bytes, len) == 0;
}

bool mcpt_canonical(const ProtobufCMessage *msg, const uint8_t *bytes, size_t len,
		    struct mcpt_buf *scratch)
{
	return msg->n_unknown_fields == 0 && mcpt_packs_to(msg, bytes, len, scratch);
}

uint64_t *mcpt_loss_field(Mcpt__LossTotals *t, unsigned src)
{
	switch (src) {
	case MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL:
		return &t->ringbuf_reserve_fail;
	case MCPT__LOSS_SOURCE__PERF_LOST:
		return &t->perf_lost;
	case MCPT__LOSS_SOURCE__USER_QUEUE:
		return &t->user_queue;
	case MCPT__LOSS_SOURCE__RATE_LIMIT:
		return &t->rate_limit;
	case MCPT__LOSS_SOURCE__CAPTURE_TRUNCATED:
		return &t->capture_truncated;
	case MCPT__LOSS_SOURCE__RECORD_TOO_LARGE:
		return &t->record_too_large;
	case MCPT__LOSS_SOURCE__STASH_FULL:
		return &t->stash_full;
	case MCPT__LOSS_SOURCE__READ_FAULT:
		return &t->read_fault;
	case MCPT__LOSS_SOURCE__TRACK_FULL:
		return &t->track_full;
	default:
		return NULL;
	}
}

const char *mcpt_loss_name(unsigned src)
{
	static const char *const names[MCPT_LOSS_SOURCES] = {
		"unspecified", "ringbuf_reserve_fail", "perf_lost",	   "user_queue",
		"rate_limit",  "capture_truncated",    "record_too_large", "stash_full",
		"read_fault",  "track_full",
	};

	return src < MCPT_LOSS_SOURCES ? names[src] : "unknown";
}
