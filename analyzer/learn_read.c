/*
 * learn_read.c - one trace into the baseline model (see learn.h): each event classified into
 * an item of its scopes, with the generalisation of learn_gen.h under the trace's variables;
 * the calls per scope and the tool-call edges once the trace is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "learn.h"
#include "learn_op.h"

#define DNS_PROCS_MAX 64 /* processes whose recent DNS queries are remembered */
#define DNS_NAMES_MAX 4	 /* names remembered per process */

struct dns_recent {
	uint32_t pid;
	uint64_t pstart;
	char names[DNS_NAMES_MAX][DNS_NAME_MAX + 1];
	size_t n;
};

/* What is known while one trace is read. */
struct lread {
	struct gen_ctx g;
	char *ws, *home, *tmp;
	struct glob **secrets;
	struct dns_recent dns[DNS_PROCS_MAX];
	size_t n_dns, next_dns;
};

/* One classified event. */
struct lobs {
	enum lk_kind kind;
	struct strbuf f1, f2, example;
	bool opened, runtime, secret;
	const char *names;
};

static void lread_free(struct lread *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->g.n_secrets; i++)
		glob_free(r->secrets[i]);
	free(r->secrets);
	free(r->ws);
	free(r->home);
	free(r->tmp);
	free(r);
}

static char *var_dup(const struct vars *vs, const char *name)
{
	const char *v;
	size_t n;

	return vars__get(vs, name, &v, &n) ? NULL : strndup(v, n);
}

static int var_cb(void *ctx, const char *name, const char **val, size_t *len)
{
	return vars__get(ctx, name, val, len);
}

/* The base's secrets compiled with this trace's variables; a pattern whose variable the
 * trace lacks matches nothing (as in analyze). */
