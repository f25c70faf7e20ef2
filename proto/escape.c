/*
 * escape.c - text that came out of a trace, made safe to print (TRACE-FORMAT.md 5.10: strings
 * in a trace are attacker-chosen bytes: a crafted signer name or hostname must not move the
 * cursor, recolour a terminal, forge a second verdict line or break a JSON report).
 *
 * Two steps with one rule each, so nothing is escaped twice:
 *   - at the source: every string of a trace that the library puts into a message goes through
 *     mcpt_escape, which yields printable ASCII only ('\\' and '"' escaped, control and
 *     non-ASCII bytes as \xHH);
 *   - at the sink: the printers pass every message through mcpt_sanitize, which only turns
 *     bytes outside printable ASCII into \xHH and leaves '\\' alone. On text made by the first
 *     step it changes nothing; it is the guard against a message that forgot the first step.
 */
#include <stdio.h>
#include <string.h>

#include "mcpt.h"

static const char digits[] = "0123456789abcdef";

/* The escape of byte c into e (NUL-terminated); its length. */
static size_t escape_byte(uint8_t c, bool quote_backslash, char e[5])
{
	switch (c) {
	case '\n':
		return (size_t)snprintf(e, 5, "\\n");
	case '\r':
		return (size_t)snprintf(e, 5, "\\r");
	case '\t':
		return (size_t)snprintf(e, 5, "\\t");
	case '\\':
	case '"':
		if (quote_backslash) {
			e[0] = '\\';
			e[1] = (char)c;
			e[2] = '\0';
			return 2;
		}
		break;
	}
	if (c >= 0x20 && c < 0x7f) {
		e[0] = (char)c;
		e[1] = '\0';
		return 1;
	}
	e[0] = '\\';
	e[1] = 'x';
	e[2] = digits[c >> 4];
	e[3] = digits[c & 15];
	e[4] = '\0';
	return 4;
}

static const char *copy_escaped(char *out, size_t outlen, const uint8_t *p, size_t n, bool full)
{
	size_t o = 0;
	char e[5];

	if (!outlen)
		return out;
	for (size_t i = 0; i < n; i++) {
		size_t k = escape_byte(p[i], full, e);

		if (k >= outlen - o)
			break; /* cut at a whole escape: never half of one */
		memcpy(out + o, e, k);
		o += k;
	}
	out[o] = '\0';
	return out;
}

const char *mcpt_escape(char *out, size_t outlen, const void *p, size_t n)
{
	return copy_escaped(out, outlen, p, p ? n : 0, true);
}

const char *mcpt_sanitize(char *out, size_t outlen, const char *s)
{
	return copy_escaped(out, outlen, (const uint8_t *)s, s ? strlen(s) : 0, false);
}

void mcpt_fputs_safe(FILE *f, const char *s)
{
	char e[5];

	for (; s && *s; s++) {
		if ((uint8_t)*s >= 0x20 && (uint8_t)*s < 0x7f)
			fputc(*s, f);
		else
			fputs(escape_byte((uint8_t)*s, false, e) ? e : "", f);
	}
}
