/*
 * writer_vt.c - the writer's value table (trace.proto, PathDef): which values the open chunk
 * has met, and which of them it has defined. mcpt_writer__event_refs turns an Event's repeated
 * values into references, appending the definitions just before the event, in the same chunk.
 *
 * A value is defined the second time the chunk meets it (in an earlier record, or in another
 * field of the same record: the path as passed is often the path as opened), so a value met
 * once costs what it cost before the table. Memory is bounded: at most MCPT_VT_MAX_VALUES
 * values met and MCPT_VT_MAX_BYTES of them stored per chunk, which also bounds what any
 * reader's table must hold (a definition is always a value met). Past the bounds, or when the
 * definitions would not fit in the chunk before the event, values are written inline. The
 * task table (writer_tt.c) is planned here too: the definitions of both tables and the event
 * fit in the chunk together, or none is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tabhash.h"
#include "valtab_int.h"
#include "writer_int.h"

#define WVT_HASH      2048u /* open addressing, at most half full */
#define WVT_VALUE_MIN 4u    /* shorter values cost less inline than a reference */
#define WVT_VALUE_MAX 4096u /* longer ones (argv blocks) would crowd the chunk's table out */

struct wvt_entry {
	uint32_t hash, off, len;
	uint32_t id; /* 0: met once, not defined */
	uint16_t slot;
};

struct mcpt_wvt {
	uint64_t chunk, seed;
	uint32_t n, ids, used;	 /* entries, ids given, store bytes */
	uint16_t slot[WVT_HASH]; /* entry index + 1; 0 = free */
	struct wvt_entry e[MCPT_VT_MAX_VALUES];
	uint8_t store[MCPT_VT_MAX_BYTES];
};

struct mcpt_wvt *mcpt_wvt_new(uint64_t seed)
{
	struct mcpt_wvt *t = calloc(1, sizeof(struct mcpt_wvt));

	if (t)
		t->seed = seed;
	return t;
}

static void wvt_reset(struct mcpt_wvt *t, uint64_t chunk)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		t->slot[t->e[i].slot] = 0;
	t->n = t->ids = t->used = 0;
	t->chunk = chunk;
}

/* Under a random seed, which the monitored process cannot know: it cannot pick values that
 * collide and make every lookup walk a long run of slots. Nothing written depends on it. */
static uint32_t hash_of(const struct mcpt_wvt *t, const uint8_t *p, size_t n)
{
	return (uint32_t)mcpt_tabhash(t->seed, p, n);
}

/* The entry holding b, or the free slot where it would go (*free_slot). -1 when absent. */
static int wvt_find(const struct mcpt_wvt *t, const ProtobufCBinaryData *b, uint32_t h,
		    uint16_t *free_slot)
{
	uint32_t s = h & (WVT_HASH - 1);

	while (t->slot[s]) {
		const struct wvt_entry *e = &t->e[t->slot[s] - 1];

		if (e->hash == h && e->len == b->len &&
		    memcmp(t->store + e->off, b->data, b->len) == 0)
			return t->slot[s] - 1;
		s = (s + 1) & (WVT_HASH - 1);
	}
	*free_slot = (uint16_t)s;
	return -1;
}

/* Adds b as met (not defined); -1 when the table is full. */
static int wvt_add(struct mcpt_wvt *t, const ProtobufCBinaryData *b, uint32_t h, uint16_t slot)
{
	struct wvt_entry *e;

	if (t->n >= MCPT_VT_MAX_VALUES || b->len > MCPT_VT_MAX_BYTES - t->used)
		return -1;
	e = &t->e[t->n];
	*e = (struct wvt_entry){.hash = h, .off = t->used, .len = (uint32_t)b->len, .slot = slot};
	memcpy(t->store + t->used, b->data, b->len);
	t->used += (uint32_t)b->len;
	t->slot[slot] = (uint16_t)(++t->n);
	return (int)t->n - 1;
}

/* What event_refs decides for each field. */
struct vt_plan {
	int ent[MCPT_VT_SLOTS];	       /* table entry, -1 none */
	unsigned first[MCPT_VT_SLOTS]; /* first field of the record with the same value */
	bool define[MCPT_VT_SLOTS];    /* (first fields only) define it now */
	uint32_t ndefs;
	size_t def_bytes;
};

static bool candidate(const ProtobufCBinaryData *b)
{
	return b->len >= WVT_VALUE_MIN && b->len <= WVT_VALUE_MAX;
}

