/*
 * glob.c - glob compilation into a token list (see glob.h; matching is in glob_match.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "glob_int.h"

struct compiler {
	struct glob *g;
	const char *pat;
	size_t len, pos;
	glob_var_fn var;
	void *ctx;
	char *err;
	size_t errlen;
	size_t cap, class_cap;
};

static int fail(struct compiler *c, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct compiler *c, int e, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -e;
}

static int push(struct compiler *c, uint8_t kind, uint8_t ch, uint16_t cls)
{
	struct glob *g = c->g;
	struct tok *t;

	if (g->n >= GLOB_MAX_TOKENS)
		return fail(c, EINVAL, "pattern longer than the limit (%d tokens)",
			    GLOB_MAX_TOKENS);
	if (g->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;

		t = realloc(g->toks, cap * sizeof(*t));
		if (!t)
			return fail(c, ENOMEM, "out of memory");
		g->toks = t;
		c->cap = cap;
	}
	g->toks[g->n++] = (struct tok){.kind = kind, .c = ch, .class = cls};
	return 0;
}

static bool at_component_start(const struct compiler *c)
{
	const struct glob *g = c->g;

	const struct tok *t = g->n ? &g->toks[g->n - 1] : NULL;

	return !t || (t->kind == T_LIT && t->c == '/') || t->kind == T_DIR_LOOP;
}

static int new_class(struct compiler *c, uint8_t **set)
{
	struct glob *g = c->g;

	if (g->n_classes >= UINT16_MAX)
		return fail(c, EINVAL, "too many character classes");
	if (g->n_classes == c->class_cap) {
		size_t cap = c->class_cap ? c->class_cap * 2 : 4;
		void *p = realloc(g->classes, cap * sizeof(*g->classes));

		if (!p)
			return fail(c, ENOMEM, "out of memory");
		g->classes = p;
		c->class_cap = cap;
	}
	*set = g->classes[g->n_classes];
	memset(*set, 0, 32);
	return (int)g->n_classes++;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* The byte an escape stands for, c->pos just after the '\' (which must not be last): "\xHH"
 * is the byte 0xHH (so a pattern can name a byte that is not valid UTF-8, which a YAML file
 * cannot hold), anything else is the next byte itself. */
static uint8_t escaped_byte(struct compiler *c)
{
	int hi, lo;

	if (c->pat[c->pos] == 'x' && c->pos + 2 < c->len &&
	    (hi = hex_digit(c->pat[c->pos + 1])) >= 0 &&
	    (lo = hex_digit(c->pat[c->pos + 2])) >= 0) {
		c->pos += 3;
		return (uint8_t)(hi << 4 | lo);
	}
	return (uint8_t)c->pat[c->pos++];
}

/* Reads one class member byte at c->pos (handling '\' escapes); -1 at the end. */
static int class_byte(struct compiler *c)
{
	if (c->pos >= c->len)
		return -1;
	if (c->pat[c->pos] == '\\') {
		if (++c->pos >= c->len)
			return -1;
		return escaped_byte(c);
	}
	return (uint8_t)c->pat[c->pos++];
}

static int parse_class(struct compiler *c)
{
	size_t start = c->pos - 1; /* the '[' */
	bool neg = false, first = true;
	uint8_t *set = NULL;
	int idx, lo, hi;

	idx = new_class(c, &set);
	if (idx < 0)
		return idx;
	if (c->pos < c->len && (c->pat[c->pos] == '!' || c->pat[c->pos] == '^')) {
		neg = true;
		c->pos++;
	}
	for (;;) {
		if (c->pos >= c->len)
			return fail(c, EINVAL, "unterminated character class at offset %zu", start);
		if (c->pat[c->pos] == ']' && !first) {
			c->pos++;
			break;
		}
		first = false;
		lo = class_byte(c);
		if (lo < 0)
			return fail(c, EINVAL, "unterminated character class at offset %zu", start);
		hi = lo;
		if (c->pos + 1 < c->len && c->pat[c->pos] == '-' && c->pat[c->pos + 1] != ']') {
			c->pos++;
			hi = class_byte(c);
			if (hi < 0)
				return fail(c, EINVAL, "unterminated character class at offset %zu",
					    start);
			if (hi < lo)
				return fail(c, EINVAL,
					    "reversed range in character class at offset %zu",
					    start);
		}
		for (int b = lo; b <= hi; b++)
			set[b >> 3] |= (uint8_t)(1u << (b & 7));
	}
	if (neg)
		for (int i = 0; i < 32; i++)
			set[i] = (uint8_t)~set[i];
	if (c->g->flags & GLOB_PATH)
		set['/' >> 3] &= (uint8_t) ~(1u << ('/' & 7));
	return push(c, T_CLASS, 0, (uint16_t)idx);
}

static int parse_stars(struct compiler *c)
{
	size_t n = 1;

	while (c->pos < c->len && c->pat[c->pos] == '*') {
		c->pos++;
		n++;
	}
	if (n == 1 || !(c->g->flags & GLOB_PATH))
		return push(c, T_STAR, 0, 0);
	if (c->pos < c->len && c->pat[c->pos] == '/' && at_component_start(c)) {
		int err = push(c, T_DIR_ENTRY, 0, 0);

		c->pos++;
		return err ? err : push(c, T_DIR_LOOP, 0, 0);
	}
	return push(c, T_DSTAR, 0, 0);
}

