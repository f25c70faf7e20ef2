/*
 * merkle.c - the hash definitions of TRACE-FORMAT.md 4.5: BLAKE2b-256 everywhere, chunk leaves
 * H(0x00 || frame_1 || ... || frame_k) hashed as the frames stream by, interior nodes
 * H(0x01 || l || r), the RFC 9162 Merkle tree hash of a segment kept as a compact range (one
 * subtree root per set bit of the leaf count, so memory is O(log n)), and the digests of the
 * header and of seal frames. The chunk rule lives here once, shared by writer and verifier.
 * RFC 9162 audit paths (2.1.3) prove one chunk's leaf against a signed segment root (excerpts).
 * crypto_generichash_*() only fail for out-of-range lengths or keys; the fixed parameters used
 * here are valid, so their results are not checked.
 */
#include <string.h>

#include "internal.h"

static const uint8_t leaf_prefix = 0x00;
static const uint8_t node_prefix = 0x01;

void mcpt_hash2(uint8_t out[MCPT_HASH_LEN], const void *a, size_t an, const void *b, size_t bn)
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, MCPT_HASH_LEN);
	if (an)
		crypto_generichash_update(&st, a, an);
	if (bn)
		crypto_generichash_update(&st, b, bn);
	crypto_generichash_final(&st, out, MCPT_HASH_LEN);
}

void mcpt_header_digest(const uint8_t pre[MCPT_PREAMBLE_LEN], const uint8_t *frame, size_t len,
			uint8_t out[MCPT_HASH_LEN])
{
	static const char ctx[] = "MCPT-v1 header";
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, MCPT_HASH_LEN);
	crypto_generichash_update(&st, (const uint8_t *)ctx, sizeof(ctx) - 1);
	crypto_generichash_update(&st, pre, MCPT_PREAMBLE_LEN);
	crypto_generichash_update(&st, frame, len);
	crypto_generichash_final(&st, out, MCPT_HASH_LEN);
}

void mcpt_seal_digest(const uint8_t *frame, size_t len, uint8_t out[MCPT_HASH_LEN])
{
	static const char ctx[] = "MCPT-v1 seal";

	mcpt_hash2(out, ctx, sizeof(ctx) - 1, frame, len);
}

void mcpt_node_hash(const uint8_t l[MCPT_HASH_LEN], const uint8_t r[MCPT_HASH_LEN],
		    uint8_t out[MCPT_HASH_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, MCPT_HASH_LEN);
	crypto_generichash_update(&st, &node_prefix, 1);
	crypto_generichash_update(&st, l, MCPT_HASH_LEN);
	crypto_generichash_update(&st, r, MCPT_HASH_LEN);
	crypto_generichash_final(&st, out, MCPT_HASH_LEN);
}

void mcpt_range_init(struct mcpt_range *r)
{
	r->leaves = 0;
}

/* Like a binary counter: a carry merges two equal-height subtrees into their parent. */
void mcpt_range_push(struct mcpt_range *r, const uint8_t leaf[MCPT_HASH_LEN])
{
	uint8_t cur[MCPT_HASH_LEN];
	unsigned h = 0;

	memcpy(cur, leaf, MCPT_HASH_LEN);
	while (r->leaves & (1ull << h)) {
		mcpt_node_hash(r->node[h], cur, cur);
		h++;
	}
	memcpy(r->node[h], cur, MCPT_HASH_LEN);
	r->leaves++;
}

/* MTH(D[0:n]) = NODE(MTH(D[0:k]), MTH(D[k:n])) with k the largest power of two below n: the
 * largest subtree is the left child, the rest folds in from the smallest subtree upwards. */
void mcpt_range_root(const struct mcpt_range *r, uint8_t out[MCPT_HASH_LEN])
{
	bool have = false;

	if (r->leaves == 0) {
		mcpt_hash2(out, NULL, 0, NULL, 0);
		return;
	}
	for (unsigned h = 0; h < 64; h++) {
		if (!(r->leaves & (1ull << h)))
			continue;
		if (!have)
			memcpy(out, r->node[h], MCPT_HASH_LEN);
		else
			mcpt_node_hash(r->node[h], out, out);
		have = true;
	}
}

void mcpt_segment_init(struct mcpt_segment *s, uint32_t chunk_records, uint32_t chunk_bytes)
{
	s->on_leaf = NULL;
	s->leaf_ctx = NULL;
	s->count_only = false;
	s->chunk_n = 0;
	s->chunk_bytes = 0;
	s->max_records = chunk_records;
	s->max_bytes = chunk_bytes;
	s->records = 0;
	mcpt_range_init(&s->range);
}

