/*
 * exec_search.c - failed exec attempts grouped into PATH searches (exec_search.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec_search.h"

/* The program name of an exec's path (after its last '/'), or false when it has none. */
static bool exec_base(const struct ev_view *v, const uint8_t **b, size_t *n)
{
	const uint8_t *p = v->path.p, *slash;

	if (!v->path.n)
		return false;
	slash = memrchr(p, '/', v->path.n);
	*b = slash ? slash + 1 : p;
	*n = v->path.n - (size_t)(*b - p);
	return *n > 0 && *n < sizeof(((struct exec_search *)0)->base);
}

void exec_search_fini(struct exec_search *x)
{
	free(x->packed);
	strbuf_fini(&x->paths);
}

void exec_searches_fini(struct exec_searches *s)
{
	for (size_t i = 0; i < s->n; i++)
		exec_search_fini(&s->v[i]);
	free(s->v);
	*s = (struct exec_searches){0};
}

struct exec_search *exec_search_find(const struct exec_searches *s, const struct ev_view *v)
{
	uint32_t old_tid =
		v->op == MCPT__OP__OP_EXEC && v->raw->n_args ? (uint32_t)v->raw->args[0] : 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].tid == v->tid || (old_tid && s->v[i].tid == old_tid))
			return &s->v[i];
	return NULL;
}

bool exec_search_same(const struct exec_search *x, const struct ev_view *v)
{
	const uint8_t *b;
	size_t n;

	if (v->op != MCPT__OP__OP_EXEC && v->op != MCPT__OP__OP_EXEC_FAILED)
		return false;
	return exec_base(v, &b, &n) && n == strlen(x->base) && memcmp(b, x->base, n) == 0;
}

int exec_search_keep(struct exec_search *x, const struct ev_view *v, uint64_t index)
{
	size_t len = mcpt__event__get_packed_size(v->raw);
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return -ENOMEM;
	free(x->packed);
	x->packed = buf;
	x->len = mcpt__event__pack(v->raw, buf);
	x->index = index;
	if (x->count++)
		strbuf_puts(&x->paths, ", ");
	strbuf_escape(&x->paths, v->path.p, v->path.n, 0);
	return strbuf_error(&x->paths);
}

int exec_search_start(struct exec_searches *s, const struct ev_view *v, uint64_t index)
{
	struct exec_search *x;
	const uint8_t *b;
	size_t n;

	if (s->n >= EXEC_SEARCH_MAX || !exec_base(v, &b, &n))
		return 1; /* not held: evaluated on its own */
	x = realloc(s->v, (s->n + 1) * sizeof(*x));
	if (!x)
		return -ENOMEM;
	s->v = x;
	x = &s->v[s->n++];
	memset(x, 0, sizeof(*x));
	x->paths = (struct strbuf)STRBUF_INIT;
	x->tid = v->tid;
	memcpy(x->base, b, n);
	return exec_search_keep(x, v, index);
}

void exec_search_take(struct exec_searches *s, struct exec_search *x, struct exec_search *out)
{
	*out = *x;
	*x = s->v[--s->n];
}

void exec_search_drop(struct exec_searches *s, struct exec_search *x)
{
	exec_search_fini(x);
	*x = s->v[--s->n];
}