static bool var_name_ok(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	return true;
}

static int parse_var(struct compiler *c)
{
	size_t start = c->pos - 1, nlen; /* the '$' */
	const char *name = c->pat + c->pos + 1, *end, *val = NULL;
	char buf[64];
	size_t vlen = 0;
	int err;

	end = memchr(name, '}', c->len - c->pos - 1);
	if (!end)
		return fail(c, EINVAL, "unterminated ${ at offset %zu", start);
	nlen = (size_t)(end - name);
	if (!var_name_ok(name, nlen) || nlen >= sizeof(buf))
		return fail(c, EINVAL, "bad variable name at offset %zu", start);
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	c->pos += nlen + 2;
	if (!c->var)
		return fail(c, EINVAL, "variables are not allowed here (offset %zu)", start);
	err = c->var(c->ctx, buf, &val, &vlen);
	if (err == -ENOENT && c->err && c->errlen)
		snprintf(c->err, c->errlen, "unknown variable ${%s}", buf);
	else if (err == -ENODATA && c->err && c->errlen)
		snprintf(c->err, c->errlen, "variable ${%s} has no value", buf);
	if (err)
		return err < 0 ? err : -EINVAL;
	if (vlen > 0 && val[vlen - 1] == '/' && c->pos < c->len && c->pat[c->pos] == '/')
		vlen--;
	for (size_t i = 0; i < vlen; i++) {
		err = push(c, T_LIT, (uint8_t)val[i], 0);
		if (err)
			return err;
	}
	return 0;
}

static int parse_one(struct compiler *c)
{
	char ch = c->pat[c->pos++];

	switch (ch) {
	case '*':
		return parse_stars(c);
	case '?':
		return push(c, T_ANY, 0, 0);
	case '[':
		return parse_class(c);
	case '\\':
		if (c->pos >= c->len)
			return fail(c, EINVAL, "trailing backslash at offset %zu", c->pos - 1);
		return push(c, T_LIT, escaped_byte(c), 0);
	case '$':
		if (c->pos < c->len && c->pat[c->pos] == '{')
			return parse_var(c);
		return push(c, T_LIT, '$', 0);
	default:
		return push(c, T_LIT, (uint8_t)ch, 0);
	}
}

/* The longest run of literal tokens: a substring every match contains. */
static void find_required(struct glob *g)
{
	size_t best = 0, at = 0, run = 0;

	for (size_t i = 0; i <= g->n; i++) {
		if (i < g->n && g->toks[i].kind == T_LIT) {
			run++;
			continue;
		}
		if (run > best)
			best = run, at = i - run;
		run = 0;
	}
	g->req_at = at;
	g->req_len = best;
	for (run = 0; run < g->n && g->toks[g->n - 1 - run].kind == T_LIT; run++)
		;
	g->lit_suffix = run;
}

/* Path mode: a glob that does not end in '/' matches a path as if its trailing slashes were not
 * there (glob_match), so "dir/" "**" never matches dir, however the path spells it. One that
 * ends in '/' asks for the slash: it matches byte for byte, as learn's literals need. */
static bool ends_in_slash(const struct glob *g)
{
	const struct tok *t = g->n ? &g->toks[g->n - 1] : NULL;

	return t && ((t->kind == T_LIT && t->c == '/') || t->kind == T_DIR_LOOP);
}

static int finish(struct glob *g)
{
	size_t i;

	g->trim_slashes = (g->flags & GLOB_PATH) && !ends_in_slash(g);

	for (i = 0; i < g->n && g->toks[i].kind == T_LIT; i++)
		;
	g->lit_prefix = i;
	g->literal = i == g->n;
	find_required(g);
	g->lits = malloc(g->n ? g->n : 1);
	if (!g->lits)
		return -ENOMEM;
	for (i = 0; i < g->n; i++)
		g->lits[i] = g->toks[i].c;
	return glob_build_tables(g);
}

struct glob *glob_compile(const char *pat, size_t len, unsigned flags, glob_var_fn var, void *ctx,
			  char *err, size_t errlen)
{
	struct compiler c = {
		.pat = pat, .len = len, .var = var, .ctx = ctx, .err = err, .errlen = errlen};
	int rc = 0;

	if (err && errlen)
		err[0] = '\0';
	c.g = calloc(1, sizeof(*c.g));
	if (!c.g) {
		errno = ENOMEM;
		return NULL;
	}
	c.g->flags = flags;
	while (c.pos < c.len && rc == 0)
		rc = parse_one(&c);
	if (rc == 0)
		rc = finish(c.g);
	if (rc) {
		glob_free(c.g);
		errno = -rc;
		return NULL;
	}
	return c.g;
}

bool glob_is_literal(const struct glob *g)
{
	return g->literal;
}

void glob_free(struct glob *g)
{
	if (!g)
		return;
	free(g->toks);
	free(g->classes);
	free(g->lits);
	free(g->tables);
	free(g);
}
