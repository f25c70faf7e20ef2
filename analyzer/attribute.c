/*
 * attribute.c - the call model's passes and the attribution rules (see attribute.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "events.h"
#include "evidence.h"
#include "winidx.h"

#define LOSS_RANGES_MAX 4096 /* more loss records than this are merged into the last range */

struct loss_range {
	uint64_t first, last;  /* sequence numbers lost */
	uint64_t lo_ts, hi_ts; /* the last event before them, the first after them */
};

struct callmodel {
	struct callmodel_opts o;
	struct callset *cs;
	struct chan *chan;
	struct markset *ms;
	struct procbind *pb;
	struct winidx *wi;
	bool captured;
	bool has_header;
	bool attached; /* --pid, --pgid: the server started before the trace, so no startup */
	uint64_t shutdown_ts;
	uint64_t eof_ts; /* end-of-file on the server's stdin (0: not recorded) */
	uint64_t first_begin;
	struct loss_range *loss;
	size_t n_loss;
	bool losses_sorted;
};

static const char *const rule_names[ATTR_RULES] = {"lineage", "window", "evidence", "ambiguous",
						   "bucket"};
static const char *const bucket_names[BUCKETS] = {"none", "startup", "ambient", "shutdown"};

const char *attr_rule_name(enum attr_rule r)
{
	return r < ATTR_RULES ? rule_names[r] : "?";
}

int attr_rule_by_name(const char *name)
{
	for (int i = 0; i < ATTR_RULES; i++)
		if (!strcmp(rule_names[i], name))
			return i;
	return -1;
}

const char *attr_bucket_name(enum attr_bucket b)
{
	return b < BUCKETS ? bucket_names[b] : "?";
}

int attr_bucket_by_name(const char *name)
{
	for (int i = 1; i < BUCKETS; i++)
		if (!strcmp(bucket_names[i], name))
			return i;
	return -1;
}

struct callmodel *callmodel__new(const struct callmodel_opts *o)
{
	struct callmodel *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return NULL;
	if (o)
		cm->o = *o;
	if (!cm->o.cancel_grace_ns)
		cm->o.cancel_grace_ns = CANCEL_GRACE_DEFAULT_NS;
	cm->captured = true;
	cm->ms = markset__new();
	cm->pb = procbind__new();
	if (!cm->ms || !cm->pb) {
		callmodel__free(cm);
		errno = ENOMEM;
		return NULL;
	}
	return cm;
}

void callmodel__free(struct callmodel *cm)
{
	if (!cm)
		return;
	chan__free(cm->chan);
	callset__free(cm->cs);
	markset__free(cm->ms);
	procbind__free(cm->pb);
	winidx__free(cm->wi);
	free(cm->loss);
	free(cm);
}

struct callset *callmodel__calls(const struct callmodel *cm)
{
	return cm->cs;
}

const struct procbind *callmodel__procs(const struct callmodel *cm)
{
	return cm->pb;
}

const struct markset *callmodel__marks(const struct callmodel *cm)
{
	return cm->ms;
}

bool callmodel__channel_captured(const struct callmodel *cm)
{
	return cm->captured;
}

bool callmodel__attached(const struct callmodel *cm)
{
	return cm->attached;
}

uint64_t callmodel__shutdown_ts(const struct callmodel *cm)
{
	return cm->shutdown_ts;
}

/* --- pass 1 --------------------------------------------------------------------------------- */

static int ensure(struct callmodel *cm, const char *home)
{
	if (cm->cs)
		return 0;
	cm->cs = callset__new(cm->o.cancel_grace_ns, home);
	cm->chan = cm->cs ? chan__new(cm->o.line_max, &callset_chan_ops, cm->cs) : NULL;
	return cm->chan ? 0 : -ENOMEM;
}

