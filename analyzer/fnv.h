/* fnv.h - FNV-1a, the analyzer's hash for the small string tables (names, ids, texts, keys):
 * byte at a time, good enough for open-addressed tables of keys the trace or policy chose,
 * which are compared in full on every hit. */
#ifndef MW_FNV_H
#define MW_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_SEED 0xcbf29ce484222325ull

/* h advanced by the n bytes at p. */
static inline uint64_t fnv1a_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* h advanced by the bytes of the string s, without its NUL. */
static inline uint64_t fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

#endif /* MW_FNV_H */
