/*
 * chanmsg.c - channel lines as rule subjects (see chanmsg.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chanmsg.h"
#include "events.h"
#include "msgclass.h"
#include "strbuf.h"

struct recidx {
	uint64_t record;
	size_t call; /* 1-based */
};

struct chanmsg {
	struct callmodel *cm;
	struct chan *chan;
	chanmsg_fn fn;
	void *ctx;
	uint32_t pid, uid;
	uint64_t pstart, seq;
	struct recidx *req, *resp; /* client calls by request record, by response record */
	size_t n_req, n_resp;
	bool indexed;
	bool later;	  /* the model is resolved after the read: no attribution during it */
	char detail[320]; /* describe()'s line */
};

static int line_cb(void *ctx, const struct chan_line *l);

static void note_cb(void *ctx, enum chan_dir dir, uint64_t offset, uint64_t ts, const char *msg)
{
	(void)ctx, (void)dir, (void)offset, (void)ts, (void)msg; /* pass 1 reported them */
}

static const struct chan_ops ops = {.line = line_cb, .note = note_cb, .no_scan = true};

struct chanmsg *chanmsg__new(struct callmodel *cm, chanmsg_fn fn, void *ctx)
{
	struct chanmsg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cm = cm;
	m->fn = fn;
	m->ctx = ctx;
	m->chan = chan__new(0, &ops, m);
	if (!m->chan) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void chanmsg__free(struct chanmsg *m)
{
	if (!m)
		return;
	chan__free(m->chan);
	free(m->req);
	free(m->resp);
	free(m);
}

void chanmsg__set_server(struct chanmsg *m, uint32_t pid, uint64_t pstart, uint32_t uid)
{
	m->pid = pid;
	m->pstart = pstart;
	m->uid = uid;
}

int chanmsg__frame(struct chanmsg *m, const Mcpt__StdioFrame *f, uint64_t index)
{
	return chan__frame(m->chan, f, index);
}

int chanmsg__finish(struct chanmsg *m)
{
	return chan__finish(m->chan);
}

/* --- finding the call of a request or response ------------------------------------------- */

static int cmp_rec(const void *a, const void *b)
{
	const struct recidx *x = a, *y = b;

	if (x->record != y->record)
		return x->record < y->record ? -1 : 1;
	return x->call < y->call ? -1 : x->call > y->call;
}

static int build_index(struct chanmsg *m)
{
	struct callset *cs = m->cm ? callmodel__calls(m->cm) : NULL;
	size_t n = cs ? callset__count(cs) : 0;
	const struct call *c;

	m->indexed = true;
	m->req = calloc(n ? n : 1, sizeof(*m->req));
	m->resp = calloc(n ? n : 1, sizeof(*m->resp));
	if (!m->req || !m->resp)
		return -ENOMEM;
	for (size_t i = 1; (c = cs ? callset__get(cs, i) : NULL); i++) {
		if (c->dir != CHAN_IN || !c->id)
			continue;
		m->req[m->n_req++] = (struct recidx){c->begin_record, c->index};
		if (c->resp_record)
			m->resp[m->n_resp++] = (struct recidx){c->resp_record, c->index};
	}
	qsort(m->req, m->n_req, sizeof(*m->req), cmp_rec);
	qsort(m->resp, m->n_resp, sizeof(*m->resp), cmp_rec);
	return 0;
}

/* The call among those of record rec (one frame can carry several messages) with this id. */
static size_t find_call(const struct chanmsg *m, const struct recidx *v, size_t n, uint64_t rec,
			const char *id)
{
	struct callset *cs = callmodel__calls(m->cm);
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].record < rec)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].record == rec; lo++) {
		const struct call *c = callset__get(cs, v[lo].call);

		if (c && c->id && strcmp(c->id, id) == 0)
			return c->index;
	}
	return 0;
}

/* --- one line ----------------------------------------------------------------------------- */

/* One line as a subject: its class and its attribution are made when first read. */
struct line_subject {
	struct chanmsg *m;
	const struct chan_line *l;
	struct ev_view v;
	struct msgclass mi;
	struct attribution a;
	bool classified, attributed;
};

static const struct msgclass *line_class(struct line_subject *ls)
{
	if (!ls->classified) {
		msgclass_line(&ls->mi, ls->l->data, ls->l->data ? (size_t)ls->l->len : 0);
		ls->classified = true;
	}
	return &ls->mi;
}

static enum ev_msg_kind line_kind(void *ctx)
{
	return line_class(ctx)->kind;
}

