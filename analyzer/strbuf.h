/*
 * strbuf.h - a growable, always NUL-terminated byte string, and the one escaping function the
 * analyzer uses for every byte string from a trace (paths, argv, comm, hostnames).
 *
 * Allocation failures are sticky: after one, every append is a no-op and strbuf_error()
 * returns -ENOMEM, so callers check once at the end instead of after every append.
 */
#ifndef MW_STRBUF_H
#define MW_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf; /* NUL-terminated once anything was appended; may be NULL before */
	size_t len;
	size_t cap;
	int err; /* 0 or -ENOMEM */
};

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0, 0                                                                      \
	}

/* Escaping flags. */
#define ESC_QUOTE 1u /* also escape '"' (for text that is shown between double quotes) */

void strbuf_put(struct strbuf *sb, const void *p, size_t n);
/* One byte: written in place when there is room, else as strbuf_put. */
static inline void strbuf_putc(struct strbuf *sb, char c)
{
	if (!sb->err && sb->cap - sb->len > 1) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
		return;
	}
	strbuf_put(sb, &c, 1);
}
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Appends v in decimal (as "%llu" / "%lld" would, without printf's cost). */
void strbuf_putu(struct strbuf *sb, uint64_t v);
void strbuf_puti(struct strbuf *sb, int64_t v);
/* Appends n bytes as lower-case hex. */
void strbuf_hex(struct strbuf *sb, const uint8_t *p, size_t n);

/* Appends the bytes p[0..n) escaped so that the result is printable, valid UTF-8 and
 * unambiguous: printable UTF-8 is copied; '\\' becomes "\\\\"; \n, \r, \t become "\\n", "\\r",
 * "\\t"; other control bytes and bytes that are not valid UTF-8 become "\\xHH"; C1 controls,
 * bidirectional overrides, line separators and the BOM become "\\uHHHH" (they can disguise
 * what a terminal shows). With ESC_QUOTE, '"' becomes "\\\"". */
void strbuf_escape(struct strbuf *sb, const uint8_t *p, size_t n, unsigned flags);

/* A value quoted in a message (a policy's, a command line's): strbuf_escape of its first
 * ESC_SHORT_MAX bytes (cut back to a UTF-8 boundary), then "... (N bytes)" when it is longer,
 * so that one error stays one short line whatever the value holds. */
#define ESC_SHORT_MAX 64
void strbuf_escape_short(struct strbuf *sb, const uint8_t *p, size_t n, unsigned flags);

/* Returns the buffer ("" when empty) or NULL after an allocation failure. */
const char *strbuf_str(const struct strbuf *sb);
int strbuf_error(const struct strbuf *sb);
void strbuf_reset(struct strbuf *sb); /* empties it, keeps the memory */
/* Hands the buffer over to the caller (free() it); the strbuf is left empty. NULL on error. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_fini(struct strbuf *sb);

/* Length of the valid UTF-8 sequence at p (1..4, n > 0) and its code point, or 0 if invalid
 * (overlong forms, surrogates and values above U+10FFFF are invalid: jansson's rules too). */
size_t strbuf_utf8_seq(const uint8_t *p, size_t n, uint32_t *cp);

#endif /* MW_STRBUF_H */