static bool same(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* Frame bytes of PathDef{id, value}: tags and lengths of both fields and of the Record. */
static size_t def_frame_len(uint32_t id, size_t len)
{
	size_t body = 1 + mcpt_uvarint_len(id) + 1 + mcpt_uvarint_len((uint32_t)len) + len;
	size_t rlen = mcpt_record_len(MCPT_T_PATH_DEF, body);

	return rlen + mcpt_uvarint_len((uint32_t)rlen);
}

/* Looks every field up; a value met before (or twice in ev) and not defined is to be defined,
 * entering the table first when it is not in it (when the table is full, it stays inline). */
static void plan(struct mcpt_wvt *t, Mcpt__Event *ev, struct vt_plan *p)
{
	unsigned i, j, uses[MCPT_VT_SLOTS] = {0};

	for (i = 0; i < MCPT_VT_SLOTS; i++) {
		ProtobufCBinaryData *b = mcpt_vt_bytes(ev, i);
		uint16_t slot = 0;
		uint32_t h;

		p->ent[i] = -1;
		p->first[i] = i;
		p->define[i] = false;
		if (!candidate(b))
			continue;
		for (j = 0; j < i && p->first[i] == i; j++)
			if (candidate(mcpt_vt_bytes(ev, j)) && same(b, mcpt_vt_bytes(ev, j)))
				p->first[i] = p->first[j];
		uses[p->first[i]]++;
		if (p->first[i] != i)
			continue;
		h = hash_of(t, b->data, b->len);
		p->ent[i] = wvt_find(t, b, h, &slot);
		if (p->ent[i] < 0)
			p->ent[i] = wvt_add(t, b, h, slot); /* met now: may be defined below */
		else if (!t->e[p->ent[i]].id)
			p->define[i] = true; /* met before in this chunk */
	}
	for (i = 0; i < MCPT_VT_SLOTS; i++) {
		if (p->first[i] != i || p->ent[i] < 0)
			continue;
		if (uses[i] >= 2 && !t->e[p->ent[i]].id)
			p->define[i] = true;
		if (p->define[i]) {
			p->ndefs++;
			p->def_bytes += def_frame_len(t->ids + p->ndefs, mcpt_vt_bytes(ev, i)->len);
		}
	}
}

static int append_def(struct mcpt_writer *w, struct wvt_entry *e)
{
	e->id = ++w->vt->ids;
	return mcpt_writer_path_def(w, e->id, w->vt->store + e->off, e->len);
}

/* The tables' definitions for ev, values first, then its task. */
static int append_defs(struct mcpt_writer *w, const struct vt_plan *p, const struct wtt_plan *tp)
{
	unsigned i;
	int err;

	for (i = 0; p->ndefs && i < MCPT_VT_SLOTS; i++) {
		if (!p->define[i])
			continue;
		err = append_def(w, &w->vt->e[p->ent[i]]);
		if (err)
			return err;
	}
	return tp->define ? mcpt_wtt_define(w, tp) : 0;
}

/* Replaces ev's values and task by references where they are defined. */
static void set_refs(struct mcpt_writer *w, const struct vt_plan *p, const struct wtt_plan *tp,
		     Mcpt__Event *ev)
{
	unsigned i;

	for (i = 0; w->vt && i < MCPT_VT_SLOTS; i++) {
		int k = p->ent[p->first[i]];

		if (!candidate(mcpt_vt_bytes(ev, i)) || k < 0 || !w->vt->e[k].id)
			continue;
		*mcpt_vt_ref(ev, i) = w->vt->e[k].id;
		*mcpt_vt_bytes(ev, i) = (ProtobufCBinaryData){0, NULL};
	}
	if (w->tt)
		mcpt_wtt_ref(w->tt, tp, ev);
}

int mcpt_writer__event_refs(struct mcpt_writer *w, Mcpt__Event *ev)
{
	struct vt_plan p = {.ndefs = 0};
	struct wtt_plan tp = {.ent = -1};
	uint32_t uid = ev ? ev->uid : 0, gid = ev ? ev->gid : 0; /* before a task_ref clears them */
	uint64_t chunk;
	unsigned i;
	int err;

	if (!w || !ev)
		return -EINVAL;
	if (w->err)
		return w->err;
	for (i = 0; i < MCPT_VT_SLOTS; i++)
		if (*mcpt_vt_ref(ev, i))
			return -EINVAL; /* references are this function's to set */
	if (ev->task_ref || ev->ts_delta || ev->child_task)
		return -EINVAL;
	if ((!w->vt && !w->tt && !w->ts_delta) || w->finished)
		return 0;
	chunk = mcpt_writer__chunk(w);
	if (w->vt) {
		if (w->vt->chunk != chunk)
			wvt_reset(w->vt, chunk);
		plan(w->vt, ev, &p);
	}
	if (w->tt)
		mcpt_wtt_plan(w->tt, chunk, ev, &tp);
	if ((p.ndefs || tp.define) &&
	    !mcpt_writer__chunk_room(w, p.ndefs + tp.define, p.def_bytes + tp.def_bytes)) {
		p.ndefs = 0; /* they would not share the event's chunk: inline this time */
		tp.define = false;
	}
	err = append_defs(w, &p, &tp);
	if (err)
		return err;
	set_refs(w, &p, &tp, ev);
	chunk = mcpt_writer__chunk(w); /* the chunk the event falls in, after its definitions */
	if (w->ts_delta)
		mcpt_wts_delta(w, chunk, ev);
	if (w->fork_task)
		mcpt_wtt_fork(w->tt, chunk, ev, uid, gid);
	return 0;
}
