/*
 * writer_tt.c - the writer's task table (trace.proto, TaskDef): which tasks (pid, tid, pstart,
 * uid, gid) the open chunk has met, and which of them it has defined. mcpt_writer__event_refs
 * (writer_vt.c) plans, defines and references through it, beside the value table, so that the
 * definitions of both and the event share one chunk.
 *
 * As for values, a task is defined the second time its chunk meets it, so a task met once
 * costs what it cost before the table; one whose five fields take fewer bytes inline than a
 * reference would save is never entered. Memory is bounded: at most MCPT_VT_MAX_TASKS tasks
 * met per chunk (which also bounds any reader's table); past it, tasks are written inline.
 *
 * A fork can define its child's task with no TaskDef (trace.proto, Event child_task): the
 * child's first records (exec, the loader's opens, exit) then name it from the start.
 *
 * Beside the tasks, the chunk's clock (trace.proto, Event ts_delta): an Event after the first
 * of its chunk carries its timestamp as the difference from the previous one, a few bytes
 * instead of the 8 of an absolute boot-time ts, whenever that is shorter.
 */
#include <stdlib.h>

#include "valtab_int.h"
#include "writer_int.h"

#define WTT_HASH       2048u /* open addressing, at most half full */
#define WTT_INLINE_MIN 8u    /* five fields shorter than this inline are cheaper than a reference */

struct wtt_key {
	uint32_t pid, tid, uid, gid;
	uint64_t pstart;
};

struct wtt_entry {
	struct wtt_key k;
	uint32_t hash;
	uint32_t id; /* 0: met once, not defined */
	uint16_t slot;
};

struct mcpt_wtt {
	uint64_t chunk;
	uint32_t n, ids;	 /* entries, ids given */
	uint16_t slot[WTT_HASH]; /* entry index + 1; 0 = free */
	struct wtt_entry e[MCPT_VT_MAX_TASKS];
};

_Static_assert(MCPT_VT_MAX_TASKS * 2 <= WTT_HASH, "the task hash must stay half empty");

struct mcpt_wtt *mcpt_wtt_new(void)
{
	return calloc(1, sizeof(struct mcpt_wtt));
}

static void wtt_reset(struct mcpt_wtt *t, uint64_t chunk)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		t->slot[t->e[i].slot] = 0;
	t->n = t->ids = 0;
	t->chunk = chunk;
}

static struct wtt_key key_of(const Mcpt__Event *ev)
{
	return (struct wtt_key){ev->pid, ev->tid, ev->uid, ev->gid, ev->pstart};
}

static bool same(const struct wtt_key *a, const struct wtt_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->pstart == b->pstart &&
	       a->uid == b->uid && a->gid == b->gid;
}

static uint32_t hash_of(const struct wtt_key *k)
{
	uint64_t h = (uint64_t)k->pid * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)k->tid << 32 | k->uid) * 0xc2b2ae3d27d4eb4full;
	h ^= (k->pstart + k->gid) * 0x165667b19e3779f9ull;
	return (uint32_t)(h ^ h >> 29 ^ h >> 47);
}

/* Bytes of one uint field with a one-byte tag (0 when the field is 0: not written). */
static size_t field_len(uint64_t v)
{
	return v ? 1 + mcpt_uvarint_len(v) : 0;
}

/* The five fields as written inline in an Event, or in a TaskDef (one-byte tags both). */
static size_t key_len(const struct wtt_key *k)
{
	return field_len(k->pid) + field_len(k->tid) + field_len(k->pstart) + field_len(k->uid) +
	       field_len(k->gid);
}

/* Frame bytes of TaskDef{id, the five}: length prefix, Record tag and length, body. */
static size_t def_frame_len(uint32_t id, const struct wtt_key *k)
{
	size_t rlen = mcpt_record_len(MCPT_T_TASK_DEF, field_len(id) + key_len(k));

	return rlen + mcpt_uvarint_len((uint32_t)rlen);
}

/* The entry holding k, or the free slot where it would go (*free_slot). -1 when absent. */
static int wtt_find(const struct mcpt_wtt *t, const struct wtt_key *k, uint32_t h,
		    uint16_t *free_slot)
{
	uint32_t s = h & (WTT_HASH - 1);

	while (t->slot[s]) {
		const struct wtt_entry *e = &t->e[t->slot[s] - 1];

		if (e->hash == h && same(&e->k, k))
			return t->slot[s] - 1;
		s = (s + 1) & (WTT_HASH - 1);
	}
	*free_slot = (uint16_t)s;
	return -1;
}

