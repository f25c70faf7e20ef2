/*
 * valtab.c - the reader's value and task table (trace.proto, PathDef and TaskDef): the
 * definitions of one hash chunk, and the resolution of an Event's references to them. The
 * verifier feeds every record to one table to refuse bad references; the analyzer's replay
 * feeds its own, so every consumer sees events with their values in place, as before the table.
 *
 * A definition is valid only in its chunk: the table empties when the chunk ordinal changes.
 * Ids are dense (1, 2, 3... in record order), so a lookup is an index and a hostile id (0,
 * forward, huge, repeated) is refused by one comparison. Values are copied (a record's bytes
 * do not outlive its callback); the bounds keep the table at ~97 KiB. Tasks (pid, tid, pstart,
 * uid, gid) have an id space of their own, under the same rules; a fork with child_task
 * defines its child's task as a TaskDef right after it would. The table also keeps the
 * chunk's clock: the ts of its last Event, the base of the next one's ts_delta.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "valtab_int.h"

struct vt_task {
	uint32_t pid, tid, uid, gid;
	uint64_t pstart;
};

struct mcpt_valtab {
	uint64_t chunk;
	uint32_t n;    /* value ids 1..n are defined */
	uint32_t used; /* bytes of store in use */
	uint32_t ntasks; /* task ids 1..ntasks are defined */
	uint32_t events; /* Events of the chunk fed so far */
	uint64_t last_ts; /* ts of the last of them, resolved */
	uint32_t off[MCPT_VT_MAX_VALUES], len[MCPT_VT_MAX_VALUES];
	uint8_t store[MCPT_VT_MAX_BYTES];
	struct vt_task task[MCPT_VT_MAX_TASKS];
};

const struct mcpt_vt_slot mcpt_vt_slots[MCPT_VT_SLOTS] = {
	{"path", offsetof(Mcpt__Event, path), offsetof(Mcpt__Event, path_ref)},
	{"abs_path", offsetof(Mcpt__Event, abs_path), offsetof(Mcpt__Event, abs_path_ref)},
	{"opened_path", offsetof(Mcpt__Event, opened_path), offsetof(Mcpt__Event, opened_path_ref)},
	{"data", offsetof(Mcpt__Event, data), offsetof(Mcpt__Event, data_ref)},
	{"path2", offsetof(Mcpt__Event, path2), offsetof(Mcpt__Event, path2_ref)},
	{"abs_path2", offsetof(Mcpt__Event, abs_path2), offsetof(Mcpt__Event, abs_path2_ref)},
	{"data2", offsetof(Mcpt__Event, data2), offsetof(Mcpt__Event, data2_ref)},
};

struct mcpt_valtab *mcpt_valtab__new(void)
{
	return calloc(1, sizeof(struct mcpt_valtab));
}

void mcpt_valtab__free(struct mcpt_valtab *t)
{
	free(t);
}

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static int define(struct mcpt_valtab *t, const Mcpt__PathDef *d, char *why, size_t whylen)
{
	if (d->id != t->n + 1)
		return bad(why, whylen, "PathDef defines id %u where its chunk's next id is %u",
			   d->id, t->n + 1);
	if (t->n >= MCPT_VT_MAX_VALUES)
		return bad(why, whylen, "PathDef id %u: more than %u values in one chunk", d->id,
			   MCPT_VT_MAX_VALUES);
	if (d->value.len == 0)
		return bad(why, whylen, "PathDef id %u defines an empty value", d->id);
	if (d->value.len > MCPT_VT_MAX_BYTES - t->used)
		return bad(why, whylen, "PathDef id %u: values over %u bytes in one chunk", d->id,
			   MCPT_VT_MAX_BYTES);
	memcpy(t->store + t->used, d->value.data, d->value.len);
	t->off[t->n] = t->used;
	t->len[t->n] = (uint32_t)d->value.len;
	t->used += (uint32_t)d->value.len;
	t->n++;
	return 0;
}

static int define_task(struct mcpt_valtab *t, const Mcpt__TaskDef *d, char *why, size_t whylen)
{
	if (d->id != t->ntasks + 1)
		return bad(why, whylen, "TaskDef defines id %u where its chunk's next task id is %u",
			   d->id, t->ntasks + 1);
	if (t->ntasks >= MCPT_VT_MAX_TASKS)
		return bad(why, whylen, "TaskDef id %u: more than %u tasks in one chunk", d->id,
			   MCPT_VT_MAX_TASKS);
	if (!(d->pid | d->tid | d->pstart | d->uid | d->gid))
		return bad(why, whylen, "TaskDef id %u defines an empty task", d->id);
	t->task[t->ntasks++] = (struct vt_task){d->pid, d->tid, d->uid, d->gid, d->pstart};
	return 0;
}