int callmodel__header(struct callmodel *cm, const Mcpt__Header *h)
{
	const Mcpt__Target *t = h ? h->target : NULL;
	char home[4096] = "";
	int err;

	if (cm->has_header)
		return 0;
	cm->has_header = true;
	if (t && t->home.len && t->home.len < sizeof(home) && !memchr(t->home.data, 0, t->home.len))
		memcpy(home, t->home.data, t->home.len);
	if (h && h->collector && h->collector->stdio_capture)
		cm->captured = strcmp(h->collector->stdio_capture, "off") != 0;
	err = ensure(cm, home);
	cm->attached = t && t->attached;
	if (!err && cm->attached) /* the recording began at the header's clock sample */
		callset__attached(cm->cs, h->clock ? h->clock->boottime_before_ns : 0);
	if (!err && t)
		err = procbind__set_target(cm->pb, t->pid, t->pstart);
	return err;
}

/* The collector records end-of-file on the server's stdin (a read returning 0) as one empty
 * READ frame marked last, at the stream's end: the client closed the channel, shutdown begins. */
static bool is_stdin_eof(const Mcpt__StdioFrame *f)
{
	return f->dir == MCPT__STDIO_FRAME__DIR__READ && !(f->flags & MW_F_GAP) && f->last &&
	       f->data.len == 0 && f->gap_len == 0;
}

int callmodel__stdio(struct callmodel *cm, const Mcpt__StdioFrame *f, uint64_t index)
{
	if (is_stdin_eof(f) && (!cm->eof_ts || f->ts < cm->eof_ts))
		cm->eof_ts = f->ts;
	return ensure(cm, NULL) ?: chan__frame(cm->chan, f, index);
}

int callmodel__mark(struct callmodel *cm, const Mcpt__Mark *m, uint64_t index)
{
	return ensure(cm, NULL) ?: markset__add(cm->ms, cm->cs, m, index);
}

bool callmodel_wants_op(int op)
{
	return op == MCPT__OP__OP_FORK || op == MCPT__OP__OP_EXEC || op == MCPT__OP__OP_EXIT;
}

int callmodel__event(struct callmodel *cm, const struct ev_view *v)
{
	return procbind__event(cm->pb, v);
}

int callmodel__proc(struct callmodel *cm, const Mcpt__ProcInfo *pi, uint64_t index)
{
	if (pi->kind != MCPT__PROC_INFO__KIND__ALIVE_AT_END)
		return 0;
	return procbind__alive(cm->pb, pi->pid, pi->pstart, pi->ts, index, pi->killed);
}

