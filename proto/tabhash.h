/*
 * tabhash.h - the hash of a byte string for the writer's value table (writer_vt.c): eight
 * bytes a step, where a byte at a time (FNV-1a) had cost the collector a seventh of its time
 * on small records. Not part of the trace format: nothing written depends on it. The table
 * seeds it at random, so the monitored process cannot pick values that collide.
 */
#ifndef MCPT_TABHASH_H
#define MCPT_TABHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MCPT_TABHASH_K 0x9e3779b97f4a7c15ull

static inline uint64_t mcpt_tabhash_load(const uint8_t *p, size_t n)
{
	uint64_t w = 0;
	uint32_t a, b;

	if (n >= 8) {
		memcpy(&w, p, 8);
	} else if (n >= 4) { /* two overlapping words: n is mixed in, so no ambiguity */
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		w = (uint64_t)a | (uint64_t)b << 32;
	} else if (n) {
		w = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
	}
	return w;
}

/* The hash of the n bytes at p under seed: the words, then the last eight bytes (overlapping
 * the words before them) or what there is of them. */
static inline uint64_t mcpt_tabhash(uint64_t seed, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t h = (seed ^ 0xcbf29ce484222325ull) + n * MCPT_TABHASH_K;
	size_t len = n;

	for (; n > 8; p += 8, n -= 8) {
		h = (h ^ mcpt_tabhash_load(p, 8)) * MCPT_TABHASH_K;
		h ^= h >> 32;
	}
	h = (h ^ mcpt_tabhash_load(len >= 8 ? p + n - 8 : p, len >= 8 ? 8 : n)) * MCPT_TABHASH_K;
	h ^= h >> 29;
	h *= MCPT_TABHASH_K;
	return h ^ (h >> 32);
}

#endif /* MCPT_TABHASH_H */
