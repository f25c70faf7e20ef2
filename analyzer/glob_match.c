/*
 * glob_match.c - matching a compiled glob (see glob.h, glob_int.h): prefilters, then an NFA
 * simulation that walks the subject once without backtracking, bit-parallel in one 64-bit
 * word for patterns of up to 63 tokens, on a byte array otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "glob_int.h"

bool glob_tok_accepts(const struct glob *g, const struct tok *t, uint8_t b)
{
	bool path = g->flags & GLOB_PATH;

	switch (t->kind) {
	case T_LIT:
		return b == t->c;
	case T_ANY:
	case T_STAR:
		return !(path && b == '/');
	case T_CLASS:
		return (g->classes[t->class][b >> 3] >> (b & 7)) & 1;
	case T_DSTAR:
	case T_DIR_LOOP:
		return true;
	default:
		return false;
	}
}

/* The full per-byte tables of g (adv, stay) and its epsilon edges into tb. A literal sets one
 * byte's bit; ?, *, ** and the directory loop accept every byte (but '/' for ? and * in a
 * path), so their bits are gathered into columns set on all bytes in one pass at the end; only
 * a class asks every byte value. */
static void fill_byte_tables(const struct glob *g, uint64_t adv[256], uint64_t stay[256],
			     struct glob_tables *tb)
{
	uint64_t adv_all = 0, stay_all = 0, adv_but_slash = 0, stay_but_slash = 0;
	bool path = g->flags & GLOB_PATH;

	for (size_t i = 0; i < g->n; i++) {
		const struct tok *t = &g->toks[i];
		uint64_t bit = 1ull << i;

		switch (t->kind) {
		case T_LIT: /* most tokens: one byte, no loop, no epsilon edge */
			adv[t->c] |= bit;
			break;
		case T_ANY:
			*(path ? &adv_but_slash : &adv_all) |= bit;
			break;
		case T_STAR:
			*(path ? &stay_but_slash : &stay_all) |= bit;
			tb->eps1 |= bit;
			break;
		case T_DSTAR:
			stay_all |= bit;
			tb->eps1 |= bit;
			break;
		case T_DIR_LOOP:
			stay_all |= bit;
			adv['/'] |= bit;
			break;
		case T_DIR_ENTRY: /* accepts no byte: two epsilon edges */
			tb->eps1 |= bit;
			tb->eps2 |= bit;
			break;
		case T_CLASS:
			for (unsigned b = 0; b < 256; b++)
				if (glob_tok_accepts(g, t, (uint8_t)b))
					adv[b] |= bit;
			break;
		}
	}
	for (unsigned b = 0; b < 256; b++) {
		adv[b] |= adv_all | (b == '/' ? 0 : adv_but_slash);
		stay[b] |= stay_all | (b == '/' ? 0 : stay_but_slash);
	}
}

/* Numbers the distinct (adv, stay) pairs into cls[], the first of each in rep[]; returns how
 * many. Neighbouring bytes mostly share a class, so the previous one is tried first. */
static size_t number_classes(const uint64_t adv[256], const uint64_t stay[256], uint8_t cls[256],
			     uint8_t rep[256])
{
	size_t n = 0, c;

	for (unsigned b = 0; b < 256; b++) {
		if (b && adv[b] == adv[b - 1] && stay[b] == stay[b - 1]) {
			cls[b] = cls[b - 1];
			continue;
		}
		for (c = 0; c < n && (adv[rep[c]] != adv[b] || stay[rep[c]] != stay[b]); c++)
			;
		if (c == n)
			rep[n++] = (uint8_t)b;
		cls[b] = (uint8_t)c;
	}
	return n;
}

int glob_build_tables(struct glob *g)
{
	uint64_t adv[256] = {0}, stay[256] = {0};
	struct glob_tables head = {0}, *tb;
	uint8_t rep[256];

	if (g->n > GLOB_FAST_MAX || g->literal) /* a literal is decided by the prefilter */
		return 0;
	fill_byte_tables(g, adv, stay, &head);
	head.n_cls = number_classes(adv, stay, head.cls, rep);
	tb = malloc(sizeof(*tb) + head.n_cls * sizeof(tb->by_class[0]));
	if (!tb)
		return -ENOMEM;
	*tb = head;
	for (size_t c = 0; c < head.n_cls; c++) {
		tb->by_class[c][0] = adv[rep[c]];
		tb->by_class[c][1] = stay[rep[c]];
	}
	g->tables = tb;
	return 0;
}

