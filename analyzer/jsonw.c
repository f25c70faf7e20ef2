/*
 * jsonw.c - a JSON document written member by member as jansson's JSON_INDENT(2) dump writes
 * it whole (see jsonw.h).
 *
 * jansson writes a non-empty container as its bracket, then each member or element on a line
 * of its own indented two spaces a level ("key": value, "," between them), then the closing
 * bracket on a line at the container's indentation; an empty one as "{}" or "[]". The values
 * handed over are written here the same way, straight into the buffer (jansson's own dump
 * calls its writer once per token and was most of the cost of a JSON report): strings escaped
 * as jansson escapes them, reals by jansson itself. unit.jsonw compares the two.
 *
 * The compact form (jsonl_*, dump --json's lines) is written the same way, with "," and ":"
 * and no whitespace, from calls made member by member instead of a tree.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "jsonbytes.h"
#include "jsonw.h"

#define JSONW_FLUSH 65536

#define SPACES	       32
#define JSONW_NEST_MAX 4096 /* past it a value is refused (-EINVAL), not recursed into */

static const char spaces[SPACES + 1] = "                                ";

static void flush(struct jsonw *w)
{
	if (!w->err && (w->err = strbuf_error(&w->sb)))
		return;
	if (!w->err && w->sb.len && fwrite(w->sb.buf, 1, w->sb.len, w->out) != w->sb.len)
		w->err = -EIO;
	strbuf_reset(&w->sb);
}

static void newline(struct strbuf *sb, unsigned level)
{
	strbuf_putc(sb, '\n');
	for (; level > SPACES / 2; level -= SPACES / 2)
		strbuf_put(sb, spaces, SPACES);
	strbuf_put(sb, spaces, 2 * level);
}

/* A string as jansson writes it without JSON_ENSURE_ASCII: UTF-8 kept (jansson's strings are
 * valid UTF-8), '"' and '\\' escaped, controls by their short escape or as \u00XX. */
static void put_string(struct strbuf *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char esc[6] = {'\\', 'u', '0', '0'};
	size_t k;
	uint8_t c;

	strbuf_putc(sb, '"');
	for (;;) {
		k = json_plain_len((const uint8_t *)s, n, true);
		strbuf_put(sb, s, k);
		if (k == n)
			break;
		c = (uint8_t)s[k];
		s += k + 1;
		n -= k + 1;
		esc[1] = c == '"'    ? '"'
			 : c == '\\' ? '\\'
			 : c == '\b' ? 'b'
			 : c == '\f' ? 'f'
			 : c == '\n' ? 'n'
			 : c == '\r' ? 'r'
			 : c == '\t' ? 't'
				     : 'u';
		if (esc[1] != 'u') {
			strbuf_put(sb, esc, 2);
			continue;
		}
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 15];
		strbuf_put(sb, esc, 6);
	}
	strbuf_putc(sb, '"');
}

/* A real as jansson writes it (its own shortest-round-trip formatting). */
static int put_real(struct strbuf *sb, const json_t *v)
{
	char buf[64];
	size_t n = json_dumpb(v, buf, sizeof(buf), JSON_ENCODE_ANY);

	if (!n || n > sizeof(buf))
		return -ENOMEM;
	strbuf_put(sb, buf, n);
	return 0;
}

/* The values both writers write without a json_t, as the jansson values of the same name:
 * json_u64 (traceinfo.h: a string past INT64_MAX), json_boolean, json_null, and json_bytes
 * (strbuf_escape'd into esc, then a JSON string; printable ASCII but for '"', '\\' and DEL,
 * most paths, comes out of both unchanged and is copied through). */
static void put_u64(struct strbuf *sb, uint64_t v)
{
	if (v > INT64_MAX)
		strbuf_putc(sb, '"');
	strbuf_putu(sb, v);
	if (v > INT64_MAX)
		strbuf_putc(sb, '"');
}

static void put_bool(struct strbuf *sb, bool v)
{
	strbuf_put(sb, v ? "true" : "false", v ? 4 : 5);
}

static void put_null(struct strbuf *sb)
{
	strbuf_put(sb, "null", 4);
}

/* 0 or -ENOMEM (esc could not hold the escaped text). p may be NULL when n is 0. */
static int put_bytes(struct strbuf *sb, struct strbuf *esc, const uint8_t *p, size_t n)
{
	if (!n || (json_plain_len(p, n, false) == n && !memchr(p, 0x7f, n))) {
		strbuf_putc(sb, '"');
		strbuf_put(sb, p, n);
		strbuf_putc(sb, '"');
		return 0;
	}
	strbuf_reset(esc);
	strbuf_escape(esc, p, n, 0);
	if (strbuf_error(esc))
		return -ENOMEM;
	put_string(sb, esc->buf ? esc->buf : "", esc->len);
	return 0;
}

