/*
 * strbuf.c - growable strings and the byte-string escaper (see strbuf.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->err)
		return sb->err;
	if (extra > SIZE_MAX / 2 - sb->len - 1)
		goto nomem;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		goto nomem;
	sb->buf = p;
	sb->cap = cap;
	return 0;
nomem:
	sb->err = -ENOMEM;
	return sb->err;
}

void strbuf_put(struct strbuf *sb, const void *p, size_t n)
{
	if ((sb->err || n >= sb->cap - sb->len) && strbuf_grow(sb, n))
		return;
	if (n)
		memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_put(sb, s, strlen(s));
}

/* Written where there is room; only what does not fit is formatted a second time. */
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	size_t room = sb->buf ? sb->cap - sb->len : 0;
	va_list aq;
	int n;

	if (sb->err)
		return;
	va_copy(aq, ap);
	n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, aq);
	va_end(aq);
	if (n >= 0 && (size_t)n < room) {
		sb->len += (size_t)n;
		return;
	}
	if (room)
		sb->buf[sb->len] = '\0'; /* what did not fit is not kept */
	if (n < 0 || strbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_putu(struct strbuf *sb, uint64_t v)
{
	char d[20], *p = d + sizeof(d);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_put(sb, p, (size_t)(d + sizeof(d) - p));
}

void strbuf_puti(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		strbuf_putc(sb, '-');
		strbuf_putu(sb, -(uint64_t)v);
	} else {
		strbuf_putu(sb, (uint64_t)v);
	}
}

void strbuf_hex(struct strbuf *sb, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		strbuf_putc(sb, hex[p[i] >> 4]);
		strbuf_putc(sb, hex[p[i] & 15]);
	}
}

size_t strbuf_utf8_seq(const uint8_t *p, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	} else if ((p[0] & 0xe0) == 0xc0) {
		len = 2, c = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, c = p[0] & 0x0f, min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, c = p[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Code points that are valid but can make a terminal show something else than the bytes. */
static int cp_deceptive(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x200e || c == 0x200f ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

static void escape_ascii(struct strbuf *sb, uint8_t c, unsigned flags)
{
	switch (c) {
	case '\\':
		strbuf_puts(sb, "\\\\");
		return;
	case '\n':
		strbuf_puts(sb, "\\n");
		return;
	case '\r':
		strbuf_puts(sb, "\\r");
		return;
	case '\t':
		strbuf_puts(sb, "\\t");
		return;
	case '"':
		strbuf_puts(sb, (flags & ESC_QUOTE) ? "\\\"" : "\"");
		return;
	}
	if (c < 0x20 || c == 0x7f)
		strbuf_printf(sb, "\\x%02x", c);
	else
		strbuf_putc(sb, (char)c);
}

/* Printable ASCII but the backslash and the quote: written as it is, whatever the flags. */
static bool plain(uint8_t c)
{
	return c >= 0x20 && c < 0x7f && c != '\\' && c != '"';
}

void strbuf_escape(struct strbuf *sb, const uint8_t *p, size_t n, unsigned flags)
{
	size_t i = 0, len;
	uint32_t cp;

	while (i < n) {
		for (len = 0; i + len < n && plain(p[i + len]); len++)
			;
		if (len) { /* a run of bytes written as they are: one copy */
			strbuf_put(sb, p + i, len);
			i += len;
			continue;
		}
		len = strbuf_utf8_seq(p + i, n - i, &cp);
		if (len == 0) {
			strbuf_printf(sb, "\\x%02x", p[i]);
			i++;
		} else if (len == 1) {
			escape_ascii(sb, p[i], flags);
			i++;
		} else if (cp_deceptive(cp)) {
			strbuf_printf(sb, "\\u%04x", (unsigned)cp);
			i += len;
		} else {
			strbuf_put(sb, p + i, len);
			i += len;
		}
	}
	strbuf_put(sb, "", 0); /* a valid empty string even when n == 0 */
}

const char *strbuf_str(const struct strbuf *sb)
{
	if (sb->err)
		return NULL;
	return sb->buf ? sb->buf : "";
}

int strbuf_error(const struct strbuf *sb)
{
	return sb->err;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

char *strbuf_detach(struct strbuf *sb)
{
	char *p;

	if (sb->err) {
		strbuf_fini(sb);
		return NULL;
	}
	p = sb->buf ? sb->buf : strdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void strbuf_fini(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->err = 0;
}

void strbuf_escape_short(struct strbuf *sb, const uint8_t *p, size_t n, unsigned flags)
{
	size_t cut = ESC_SHORT_MAX;

	if (n <= ESC_SHORT_MAX) {
		strbuf_escape(sb, p, n, flags);
		return;
	}
	while (cut > ESC_SHORT_MAX - 3 && (p[cut] & 0xc0) == 0x80) /* not inside a sequence */
		cut--;
	strbuf_escape(sb, p, cut, flags);
	strbuf_printf(sb, "... (%zu bytes)", n);
}