static void chunk_close(struct mcpt_segment *s)
{
	uint8_t leaf[MCPT_HASH_LEN];

	if (s->count_only) {
		s->range.leaves++;
		s->chunk_n = 0;
		s->chunk_bytes = 0;
		return;
	}
	crypto_generichash_final(&s->chunk, leaf, MCPT_HASH_LEN);
	mcpt_range_push(&s->range, leaf);
	if (s->on_leaf)
		s->on_leaf(s->leaf_ctx, leaf);
	s->chunk_n = 0;
	s->chunk_bytes = 0;
}

void mcpt_segment_add(struct mcpt_segment *s, const uint8_t *frame, size_t len)
{
	if (s->count_only) {
		/* counted below */
	} else if (s->chunk_n == 0) {
		crypto_generichash_init(&s->chunk, NULL, 0, MCPT_HASH_LEN);
		crypto_generichash_update(&s->chunk, &leaf_prefix, 1);
		crypto_generichash_update(&s->chunk, frame, len);
	} else {
		crypto_generichash_update(&s->chunk, frame, len);
	}
	s->chunk_n++;
	s->chunk_bytes += len;
	s->records++;
	if (s->chunk_n >= s->max_records || s->chunk_bytes >= s->max_bytes)
		chunk_close(s);
}

void mcpt_segment_finish(struct mcpt_segment *s, uint8_t root[MCPT_HASH_LEN], uint64_t *leaves)
{
	void (*on_leaf)(void *, const uint8_t *) = s->on_leaf;
	void *ctx = s->leaf_ctx;
	bool count_only = s->count_only;

	if (s->chunk_n > 0)
		chunk_close(s);
	if (count_only)
		memset(root, 0, MCPT_HASH_LEN);
	else
		mcpt_range_root(&s->range, root);
	*leaves = s->range.leaves;
	mcpt_segment_init(s, s->max_records, s->max_bytes);
	s->on_leaf = on_leaf;
	s->leaf_ctx = ctx;
	s->count_only = count_only;
}

/* The largest power of two below n (n >= 2): the size of the left subtree in RFC 9162. */
static uint64_t split(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

size_t mcpt_audit_path_len(uint64_t n, uint64_t m)
{
	size_t len = 0;

	if (m >= n)
		return 0;
	while (n > 1) {
		uint64_t k = split(n);

		if (m < k) {
			n = k;
		} else {
			m -= k;
			n -= k;
		}
		len++;
	}
	return len;
}

static void subtree_root(const uint8_t (*leaves)[MCPT_HASH_LEN], uint64_t n,
			 uint8_t out[MCPT_HASH_LEN])
{
	struct mcpt_range r;

	mcpt_range_init(&r);
	for (uint64_t i = 0; i < n; i++)
		mcpt_range_push(&r, leaves[i]);
	mcpt_range_root(&r, out);
}

/* PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) for m < k, else PATH(m - k, D[k:n]) :
 * MTH(D[0:k]); the recursion unrolled from the top, the path written from the bottom. */
size_t mcpt_audit_path(const uint8_t (*leaves)[MCPT_HASH_LEN], uint64_t n, uint64_t m,
		       uint8_t (*out)[MCPT_HASH_LEN])
{
	size_t len = mcpt_audit_path_len(n, m), i = len;

	while (n > 1) {
		uint64_t k = split(n);

		if (m < k) {
			subtree_root(leaves + k, n - k, out[--i]);
			n = k;
		} else {
			subtree_root(leaves, k, out[--i]);
			leaves += k;
			m -= k;
			n -= k;
		}
	}
	return len;
}

/* RFC 9162 2.1.3.2, step by step. */
bool mcpt_audit_path_verify(const uint8_t leaf[MCPT_HASH_LEN], uint64_t m, uint64_t n,
			    const uint8_t (*path)[MCPT_HASH_LEN], size_t k,
			    const uint8_t root[MCPT_HASH_LEN])
{
	uint64_t fn = m, sn;
	uint8_t r[MCPT_HASH_LEN];

	if (m >= n)
		return false;
	sn = n - 1;
	memcpy(r, leaf, MCPT_HASH_LEN);
	for (size_t i = 0; i < k; i++) {
		if (sn == 0)
			return false;
		if ((fn & 1) || fn == sn) {
			mcpt_node_hash(path[i], r, r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			mcpt_node_hash(r, path[i], r);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && sodium_memcmp(r, root, MCPT_HASH_LEN) == 0;
}