static int on_header(void *ctx, struct obs_trace *t)
{
	struct lmodel *m = ctx;
	struct lread *r = calloc(1, sizeof(*r));
	size_t n = m->base ? m->base->n_secrets : 0;

	lread_free(m->cur);
	m->cur = r;
	if (!r || !(r->secrets = calloc(n ? n : 1, sizeof(*r->secrets))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *p = m->base->secrets[i];
		struct glob *g = glob_compile(p, strlen(p), GLOB_PATH, var_cb, t->vars, NULL, 0);

		if (!g && errno == ENOMEM)
			return -ENOMEM;
		if (g)
			r->secrets[r->g.n_secrets++] = g;
	}
	r->g.secrets = r->secrets;
	r->g.workspace = r->ws = var_dup(t->vars, "workspace");
	r->g.home = r->home = var_dup(t->vars, "home");
	r->g.tmp = r->tmp = var_dup(t->vars, "tmp");
	gen_ctx_init(&r->g);
	m->traces++;
	free(m->facts);
	m->n_facts = callset__count(callmodel__calls(t->cm)) + 1;
	m->facts = calloc(m->n_facts, sizeof(*m->facts));
	return m->facts ? 0 : -ENOMEM;
}

/* --- DNS ---------------------------------------------------------------------------------- */

static struct dns_recent *dns_of(struct lread *r, const struct ev_view *v, bool create)
{
	struct dns_recent *d;

	for (size_t i = 0; i < r->n_dns; i++)
		if (r->dns[i].pid == v->pid && r->dns[i].pstart == v->pstart)
			return &r->dns[i];
	if (!create)
		return NULL;
	d = &r->dns[r->n_dns < DNS_PROCS_MAX ? r->n_dns++ : r->next_dns++ % DNS_PROCS_MAX];
	memset(d, 0, sizeof(*d));
	d->pid = v->pid;
	d->pstart = v->pstart;
	return d;
}

static void dns_remember(struct lread *r, const struct ev_view *v, const struct dns_query *q)
{
	struct dns_recent *d = dns_of(r, v, true);
	char name[DNS_NAME_MAX + 1];
	struct strbuf sb = STRBUF_INIT;

	strbuf_escape(&sb, (const uint8_t *)q->name, q->name_len, 0);
	snprintf(name, sizeof(name), "%s", strbuf_str(&sb) ?: "");
	strbuf_fini(&sb);

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return;
	if (d->n == DNS_NAMES_MAX)
		memmove(d->names[0], d->names[1], sizeof(d->names[0]) * (DNS_NAMES_MAX - 1));
	else
		d->n++;
	snprintf(d->names[d->n - 1], sizeof(d->names[0]), "%s", name);
}

/* The names the process queried since its last connection ("a.example, b.example"). */
static char *dns_take(struct lread *r, const struct ev_view *v)
{
	struct dns_recent *d = dns_of(r, v, false);
	struct strbuf sb = STRBUF_INIT;

	if (!d || !d->n)
		return NULL;
	for (size_t i = 0; i < d->n; i++)
		strbuf_printf(&sb, "%s%s", i ? ", " : "", d->names[i]);
	d->n = 0;
	return strbuf_detach(&sb);
}

/* --- classification ----------------------------------------------------------------------- */

static bool classify_path(struct lread *r, struct ev_bytes p, struct lobs *o)
{
	unsigned flags;
	enum gen_result g;

	strbuf_escape(&o->example, p.p, p.n, 0);
	g = gen_path(&r->g, p.p, p.n, &o->f1, &flags);
	o->runtime = flags & GEN_F_RUNTIME;
	if (g == GEN_SECRET) {
		o->secret = true;
		strbuf_reset(&o->f1);
		strbuf_escape(&o->f1, p.p, p.n, 0);
	}
	return g != GEN_NONE;
}

/* A DNS query is learned by the name asked (the dns field of the rules), a connection or send
 * by its destination, with the names the process asked for before it (a comment). */
static bool classify_net(struct lread *r, const struct ev_view *v, struct lobs *o, char **names)
{
	const struct dns_query *q = event_dns(v);
	const struct mw_sockaddr *a = event_addr(v);

	if (q) {
		o->kind = LK_DNS;
		strbuf_escape(&o->example, (const uint8_t *)q->name, q->name_len, 0);
		gen_literal(&o->f1, (const uint8_t *)q->name, q->name_len, true);
		dns_remember(r, v, q);
		return q->name_len > 0;
	}
	if (!a)
		return false;
	sockaddr_format(&o->example, a);
	if (a->kind == SA_UNIX) {
		strbuf_puts(&o->f1, "unix");
		return true;
	}
	if (a->kind != SA_INET && a->kind != SA_INET6)
		return false;
	sockaddr_format_ip(&o->f1, &a->ip);
	strbuf_printf(&o->f2, "%u", a->port);
	if (v->op == MCPT__OP__OP_CONNECT)
		*names = dns_take(r, v);
	return true;
}

/* Fills o; returns false for an event that is not learned. */
static bool classify(struct lread *r, const struct obs_event *e, struct lobs *o, char **names)
{
	const struct ev_view *v = e->v;
	struct ev_bytes p = v->subject.n ? v->subject : v->opened;

	switch (learn_op_class(v->op)) {
	case LOP_EXEC:
		o->kind = LK_EXEC;
		gen_exe(&r->g, e->exe.p, e->exe.n, &o->f1);
		gen_argv(&r->g, &e->argv, v->flags & MW_F_ARGV_ENTRIES, &o->f2);
		event_format_argv(&o->example, &e->argv, true);
		return e->exe.n > 0;
	case LOP_OPEN:
		o->kind = v->write_intent ? LK_WRITE : LK_READ;
		if (o->kind == LK_READ && gen_is_runtime_noise(p.p, p.n))
			return false; /* allowed by every baseline, read or not */
		return classify_path(r, p, o);
	case LOP_CHANGE:
		o->kind = LK_CHANGE;
		o->opened = !v->subject.n;
		if (!classify_path(r, p, o))
			return false;
		if (!o->secret) { /* f1 the operation, f2 the path glob */
			struct strbuf path = o->f1;

			o->f1 = o->f2;
			o->f2 = path;
			strbuf_puts(&o->f1, v->op_name);
		}
		return true;
	case LOP_NET:
		o->kind = LK_CONNECT;
		/* a query on a connected socket names no address: learned by its name alone */
		return (v->has_addr || v->has_dns) && classify_net(r, v, o, names);
	case LOP_BIND:
		o->kind = LK_LISTEN;
		if (!event_addr(v) ||
		    (event_addr(v)->kind != SA_INET && event_addr(v)->kind != SA_INET6))
			return false;
		strbuf_puts(&o->f1, "bind");
		strbuf_printf(&o->f2, "%u", event_addr(v)->port);
		sockaddr_format(&o->example, event_addr(v));
		return true;
	case LOP_OTHER:
		o->kind = LK_OTHER;
		strbuf_puts(&o->f1, v->op_name);
		strbuf_puts(&o->example, v->op_name);
		return true;
	default:
		return false;
	}
}

/* --- scopes of an event ------------------------------------------------------------------- */

static long call_scope(struct lmodel *m, const struct call *c)
{
	if (!c || c->dir != CHAN_IN)
		return -1;
	if (c->tool)
		return lmodel__scope(m, LS_TOOL, c->tool);
	return c->method ? lmodel__scope(m, LS_METHOD, c->method) : -1;
}

/* The scopes of an attribution (at most ATTR_CANDIDATES_MAX); their number, or -ENOMEM. */
static int scopes_of(struct lmodel *m, struct obs_trace *t, const struct attribution *a, long *out)
{
	static const enum ls_kind buckets[BUCKETS] = {[BUCKET_STARTUP] = LS_STARTUP,
						      [BUCKET_AMBIENT] = LS_AMBIENT,
						      [BUCKET_SHUTDOWN] = LS_SHUTDOWN};
	const struct callset *cs = callmodel__calls(t->cm);
	int n = 0;
	long s;

	if (a->rule == ATTR_BUCKET) {
		if (a->bucket <= BUCKET_NONE || a->bucket >= BUCKETS)
			return 0;
		out[0] = lmodel__scope(m, buckets[a->bucket], NULL);
		return out[0] < 0 ? -ENOMEM : 1;
	}
	if (a->rule != ATTR_AMBIGUOUS) {
		out[0] = call_scope(m, callset__get(cs, a->call));
		return out[0] == -ENOMEM ? -ENOMEM : out[0] >= 0;
	}
	for (size_t i = 0; i < a->n_cand; i++) {
		s = call_scope(m, callset__get(cs, a->cand[i]));
		if (s == -ENOMEM)
			return -ENOMEM;
		for (int j = 0; j < n && s >= 0; j++)
			if (out[j] == s)
				s = -1;
		if (s >= 0)
			out[n++] = s;
	}
	return n;
}

/* --- adding ------------------------------------------------------------------------------- */

static int sighting(struct lmodel *m, struct obs_trace *t, const struct obs_event *e, size_t scope,
		    const struct lobs *o, char **names)
{
	const struct call *c = e->a->rule == ATTR_BUCKET || e->a->rule == ATTR_AMBIGUOUS
				       ? NULL
				       : callset__get(callmodel__calls(t->cm), e->a->call);
	bool added;
	struct litem *it = lmodel__add(m, scope, o->kind, o->f1.buf ?: "", o->f2.buf ?: "", &added);

	if (!it)
		return -ENOMEM;
	lmodel__seen(m, it, e->index);
	if (!added) {
		if (*names && !it->names) {
			it->names = *names;
			*names = NULL;
		}
		return 0;
	}
	it->opened = o->opened;
	it->trace = m->traces;
	it->call = c ? c->index : 0;
	it->record = e->index;
	it->example = strdup(o->example.buf ?: "");
	it->call_id = c && c->id ? strdup(c->id) : NULL;
	it->names = *names;
	*names = NULL;
	return it->example && (!c || !c->id || it->call_id) ? 0 : -ENOMEM;
}

/* Diff: a process the reference never saw in a scope is reported by its exec alone. One whose
 * program is unknown (its fork and exec are not in the trace: lost to a full ring, say) has
 * no exec to stand for it: its effects are listed one by one. */
static bool known_process(const struct lmodel *m, struct lread *r, const struct obs_event *e,
			  long scope)
{
	const struct lmodel *ref = m->ref;
	const struct lscope *s = &m->scopes[scope];
	struct strbuf exe = STRBUF_INIT;
	long rs = lmodel__find_scope(ref, s->kind, s->name), srv;
	const char *name;
	bool known;

	if (e->server || !e->exe.n)
		return true;
	gen_exe(&r->g, e->exe.p, e->exe.n, &exe);
	srv = lmodel__find_scope(ref, LS_SERVER, NULL);
	name = strbuf_str(&exe);
	known = name && ((srv >= 0 && lmodel__find(ref, (size_t)srv, LK_PROC, name, "")) ||
			 (rs >= 0 && lmodel__find(ref, (size_t)rs, LK_PROC, name, "")));
	strbuf_fini(&exe);
	return known;
}

static int add_proc(struct lmodel *m, struct lread *r, struct obs_trace *t,
		    const struct obs_event *e, long scope)
{
	struct lobs p = {.kind = LK_PROC};
	char *none = NULL;
	int err;

	if (!e->exe.n)
		return 0;
	if (e->server && (scope = lmodel__scope(m, LS_SERVER, NULL)) < 0)
		return -ENOMEM;
	gen_exe(&r->g, e->exe.p, e->exe.n, &p.f1);
	strbuf_escape(&p.example, e->exe.p, e->exe.n, 0);
	err = strbuf_error(&p.f1) ?: strbuf_error(&p.example);
	err = err ?: sighting(m, t, e, (size_t)scope, &p, &none);
	strbuf_fini(&p.f1);
	strbuf_fini(&p.example);
	return err;
}

static void note_facts(struct lmodel *m, struct obs_trace *t, const struct obs_event *e,
		       const struct lobs *o)
{
	const struct attribution *a = e->a;
	bool secret = o->secret && o->kind == LK_READ && e->v->result == RES_SUCCESS;
	bool sent = o->kind == LK_CONNECT && strcmp(o->f1.buf ?: "", "unix");

	(void)t;
	if (!secret && !sent)
		return;
	for (size_t i = 0; i < (a->rule == ATTR_AMBIGUOUS ? a->n_cand : 1); i++) {
		size_t c = a->rule == ATTR_AMBIGUOUS ? a->cand[i] : a->call;

		if (a->rule == ATTR_BUCKET || !c || c >= m->n_facts)
			continue;
		m->facts[c].secret_read |= secret;
		m->facts[c].sent |= sent;
	}
}

static int add_event(struct lmodel *m, struct lread *r, struct obs_trace *t,
		     const struct obs_event *e, struct lobs *o, char **names)
{
	long scopes[ATTR_CANDIDATES_MAX];
	int n = scopes_of(m, t, e->a, scopes), err = 0;

	if (n < 0)
		return n;
	if (o->secret)
		o->kind = LK_SECRET;
	for (int i = 0; i < n && !err; i++) {
		long s = scopes[i];

		if (m->ref && (o->kind == LK_READ || o->kind == LK_OTHER) &&
		    !known_process(m, r, e, s))
			continue;
		err = add_proc(m, r, t, e, s);
		if (o->kind == LK_READ && o->runtime &&
		    (s = lmodel__scope(m, LS_RUNTIME, NULL)) < 0)
			return -ENOMEM;
		err = err ?: sighting(m, t, e, (size_t)s, o, names);
	}
	return err;
}

static int on_event(void *ctx, struct obs_trace *t, const struct obs_event *e)
{
	struct lmodel *m = ctx;
	struct lread *r = m->cur;
	struct lobs o = {0};
	char *names = NULL;
	int err = 0;

	if (!r || e->launch)
		return 0;
	if (classify(r, e, &o, &names)) {
		note_facts(m, t, e, &o);
		err = strbuf_error(&o.f1) ?: strbuf_error(&o.f2) ?: strbuf_error(&o.example);
		err = err ?: add_event(m, r, t, e, &o, &names);
	}
	free(names);
	strbuf_fini(&o.f1);
	strbuf_fini(&o.f2);
	strbuf_fini(&o.example);
	return err;
}

const struct obs_ops lmodel_obs_ops = {.header = on_header, .event = on_event};

void lmodel__drop_cur(struct lmodel *m)
{
	lread_free(m->cur);
	m->cur = NULL;
}

/* --- once a trace is read ----------------------------------------------------------------- */

static int add_edge(struct lmodel *m, long graph, const char *from, const struct call *prev,
		    const struct call *c, const char *to)
{
	struct strbuf ex = STRBUF_INIT;
	struct litem *it;
	bool added;

	it = lmodel__add(m, (size_t)graph, LK_EDGE, from, to, &added);
	if (!it)
		return -ENOMEM;
	lmodel__seen(m, it, c->begin_record);
	if (!added)
		return 0;
	if (prev)
		strbuf_printf(&ex, "calls %zu -> %zu", prev->index, c->index);
	else
		strbuf_printf(&ex, "call %zu first", c->index);
	it->trace = m->traces;
	it->call = c->index;
	it->call2 = prev ? prev->index : 0;
	it->record = c->begin_record;
	it->example = strbuf_detach(&ex);
	it->call_id = c->id ? strdup(c->id) : NULL;
	return it->example && (!c->id || it->call_id) ? 0 : -ENOMEM;
}

/* Whether a verified seal covers the sightings of trace t (m->traces): the whole trace when it
 * verified complete, else the records up to its last verified seal. An item seen there is
 * proven; one first seen in t only after it is unproven; one known from an earlier trace keeps
 * what that trace made it, unless t proves it. */
static void mark_unproven(struct lmodel *m, const struct obs_trace *t)
{
	const struct mcpt_report *rep = replay__report(t->rp);
	bool complete = rep->verdict == MCPT_VALID_COMPLETE;
	uint64_t through = rep->verified_through_record;

	for (size_t i = 0; i < m->n_items; i++) {
		struct litem *it = &m->items[i];

		if (it->seen_trace != m->traces)
			continue;
		if (complete || (through && it->seen_first <= through))
			it->unproven = false;
		else if (it->trace == m->traces)
			it->unproven = true;
	}
}

int lmodel__trace_end(struct lmodel *m, struct obs_trace *t)
{
	const struct callset *cs = callmodel__calls(t->cm);
	const struct call *c, *prev = NULL;
	long s, graph = lmodel__scope(m, LS_GRAPH, NULL);
	int err = graph < 0 ? -ENOMEM : 0;

	lmodel__drop_cur(m);
	for (size_t i = 1; !err && (c = callset__get(cs, i)); i++) {
		if ((s = call_scope(m, c)) == -ENOMEM)
			return -ENOMEM;
		if (s < 0)
			continue;
		m->scopes[s].calls++;
		if (!c->method || strcmp(c->method, "tools/call"))
			continue;
		err = add_edge(m, graph, prev ? prev->tool ?: "tools/call" : "(start)", prev, c,
			       c->tool ?: "tools/call");
		prev = c;
	}
	if (!err)
		mark_unproven(m, t);
	return err;
}
