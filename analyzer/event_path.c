/*
 * event_path.c - lexical normalisation of the absolute paths of events (see event.h), which
 * tells whether the path a process named is the file the kernel opened.
 */
#include <string.h>

#include "event.h"

/* Absolute and already normal: no empty, "." or ".." component, no trailing '/' (but "/"). */
static bool path_is_normal(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n, *c, *next;
	size_t len;

	if (!n || p[0] != '/')
		return false;
	for (c = p + 1; n > 1; c = next + 1) {
		next = memchr(c, '/', (size_t)(end - c));
		len = (size_t)((next ? next : end) - c);
		if (len == 0 || (c[0] == '.' && (len == 1 || (len == 2 && c[1] == '.'))))
			return false;
		if (!next)
			break;
	}
	return true;
}

size_t event_normalize_path(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t len = 0, i = 0;

	if (!n || p[0] != '/' || cap < 2)
		return 0;
	if (path_is_normal(p, n)) { /* the common case: itself, when it fits */
		if (n >= cap)
			return 0;
		memcpy(out, p, n);
		out[n] = '\0';
		return n;
	}
	while (i < n) {
		size_t j = i, k;

		while (j < n && p[j] == '/')
			j++;
		for (k = j; k < n && p[k] != '/'; k++)
			;
		if (k - j == 1 && p[j] == '.') {
			/* "." */
		} else if (k - j == 2 && p[j] == '.' && p[j + 1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the '/' before it */
		} else if (k > j) {
			if (len + 1 + (k - j) >= cap)
				return 0;
			out[len++] = '/';
			memcpy(out + len, p + j, k - j);
			len += k - j;
		}
		i = k;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return len;
}
