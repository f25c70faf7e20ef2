/*
 * pathproj.c - what the Events of a trace would weigh with a chunk-scoped definition table
 * (the design proposed for issue 8's 48-byte target, test/bench/HISTORY.md; the format has
 * had it since, and tracesize prints both). A projection, computed exactly on each record's
 * own fields:
 *
 * - PathDef {id = 1, value = 2} (record type 8) defines a byte string (a path or a socket
 *   address) that later Events of the same chunk name by id (Event fields 22..28, one per
 *   byte slot: path, abs_path, opened_path, path2, abs_path2, data, data2);
 * - TaskDef {id = 1, pid = 2, tid = 3, pstart = 4, uid = 5, gid = 6} (type 9) likewise for
 *   the task identity (Event field 29 replaces pid, tid, pstart, uid and gid);
 * - a definition lives only in its chunk (64 records or 16 KiB, both counted on the projected
 *   stream, definitions included; a seal ends the chunk), so every chunk, and therefore every
 *   excerpt, carries the definitions its records use;
 * - the writer defines a value the second time it meets it in a chunk (earlier in the chunk
 *   or in another slot of the same record) and refers to it from then on: a value met once is
 *   written inline, as today, and costs nothing more.
 *
 * Definition frames are charged to the class of the event that caused them.
 */
#include <string.h>

#include "pathproj.h"

#define CHUNK_RECORDS 64
#define CHUNK_BYTES   (16u << 10)
#define SEEN_MAX      1024 /* values remembered per chunk; more are written inline */
#define SLOTS	      7

struct seen {
	uint8_t kind; /* 0 bytes, 1 task */
	uint32_t id;  /* 0: seen once, not defined */
	size_t len;
	const uint8_t *p; /* into the arena */
};

static struct {
	struct seen v[SEEN_MAX];
	uint8_t arena[1u << 20];
	size_t n, used;
	uint32_t next_id[2];
	uint32_t recs;
	uint64_t bytes;
} ch;

static size_t vlen(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t f_var(uint32_t field, uint64_t v)
{
	return v ? vlen((uint64_t)field << 3) + vlen(v) : 0;
}

static size_t f_bytes(uint32_t field, size_t len)
{
	return len ? vlen((uint64_t)field << 3 | 2) + vlen(len) + len : 0;
}

/* A Record frame around a body of len bytes (a one-byte oneof tag: types below 16). */
static size_t frame(size_t len)
{
	size_t r = 1 + vlen(len) + len;

	return vlen(r) + r;
}

static void chunk_reset(void)
{
	ch.n = ch.used = 0;
	ch.next_id[0] = ch.next_id[1] = 0;
	ch.recs = 0;
	ch.bytes = 0;
}

/* Counts one projected frame into the open chunk, closing it by the chunk rule. */
static void chunk_add(size_t frame_len)
{
	ch.recs++;
	ch.bytes += frame_len;
	if (ch.recs >= CHUNK_RECORDS || ch.bytes >= CHUNK_BYTES)
		chunk_reset();
}

static struct seen *lookup(uint8_t kind, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < ch.n; i++)
		if (ch.v[i].kind == kind && ch.v[i].len == len && !memcmp(ch.v[i].p, p, len))
			return &ch.v[i];
	return NULL;
}

static struct seen *remember(uint8_t kind, const uint8_t *p, size_t len)
{
	struct seen *s;

	if (ch.n == SEEN_MAX || len > sizeof(ch.arena) - ch.used)
		return NULL;
	s = &ch.v[ch.n++];
	s->kind = kind;
	s->id = 0;
	s->len = len;
	s->p = ch.arena + ch.used;
	memcpy(ch.arena + ch.used, p, len);
	ch.used += len;
	return s;
}

struct use {
	uint8_t kind;
	const uint8_t *p;
	size_t len, inline_len; /* the value's bytes; its fields' size when written inline */
	uint32_t ref_field;
};

/* Decides inline / define / refer for one value; returns the Event body's change in bytes and
 * adds the size of a definition frame to *defs. dup: the same value stands in another slot of
 * this record. */
static long use_value(const struct use *u, bool dup, size_t *defs, uint32_t *ndefs)
{
	struct seen *s = lookup(u->kind, u->p, u->len);
	size_t body;

	if (!s) {
		s = remember(u->kind, u->p, u->len);
		if (!s || !dup)
			return 0; /* first sighting: inline */
	}
	if (!s->id) {
		s->id = ++ch.next_id[u->kind];
		body = f_var(1, s->id) + (u->kind == 0 ? f_bytes(2, u->len) : u->inline_len);
		*defs += frame(body);
		(*ndefs)++;
	}
	return (long)f_var(u->ref_field, s->id) - (long)u->inline_len;
}

size_t pathproj_event(const Mcpt__Event *e, size_t body_len)
{
	const ProtobufCBinaryData *b[SLOTS] = { &e->path,  &e->abs_path,  &e->opened_path,
						&e->path2, &e->abs_path2, &e->data,
						&e->data2 };
	static const uint32_t field[SLOTS] = { 8, 9, 10, 18, 19, 14, 20 };
	uint8_t task[32];
	struct use u;
	size_t defs = 0, n = 0;
	uint32_t ndefs = 0;
	long body = (long)body_len;
	int i, j;

	for (i = 0; i < SLOTS; i++) {
		bool dup = false;

		if (!b[i]->len)
			continue;
		for (j = 0; j < SLOTS; j++)
			dup |= j != i && b[j]->len == b[i]->len &&
			       !memcmp(b[j]->data, b[i]->data, b[i]->len);
		u = (struct use){ 0, b[i]->data, b[i]->len, f_bytes(field[i], b[i]->len),
				  22 + (uint32_t)i };
		body += use_value(&u, dup, &defs, &ndefs);
	}
	memcpy(task + n, &e->pid, 4), n += 4;
	memcpy(task + n, &e->tid, 4), n += 4;
	memcpy(task + n, &e->pstart, 8), n += 8;
	memcpy(task + n, &e->uid, 4), n += 4;
	memcpy(task + n, &e->gid, 4), n += 4;
	u = (struct use){ 1, task, n,
			  f_var(3, e->pid) + f_var(4, e->tid) + f_var(15, e->pstart) +
				  f_var(16, e->uid) + f_var(17, e->gid),
			  29 };
	body += use_value(&u, false, &defs, &ndefs);
	/* the definitions go before the event, in the same chunk (a writer that finds no room
	 * for them there writes the values inline instead) */
	ch.recs += ndefs;
	ch.bytes += defs;
	chunk_add(frame((size_t)body));
	return defs + frame((size_t)body);
}

void pathproj_other(enum mcpt_type type, size_t frame_len)
{
	if (type == MCPT_T_SEAL)
		chunk_reset();
	else if (type != MCPT_T_HEADER)
		chunk_add(frame_len);
}