/* v as json_dumpf(v, JSON_INDENT(2) | JSON_ENCODE_ANY) writes it, at the given level. */
static int put_value(struct strbuf *sb, const json_t *v, unsigned level)
{
	bool obj = json_is_object(v);
	size_t n = obj ? json_object_size(v) : json_is_array(v) ? json_array_size(v) : 0;
	void *it = obj ? json_object_iter((json_t *)v) : NULL;
	int err = 0;

	switch (json_typeof(v)) {
	case JSON_STRING:
		put_string(sb, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		strbuf_puti(sb, json_integer_value(v));
		return 0;
	case JSON_REAL:
		return put_real(sb, v);
	case JSON_TRUE:
	case JSON_FALSE:
		put_bool(sb, json_is_true(v));
		return 0;
	case JSON_NULL:
		put_null(sb);
		return 0;
	case JSON_OBJECT:
	case JSON_ARRAY:
		break;
	}
	if (level >= JSONW_NEST_MAX)
		return -EINVAL;
	strbuf_putc(sb, obj ? '{' : '[');
	for (size_t i = 0; !err && i < n; i++) {
		if (i)
			strbuf_putc(sb, ',');
		newline(sb, level + 1);
		if (obj) {
			put_string(sb, json_object_iter_key(it), json_object_iter_key_len(it));
			strbuf_put(sb, ": ", 2);
			err = put_value(sb, json_object_iter_value(it), level + 1);
			it = json_object_iter_next((json_t *)v, it);
		} else {
			err = put_value(sb, json_array_get(v, i), level + 1);
		}
	}
	if (n)
		newline(sb, level);
	strbuf_putc(sb, obj ? '}' : ']');
	return err;
}

static void dump(struct jsonw *w, const json_t *v)
{
	int err = put_value(&w->sb, v, w->depth);

	w->err = w->err ?: err;
}

/* The separator and indentation before a member or element, and its key. */
static void begin_item(struct jsonw *w, const char *key)
{
	if (w->depth) {
		if (!w->empty[w->depth - 1])
			strbuf_putc(&w->sb, ',');
		w->empty[w->depth - 1] = false;
		newline(&w->sb, w->depth);
	}
	if (!key)
		return;
	put_string(&w->sb, key, strlen(key));
	strbuf_put(&w->sb, ": ", 2);
}

void jsonw_init(struct jsonw *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

void jsonw_open(struct jsonw *w, const char *key, char bracket)
{
	if (w->err)
		return;
	if (w->depth == JSONW_DEPTH_MAX) {
		w->err = -EINVAL;
		return;
	}
	begin_item(w, key);
	strbuf_putc(&w->sb, bracket);
	w->closing[w->depth] = bracket == '{' ? '}' : ']';
	w->empty[w->depth++] = true;
}

void jsonw_close(struct jsonw *w)
{
	if (w->err || !w->depth)
		return;
	w->depth--;
	if (!w->empty[w->depth]) /* an empty one closes right after its opening bracket */
		newline(&w->sb, w->depth);
	strbuf_putc(&w->sb, w->closing[w->depth]);
}

void jsonw_put(struct jsonw *w, const char *key, json_t *v)
{
	if (!v) {
		w->err = w->err ?: -ENOMEM;
		return;
	}
	if (!w->err) {
		begin_item(w, key);
		dump(w, v);
	}
	json_decref(v);
	if (w->sb.len >= JSONW_FLUSH)
		flush(w);
}

/* The start of a scalar member or element; false when nothing is to be written. */
static bool scalar(struct jsonw *w, const char *key)
{
	if (w->err)
		return false;
	begin_item(w, key);
	return true;
}

static void scalar_end(struct jsonw *w)
{
	if (w->sb.len >= JSONW_FLUSH)
		flush(w);
}

void jsonw_int(struct jsonw *w, const char *key, int64_t v)
{
	if (!scalar(w, key))
		return;
	strbuf_puti(&w->sb, v);
	scalar_end(w);
}

void jsonw_u64(struct jsonw *w, const char *key, uint64_t v)
{
	if (!scalar(w, key))
		return;
	put_u64(&w->sb, v);
	scalar_end(w);
}

void jsonw_bool(struct jsonw *w, const char *key, bool v)
{
	if (!scalar(w, key))
		return;
	put_bool(&w->sb, v);
	scalar_end(w);
}

void jsonw_null(struct jsonw *w, const char *key)
{
	if (!scalar(w, key))
		return;
	put_null(&w->sb);
	scalar_end(w);
}

void jsonw_str(struct jsonw *w, const char *key, const char *s)
{
	if (!s) {
		jsonw_null(w, key);
		return;
	}
	if (!scalar(w, key))
		return;
	put_string(&w->sb, s, strlen(s));
	scalar_end(w);
}

void jsonw_bytes(struct jsonw *w, const char *key, const uint8_t *p, size_t n)
{
	if (!scalar(w, key))
		return;
	w->err = put_bytes(&w->sb, &w->esc, p, n);
	scalar_end(w);
}

int jsonw_finish(struct jsonw *w)
{
	if (!w->err && w->depth)
		w->err = -EINVAL; /* a container left open: a caller's mistake */
	if (!w->err)
		strbuf_putc(&w->sb, '\n');
	flush(w);
	strbuf_fini(&w->sb);
	strbuf_fini(&w->esc);
	return w->err;
}

/* ---- the compact form, member by member ---------------------------------------------------- */

/* The separator before a member or element, and its key: a key with nothing to escape (all of
 * dump's) is copied as it is, with the separator, in one append. */
static void jsonl_item(struct jsonl *j, const char *key)
{
	bool comma = false;
	char q[64];
	size_t n, k;

	if (j->depth) {
		comma = !j->empty[j->depth - 1];
		j->empty[j->depth - 1] = false;
	}
	if (!key) {
		if (comma)
			strbuf_putc(j->sb, ',');
		return;
	}
	n = strlen(key);
	if (n > sizeof(q) - 4 || json_plain_len((const uint8_t *)key, n, true) != n) {
		if (comma)
			strbuf_putc(j->sb, ',');
		put_string(j->sb, key, n);
		strbuf_putc(j->sb, ':');
		return;
	}
	k = 0;
	if (comma)
		q[k++] = ',';
	q[k++] = '"';
	memcpy(q + k, key, n);
	k += n;
	q[k++] = '"';
	q[k++] = ':';
	strbuf_put(j->sb, q, k);
}

void jsonl_begin(struct jsonl *j, struct strbuf *sb, struct strbuf *esc)
{
	j->sb = sb;
	j->esc = esc;
	j->depth = 0;
	j->err = 0;
	jsonl_open(j, NULL, '{');
}

void jsonl_open(struct jsonl *j, const char *key, char bracket)
{
	jsonl_item(j, key);
	strbuf_putc(j->sb, bracket);
	if (j->depth == JSONL_DEPTH_MAX) { /* the caller's mistake: jsonl_end reports it */
		j->err = -EINVAL;
		return;
	}
	j->closing[j->depth] = bracket == '{' ? '}' : ']';
	j->empty[j->depth++] = true;
}

void jsonl_close(struct jsonl *j)
{
	if (j->depth)
		strbuf_putc(j->sb, j->closing[--j->depth]);
}

void jsonl_int(struct jsonl *j, const char *key, int64_t v)
{
	jsonl_item(j, key);
	strbuf_puti(j->sb, v);
}

void jsonl_u64(struct jsonl *j, const char *key, uint64_t v)
{
	jsonl_item(j, key);
	put_u64(j->sb, v);
}

void jsonl_bool(struct jsonl *j, const char *key, bool v)
{
	jsonl_item(j, key);
	put_bool(j->sb, v);
}

void jsonl_null(struct jsonl *j, const char *key)
{
	jsonl_item(j, key);
	put_null(j->sb);
}

void jsonl_strn(struct jsonl *j, const char *key, const char *s, size_t n)
{
	jsonl_item(j, key);
	put_string(j->sb, s, n);
}

void jsonl_str(struct jsonl *j, const char *key, const char *s)
{
	jsonl_strn(j, key, s, strlen(s));
}

void jsonl_bytes(struct jsonl *j, const char *key, const uint8_t *p, size_t n)
{
	jsonl_item(j, key);
	j->err = j->err ?: put_bytes(j->sb, j->esc, p, n);
}

int jsonl_end(struct jsonl *j)
{
	while (j->depth)
		jsonl_close(j);
	return j->err ?: strbuf_error(j->sb);
}