/* The subject's detail, made only when a finding asks for it (v.describe). */
static const char *describe(void *ctx)
{
	struct line_subject *ls = ctx;
	const struct chan_line *l = ls->l;
	const struct msgclass *mi = line_class(ls);
	struct strbuf sb = STRBUF_INIT;

	strbuf_printf(&sb, "%s %s", event_msg_kind_name(mi->kind),
		      l->dir == CHAN_IN ? "read from the client" : "written to the client");
	if (mi->method) {
		strbuf_puts(&sb, " ");
		strbuf_escape(&sb, (const uint8_t *)mi->method, mi->method_len, 0);
	}
	if (mi->id)
		strbuf_printf(&sb, " (id %.32s)", mi->id);
	strbuf_printf(&sb, ", %llu bytes at %s offset %llu", (unsigned long long)l->len,
		      chan_dir_name(l->dir), (unsigned long long)l->offset);
	snprintf(ls->m->detail, sizeof(ls->m->detail), "%s",
		 strbuf_str(&sb) ? strbuf_str(&sb) : "message");
	strbuf_fini(&sb);
	return ls->m->detail;
}

/* The attribution of the message of record `record` (v: its subject) from its direction,
 * kind and id; m's index of the calls is built. */
static void attribute_line(struct chanmsg *m, uint64_t record, enum chan_dir dir,
			   enum ev_msg_kind kind, const char *id, const struct ev_view *v,
			   struct attribution *a)
{
	size_t call = 0;

	memset(a, 0, sizeof(*a));
	if (m->cm && id && dir == CHAN_IN && kind == MSG_REQUEST)
		call = find_call(m, m->req, m->n_req, record, id);
	else if (m->cm && id && dir == CHAN_OUT && kind == MSG_RESPONSE)
		call = find_call(m, m->resp, m->n_resp, record, id);
	if (call) {
		a->rule = ATTR_WINDOW;
		a->call = call;
		a->order = 2 * (uint64_t)call;
	} else if (m->cm) {
		callmodel__attribute(m->cm, v, a);
	} else {
		a->rule = ATTR_BUCKET;
		a->bucket = BUCKET_STARTUP;
		a->order = 1;
	}
}

static const struct attribution *line_attr(void *ctx)
{
	struct line_subject *ls = ctx;
	const struct msgclass *mi;

	if (!ls->attributed) {
		ls->attributed = true;
		mi = line_class(ls);
		attribute_line(ls->m, ls->l->record, ls->l->dir, mi->kind, mi->id, &ls->v, &ls->a);
	}
	return &ls->a;
}

/* The subject of a message as line_cb makes it, without its bytes. */
static void line_view(const struct chanmsg *m, uint64_t ts, enum chan_dir dir, struct ev_view *v)
{
	v->op = EV_OP_MESSAGE;
	v->op_name = "message";
	v->family = FAM_CHANNEL;
	v->ts = ts;
	v->pid = v->tid = m->pid;
	v->pstart = m->pstart;
	v->uid = m->uid;
	v->result = RES_SUCCESS;
	v->msg_dir = dir;
}

void chanmsg__later(struct chanmsg *m)
{
	m->later = true;
}

int chanmsg_key_of(void *attr_ctx, struct chanmsg_key *k)
{
	struct line_subject *ls = attr_ctx;
	const struct msgclass *mi = line_class(ls);

	k->record = ls->l->record;
	k->ts = ls->l->ts;
	k->dir = ls->l->dir;
	k->kind = mi->kind;
	k->id = NULL;
	return mi->id && !(k->id = strdup(mi->id)) ? -ENOMEM : 0;
}

void chanmsg_key_fini(struct chanmsg_key *k)
{
	free(k->id);
	k->id = NULL;
}

int chanmsg__attribute_key(struct chanmsg *m, const struct chanmsg_key *k, struct attribution *a)
{
	struct ev_view v;
	int err;

	if (!m->indexed && (err = build_index(m)))
		return err;
	memset(&v, 0, sizeof(v));
	line_view(m, k->ts, k->dir, &v);
	attribute_line(m, k->record, k->dir, k->kind, k->id, &v, a);
	return 0;
}

static int line_cb(void *ctx, const struct chan_line *l)
{
	struct line_subject ls = {.m = ctx, .l = l};
	struct ev_view *v = &ls.v;
	struct chanmsg *m = ctx;
	int err;

	if (!m->later && !m->indexed && (err = build_index(m)))
		return err;
	line_view(m, l->ts, l->dir, v);
	/* the fields `tampered` and `unchecked` of a message: its bytes as the trace holds them may
	 * not be those that crossed the channel (chan.h) */
	v->flags = (l->flags & CHAN_L_TAMPERED ? MW_F_TAMPERED : 0) |
		   (l->flags & CHAN_L_UNCHECKED ? MW_F_UNCHECKED : 0);
	v->msg_kind_get = line_kind;
	v->msg_kind_ctx = &ls;
	v->message = (struct ev_bytes){l->data, l->data ? l->len : 0};
	v->describe = describe;
	v->describe_ctx = &ls;
	err = m->fn(m->ctx, v, line_attr, &ls, l->record);
	if (ls.classified)
		msgclass_fini(&ls.mi);
	return err;
}
