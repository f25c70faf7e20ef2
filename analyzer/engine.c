/*
 * engine.c - event evaluation, process tracking and entry-record holding (see engine.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr_later.h"
#include "attribute.h"
#include "chanmsg.h"
#include "engine.h"
#include "events.h"
#include "exec_search.h"
#include "strbuf.h"

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
	struct str_memo *strs;
	struct callmodel *cm;
	struct chanmsg *cmsg;	       /* channel messages as subjects (with a call model) */
	struct attr_later *later;      /* set: cm is resolved after the read (engine__later) */
	void *msg_ctx;		       /* chanmsg's attr_ctx while a message is evaluated */
	struct exec_searches searches; /* failed execs held while a PATH search goes on */
	uint64_t max_seq;	       /* the highest event sequence number read */
	uint32_t tpid, tuid;	       /* the server */
	uint64_t tpstart;
	const struct exec_search *attempts; /* set while the exec that ends a search is evaluated */
};

struct engine *engine__new(const struct policy *p, size_t max_per_rule)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->pol = p;
	e->pt = proctree__new();
	e->memo = calloc(p->n_macros ? p->n_macros : 1, 1);
	e->strs = str_memo__new();
	if (!e->pt || !e->memo || !e->strs || findings_init(&e->fs, p->n_rules, max_per_rule)) {
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
	exec_searches_fini(&e->searches);
	free(e->held);
	attr_later__free(e->later);
	chanmsg__free(e->cmsg);
	free(e->memo);
	str_memo__free(e->strs);
	findings_fini(&e->fs);
	proctree__free(e->pt);
	free(e);
}

static int on_message(void *ctx, const struct ev_view *v,
		      const struct attribution *(*attr)(void *attr_ctx), void *attr_ctx,
		      uint64_t index);

int engine__set_model(struct engine *e, struct callmodel *cm)
{
	e->cm = cm;
	chanmsg__free(e->cmsg);
	e->cmsg = chanmsg__new(cm, on_message, e);
	if (e->cmsg)
		chanmsg__set_server(e->cmsg, e->tpid, e->tpstart, e->tuid);
	if (e->cmsg && e->later)
		chanmsg__later(e->cmsg);
	return e->cmsg ? 0 : -ENOMEM;
}

int engine__later(struct engine *e)
{
	if (!e->later && !(e->later = attr_later__new()))
		return -ENOMEM;
	if (e->cmsg)
		chanmsg__later(e->cmsg);
	return 0;
}

int engine__settle(struct engine *e)
{
	return e->later && e->cm ? attr_later__settle(e->later, &e->fs, e->cm, e->cmsg) : 0;
}

int engine__set_header(struct engine *e, const Mcpt__Header *h)
{
	const Mcpt__Target *t = h ? h->target : NULL;

	if (!t)
		return 0;
	e->tpid = t->pid;
	e->tpstart = t->pstart;
	e->tuid = t->uid;
	if (e->cmsg)
		chanmsg__set_server(e->cmsg, t->pid, t->pstart, t->uid);
	return proctree__set_target(e->pt, t->pid, t->pstart, &t->exe, t->argv, t->n_argv,
				    t->attached);
}

/* Rule i on subject s: a finding when it matches, an exception counted when one suppresses
 * it. direct: the one test that decides the condition on s (policy_rule_direct), else NULL
 * and skip: the kids of its top-level "all" known to hold. Returns 0 or -ENOMEM. */
static int evaluate_rule(struct engine *e, size_t i, unsigned subj, const struct eval_subject *s,
			 uint64_t skip, const struct field_test *direct, uint64_t index)
{
	const struct pol_rule *r = e->pol->rules[i];
	int exc = -1; /* a rule skipped for its subjects sets nothing */
	size_t kept = e->fs.n;
	int err;

	if (!(r->subjects & subj) ||
	    !(direct ? policy_rule_match_direct(r, s, direct, &exc)
		     : policy_rule_match(r, s, skip, &exc))) {
		e->st.exceptions_hit += exc >= 0;
		return 0;
	}
	err = findings_add(&e->fs, r, i, s->ev, index, s, s->proc, e->pt);
	if (!err && e->later && e->cm && e->fs.n > kept)
		err = attr_later__keep(e->later, kept, s->ev, e->msg_ctx);
	return err;
}

/* A subject's attribution, made when a call field or a finding first reads it: most subjects
 * match no rule and read none. */
struct lazy_attr {
	const struct callmodel *cm;
	const struct ev_view *v;
	bool done;
	struct attribution a;
};

static const struct attribution *lazy_attr_get(void *ctx)
{
	struct lazy_attr *l = ctx;

	if (!l->done) {
		callmodel__attribution(l->cm, l->v, &l->a);
		l->done = true;
	}
	return &l->a;
}

/* Every enabled rule that can match one subject (the policy's index by op and its keys of
 * cheap facts: the others cannot, so skipping them changes no finding and no counter), done
 * by process p (NULL: none). attr(attr_ctx): its attribution when the caller makes it (channel
 * messages), else (NULL) the call model decides. With e->later, no attribution is made: the
 * findings keep what theirs needs. */
