/*
 * yamlw.h - writing YAML that reads back to exactly the bytes it was given: the scalars and
 * comments of the policies `mcpwitness policy learn` generates from trace contents (paths,
 * argv, tool names), which are hostile input.
 *
 * A scalar is written plain only when it cannot mean anything else (a path, a port, a plain
 * word that is not true/false/null...), else double-quoted with YAML escapes: '"', '\\', every
 * byte outside printable ASCII that is not part of printable valid UTF-8 ("\xHH" for a control
 * byte, "\uHHHH" / "\UHHHHHHHH" for a non-printable code point, line separators included).
 * Bytes that are not valid UTF-8 cannot be written in YAML at all: yamlw_scalar refuses them,
 * and writers of globs spell them "\xHH" at the glob level first (glob.h).
 * A comment is made printable on one line (strbuf_escape), so nothing a trace holds can end it.
 */
#ifndef MW_YAMLW_H
#define MW_YAMLW_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* Decodes one UTF-8 sequence at p[0..n): returns its length (1..4) and the code point, or 0 for
 * a byte that does not start a valid, shortest-form sequence (surrogates and values above
 * U+10FFFF are invalid). */
size_t yamlw_utf8(const uint8_t *p, size_t n, uint32_t *cp);

/* Appends p[0..n) as a YAML scalar (plain or double-quoted). Returns 0, or -EINVAL when the
 * bytes are not valid UTF-8 (nothing appended). */
int yamlw_scalar(struct strbuf *sb, const uint8_t *p, size_t n);

/* The same for a NUL-terminated string. */
int yamlw_str(struct strbuf *sb, const char *s);

/* Appends "# " and p[0..n) escaped to one printable line (no newline appended), cut to max
 * bytes of input with "..." when longer. */
void yamlw_comment(struct strbuf *sb, const uint8_t *p, size_t n, size_t max);

#endif /* MW_YAMLW_H */
