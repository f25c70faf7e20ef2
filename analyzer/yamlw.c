/*
 * yamlw.c - YAML scalars and comments that read back exactly (see yamlw.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "yamlw.h"

size_t yamlw_utf8(const uint8_t *p, size_t n, uint32_t *cp)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len;
	uint32_t c;

	if (!n)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	len = (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n)
		return 0;
	c = p[0] & (0xff >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* YAML 1.1/1.2 printable, minus what libyaml or a reader may take for a line break or a byte
 * order mark, and minus the C1 controls and bidirectional overrides strbuf_escape also hides. */
static bool printable(uint32_t c)
{
	if (c < 0x80)
		return c >= 0x20 && c < 0x7f;
	if (c < 0xa0 || c == 0x2028 || c == 0x2029 || c == 0xfeff)
		return false;
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
		return false;
	return (c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* Plain only for what no YAML reader can take for anything but this string. */
static bool plain_ok(const uint8_t *p, size_t n)
{
	static const char *const words[] = {"true", "false", "null", "yes", "no", "on",
					    "off",  "y",     "n",    "~",   NULL};
	bool alpha = true;

	if (!n || p[0] == '-' || p[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '/' || c == '.' || c == '-'))
			return false;
		alpha &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	}
	for (size_t i = 0; alpha && words[i]; i++)
		if (strlen(words[i]) == n && !strncasecmp(words[i], (const char *)p, n))
			return false;
	/* a number other than a plain decimal could be read as a float ("1e3", "0x1f", "1.5") */
	if (p[0] >= '0' && p[0] <= '9')
		for (size_t i = 0; i < n; i++)
			if (p[i] < '0' || p[i] > '9')
				return false;
	return true;
}

static void quoted_char(struct strbuf *sb, uint32_t c, const uint8_t *raw, size_t len)
{
	if (c == '"' || c == '\\') {
		strbuf_putc(sb, '\\');
		strbuf_putc(sb, (char)c);
	} else if (printable(c)) {
		strbuf_put(sb, raw, len);
	} else if (c == '\n') {
		strbuf_puts(sb, "\\n");
	} else if (c == '\t') {
		strbuf_puts(sb, "\\t");
	} else if (c < 0x100) {
		strbuf_printf(sb, "\\x%02x", c);
	} else if (c < 0x10000) {
		strbuf_printf(sb, "\\u%04x", c);
	} else {
		strbuf_printf(sb, "\\U%08x", c);
	}
}

int yamlw_scalar(struct strbuf *sb, const uint8_t *p, size_t n)
{
	uint32_t c;
	size_t i, len;

	for (i = 0; i < n; i += len)
		if (!(len = yamlw_utf8(p + i, n - i, &c)))
			return -EINVAL;
	if (plain_ok(p, n)) {
		strbuf_put(sb, p, n);
		return 0;
	}
	strbuf_putc(sb, '"');
	for (i = 0; i < n; i += len) {
		len = yamlw_utf8(p + i, n - i, &c);
		quoted_char(sb, c, p + i, len);
	}
	strbuf_putc(sb, '"');
	return 0;
}

int yamlw_str(struct strbuf *sb, const char *s)
{
	return yamlw_scalar(sb, (const uint8_t *)s, strlen(s));
}

void yamlw_comment(struct strbuf *sb, const uint8_t *p, size_t n, size_t max)
{
	strbuf_puts(sb, "# ");
	strbuf_escape(sb, p, n < max ? n : max, 0);
	if (n > max)
		strbuf_puts(sb, "...");
}