/* Enters k (met for the first time) at the free slot wtt_find gave; its entry, or -1 when the
 * table is full. */
static int wtt_add(struct mcpt_wtt *t, const struct wtt_key *k, uint32_t h, uint16_t slot)
{
	if (t->n >= MCPT_VT_MAX_TASKS)
		return -1;
	t->e[t->n] = (struct wtt_entry){.k = *k, .hash = h, .slot = slot};
	t->slot[slot] = (uint16_t)(t->n + 1);
	return (int)t->n++;
}

void mcpt_wtt_plan(struct mcpt_wtt *t, uint64_t chunk, const Mcpt__Event *ev, struct wtt_plan *p)
{
	struct wtt_key k = key_of(ev);
	uint16_t slot = 0;
	uint32_t h;

	*p = (struct wtt_plan){.ent = -1};
	if (t->chunk != chunk)
		wtt_reset(t, chunk);
	if (key_len(&k) < WTT_INLINE_MIN)
		return;
	h = hash_of(&k);
	p->ent = wtt_find(t, &k, h, &slot);
	if (p->ent >= 0) {
		if (!t->e[p->ent].id) { /* met before in this chunk: define it now */
			p->define = true;
			p->def_bytes = def_frame_len(t->ids + 1, &k);
		}
		return;
	}
	p->ent = wtt_add(t, &k, h, slot); /* full: -1, inline */
}

int mcpt_wtt_define(struct mcpt_writer *w, const struct wtt_plan *p)
{
	struct wtt_entry *e = &w->tt->e[p->ent];
	Mcpt__TaskDef d = MCPT__TASK_DEF__INIT;

	d.id = ++w->tt->ids;
	d.pid = e->k.pid;
	d.tid = e->k.tid;
	d.pstart = e->k.pstart;
	d.uid = e->k.uid;
	d.gid = e->k.gid;
	e->id = d.id;
	return mcpt_writer__append(w, MCPT_T_TASK_DEF, &d.base, 0);
}

void mcpt_wtt_ref(const struct mcpt_wtt *t, const struct wtt_plan *p, Mcpt__Event *ev)
{
	if (p->ent < 0 || !t->e[p->ent].id)
		return;
	ev->task_ref = t->e[p->ent].id;
	ev->pid = ev->tid = ev->uid = ev->gid = 0;
	ev->pstart = 0;
}

void mcpt_wtt_fork(struct mcpt_wtt *t, uint64_t chunk, Mcpt__Event *ev, uint32_t uid,
		   uint32_t gid)
{
	struct wtt_key k = {.uid = uid, .gid = gid};
	uint16_t slot = 0;
	uint32_t h;
	int ent;

	if (!mcpt_fork_child(ev, &k.pid, &k.tid, &k.pstart))
		return;
	if (t->chunk != chunk)
		wtt_reset(t, chunk);
	/* the reader's bound is on ids defined; a short task is never looked up (plan) */
	if (t->ids >= MCPT_VT_MAX_TASKS || key_len(&k) < WTT_INLINE_MIN)
		return;
	h = hash_of(&k);
	ent = wtt_find(t, &k, h, &slot);
	if (ent >= 0 && t->e[ent].id)
		return; /* defined already: nothing to gain */
	if (ent < 0 && (ent = wtt_add(t, &k, h, slot)) < 0)
		return;
	t->e[ent].id = ++t->ids;
	ev->child_task = true;
}

/* Bytes of a sint64 field numbered 16..2047 (a two-byte tag); 0 when the value is 0. */
static size_t sint_field_len(int64_t v)
{
	return v ? 2 + mcpt_uvarint_len(((uint64_t)v << 1) ^ (uint64_t)(v >> 63)) : 0;
}

void mcpt_wts_delta(struct mcpt_writer *w, uint64_t chunk, Mcpt__Event *ev)
{
	uint64_t ts = ev->ts, prev = w->ts_last;
	int64_t d = (int64_t)(ts - prev);
	bool same_chunk = w->ts_chunk == chunk;

	/* no delta for ts 0 (absent) or a delta 0 (absent too), nor one whose sign the int64
	 * cast lost (|ts - prev| >= 2^63): prev + d is then exactly ts, without a wrap */
	if (!same_chunk || !ts || !d || (ts > prev) != (d > 0))
		return;
	if (sint_field_len(d) < field_len(ts)) {
		ev->ts_delta = d;
		ev->ts = 0;
	}
}
