/*
 * engine.c - event evaluation, process tracking and entry-record holding (see engine.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "engine.h"
#include "events.h"

/* An entry-time record waiting for its completion: the packed Event, re-decoded if needed. */
struct held {
	uint32_t tid;
	int op;
	uint64_t index;
	uint8_t *packed;
	size_t len;
};

struct engine {
	const struct policy *pol;
	struct proctree *pt;
	struct findings fs;
	struct engine_stats st;
	struct held *held; /* few: one per thread with a blocking syscall in flight */
	size_t n_held, cap_held;
	uint8_t *memo; /* per-event macro results */
	struct callmodel *cm;
};

struct engine *engine__new(const struct policy *p, size_t max_per_rule)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->pol = p;
	e->pt = proctree__new();
	e->memo = calloc(p->n_macros ? p->n_macros : 1, 1);
	if (!e->pt || !e->memo || findings_init(&e->fs, p->n_rules, max_per_rule)) {
		engine__free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

void engine__free(struct engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_held; i++)
		free(e->held[i].packed);
	free(e->held);
	free(e->memo);
	findings_fini(&e->fs);
	proctree__free(e->pt);
	free(e);
}

void engine__set_model(struct engine *e, struct callmodel *cm)
{
	e->cm = cm;
}

int engine__set_header(struct engine *e, const Mcpt__Header *h)
{
	const Mcpt__Target *t = h ? h->target : NULL;

	if (!t)
		return 0;
	return proctree__set_target(e->pt, t->pid, t->pstart, &t->exe, t->argv, t->n_argv,
				    t->attached);
}

/* Every enabled rule on one decoded event. */
static int evaluate(struct engine *e, const struct ev_view *v, uint64_t index, bool launch)
{
	struct proc *p = proctree__get(e->pt, v->pid, v->pstart);
	struct eval_subject s = {.ev = v, .launch = launch, .macro_memo = e->memo};
	struct attribution attr;
	int exc, err;

	if (!p)
		return -ENOMEM;
	if (e->cm) {
		callmodel__attribute(e->cm, v, &attr);
		s.attr = &attr;
		s.calls = callmodel__calls(e->cm);
	}
	memset(e->memo, 0, e->pol->n_macros);
	/* before its first exec, the server process is still the collector's launcher */
	s.launch = launch || (p->is_target && p->launching && p->execs == 0);
	s.exe = (struct ev_bytes){p->exe, p->exe_len};
	s.argv = (struct ev_bytes){p->argv_join, p->join_len};
	for (size_t i = 0; i < e->pol->n_rules; i++) {
		const struct pol_rule *r = e->pol->rules[i];

		if (!policy_rule_match(r, &s, &exc)) {
			e->st.exceptions_hit += exc >= 0;
			continue;
		}
		err = findings_add(&e->fs, r, i, v, index, &s, p, e->pt);
		if (err)
			return err;
	}
	return 0;
}

static int decode_and_evaluate(struct engine *e, const Mcpt__Event *ev, uint64_t index)
{
	struct ev_view v;
	bool launch;
	int err;

	event_decode(&v, ev);
	err = proctree__apply(e->pt, &v, &launch);
	return err ?: evaluate(e, &v, index, launch);
}

static struct held *held_find(struct engine *e, uint32_t tid)
{
	for (size_t i = 0; i < e->n_held; i++)
		if (e->held[i].tid == tid)
			return &e->held[i];
	return NULL;
}

/* Evaluates a held entry on its own and forgets it. */
static int held_release(struct engine *e, struct held *h)
{
	Mcpt__Event *ev = mcpt__event__unpack(NULL, h->len, h->packed);
	int err = 0;

	if (ev) {
		err = decode_and_evaluate(e, ev, h->index);
		mcpt__event__free_unpacked(ev, NULL);
		e->st.held_entries++;
	}
	free(h->packed);
	*h = e->held[--e->n_held];
	return ev ? err : -ENOMEM;
}

static void held_drop(struct engine *e, struct held *h)
{
	free(h->packed);
	*h = e->held[--e->n_held];
	e->st.merged_entries++;
}

/* More threads blocked at once than this is not a real server: a hostile trace must not make
 * every lookup long, so past it the oldest entry is evaluated on its own. */
#define HELD_MAX 256

static struct held *held_oldest(struct engine *e)
{
	struct held *o = &e->held[0];

	for (size_t i = 1; i < e->n_held; i++)
		if (e->held[i].index < o->index)
			o = &e->held[i];
	return o;
}

static int held_add(struct engine *e, const Mcpt__Event *ev, uint64_t index)
{
	struct held *h;
	size_t len = mcpt__event__get_packed_size(ev);
	int err;

	if (e->n_held >= HELD_MAX && (err = held_release(e, held_oldest(e))))
		return err;
	if (e->n_held == e->cap_held) {
		size_t cap = e->cap_held ? e->cap_held * 2 : 8;

		h = realloc(e->held, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		e->held = h;
		e->cap_held = cap;
	}
	h = &e->held[e->n_held];
	h->packed = malloc(len ? len : 1);
	if (!h->packed)
		return -ENOMEM;
	h->len = mcpt__event__pack(ev, h->packed);
	h->tid = ev->tid;
	h->op = (int)ev->op;
	h->index = index;
	e->n_held++;
	return 0;
}

int engine__event(struct engine *e, const Mcpt__Event *ev, uint64_t index)
{
	struct held *h = held_find(e, ev->tid);
	int err = 0;

	e->st.events++;
	if (h) {
		if (h->op == (int)ev->op && !(ev->flags & MW_F_ENTRY))
			held_drop(e, h);
		else
			err = held_release(e, h);
		if (err)
			return err;
	}
	if (ev->flags & MW_F_ENTRY)
		return held_add(e, ev, index);
	return decode_and_evaluate(e, ev, index);
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	return x->index > y->index ? -1 : x->index < y->index; /* descending */
}

int engine__finish(struct engine *e)
{
	int err = 0;

	/* released from the end of a descending sort: in stream order, no reshuffling */
	if (e->n_held > 1)
		qsort(e->held, e->n_held, sizeof(*e->held), cmp_held);
	while (e->n_held && !err)
		err = held_release(e, &e->held[e->n_held - 1]);
	return err;
}

struct findings *engine__findings(struct engine *e)
{
	return &e->fs;
}

const struct engine_stats *engine__stats(const struct engine *e)
{
	return &e->st;
}

const struct proctree *engine__proctree(const struct engine *e)
{
	return e->pt;
}
