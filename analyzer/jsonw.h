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
#include <stdint.h>
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
	struct strbuf esc;	       /* jsonw_bytes's escaped text */
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
/* Scalars written as the jansson values of the same name would be, without making them:
 * jsonw_u64 as traceinfo.h's json_u64 (a string past INT64_MAX), jsonw_str as json_string (s
 * valid UTF-8; NULL writes null), jsonw_bytes as json_bytes (strbuf_escape'd). */
void jsonw_int(struct jsonw *w, const char *key, int64_t v);
void jsonw_u64(struct jsonw *w, const char *key, uint64_t v);
void jsonw_bool(struct jsonw *w, const char *key, bool v);
void jsonw_null(struct jsonw *w, const char *key);
void jsonw_str(struct jsonw *w, const char *key, const char *s);
void jsonw_bytes(struct jsonw *w, const char *key, const uint8_t *p, size_t n);
/* Ends the document with a newline and writes what is left. Returns 0 or the first error. */
int jsonw_finish(struct jsonw *w);

/* One object in the compact form (dump --json's records), written member by member straight
 * into a strbuf, byte for byte as json_dumpb(obj, JSON_COMPACT) writes the object that the
 * same calls would build with jansson (members in call order; jansson keeps insertion
 * order): no tree, no allocation per value. key is a member's name inside an object, NULL for
 * an element of an array. The values are written as the indented writer's scalars above
 * (the same code); jsonl_str takes valid UTF-8, as json_string does. Errors are kept to
 * jsonl_end (and the strbuf's are sticky). */
#define JSONL_DEPTH_MAX 8

struct jsonl {
	struct strbuf *sb;
	struct strbuf *esc; /* jsonl_bytes's escaped text */
	unsigned depth;
	bool empty[JSONL_DEPTH_MAX];
	char closing[JSONL_DEPTH_MAX];
	int err; /* -EINVAL: nested too deep; -ENOMEM */
};

/* Starts the object at the end of sb; esc is scratch for jsonl_bytes (the caller's, kept from
 * one object to the next). */
void jsonl_begin(struct jsonl *j, struct strbuf *sb, struct strbuf *esc);
/* Opens an object ('{') or an array ('[') as a member (key) or an element (key NULL). */
void jsonl_open(struct jsonl *j, const char *key, char bracket);
void jsonl_close(struct jsonl *j);
void jsonl_int(struct jsonl *j, const char *key, int64_t v);
void jsonl_u64(struct jsonl *j, const char *key, uint64_t v);
void jsonl_bool(struct jsonl *j, const char *key, bool v);
void jsonl_null(struct jsonl *j, const char *key);
void jsonl_str(struct jsonl *j, const char *key, const char *s);
void jsonl_strn(struct jsonl *j, const char *key, const char *s, size_t n);
void jsonl_bytes(struct jsonl *j, const char *key, const uint8_t *p, size_t n);
/* Closes the object (and any container left open). Returns 0, -ENOMEM or -EINVAL. */
int jsonl_end(struct jsonl *j);

#endif /* MW_JSONW_H */