static int check_task(const struct mcpt_valtab *t, const Mcpt__Event *e, char *why, size_t whylen)
{
	if (!e->task_ref)
		return 0;
	if (e->pid | e->tid | e->pstart | e->uid | e->gid)
		return bad(why, whylen, "Event has both task_ref %u and its own pid, tid, pstart, uid "
			   "or gid", e->task_ref);
	if (e->task_ref > t->ntasks)
		return bad(why, whylen,
			   "Event task_ref %u names a task not defined in its chunk (%u defined "
			   "before it)",
			   e->task_ref, t->ntasks);
	return 0;
}

/* A fork that defines its child's task (child_task): it must name a child, in a chunk whose
 * task table has room. */
static int check_child(const struct mcpt_valtab *t, const Mcpt__Event *e, char *why,
		       size_t whylen)
{
	uint32_t pid, tid;
	uint64_t pstart;

	if (!e->child_task)
		return 0;
	if (!mcpt_fork_child(e, &pid, &tid, &pstart))
		return bad(why, whylen, "Event has child_task but is not a fork naming its child "
			   "(op OP_FORK, ret > 0, args tgid, tid, pstart)");
	if (t->ntasks >= MCPT_VT_MAX_TASKS)
		return bad(why, whylen, "Event child_task: more than %u tasks in one chunk",
			   MCPT_VT_MAX_TASKS);
	return 0;
}

/* The absolute ts of an Event with these ts and ts_delta into *out: its own, or the chunk's
 * last plus its ts_delta. */
static int event_ts(const struct mcpt_valtab *t, uint64_t ts, int64_t ts_delta, uint64_t *out,
		    char *why, size_t whylen)
{
	uint64_t mag;

	*out = ts;
	if (!ts_delta)
		return 0;
	if (ts)
		return bad(why, whylen, "Event has both ts %llu and ts_delta %lld",
			   (unsigned long long)ts, (long long)ts_delta);
	if (!t->events)
		return bad(why, whylen, "Event has ts_delta %lld but is the first Event of its chunk",
			   (long long)ts_delta);
	mag = ts_delta < 0 ? 0 - (uint64_t)ts_delta : (uint64_t)ts_delta;
	if (ts_delta < 0 ? mag >= t->last_ts : mag > UINT64_MAX - t->last_ts)
		return bad(why, whylen, "Event ts_delta %lld from ts %llu leaves the clock's range",
			   (long long)ts_delta, (unsigned long long)t->last_ts);
	*out = ts_delta < 0 ? t->last_ts - mag : t->last_ts + mag;
	return 0;
}

/* Checks every reference first, then resolves: a refused event is left as it was. */
static int resolve(struct mcpt_valtab *t, Mcpt__Event *e, char *why, size_t whylen)
{
	unsigned i;
	uint64_t ts;
	int err = check_task(t, e, why, whylen) ?: check_child(t, e, why, whylen) ?:
		  event_ts(t, e->ts, e->ts_delta, &ts, why, whylen);

	if (err)
		return err;
	for (i = 0; i < MCPT_VT_SLOTS; i++) {
		uint32_t id = *mcpt_vt_ref(e, i);

		if (!id)
			continue;
		if (mcpt_vt_bytes(e, i)->len)
			return bad(why, whylen, "Event has both %s and %s_ref %u",
				   mcpt_vt_slots[i].name, mcpt_vt_slots[i].name, id);
		if (id > t->n)
			return bad(why, whylen,
				   "Event %s_ref %u names a value not defined in its chunk "
				   "(%u defined before it)",
				   mcpt_vt_slots[i].name, id, t->n);
	}
	for (i = 0; i < MCPT_VT_SLOTS; i++) {
		uint32_t *ref = mcpt_vt_ref(e, i);
		ProtobufCBinaryData *b = mcpt_vt_bytes(e, i);

		if (!*ref)
			continue;
		b->data = t->store + t->off[*ref - 1];
		b->len = t->len[*ref - 1];
		*ref = 0;
	}
	if (e->task_ref) {
		const struct vt_task *k = &t->task[e->task_ref - 1];

		e->pid = k->pid;
		e->tid = k->tid;
		e->pstart = k->pstart;
		e->uid = k->uid;
		e->gid = k->gid;
		e->task_ref = 0;
	}
	if (e->child_task) { /* the parent's credentials, as resolved: the child inherits them */
		struct vt_task *k = &t->task[t->ntasks++];

		mcpt_fork_child(e, &k->pid, &k->tid, &k->pstart);
		k->uid = e->uid;
		k->gid = e->gid;
	}
	e->ts = ts;
	e->ts_delta = 0;
	t->last_ts = ts;
	t->events++;
	return 0;
}

