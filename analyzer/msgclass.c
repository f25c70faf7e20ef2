/*
 * msgclass.c - classifying a channel line: the strict validator and jansson (see msgclass.h).
 *
 * The validator declines (returns false) at the first thing it does not prove: declining costs
 * a jansson parse, a wrong "yes" would change a report. So every rule below is the narrower of
 * JSON's grammar and jansson's lexer.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "jsonbytes.h"
#include "msgclass.h"
#include "strbuf.h"

#define LITE_DEPTH_MAX 512

enum vtype { VT_NONE, VT_STR, VT_INT, VT_REAL, VT_OBJ, VT_ARR, VT_LIT };

struct span {
	const uint8_t *s; /* a string: inside the quotes */
	size_t n;
	enum vtype type;
	bool esc;      /* a string with a backslash */
	bool recoded;  /* a string with \u or \/ escapes: jansson writes it otherwise */
	bool neg_zero; /* an integer written -0 (jansson writes it 0) */
};

/* The members of the object classification reads. */
struct members {
	struct span id, method;
	bool has_id, has_method, has_result, has_error;
};

struct lite {
	const uint8_t *p, *end;
	unsigned depth;
	struct jtape *tape;	/* NULL: validate only */
	const struct span *key; /* the key of the value that comes next (tape) */
};

static bool value(struct lite *j, struct span *v, struct members *m);

static void skip_ws(struct lite *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A \u escape at p (p[0] == 'u'): true when jansson keeps it and it is neither NUL nor half
 * of a surrogate pair (those are declined). */
static bool u_escape(const uint8_t *p, const uint8_t *end)
{
	unsigned v = 0;

	if (end - p < 5)
		return false;
	for (int i = 1; i < 5; i++) {
		int h = hexval(p[i]);

		if (h < 0)
			return false;
		v = v << 4 | (unsigned)h;
	}
	return v && (v < 0xd800 || v > 0xdfff);
}

static bool string(struct lite *j, struct span *v)
{
	const uint8_t *p = j->p + 1, *end = j->end;
	uint32_t cp;
	size_t k;

	v->type = VT_STR;
	v->s = p;
	v->esc = v->recoded = false;
	while ((p += json_plain_len(p, (size_t)(end - p), false)) < end) {
		uint8_t c = *p;

		if (c == '"') {
			v->n = (size_t)(p - v->s);
			j->p = p + 1;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			v->esc = true;
			if (end - p < 2)
				return false;
			c = p[1];
			if (c == 'u') {
				if (!u_escape(p + 1, end))
					return false;
				v->recoded = true;
				p += 6;
			} else if (c == '/') {
				v->recoded = true;
				p += 2;
			} else if (c == '"' || c == '\\' || c == 'b' || c == 'f' || c == 'n' ||
				   c == 'r' || c == 't') {
				p += 2;
			} else {
				return false;
			}
		} else if (c >= 0x80) {
			if (!(k = strbuf_utf8_seq(p, (size_t)(end - p), &cp)))
				return false;
			p += k;
		} else {
			p++;
		}
	}
	return false;
}

static bool is_digit(const struct lite *j, const uint8_t *p)
{
	return p < j->end && *p >= '0' && *p <= '9';
}

static bool number(struct lite *j, struct span *v)
{
	const uint8_t *p = j->p, *digits;
	size_t n_exp = 0;

	v->s = p;
	v->type = VT_INT;
	if (*p == '-')
		p++;
	digits = p;
	if (!is_digit(j, p))
		return false;
	if (*p == '0') {
		if (is_digit(j, ++p))
			return false;
	} else {
		while (is_digit(j, p))
			p++;
	}
	v->neg_zero = digits != v->s && p - digits == 1 && *digits == '0';
	if (p - digits > 18)
		return false; /* may be too big for jansson's json_int_t */
	if (p < j->end && *p == '.') {
		v->type = VT_REAL;
		if (!is_digit(j, ++p))
			return false;
		while (is_digit(j, p))
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		v->type = VT_REAL;
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		while (is_digit(j, p))
			p++, n_exp++;
		if (n_exp < 1 || n_exp > 2)
			return false; /* none is invalid; more could overflow a double */
	}
	if (p - v->s > 100)
		return false;
	v->n = (size_t)(p - v->s);
	j->p = p;
	return true;
}

static bool literal(struct lite *j, struct span *v, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		return false;
	j->p += n;
	v->type = VT_LIT;
	/* jansson reads a run of letters as one word: "truex" is not "true" */
	return j->p >= j->end || !((*j->p | 0x20) >= 'a' && (*j->p | 0x20) <= 'z');
}

static bool key_is(const struct span *k, const char *name)
{
	size_t n = strlen(name);

	return k->n == n && !memcmp(k->s, name, n);
}

/* A member of the classified object: false when it is read twice (jansson keeps the last). */
static bool note_member(struct members *m, const struct span *k, const struct span *v)
{
	bool *seen = NULL;

	if (k->esc)
		return false; /* it could spell one of ours */
	if (key_is(k, "id"))
		seen = &m->has_id, m->id = *v;
	else if (key_is(k, "method"))
		seen = &m->has_method, m->method = *v;
	else if (key_is(k, "result"))
		seen = &m->has_result;
	else if (key_is(k, "error"))
		seen = &m->has_error;
	if (!seen)
		return true;
	if (*seen)
		return false;
	*seen = true;
	return true;
}

/* After a member or element: 1 at a comma (skipped), 0 at the closing bracket (skipped), -1
 * at anything else. */
static int separator(struct lite *j, char close)
{
	skip_ws(j);
	if (j->p >= j->end)
		return -1;
	if (*j->p == close) {
		j->p++;
		return 0;
	}
	if (*j->p != ',')
		return -1;
	j->p++;
	skip_ws(j);
	return 1;
}

static bool object(struct lite *j, struct members *m)
{
	struct span k, v;
	int sep;

	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	for (;;) {
		if (j->p >= j->end || *j->p != '"' || !string(j, &k))
			return false;
		skip_ws(j);
		if (j->p >= j->end || *j->p != ':' || (j->tape && k.esc))
			return false; /* the tape finds members by their text: no escaped key */
		j->p++;
		skip_ws(j);
		j->key = &k;
		if (!value(j, &v, NULL) || (m && !note_member(m, &k, &v)))
			return false;
		if ((sep = separator(j, '}')) <= 0)
			return sep == 0;
	}
}

/* m: the members of the first element when it is an object. */
static bool array(struct lite *j, struct members *m)
{
	struct span v;
	bool first = true;
	int sep;

	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	for (;;) {
		if (!value(j, &v, first ? m : NULL))
			return false;
		first = false;
		if ((sep = separator(j, ']')) <= 0)
			return sep == 0;
	}
}

/* m (may be NULL): where an object's members go when it is the classified one. */
static bool value_of(struct lite *j, struct span *v, struct members *m)
{
	bool ok;

	v->type = VT_NONE;
	v->esc = v->recoded = v->neg_zero = false;
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '"':
		return string(j, v);
	case '{':
	case '[':
		if (++j->depth > LITE_DEPTH_MAX)
			return false;
		v->type = *j->p == '{' ? VT_OBJ : VT_ARR;
		ok = v->type == VT_OBJ ? object(j, m) : array(j, NULL);
		j->depth--;
		return ok;
	case 't':
		return literal(j, v, "true", 4);
	case 'f':
		return literal(j, v, "false", 5);
	case 'n':
		return literal(j, v, "null", 4);
	default:
		return number(j, v);
	}
}

