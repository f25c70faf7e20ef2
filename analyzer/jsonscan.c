/*
 * jsonscan.c - the streaming JSON structure scanner (see jsonscan.h).
 *
 * A small state machine over bytes. The bracket stack is a bitset (object or array per level),
 * so memory is constant whatever the input.
 */
#include <string.h>

#include "jsonscan.h"

enum {
	ST_VALUE,	 /* a value must come */
	ST_VALUE_OR_END, /* after '[': a value or ']' */
	ST_KEY,		 /* after ',' in an object: a key must come */
	ST_KEY_OR_END,	 /* after '{': a key or '}' */
	ST_COLON,	 /* after a key */
	ST_STRING,
	ST_ESC,
	ST_SCALAR, /* a number or literal */
	ST_AFTER,  /* after a value: ',' or a closing bracket (or nothing at top level) */
};

enum { WANT_NONE, WANT_ID, WANT_METHOD };

void jscan_init(struct jscan *s)
{
	memset(s, 0, sizeof(*s));
	s->state = ST_VALUE;
}

static void fail(struct jscan *s)
{
	if (!s->bad) {
		s->bad = true;
		s->bad_at = s->pos;
	}
}

static bool is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool in_object(const struct jscan *s)
{
	uint32_t d = s->depth - 1;

	return s->depth && (s->stack[d / 8] >> (d % 8)) & 1;
}

static struct jscan_token *token(struct jscan *s)
{
	return s->want == WANT_ID ? &s->id : s->want == WANT_METHOD ? &s->method : NULL;
}

static void capture_byte(struct jscan *s, uint8_t c)
{
	struct jscan_token *t = s->capturing ? token(s) : NULL;

	if (!t)
		return;
	if (t->len < sizeof(t->raw))
		t->raw[t->len++] = (char)c;
	else
		t->cut = true;
}

/* A value begins at the current depth: member values of the top-level object are captured. */
static void value_begins(struct jscan *s, bool container)
{
	struct jscan_token *t = s->depth == 1 && s->top == '{' ? token(s) : NULL;

	if (!s->started) {
		s->started = true;
		if (!container)
			s->top = 0; /* push() sets it for a container */
	}
	if (!t)
		return;
	t->present = true;
	t->len = 0;
	t->cut = container; /* an id or method that is an object or array: kept as "cut" */
	s->capturing = !container;
}

static void value_ends(struct jscan *s)
{
	if (s->depth == 1)
		s->want = WANT_NONE;
	s->capturing = false;
	if (s->depth == 0)
		s->done = true;
	s->state = ST_AFTER;
}

static void push(struct jscan *s, uint8_t c)
{
	uint32_t d = s->depth;

	if (d >= JSCAN_DEPTH_MAX) {
		fail(s);
		return;
	}
	if (!s->started)
		s->top = (char)c;
	value_begins(s, true);
	s->started = true;
	if (c == '{')
		s->stack[d / 8] |= (uint8_t)(1u << (d % 8));
	else
		s->stack[d / 8] &= (uint8_t) ~(1u << (d % 8));
	s->depth++;
	s->state = c == '{' ? ST_KEY_OR_END : ST_VALUE_OR_END;
}

static void pop(struct jscan *s, uint8_t c)
{
	if (!s->depth || in_object(s) != (c == '}')) {
		fail(s);
		return;
	}
	s->depth--;
	value_ends(s);
}

/* A key of the top-level object ended: which member is it? */
static void key_ends(struct jscan *s)
{
	s->in_key = false;
	s->want = WANT_NONE;
	if (s->key_long)
		return;
	if (s->key_len == 2 && !memcmp(s->key, "id", 2))
		s->want = WANT_ID;
	else if (s->key_len == 6 && !memcmp(s->key, "method", 6))
		s->want = WANT_METHOD;
	else if (s->key_len == 6 && !memcmp(s->key, "result", 6))
		s->has_result = true;
	else if (s->key_len == 5 && !memcmp(s->key, "error", 5))
		s->has_error = true;
	else if (s->key_len == 6 && !memcmp(s->key, "params", 6))
		s->has_params = true;
}