static int evaluate_subject(struct engine *e, const struct ev_view *v, uint64_t index,
			   bool launch, struct proc *p,
			   const struct attribution *(*attr)(void *attr_ctx), void *attr_ctx)
{
	struct eval_subject s = {.ev = v, .launch = launch, .macro_memo = e->memo, .strs = e->strs};
	unsigned subj = v->op == EV_OP_MESSAGE	  ? POL_SUBJ_MESSAGES
			: v->op == EV_OP_LOSS	  ? POL_SUBJ_LOSSES
			: v->op == EV_OP_OUTLIVED ? POL_SUBJ_OUTLIVED
						  : POL_SUBJ_EVENTS;
	struct lazy_attr lazy;
	const uint32_t *ix;
	const uint64_t *keys, *skips;
	const struct field_test *const *direct;
	unsigned key;
	bool known;
	size_t n;
	int err;

	if (e->later) {
		if (!attr && e->cm) /* as below: every subject the model attributes is seen */
			callmodel__seen(e->cm, v);
	} else if (attr) {
		s.attr_get = attr;
		s.attr_ctx = attr_ctx;
		s.calls = e->cm ? callmodel__calls(e->cm) : NULL;
	} else if (e->cm) {
		callmodel__seen(e->cm, v);
		lazy.cm = e->cm; /* a is written before it is read: not cleared */
		lazy.v = v;
		lazy.done = false;
		s.attr_get = lazy_attr_get;
		s.attr_ctx = &lazy;
		s.calls = callmodel__calls(e->cm);
	}
	memset(e->memo, 0, e->pol->n_macros);
	str_memo__reset(e->strs);
	s.pt = e->pt;
	s.proc = p;
	if (p) {
		s.exe = (struct ev_bytes){p->exe, p->exe_len};
		s.argv = (struct ev_bytes){p->argv_join, p->join_len};
	}
	if (e->attempts) {
		s.attempts = e->attempts->count;
		s.attempted = strbuf_str(&e->attempts->paths);
	}
	if (!e->pol->index.rules) { /* never compiled: every rule */
		for (size_t i = 0; i < e->pol->n_rules; i++)
			if ((err = evaluate_rule(e, i, subj, &s, 0, NULL, index)))
				return err;
		return 0;
	}
	ix = policy_rules_for_op(e->pol, v->op, &n);
	keys = policy_keys_for_op(e->pol, v->op);
	skips = policy_skips_for_op(e->pol, v->op);
	direct = policy_direct_for_op(e->pol, v->op);
	key = policy_subject_key(&s);
	known = key != POL_KEY_UNKNOWN;
	/* a rule outside its keys cannot hold: nothing to do; the tests its key decides are not
	 * made again (the unknown key decides none) */
	for (size_t k = 0; k < n; k++)
		if (((keys[k] >> key) & 1) &&
		    (err = evaluate_rule(e, ix[k], subj, &s, known ? skips[k] : 0,
					 known ? direct[k] : NULL, index)))
			return err;
	return 0;
}

/* Every enabled rule on one decoded event. */
static int evaluate(struct engine *e, const struct ev_view *v, uint64_t index, bool launch)
{
	struct proc *p = proctree__get(e->pt, v->pid, v->pstart);

	if (!p)
		return -ENOMEM;
	/* before its first exec, the server process is still the collector's launcher */
	launch = launch || (p->is_target && p->launching && p->execs == 0);
	return evaluate_subject(e, v, index, launch, p, NULL, NULL);
}

static int on_message(void *ctx, const struct ev_view *v,
		      const struct attribution *(*attr)(void *attr_ctx), void *attr_ctx,
		      uint64_t index)
{
	struct engine *e = ctx;
	struct proc *p = proctree__target(e->pt); /* the server reads and writes the channel */
	int err;

	e->st.messages++;
	e->msg_ctx = attr_ctx;
	err = evaluate_subject(e, v, index, false, p, attr, attr_ctx);
	e->msg_ctx = NULL;
	return err;
}

int engine__stdio(struct engine *e, const Mcpt__StdioFrame *f, uint64_t index)
{
	return e->cmsg ? chanmsg__frame(e->cmsg, f, index) : 0;
}

static const char *loss_source_name(int src)
{
	const ProtobufCEnumValue *ev =
		protobuf_c_enum_descriptor_get_value(&mcpt__loss_source__descriptor, src);

	return ev ? ev->name : "UNKNOWN";
}

/* A subject of the family health (a loss, a process that outlived the server): no record of
 * its own, so no result but success. */
static void health_subject(struct ev_view *v, int op, const char *name, uint64_t ts, uint64_t seq)
{
	memset(v, 0, sizeof(*v));
	v->op = op;
	v->op_name = name;
	v->family = FAM_HEALTH;
	v->ts = ts;
	v->seq = seq;
	v->result = RES_SUCCESS;
}

