/*
 * leftovers.c - the recorded processes still alive when recording stops (see leftovers.h).
 */
#include <stdlib.h>

#include "leftovers.h"
#include "loader.h"

static void list_one(void *ctx, uint32_t tgid)
{
	struct leftovers *lo = ctx;
	uint64_t start;

	if (!loader__tracked_lookup(lo->bpf, tgid, &start))
		return; /* exiting: its exit record says so */
	if (lo->n == lo->cap) {
		size_t cap = lo->cap ? lo->cap * 2 : 16;
		struct leftover *v = realloc(lo->v, cap * sizeof(*v));

		if (!v) {
			lo->complete = false;
			return;
		}
		lo->v = v;
		lo->cap = cap;
	}
	lo->v[lo->n++] = (struct leftover){.tgid = tgid, .pstart = start};
}

size_t leftovers_kill(struct leftovers *lo, void (*between)(void *ctx), void *ctx)
{
	lo->killed = lo->complete = true;
	loader__each_tracked(lo->bpf, list_one, lo);
	return loader__kill_tracked(lo->bpf, LOADER_KILL_WAIT_MS, between, ctx);
}

/* Whether the process listed as l is still the one tracked under its pid (a start time of 0,
 * a process the collector seeded, matches any). */
static bool still_alive(struct leftovers *lo, const struct leftover *l)
{
	uint64_t now;

	if (!loader__tracked_lookup(lo->bpf, l->tgid, &now))
		return false;
	return !l->pstart || !now || now == l->pstart;
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
	uint64_t start;

	if (!r->err && loader__tracked_lookup(r->lo->bpf, tgid, &start))
		r->err = r->note(r->ctx, tgid, start, false);
}

int leftovers_record(struct leftovers *lo,
		     int (*note)(void *ctx, uint32_t tgid, uint64_t pstart, bool killed), void *ctx)
{
	struct record_ctx r = {.lo = lo, .note = note, .ctx = ctx};

	for (size_t i = 0; i < lo->n && !r.err; i++)
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
	lo->killed = lo->complete = false;
}
