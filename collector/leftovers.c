/*
 * leftovers.c - the recorded processes still alive when recording stops (see leftovers.h).
 */
#include <stdlib.h>

#include "leftovers.h"
#include "loader.h"

struct list_ctx {
	struct leftovers *lo;
	bool full; /* out of memory: the list is incomplete */
};

static void list_one(void *ctx, uint32_t tgid)
{
	struct list_ctx *c = ctx;
	struct leftovers *lo = c->lo;

	if (c->full)
		return;
	if (lo->n == lo->cap) {
		size_t cap = lo->cap ? lo->cap * 2 : 16;
		struct leftover *v = realloc(lo->v, cap * sizeof(*v));

		if (!v) {
			c->full = true;
			return;
		}
		lo->v = v;
		lo->cap = cap;
	}
	lo->v[lo->n++] =
		(struct leftover){.tgid = tgid, .pstart = loader__tracked_start(lo->bpf, tgid)};
}

size_t leftovers_kill(struct leftovers *lo, void (*between)(void *ctx), void *ctx)
{
	struct list_ctx c = {.lo = lo};

	loader__each_tracked(lo->bpf, list_one, &c);
	lo->listed = !c.full; /* else each is listed from the tracked set: alive, not killed */
	return loader__kill_tracked(lo->bpf, LOADER_KILL_WAIT_MS, between, ctx);
}

/* Whether the process listed as l is still the one tracked under its pid. */
static bool still_alive(struct leftovers *lo, const struct leftover *l)
{
	uint64_t now = loader__tracked_start(lo->bpf, l->tgid);

	return now && (!l->pstart || now == l->pstart);
}

struct record_ctx {
	struct leftovers *lo;
	int (*note)(void *ctx, uint32_t tgid, uint64_t pstart, bool killed);
	void *ctx;
	int err;
};

static void record_tracked(void *ctx, uint32_t tgid)
{
	struct record_ctx *r = ctx;

	if (!r->err)
		r->err = r->note(r->ctx, tgid, loader__tracked_start(r->lo->bpf, tgid), false);
}

int leftovers_record(struct leftovers *lo,
		     int (*note)(void *ctx, uint32_t tgid, uint64_t pstart, bool killed), void *ctx)
{
	struct record_ctx r = {.lo = lo, .note = note, .ctx = ctx};

	for (size_t i = 0; lo->listed && i < lo->n && !r.err; i++)
		if (!still_alive(lo, &lo->v[i]))
			r.err = note(ctx, lo->v[i].tgid, lo->v[i].pstart, true);
	if (!r.err)
		loader__each_tracked(lo->bpf, record_tracked, &r);
	return r.err;
}

void leftovers_fini(struct leftovers *lo)
{
	free(lo->v);
	lo->v = NULL;
	lo->n = lo->cap = 0;
	lo->listed = false;
}