/* Follows epsilon edges to a fixed point (they only lead forward: at most n rounds). */
static uint64_t closure_bits(const struct glob_tables *tb, uint64_t s)
{
	uint64_t t;

	for (;;) {
		t = s | (s & tb->eps1) << 1 | (s & tb->eps2) << 2;
		if (t == s)
			return s;
		s = t;
	}
}

static bool match_fast(const struct glob *g, const uint8_t *s, size_t n, size_t from)
{
	const struct glob_tables *tb = g->tables;
	uint64_t st = closure_bits(tb, 1ull << from);

	for (size_t i = from; i < n && st; i++) {
		const uint64_t *as = tb->by_class[tb->cls[s[i]]];

		st = closure_bits(tb, (st & as[0]) << 1 | (st & as[1]));
	}
	return (st >> g->n) & 1;
}

/* The same on a byte array, for long patterns. */
static void closure(const struct glob *g, uint8_t *set)
{
	for (size_t i = 0; i < g->n; i++) {
		if (!set[i])
			continue;
		if (g->toks[i].kind == T_STAR || g->toks[i].kind == T_DSTAR ||
		    g->toks[i].kind == T_DIR_ENTRY)
			set[i + 1] = 1;
		if (g->toks[i].kind == T_DIR_ENTRY)
			set[i + 2] = 1;
	}
}

static bool step(const struct glob *g, const uint8_t *cur, uint8_t *nxt, uint8_t b)
{
	bool any = false;

	memset(nxt, 0, g->n + 1);
	for (size_t i = 0; i < g->n; i++) {
		const struct tok *t = &g->toks[i];
		bool loops = t->kind == T_STAR || t->kind == T_DSTAR || t->kind == T_DIR_LOOP;

		if (!cur[i] || !glob_tok_accepts(g, t, b))
			continue;
		if (loops)
			nxt[i] = 1;
		if (!loops || (t->kind == T_DIR_LOOP && b == '/'))
			nxt[i + 1] = 1;
	}
	closure(g, nxt);
	for (size_t i = 0; i <= g->n && !any; i++)
		any = nxt[i];
	return any;
}

static bool match_slow(const struct glob *g, const uint8_t *s, size_t n, size_t from)
{
	uint8_t stack[2][GLOB_MAX_TOKENS + 1];
	uint8_t *cur = stack[0], *nxt = stack[1], *tmp;

	memset(cur, 0, g->n + 1);
	cur[from] = 1;
	closure(g, cur);
	for (size_t i = from; i < n; i++) {
		if (!step(g, cur, nxt, s[i]))
			return false;
		tmp = cur, cur = nxt, nxt = tmp;
	}
	return cur[g->n];
}

/* Whether s holds the k (>= 1) bytes of lit. glibc's memmem prepares a two-way search on every
 * call, which costs more than searching a whole path: a short literal (most of them: "/.ssh/",
 * "id_rsa") is found by its first byte and compared, at most SHORT_LIT times n byte compares,
 * and a longer one is left to memmem and its linear bound. */
#define SHORT_LIT 16

static bool contains(const uint8_t *s, size_t n, const uint8_t *lit, size_t k)
{
	const uint8_t *p = s, *last;

	if (k > SHORT_LIT)
		return memmem(s, n, lit, k) != NULL;
	if (k > n)
		return false;
	last = s + (n - k);
	while (p <= last && (p = memchr(p, lit[0], (size_t)(last - p) + 1)) != NULL) {
		if (!memcmp(p + 1, lit + 1, k - 1))
			return true;
		p++;
	}
	return false;
}

/* Cheap necessary conditions: literal prefix, literal suffix, longest literal run. */
static bool prefilter(const struct glob *g, const uint8_t *s, size_t n)
{
	size_t k = g->lit_prefix, x = g->lit_suffix;

	if (n < k || (k && memcmp(s, g->lits, k) != 0))
		return false;
	if (g->literal)
		return n == k;
	if (x && (n < k + x || memcmp(s + n - x, g->lits + g->n - x, x) != 0))
		return false;
	if (g->req_len > k && g->req_len > x && !contains(s, n, g->lits + g->req_at, g->req_len))
		return false;
	return true;
}

bool glob_match(const struct glob *g, const uint8_t *s, size_t n)
{
	if (g->trim_slashes) /* "/w/sub/" is /w/sub, but "/" stays "/" */
		while (n > 1 && s[n - 1] == '/')
			n--;
	if (!prefilter(g, s, n))
		return false;
	if (g->literal)
		return true;
	if (g->tables)
		return match_fast(g, s, n, g->lit_prefix);
	return match_slow(g, s, n, g->lit_prefix);
}
