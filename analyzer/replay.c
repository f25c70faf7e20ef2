/*
 * replay.c - trace input, verification callback, per-record arena (see replay.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

#define ARENA_SLACK  (64u << 10)
#define ARENA_FACTOR 8

/* Bump allocator for protobuf-c: one block per record, grown on demand up to the budget. */
struct arena {
	uint8_t *buf;
	size_t cap, used, budget;
	size_t spill; /* bytes malloc'd beyond buf (rare), freed one by one */
};

struct replay {
	struct replay_opts o;
	struct mcpt_report rep;
	Mcpt__Header *header;
	struct arena ar;
	ProtobufCAllocator alloc;
	uint64_t malformed;
	struct mcpt_valtab *values; /* the chunk's value table: references resolved in one place */
	replay_cb cb;
	void *ctx;
};

static void *arena_alloc(void *data, size_t size)
{
	struct arena *a = data;
	size_t need = (size + 15) & ~(size_t)15;
	void *p;

	if (need < size || need > a->budget - a->used)
		return NULL;
	if (need <= a->cap - a->used) {
		p = a->buf + a->used;
		a->used += need;
		return p;
	}
	p = malloc(need); /* beyond the block: arena_free tells it by its address */
	if (!p)
		return NULL;
	a->used += need;
	a->spill++;
	return p;
}

static void arena_free(void *data, void *ptr)
{
	struct arena *a = data;
	uint8_t *p = ptr;

	if (p && (p < a->buf || p >= a->buf + a->cap)) {
		free(p);
		a->spill--;
	}
}

/* Starts a record of len bytes: the budget is 8x its size + 64 KiB. */
static int arena_reset(struct arena *a, size_t len)
{
	size_t want = len > (SIZE_MAX - ARENA_SLACK) / ARENA_FACTOR
			      ? SIZE_MAX
			      : len * ARENA_FACTOR + ARENA_SLACK;
	size_t first = want < (1u << 20) ? want : (1u << 20);

	a->used = 0;
	a->budget = want;
	if (a->cap < first) {
		uint8_t *b = realloc(a->buf, first);

		if (!b)
			return -ENOMEM;
		a->buf = b;
		a->cap = first;
	}
	return 0;
}

struct replay *replay__new(const struct replay_opts *o)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->values = mcpt_valtab__new();
	if (!r->values) {
		free(r);
		return NULL;
	}
	if (o)
		r->o = *o;
	r->alloc.alloc = arena_alloc;
	r->alloc.free = arena_free;
	r->alloc.allocator_data = &r->ar;
	return r;
}

void replay__free(struct replay *r)
{
	if (!r)
		return;
	if (r->header)
		mcpt__header__free_unpacked(r->header, NULL);
	mcpt_report__fini(&r->rep);
	mcpt_valtab__free(r->values);
	free(r->ar.buf);
	free(r);
}

int replay_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (strcmp(path, "-") == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "failed to open trace %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "failed to open trace %s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	return fd;
}

/* The Header is kept for the whole run: unpacked with the default allocator. */
static void keep_header(struct replay *r, const struct mcpt_record *rec)
{
	if (r->header)
		return;
	r->header = mcpt__header__unpack(NULL, rec->body_len, rec->body);
}

/* The one place value-table references are resolved for records unpacked here (held
 * segments, or a record the verifier could not parse or resolve): every consumer sees an
 * Event with its paths and addresses in place, as in a trace written without the table. The
 * verifier resolves its own parse (a borrowed msg) in its own table. */
static int resolve_values(struct replay *r, const struct mcpt_record *rec, ProtobufCMessage *msg)
{
	return mcpt_valtab__feed(r->values, rec->chunk, rec->type, msg, NULL, 0);
}