/* --- the tape ------------------------------------------------------------------------------- */

static bool tape_grow(struct jtape *t)
{
	struct jt_node *n;

	if (t->cap >= JT_NODES_MAX)
		return false;
	n = realloc(t->n == t->small ? NULL : t->n, 2 * t->cap * sizeof(*n));
	if (!n)
		return false;
	if (t->n == t->small)
		memcpy(n, t->small, sizeof(t->small));
	t->n = n;
	t->cap *= 2;
	return true;
}

static bool tape_open(struct lite *j, uint32_t *at)
{
	struct jtape *t = j->tape;
	struct jt_node *n;

	if (t->count == t->cap && !tape_grow(t))
		return false;
	*at = t->count++;
	n = &t->n[*at];
	n->start = (uint32_t)(j->p - t->text);
	n->member = j->key != NULL;
	n->key = j->key ? (uint32_t)(j->key->s - t->text) : 0;
	n->key_len = j->key ? (uint32_t)j->key->n : 0;
	j->key = NULL;
	return true;
}

/* jansson keeps the last of repeated keys: a tape never has them. */
static bool keys_unique(const struct jtape *t, uint32_t obj)
{
	const struct jt_node *end = &t->n[t->n[obj].next], *a, *b;

	for (a = &t->n[obj + 1]; a < end; a = &t->n[a->next])
		for (b = &t->n[a->next]; b < end; b = &t->n[b->next])
			if (a->key_len == b->key_len &&
			    !memcmp(t->text + a->key, t->text + b->key, a->key_len))
				return false;
	return true;
}

static bool tape_close(struct lite *j, uint32_t at, const struct span *v)
{
	static const uint8_t type[] = {[VT_STR] = JT_STR,
				       [VT_INT] = JT_INT,
				       [VT_REAL] = JT_REAL,
				       [VT_OBJ] = JT_OBJ,
				       [VT_ARR] = JT_ARR};
	struct jtape *t = j->tape;
	struct jt_node *n = &t->n[at];
	uint8_t first = t->text[n->start];

	n->len = (uint32_t)(j->p - t->text) - n->start;
	n->next = t->count;
	n->type = v->type == VT_LIT ? (first == 't'   ? JT_TRUE
				       : first == 'f' ? JT_FALSE
						      : JT_NULL)
				    : type[v->type];
	n->esc = v->esc;
	n->canon = !v->recoded && !v->neg_zero && v->type != VT_REAL;
	return n->type != JT_OBJ || keys_unique(t, at);
}

