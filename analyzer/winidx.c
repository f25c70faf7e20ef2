/*
 * winidx.c - interval stabbing with a max-end segment tree (see winidx.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "winidx.h"

struct winidx {
	struct win *w; /* sorted by begin, then call */
	size_t n;
	uint64_t *maxend; /* segment tree over w[], size 2 * size */
	size_t size;	  /* leaves: a power of two >= n */
};

static int cmp_win(const void *a, const void *b)
{
	const struct win *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->call < y->call ? -1 : x->call > y->call;
}

struct winidx *winidx__new(const struct win *w, size_t n)
{
	struct winidx *wi = calloc(1, sizeof(*wi));

	if (!wi)
		goto fail;
	wi->n = n;
	wi->size = 1;
	while (wi->size < n)
		wi->size *= 2;
	wi->w = malloc((n ? n : 1) * sizeof(*wi->w));
	wi->maxend = calloc(2 * wi->size, sizeof(*wi->maxend));
	if (!wi->w || !wi->maxend)
		goto fail;
	if (n)
		memcpy(wi->w, w, n * sizeof(*w));
	qsort(wi->w, n, sizeof(*wi->w), cmp_win);
	for (size_t i = 0; i < n; i++)
		wi->maxend[wi->size + i] = wi->w[i].end;
	for (size_t i = wi->size; i-- > 1;)
		wi->maxend[i] = wi->maxend[2 * i] > wi->maxend[2 * i + 1] ? wi->maxend[2 * i]
									  : wi->maxend[2 * i + 1];
	return wi;
fail:
	winidx__free(wi);
	errno = ENOMEM;
	return NULL;
}

void winidx__free(struct winidx *wi)
{
	if (!wi)
		return;
	free(wi->w);
	free(wi->maxend);
	free(wi);
}

size_t winidx__begun(const struct winidx *wi, uint64_t ts)
{
	size_t lo = 0, hi = wi->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (wi->w[mid].begin <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct query {
	const struct winidx *wi;
	uint64_t ts;
	size_t limit; /* leaves [0, limit) begin at or before ts */
	size_t *out, max, found;
};

static void visit(struct query *q, size_t node, size_t lo, size_t hi)
{
	size_t mid;

	if (lo >= q->limit || q->wi->maxend[node] < q->ts)
		return;
	if (hi - lo == 1) {
		if (q->found < q->max)
			q->out[q->found] = q->wi->w[lo].call;
		q->found++;
		return;
	}
	mid = lo + (hi - lo) / 2;
	visit(q, 2 * node, lo, mid);
	visit(q, 2 * node + 1, mid, hi);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

size_t winidx__at(const struct winidx *wi, uint64_t ts, size_t *out, size_t max)
{
	struct query q = {.wi = wi, .ts = ts, .out = out, .max = max};

	q.limit = winidx__begun(wi, ts);
	if (q.limit)
		visit(&q, 1, 0, wi->size);
	qsort(out, q.found < max ? q.found : max, sizeof(*out), cmp_size);
	return q.found;
}

const struct win *winidx__nth(const struct winidx *wi, size_t k)
{
	return k < wi->n ? &wi->w[k] : NULL;
}
