/*
 * evidence.c - matching an event's paths, address and argv against a call's argument strings
 * (see evidence.h).
 */
#include <stdio.h>
#include <string.h>

#include "evidence.h"
#include "strbuf.h"

static bool alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c >= 0x80;
}

/* Where needle occurs in hay such that before(prev) and after(next) hold, or NULL. */
static const uint8_t *find(const uint8_t *hay, size_t hn, const uint8_t *nd, size_t nn,
			   bool (*ok)(const uint8_t *hay, size_t hn, size_t at, size_t nn))
{
	if (!nn || nn > hn)
		return NULL;
	for (size_t i = 0; i + nn <= hn; i++) {
		if (hay[i] == nd[0] && !memcmp(hay + i, nd, nn) && ok(hay, hn, i, nn))
			return hay + i;
	}
	return NULL;
}

/* An argument inside a path: at a component start, ending at a component or suffix boundary
 * ("/work/a.txt" in "/work/a.txt.tmp-1"). */
static bool in_path(const uint8_t *hay, size_t hn, size_t at, size_t nn)
{
	bool start = at == 0 || hay[at - 1] == '/' || hay[at] == '/';

	return start && (at + nn == hn || !alnum(hay[at + nn]) || hay[at + nn - 1] == '/');
}

/* A path or word inside an argument: not glued to letters or digits on either side. */
static bool in_text(const uint8_t *hay, size_t hn, size_t at, size_t nn)
{
	bool start = at == 0 || !alnum(hay[at - 1]) || !alnum(hay[at]);

	return start && (at + nn == hn || !alnum(hay[at + nn]) || hay[at + nn] == '.' ||
			 !alnum(hay[at + nn - 1]));
}

/* An IP inside text: not part of a longer number or name. */
static bool in_ip(const uint8_t *hay, size_t hn, size_t at, size_t nn)
{
	bool start = at == 0 || (!alnum(hay[at - 1]) && hay[at - 1] != '.');

	return start && (at + nn == hn || (!alnum(hay[at + nn]) && hay[at + nn] != '.'));
}

static size_t trim_slash(const char *a, size_t n)
{
	while (n > 1 && a[n - 1] == '/')
		n--;
	return n;
}

static size_t score_path(const char *arg, const struct ev_bytes *p)
{
	size_t an = trim_slash(arg, strlen(arg));
	const uint8_t *a = (const uint8_t *)arg;

	if (!p->n)
		return 0;
	if (an == p->n && !memcmp(a, p->p, an))
		return 2 * an + 1; /* named exactly: more specific than any containment */
	if (an >= 2 && find(p->p, p->n, a, an, in_path))
		return 2 * an;
	if (p->n >= 4 && p->p[0] == '/' && find(a, strlen(arg), p->p, p->n, in_text))
		return 2 * p->n;
	return 0;
}

static size_t score_word(const char *arg, const struct ev_bytes *w)
{
	const uint8_t *a = (const uint8_t *)arg;
	size_t an = strlen(arg);

	if (an == w->n && !memcmp(a, w->p, an))
		return 2 * an + 1;
	if (w->n >= 3 && find(a, an, w->p, w->n, in_text))
		return 2 * w->n;
	if (an >= 3 && find(w->p, w->n, a, an, in_text))
		return 2 * an;
	return 0;
}

static size_t score_addr(const char *arg, const struct mw_sockaddr *sa)
{
	struct strbuf ip = STRBUF_INIT;
	char port[8];
	size_t s = 0, an = strlen(arg);
	const uint8_t *a = (const uint8_t *)arg, *at;

	if (sa->kind != SA_INET && sa->kind != SA_INET6)
		return 0;
	sockaddr_format_ip(&ip, &sa->ip);
	if (strbuf_str(&ip) && ip.len >= 3 &&
	    (at = find(a, an, (const uint8_t *)ip.buf, ip.len, in_ip))) {
		s = ip.len;
		snprintf(port, sizeof(port), ":%u", sa->port);
		if (!strncmp((const char *)at + ip.len, port, strlen(port)) ||
		    (at + ip.len < a + an && at[ip.len] == ']' &&
		     !strncmp((const char *)at + ip.len + 1, port, strlen(port))))
			s += strlen(port);
	}
	strbuf_fini(&ip);
	return 2 * s;
}

static size_t score_one(const char *arg, const struct ev_view *v)
{
	const struct ev_bytes *paths[] = {&v->subject, &v->path, &v->opened, &v->path2, &v->abs2};
	struct ev_bytes w;
	size_t best = 0, s, pos = 0;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if ((s = score_path(arg, paths[i])) > best)
			best = s;
	if (event_addr(v) && (s = score_addr(arg, event_addr(v))) > best)
		best = s;
	while (v->argv.n && event_argv_next(&v->argv, &pos, &w))
		if ((s = score_word(arg, &w)) > best)
			best = s;
	return best;
}

size_t evidence_score(const struct call *c, const struct ev_view *v, const char **matched)
{
	size_t best = 0, s;

	*matched = NULL;
	for (size_t i = 0; i < c->n_ev; i++) {
		s = score_one(c->ev[i], v);
		if (s > best) {
			best = s;
			*matched = c->ev[i];
		}
	}
	return best;
}

size_t evidence_score_argv(const struct call *c, const uint8_t *argv, size_t len,
			   const char **matched)
{
	struct ev_view v;

	memset(&v, 0, sizeof(v));
	v.argv = (struct ev_bytes){argv, len};
	return evidence_score(c, &v, matched);
}