/* A record of another chunk than the table's empties it. */
static void enter_chunk(struct mcpt_valtab *t, uint64_t chunk)
{
	if (chunk == t->chunk)
		return;
	t->chunk = chunk;
	t->n = 0;
	t->used = 0;
	t->ntasks = 0;
	t->events = 0;
	t->last_ts = 0;
}

int mcpt_valtab__clock(struct mcpt_valtab *t, uint64_t chunk, uint64_t ts, int64_t ts_delta,
		       char *why, size_t whylen)
{
	uint64_t abs;
	int err;

	if (!t)
		return -EINVAL;
	enter_chunk(t, chunk);
	err = event_ts(t, ts, ts_delta, &abs, why, whylen);
	if (err)
		return err;
	t->last_ts = abs;
	t->events++;
	return 0;
}

uint64_t mcpt_valtab__last_ts(const struct mcpt_valtab *t)
{
	return t ? t->last_ts : 0;
}

int mcpt_valtab__feed(struct mcpt_valtab *t, uint64_t chunk, enum mcpt_type type,
		      ProtobufCMessage *msg, char *why, size_t whylen)
{
	if (!t || !msg)
		return -EINVAL;
	enter_chunk(t, chunk);
	if (type == MCPT_T_PATH_DEF && msg->descriptor == &mcpt__path_def__descriptor)
		return define(t, (const Mcpt__PathDef *)msg, why, whylen);
	if (type == MCPT_T_TASK_DEF && msg->descriptor == &mcpt__task_def__descriptor)
		return define_task(t, (const Mcpt__TaskDef *)msg, why, whylen);
	if (type == MCPT_T_EVENT && msg->descriptor == &mcpt__event__descriptor)
		return resolve(t, (Mcpt__Event *)msg, why, whylen);
	return 0;
}

/* The definitions and Events (for the clock) among the first n frames of a chunk (excerpt
 * bytes, framing already checked by the excerpt verifier) into t, whose chunk is `chunk`. */
static int chunk_defs(struct mcpt_valtab *t, uint64_t chunk, const uint8_t *p, size_t len,
		      uint32_t n, char *why, size_t whylen)
{
	struct mcpt_record_view rv;
	size_t pos = 0, used;
	uint32_t L, i;
	int err = 0;

	for (i = 0; i < n && !err; i++, pos += used + L) {
		ProtobufCMessage *m;

		if (mcpt_uvarint_get(p + pos, len - pos, &L, &used) || L > len - pos - used ||
		    mcpt_record_split(p + pos + used, L, &rv, why, whylen))
			return bad(why, whylen, "chunk frame %u is malformed", i);
		if (rv.type != MCPT_T_PATH_DEF && rv.type != MCPT_T_TASK_DEF &&
		    rv.type != MCPT_T_EVENT)
			continue;
		m = protobuf_c_message_unpack(mcpt_type_descriptor(rv.type), NULL, rv.body_len,
					      p + pos + used + rv.body_off);
		if (!m)
			return bad(why, whylen, "chunk frame %u: %s does not parse", i,
				   rv.type == MCPT_T_PATH_DEF	? "PathDef" :
				   rv.type == MCPT_T_TASK_DEF ? "TaskDef" :
								"Event");
		err = mcpt_valtab__feed(t, chunk, (enum mcpt_type)rv.type, m, why, whylen);
		mcpt_valtab__detach(t, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	return err;
}

int mcpt_excerpt_resolve(const struct mcpt_excerpt *x, struct mcpt_valtab *t, ProtobufCMessage *msg,
			 char *why, size_t whylen)
{
	uint64_t chunk;
	int err;

	if (!x || !t || !msg || !x->chunk)
		return -EINVAL;
	chunk = t->chunk + 1; /* a chunk the table has not seen: it starts empty */
	err = chunk_defs(t, chunk, x->chunk, x->chunk_len, x->rec.type ? x->in_chunk : 0, why,
			 whylen);
	if (err)
		return err;
	return mcpt_valtab__feed(t, chunk, x->rec.type, msg, why, whylen);
}

void mcpt_valtab__detach(const struct mcpt_valtab *t, ProtobufCMessage *msg)
{
	unsigned i;

	if (!t || !msg || msg->descriptor != &mcpt__event__descriptor)
		return;
	for (i = 0; i < MCPT_VT_SLOTS; i++) {
		ProtobufCBinaryData *b = mcpt_vt_bytes((Mcpt__Event *)msg, i);

		if (b->data >= t->store && b->data < t->store + sizeof(t->store))
			*b = (ProtobufCBinaryData){0, NULL};
	}
}