int callmodel__loss(struct callmodel *cm, const Mcpt__Loss *l)
{
	struct loss_range *r;

	if (cm->n_loss == LOSS_RANGES_MAX) {
		r = &cm->loss[cm->n_loss - 1];
		r->first = l->first_seq < r->first ? l->first_seq : r->first;
		r->last = l->last_seq > r->last ? l->last_seq : r->last;
		return 0;
	}
	r = realloc(cm->loss, (cm->n_loss + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	cm->loss = r;
	r = &cm->loss[cm->n_loss++];
	r->first = l->first_seq;
	r->last = l->last_seq >= l->first_seq ? l->last_seq : l->first_seq;
	r->lo_ts = l->first_seq ? 0 : l->ts; /* without a range: the moment it was noticed */
	r->hi_ts = l->first_seq ? UINT64_MAX : l->ts;
	return 0;
}

/* --- resolve -------------------------------------------------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static int build_windows(struct callmodel *cm)
{
	size_t n = callset__count(cm->cs), k = 0;
	struct win *w = malloc((n ? n : 1) * sizeof(*w));
	struct call *c;

	if (!w)
		return -ENOMEM;
	cm->first_begin = UINT64_MAX;
	for (size_t i = 0; (c = callset__at(cm->cs, i)); i++) {
		if (c->dir != CHAN_IN ||
		    (!c->method && !c->from_mark && !(c->incomplete & CI_BEFORE_ATTACH)))
			continue;
		w[k].call = c->index;
		w[k].begin = c->marked ? min_u64(c->begin_ts, c->mark_begin) : c->begin_ts;
		w[k].end = c->marked && c->mark_end != CALL_OPEN ? max_u64(c->end_ts, c->mark_end)
								 : c->end_ts;
		cm->first_begin = min_u64(cm->first_begin, w[k].begin);
		k++;
	}
	cm->wi = winidx__new(w, k);
	free(w);
	return cm->wi ? 0 : -ENOMEM;
}

/* Shutdown begins at the first of: an explicit shutdown mark, end-of-file on stdin, the
 * server's exit. */
static void find_shutdown(struct callmodel *cm)
{
	const struct pb_proc *p;
	uint64_t ts = markset__shutdown_ts(cm->ms);

	if (cm->eof_ts && (!ts || cm->eof_ts < ts))
		ts = cm->eof_ts;

	for (size_t i = 0; (p = procbind__at(cm->pb, i)); i++)
		if (p->is_target && p->exited && (!ts || p->exit_ts < ts))
			ts = p->exit_ts;
	cm->shutdown_ts = ts;
}

int callmodel__resolve(struct callmodel *cm)
{
	int err = ensure(cm, NULL);

	err = err ?: chan__finish(cm->chan);
	if (err)
		return err;
	callset__finish(cm->cs);
	err = markset__resolve(cm->ms, cm->cs, cm->captured);
	err = err ?: build_windows(cm);
	err = err ?: procbind__resolve(cm->pb, cm->cs, cm->wi);
	if (!err)
		find_shutdown(cm);
	return err;
}

/* --- pass 2 --------------------------------------------------------------------------------- */

static int cmp_loss(const void *a, const void *b)
{
	const struct loss_range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Keeps, per lost range, the latest event before it and the earliest after it. */
static void loss_seen(struct callmodel *cm, uint64_t seq, uint64_t ts)
{
	size_t lo = 0, hi = cm->n_loss;

	if (!cm->n_loss || !seq)
		return;
	if (!cm->losses_sorted) {
		qsort(cm->loss, cm->n_loss, sizeof(*cm->loss), cmp_loss);
		cm->losses_sorted = true;
	}
	while (lo < hi) { /* the first range starting after seq */
		size_t mid = lo + (hi - lo) / 2;

		if (cm->loss[mid].first > seq)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < cm->n_loss && cm->loss[lo].first)
		cm->loss[lo].lo_ts = max_u64(cm->loss[lo].lo_ts, ts);
	for (size_t i = lo; i-- > 0;) { /* ranges wholly before seq */
		if (cm->loss[i].first && cm->loss[i].last < seq) {
			cm->loss[i].hi_ts = min_u64(cm->loss[i].hi_ts, ts);
			break;
		}
	}
}

static uint64_t order_of_bucket(const struct callmodel *cm, uint64_t ts)
{
	size_t k = winidx__begun(cm->wi, ts);
	const struct win *w = k ? winidx__nth(cm->wi, k - 1) : NULL;

	return w ? 2 * (uint64_t)w->call + 1 : 1;
}

/* Before the first request: the server's startup, or (attached: it started before the trace)
 * between calls, as everything else outside them. */
static enum attr_bucket before_first_request(const struct callmodel *cm)
{
	return cm->attached ? BUCKET_AMBIENT : BUCKET_STARTUP;
}

static void bucket(const struct callmodel *cm, const struct ev_view *v, struct attribution *a)
{
	a->rule = ATTR_BUCKET;
	if (cm->shutdown_ts && v->ts >= cm->shutdown_ts)
		a->bucket = BUCKET_SHUTDOWN;
	else if (v->ts < cm->first_begin)
		a->bucket = before_first_request(cm);
	else
		a->bucket = BUCKET_AMBIENT;
	a->order = order_of_bucket(cm, v->ts);
}

/* Several candidates: the one the event's evidence names, or all of them. */
static void decide(const struct callmodel *cm, const struct ev_view *v, const size_t *cand,
		   size_t n, size_t total, struct attribution *a)
{
	size_t best = 0, best_score = 0, s;
	const char *m, *best_m = NULL;
	bool tie = false;

	for (size_t i = 0; i < n; i++) {
		s = evidence_score(callset__get(cm->cs, cand[i]), v, &m);
		if (s > best_score) {
			best_score = s;
			best = cand[i];
			best_m = m;
			tie = false;
		} else if (s && s == best_score) {
			tie = true;
		}
	}
	if (best && !tie && n == total) {
		a->rule = ATTR_EVIDENCE;
		a->call = best;
		a->matched = best_m;
		a->order = 2 * (uint64_t)best;
		return;
	}
	a->rule = ATTR_AMBIGUOUS;
	memcpy(a->cand, cand, n * sizeof(*cand));
	a->n_cand = n;
	a->n_cand_total = total;
	a->order = 2 * (uint64_t)cand[0];
}

void callmodel__seen(struct callmodel *cm, const struct ev_view *v)
{
	loss_seen(cm, v->seq, v->ts);
}

void callmodel__attribution(const struct callmodel *cm, const struct ev_view *v,
			    struct attribution *a)
{
	const struct pb_proc *p = procbind__find(cm->pb, v->pid, v->pstart);
	size_t cand[ATTR_CANDIDATES_MAX], n;

	memset(a, 0, sizeof(*a));
	if (!cm->wi) {
		a->rule = ATTR_BUCKET;
		a->bucket = before_first_request(cm);
		a->order = 1;
		return;
	}
	if (p && (p->bind == BIND_LINEAGE || p->bind == BIND_EVIDENCE)) {
		a->rule = p->bind == BIND_LINEAGE ? ATTR_LINEAGE : ATTR_EVIDENCE;
		a->call = p->call;
		a->matched = p->matched;
		a->order = 2 * (uint64_t)p->call;
		return;
	}
	if (p && p->bind == BIND_AMBIGUOUS) {
		decide(cm, v, p->cand, p->n_cand, p->n_cand, a);
		return;
	}
	n = winidx__at(cm->wi, v->ts, cand, ATTR_CANDIDATES_MAX);
	if (n == 0) {
		bucket(cm, v, a);
	} else if (n == 1) {
		a->rule = ATTR_WINDOW;
		a->call = cand[0];
		a->order = 2 * (uint64_t)cand[0];
	} else {
		decide(cm, v, cand, n < ATTR_CANDIDATES_MAX ? n : ATTR_CANDIDATES_MAX, n, a);
	}
}

void callmodel__attribute(struct callmodel *cm, const struct ev_view *v, struct attribution *a)
{
	callmodel__seen(cm, v);
	callmodel__attribution(cm, v, a);
}

void callmodel__finish(struct callmodel *cm)
{
	struct call *c;

	if (cm->n_loss && !cm->losses_sorted)
		qsort(cm->loss, cm->n_loss, sizeof(*cm->loss), cmp_loss);
	cm->losses_sorted = true;
	for (size_t r = 1; r < cm->n_loss; r++) /* an event before range r-1 is before r too */
		if (cm->loss[r - 1].first)
			cm->loss[r].lo_ts = max_u64(cm->loss[r].lo_ts, cm->loss[r - 1].lo_ts);
	for (size_t r = cm->n_loss; r-- > 1;)
		if (cm->loss[r - 1].first)
			cm->loss[r - 1].hi_ts = min_u64(cm->loss[r - 1].hi_ts, cm->loss[r].hi_ts);
	for (size_t i = 0; cm->cs && (c = callset__at(cm->cs, i)); i++) {
		for (size_t r = 0; r < cm->n_loss; r++) {
			const struct loss_range *l = &cm->loss[r];

			if (c->dir == CHAN_IN && l->lo_ts <= c->end_ts && l->hi_ts >= c->begin_ts) {
				c->incomplete |= CI_EVENTS_LOST;
				break;
			}
		}
	}
}