static void string_byte(struct jscan *s, uint8_t c)
{
	if (s->in_key) {
		if (c != '"' && s->key_len < sizeof(s->key))
			s->key[s->key_len++] = (char)c;
		else if (c != '"')
			s->key_long = true;
	} else {
		capture_byte(s, c);
	}
	if (s->state == ST_ESC) {
		s->state = ST_STRING;
		s->key_long |= s->in_key; /* escaped keys are never the ones we look for */
		return;
	}
	if (c == '\\') {
		s->state = ST_ESC;
	} else if (c == '"') {
		if (s->str_key) {
			if (s->in_key)
				key_ends(s);
			s->str_key = false;
			s->state = ST_COLON;
		} else {
			value_ends(s);
		}
	}
}

static bool scalar_char(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '.' || c == '+' || c == '-';
}

static bool scalar_start(uint8_t c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n';
}

static void start_value(struct jscan *s, uint8_t c)
{
	if (c == '{' || c == '[') {
		push(s, c);
	} else if (c == '"') {
		value_begins(s, false);
		capture_byte(s, c);
		s->state = ST_STRING;
	} else if (scalar_start(c)) {
		value_begins(s, false);
		capture_byte(s, c);
		s->state = ST_SCALAR;
	} else {
		if (!s->started)
			s->not_json = true;
		fail(s);
	}
}

static void start_key(struct jscan *s, uint8_t c)
{
	if (c != '"') {
		fail(s);
		return;
	}
	s->in_key = s->depth == 1 && s->top == '{';
	s->str_key = true;
	s->key_len = 0;
	s->key_long = false;
	s->state = ST_STRING;
}

static void after_value(struct jscan *s, uint8_t c)
{
	if (s->done || !s->depth)
		fail(s); /* trailing bytes after the top-level value */
	else if (c == ',')
		s->state = in_object(s) ? ST_KEY : ST_VALUE;
	else if (c == '}' || c == ']')
		pop(s, c);
	else
		fail(s);
}

static void step(struct jscan *s, uint8_t c)
{
	switch (s->state) {
	case ST_STRING:
	case ST_ESC:
		string_byte(s, c);
		return;
	case ST_SCALAR:
		if (scalar_char(c)) {
			capture_byte(s, c);
			return;
		}
		value_ends(s);
		break; /* c is processed again below */
	default:
		break;
	}
	if (is_ws(c))
		return;
	switch (s->state) {
	case ST_VALUE_OR_END:
		if (c == ']')
			pop(s, c);
		else
			start_value(s, c);
		break;
	case ST_VALUE:
		start_value(s, c);
		break;
	case ST_KEY_OR_END:
		if (c == '}')
			pop(s, c);
		else
			start_key(s, c);
		break;
	case ST_KEY:
		start_key(s, c);
		break;
	case ST_COLON:
		if (c == ':')
			s->state = ST_VALUE;
		else
			fail(s);
		break;
	case ST_AFTER:
		after_value(s, c);
		break;
	}
}

void jscan_feed(struct jscan *s, const uint8_t *p, size_t n)
{
	size_t i;

	/* after an error bad_at stays where it was and later bytes are only counted */
	for (i = 0; i < n && !s->bad; i++, s->pos++)
		step(s, p[i]);
	s->pos += n - i;
}

enum jscan_verdict jscan_end(const struct jscan *s)
{
	if (s->not_json)
		return JSCAN_NOT_JSON;
	if (s->bad)
		return JSCAN_UNBALANCED;
	if (!s->started)
		return JSCAN_EMPTY;
	/* a scalar at top level ends with the text */
	if (s->state == ST_SCALAR && s->depth == 0)
		return JSCAN_BALANCED;
	return s->done ? JSCAN_BALANCED : JSCAN_UNBALANCED;
}