/* Every value is recorded when there is a tape. */
static bool value(struct lite *j, struct span *v, struct members *m)
{
	uint32_t at = 0;

	if (j->tape && !tape_open(j, &at))
		return false;
	if (!value_of(j, v, m))
		return false;
	return !j->tape || tape_close(j, at, v);
}

/* The top-level value: an object is classified, a batch by its first element. */
static bool lite(const uint8_t *data, size_t len, struct span *top, struct members *m)
{
	struct lite j = {.p = data, .end = data + len};
	bool ok;

	skip_ws(&j);
	if (j.p < j.end && *j.p == '[') {
		j.depth = 1;
		top->type = VT_ARR;
		ok = array(&j, m);
	} else {
		ok = value(&j, top, m);
	}
	skip_ws(&j);
	return ok && j.p == j.end;
}

static void set_id(struct msgclass *mc, const char *s, size_t n)
{
	if (n <= MSGCLASS_ID_INLINE) {
		memcpy(mc->idbuf, s, n);
		mc->idbuf[n] = '\0';
		mc->id = mc->idbuf;
	} else {
		mc->id = strndup(s, n); /* NULL on ENOMEM: no id, as call_id_canon would give */
	}
}

/* The validator's answer; false when it declines (mc untouched but for kind). */
static bool classify_lite(struct msgclass *mc, const uint8_t *data, size_t len)
{
	struct members m = {0};
	struct span top = {0}, *id = &m.id;

	if (!lite(data, len, &top, &m))
		return false;
	if (top.type == VT_OBJ && m.has_id &&
	    ((id->type == VT_STR && id->esc) || id->type == VT_REAL || id->neg_zero))
		return false; /* jansson would write this id in another form */
	if (m.has_method && m.method.type == VT_STR && m.method.esc)
		return false;
	if (m.has_method && m.method.type == VT_STR) {
		mc->method = (const char *)m.method.s;
		mc->method_len = m.method.n;
		mc->kind = m.has_id ? MSG_REQUEST : MSG_NOTIFICATION;
	} else if (m.has_result || m.has_error) {
		mc->kind = MSG_RESPONSE;
	}
	if (top.type == VT_OBJ && m.has_id && id->type == VT_STR)
		set_id(mc, (const char *)id->s - 1, id->n + 2); /* with its quotes */
	else if (top.type == VT_OBJ && m.has_id && id->type == VT_INT)
		set_id(mc, (const char *)id->s, id->n);
	return true;
}

void msgclass_line_jansson(struct msgclass *mc, const uint8_t *data, size_t len)
{
	json_t *doc, *o;

	memset(mc, 0, sizeof(*mc));
	mc->kind = MSG_OTHER;
	if (!data)
		return;
	doc = json_loadb((const char *)data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	mc->doc = doc;
	o = json_is_array(doc) ? json_array_get(doc, 0) : doc;
	if (!json_is_object(o))
		return;
	mc->method = json_string_value(json_object_get(o, "method"));
	if (mc->method) {
		mc->method_len = strlen(mc->method);
		mc->kind = json_object_get(o, "id") ? MSG_REQUEST : MSG_NOTIFICATION;
	} else if (json_object_get(o, "result") || json_object_get(o, "error")) {
		mc->kind = MSG_RESPONSE;
	}
	if (o == doc && json_object_get(o, "id"))
		mc->id = call_id_canon(json_object_get(o, "id"));
}

void msgclass_line(struct msgclass *mc, const uint8_t *data, size_t len)
{
	memset(mc, 0, sizeof(*mc));
	mc->kind = MSG_OTHER;
	if (!data)
		return;
	if (!classify_lite(mc, data, len))
		msgclass_line_jansson(mc, data, len);
}

void msgclass_fini(struct msgclass *mc)
{
	if (mc->id != mc->idbuf)
		free(mc->id);
	json_decref(mc->doc);
	mc->id = NULL;
	mc->doc = NULL;
}

bool msgclass_tape(struct jtape *t, const uint8_t *data, size_t len)
{
	struct lite j = {.p = data, .end = data + len, .tape = t};
	struct span top;

	t->text = data;
	t->n = t->small;
	t->count = 0;
	t->cap = JT_NODES_INLINE;
	if (!data || len > UINT32_MAX)
		return false;
	skip_ws(&j);
	if (j.p >= j.end || *j.p != '{' || !value(&j, &top, NULL))
		return false;
	skip_ws(&j);
	return j.p == j.end;
}

void jtape_fini(struct jtape *t)
{
	if (t->n != t->small)
		free(t->n);
	t->n = t->small;
}
