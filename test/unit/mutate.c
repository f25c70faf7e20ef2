/*
 * mutate.c - random edits of a line (see mutate.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mutate.h"

size_t mutate_bytes(uint8_t *buf, size_t n, size_t cap, size_t from, size_t edits,
		    const char *special, unsigned *seed)
{
	size_t n_special = strlen(special);

	for (size_t e = 0; e < edits && n + 1 < cap; e++) {
		size_t at = n > from ? from + (unsigned)rand_r(seed) % (n - from) : n;
		uint8_t c = rand_r(seed) % 2 ? (uint8_t)special[(unsigned)rand_r(seed) % n_special]
					     : (uint8_t)rand_r(seed);

		switch (rand_r(seed) % 3) {
		case 0:
			if (at < n)
				buf[at] = c;
			break;
		case 1:
			memmove(buf + at + 1, buf + at, n - at);
			buf[at] = c;
			n++;
			break;
		default:
			if (at < n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
			break;
		}
	}
	return n;
}