int engine__loss(struct engine *e, const Mcpt__Loss *l, uint64_t index)
{
	char detail[160];
	struct ev_view v;

	health_subject(&v, EV_OP_LOSS, "loss", l->ts, l->first_seq);
	if (l->first_seq || l->last_seq)
		snprintf(detail, sizeof(detail), "%llu events lost (%s), sequence %llu..%llu",
			 (unsigned long long)l->delta, loss_source_name(l->src),
			 (unsigned long long)l->first_seq, (unsigned long long)l->last_seq);
	else
		snprintf(detail, sizeof(detail), "%llu events lost (%s)",
			 (unsigned long long)l->delta, loss_source_name(l->src));
	v.detail = detail;
	e->st.losses++;
	e->st.events_lost += l->delta;
	return evaluate_subject(e, &v, index, false, NULL, NULL, NULL);
}

/* The search ended without success: its last attempt is evaluated, carrying all of them. */
static int search_release(struct engine *e, struct exec_search *x)
{
	Mcpt__Event *ev = mcpt__event__unpack(NULL, x->len, x->packed);
	struct exec_search done;
	struct ev_view v;
	bool launch;
	int err;

	exec_search_take(&e->searches, x, &done); /* first: the evaluation must not find it */
	if (!ev) {
		err = -ENOMEM;
	} else {
		event_decode(&v, ev);
		e->attempts = &done;
		err = proctree__apply(e->pt, &v, &launch) ?: evaluate(e, &v, done.index, launch);
		e->attempts = NULL;
		mcpt__event__free_unpacked(ev, NULL);
	}
	exec_search_fini(&done);
	return err;
}

static int decode_and_evaluate(struct engine *e, const Mcpt__Event *ev, uint64_t index)
{
	struct exec_search *x;
	struct ev_view v;
	bool launch;
	int err;

	event_decode(&v, ev);
	x = e->searches.n ? exec_search_find(&e->searches, &v) : NULL;
	if (x && exec_search_same(x, &v) && v.op == MCPT__OP__OP_EXEC_FAILED)
		return exec_search_keep(x, &v, index);
	if (x && exec_search_same(x, &v)) { /* the search found it */
		err = proctree__apply(e->pt, &v, &launch);
		e->attempts = x;
		err = err ?: evaluate(e, &v, index, launch);
		e->attempts = NULL;
		exec_search_drop(&e->searches, x);
		return err;
	}
	if (x && (err = search_release(e, x)))
		return err;
	if (v.op == MCPT__OP__OP_EXEC_FAILED &&
	    (err = exec_search_start(&e->searches, &v, index)) <= 0)
		return err;
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
	if (ev->seq > e->max_seq)
		e->max_seq = ev->seq;
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

/* The processes still running after the server exited (outlived.h), one subject each, once the
 * read is over: every ProcInfo is known then (the server's own may come last), and the call
 * model is resolved. Each comes after every event (its sequence number the last one's). */
static int evaluate_outlived(struct engine *e)
{
	const struct procbind *pb = callmodel__procs(e->cm);
	struct strbuf d = STRBUF_INIT;
	const struct pb_proc *b;
	struct ev_view v;
	struct proc *p;
	int err = 0;

	if (procbind__server_alive(pb))
		return 0;
	for (size_t i = 0; !err && (b = procbind__at(pb, i)); i++) {
		if (!procbind_outlived(b))
			continue;
		p = proctree__get(e->pt, b->pid, b->pstart);
		if (!p)
			return -ENOMEM;
		health_subject(&v, EV_OP_OUTLIVED, "outlived", b->alive_ts, e->max_seq);
		v.pid = v.tid = b->pid;
		v.pstart = b->pstart;
		v.uid = b->has_uid ? b->uid : e->tuid;
		strbuf_reset(&d);
		strbuf_printf(&d, "pid %u ", b->pid);
		procbind_exe_text(&d, b, NULL);
		strbuf_puts(
			&d,
			b->killed_at_end
				? " was still running after the server exited, until the "
				  "collector killed it when the linger ran out"
				: " was still running after the server exited: not recorded from "
				  "the end of the trace on");
		v.detail = strbuf_str(&d);
		err = strbuf_error(&d)
			      ?: evaluate_subject(e, &v, b->alive_index, false, p, NULL, NULL);
	}
	strbuf_fini(&d);
	return err;
}

int engine__finish(struct engine *e)
{
	int err = 0;

	if (e->cmsg)
		err = chanmsg__finish(e->cmsg);

	/* released from the end of a descending sort: in stream order, no reshuffling */
	if (e->n_held > 1)
		qsort(e->held, e->n_held, sizeof(*e->held), cmp_held);
	while (e->n_held && !err)
		err = held_release(e, &e->held[e->n_held - 1]);
	while (e->searches.n && !err) /* the oldest search first */
		err = search_release(e, &e->searches.v[0]);
	if (!err && e->cm)
		err = evaluate_outlived(e);
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