static int on_record(void *ctx, const struct mcpt_record *rec)
{
	struct replay *r = ctx;
	const ProtobufCMessageDescriptor *d = mcpt_record_descriptor(rec->type);
	struct replay_rec rr = {.rec = rec};
	bool borrowed = false;
	int ret;

	if (rec->type == MCPT_T_HEADER)
		keep_header(r, rec);
	if (d && rec->msg) { /* the verifier's strict parse of these bytes: no second unpack */
		rr.msg = rec->msg;
		borrowed = true;
	} else if (d) {
		if (arena_reset(&r->ar, rec->body_len))
			return -ENOMEM;
		rr.msg = protobuf_c_message_unpack(d, &r->alloc, rec->body_len, rec->body);
		rr.malformed = !rr.msg;
		r->malformed += rr.malformed;
	}
	if (rr.msg && !borrowed && resolve_values(r, rec, (ProtobufCMessage *)rr.msg)) {
		mcpt_valtab__detach(r->values, (ProtobufCMessage *)rr.msg);
		protobuf_c_message_free_unpacked((ProtobufCMessage *)rr.msg, &r->alloc);
		rr.msg = NULL; /* a bad reference: the record is malformed (verify names it) */
		rr.malformed = true;
		r->malformed++;
	}
	if (rr.msg && rec->type == MCPT_T_SEAL) {
		const Mcpt__Seal *s = (const Mcpt__Seal *)rr.msg;

		rr.statement = mcpt__seal_statement__unpack(&r->alloc, s->statement.len,
							    s->statement.data);
	}
	ret = r->cb(r->ctx, &rr);
	if (rr.statement)
		mcpt__seal_statement__free_unpacked((Mcpt__SealStatement *)rr.statement, &r->alloc);
	if (rr.msg && !borrowed) {
		mcpt_valtab__detach(r->values, (ProtobufCMessage *)rr.msg);
		protobuf_c_message_free_unpacked((ProtobufCMessage *)rr.msg, &r->alloc);
	}
	return ret;
}

int replay__run(struct replay *r, int fd, replay_cb cb, void *ctx)
{
	return replay__run_reading(r, fd, cb, ctx, NULL, NULL);
}

int replay__run_reading(struct replay *r, int fd, replay_cb cb, void *ctx,
			void (*on_read)(void *ctx, const uint8_t *p, size_t n), void *on_read_ctx)
{
	struct mcpt_verify_opts vo = {
		.key = r->o.key,
		.allow_unsigned = r->o.allow_unsigned,
		.hold_segments = r->o.hold_segments,
		.on_read = on_read,
		.on_read_ctx = on_read_ctx,
		.want_event = r->o.want_event,
		.want_ctx = r->o.want_ctx,
		.skim = r->o.skim,
	};

	r->cb = cb;
	r->ctx = ctx;
	return mcpt_verify(fd, &vo, on_record, r, &r->rep);
}

const Mcpt__Header *replay__header(const struct replay *r)
{
	return r->header;
}

const struct mcpt_report *replay__report(const struct replay *r)
{
	return &r->rep;
}

uint64_t replay__malformed(const struct replay *r)
{
	return r->malformed;
}

bool replay_malformed(const struct mcpt_report *rep)
{
	switch (rep->code) {
	case MCPT_E_NOT_A_TRACE:
	case MCPT_E_VERSION:
	case MCPT_E_HEADER:
	case MCPT_E_FEATURE:
	case MCPT_E_FRAME_VARINT:
	case MCPT_E_FRAME_LEN:
	case MCPT_E_FRAME_STRUCT:
	case MCPT_E_TRAILING:
	case MCPT_E_RECORD_PARSE:
		return true;
	default:
		return false;
	}
}

bool replay_torn(const struct mcpt_report *rep)
{
	return rep->truncated || rep->zero_tail || rep->code == MCPT_E_TRUNCATED ||
	       rep->code == MCPT_E_ZERO_TAIL;
}

bool replay_damaged(const struct mcpt_report *rep)
{
	return replay_malformed(rep) || replay_torn(rep);
}

const char *replay_message(const struct mcpt_report *rep, char out[REPLAY_MESSAGE_MAX])
{
	return mcpt_sanitize(out, REPLAY_MESSAGE_MAX, rep->message);
}
