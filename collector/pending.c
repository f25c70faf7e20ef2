/*
 * pending.c - calls written from their in-flight stash (see pending.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "loader.h"
#include "log.h"
#include "pending.h"
#include "session.h"
#include "session_int.h"

/* Writes the call stashed in f as an Event with flags (MW_F_ENTRY or MW_F_UNFINISHED): its
 * start, its arguments (connect and accept: with the socket's type and family, and the
 * caller's uid and gid) and, for a call stashed with a head, the head: for connect, sendto and
 * sendmsg the address (data), else the path (a head of MW_HEAD_MAX - 1 bytes or more is
 * flagged cut, so a path never reads as absolute unless it was). */
static void write_stash(struct session *s, const struct mw_inflight *f, uint32_t flags)
{
	Mcpt__Event ev = MCPT__EVENT__INIT;
	int64_t args[4];
	size_t n = 4, i;

	for (i = 0; i < 4; i++)
		args[i] = (int64_t)f->arg[i];
	while (n > 0 && args[n - 1] == 0)
		n--;
	ev.ts = f->ts;
	ev.pid = f->tgid;
	ev.tid = f->tid;
	ev.pstart = f->pstart;
	ev.uid = f->uid;
	ev.gid = f->gid;
	ev.op = (Mcpt__Op)f->op;
	ev.flags = flags;
	ev.args = args;
	ev.n_args = n;
	if (f->head_len && f->head_len != MW_HEAD_UNREAD) {
		bool addr =
			f->op == MW_OP_CONNECT || f->op == MW_OP_SENDTO || f->op == MW_OP_SENDMSG;
		ProtobufCBinaryData *b = addr ? &ev.data : &ev.path;

		b->data = (uint8_t *)f->head;
		b->len = f->head_len < MW_HEAD_MAX ? f->head_len : MW_HEAD_MAX - 1;
		if (f->head_len >= MW_HEAD_MAX - 1)
			ev.flags |= MW_F_TRUNC(addr ? MW_S_DATA : MW_S_PATH);
	}
	session_append(s, MCPT_T_EVENT, &ev.base, f->ts);
}

struct scan {
	struct session *s;
	uint64_t from, to; /* (from, to]: when a call's PENDING_ENTRY_MS ran out in this scan */
};

bool pending_due(const struct mw_inflight *f, uint64_t from, uint64_t to)
{
	uint64_t due = f->ts + PENDING_ENTRY_MS * 1000000ull;

	if (f->op != MW_OP_CONNECT && f->op != MW_OP_ACCEPT && f->op != MW_OP_ACCEPT4)
		return false;
	return due > from && due <= to;
}

static bool blocked_now(void *ctx, const struct mw_inflight *f)
{
	const struct scan *sc = ctx;

	return pending_due(f, sc->from, sc->to);
}

static void write_entry(void *ctx, const struct mw_inflight *f)
{
	write_stash(((struct scan *)ctx)->s, f, MW_F_ENTRY);
}

void pending_scan(struct session *s)
{
	struct scan sc = { .s = s, .from = s->pending_scanned_ns };
	int err;

	sc.to = session_now_ns(CLOCK_BOOTTIME);
	if (s->write_err || sc.to < sc.from + PENDING_SCAN_MS * 1000000ull)
		return;
	err = loader__inflight(s->bpf, blocked_now, write_entry, &sc);
	if (err < 0) {
		/* once: the next scan covers this one's calls (its window starts where this
		 * one's did) */
		if (!s->pending_warned)
			p_warn("failed to read the calls in flight: %s", strerror(-err));
		s->pending_warned = true;
		return;
	}
	s->pending_scanned_ns = sc.to;
}

static void write_unfinished(void *ctx, const struct mw_inflight *f)
{
	write_stash(ctx, f, MW_F_UNFINISHED);
}

int pending_write_unfinished(struct session *s)
{
	return loader__inflight(s->bpf, NULL, write_unfinished, s);
}
