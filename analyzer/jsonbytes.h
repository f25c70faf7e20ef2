/*
 * jsonbytes.h - the scan the strict JSON reader (msgclass.c) and the JSON writer (jsonw.c)
 * share: how many bytes of a string's text need no look, eight at a time.
 */
#ifndef MW_JSONBYTES_H
#define MW_JSONBYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The bytes of p before the first control, '"' or '\\' (and, unless utf8_plain, the first of
 * 0x80 or more), or n. In a word, the lowest such byte sets the high bit of its own byte in
 * one of the terms below and nothing under it does (a borrow only runs upwards from such a
 * byte): its index is exact. */
static inline size_t json_plain_len(const uint8_t *p, size_t n, bool utf8_plain)
{
	size_t i = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = ones << 7;
	uint64_t w, q, b, m;

	for (; n - i >= 8; i += 8) {
		memcpy(&w, p + i, 8);
		q = w ^ ('"' * ones);
		b = w ^ ('\\' * ones);
		m = ((w - 0x20 * ones) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b);
		if (!utf8_plain)
			m |= w;
		m &= highs;
		if (m)
			return i + (size_t)(__builtin_ctzll(m) >> 3);
	}
#endif
	for (; i < n; i++)
		if (p[i] < 0x20 || p[i] == '"' || p[i] == '\\' || (!utf8_plain && p[i] >= 0x80))
			return i;
	return n;
}

#endif /* MW_JSONBYTES_H */
