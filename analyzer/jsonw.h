/*
 * jsonw.h - a JSON document written member by member, byte for byte as jansson's
 * json_dumpf(doc, out, JSON_INDENT(2)) would write it once built whole. A report's long arrays
 * (every call, every finding) are then built, written and freed one element at a time: the
 * memory of a report no longer holds a jansson tree of every call, and the bytes go out in
 * large writes instead of one stdio call per token.
 *
 * Errors are sticky: after the first (-ENOMEM for a NULL value or a full buffer, -EIO for a
 * failed write) nothing more is written and jsonw_finish returns it. What was written before
 * it stays written: the document is then cut short, never closed, and the caller reports the
 * error (the analyze command exits non-zero).
 */
#ifndef MW_JSONW_H
#define MW_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#include "strbuf.h"

#define JSONW_DEPTH_MAX 16

struct json_t;

struct jsonw {
	FILE *out;
	struct strbuf sb;	       /* written out past JSONW_FLUSH bytes and at the end */
	unsigned depth;		       /* containers open */
	bool empty[JSONW_DEPTH_MAX];   /* nothing in the container at that depth yet */
	char closing[JSONW_DEPTH_MAX]; /* its closing bracket */
	int err;
};

void jsonw_init(struct jsonw *w, FILE *out);
/* Opens an object ('{') or an array ('['): at the top (key NULL), as a member of an object
 * (key) or as an element of an array (key NULL). */
void jsonw_open(struct jsonw *w, const char *key, char bracket);
/* Closes the innermost container. */
void jsonw_close(struct jsonw *w);
/* Writes v (taken: freed here; NULL is -ENOMEM) as a member (key) or an element (key NULL). */
void jsonw_put(struct jsonw *w, const char *key, struct json_t *v);
/* Ends the document with a newline and writes what is left. Returns 0 or the first error. */
int jsonw_finish(struct jsonw *w);

/* Appends v to sb as json_dumpb(v, JSON_COMPACT | JSON_ENCODE_ANY) writes it (one line: dump
 * --json's records). Returns 0, -ENOMEM, or -EINVAL for a value nested too deep. */
int jsonw_compact(struct strbuf *sb, const struct json_t *v);

#endif /* MW_JSONW_H */
