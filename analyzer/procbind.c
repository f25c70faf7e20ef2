/*
 * procbind.c - process facts and their binding to calls (see procbind.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "procbind.h"

struct procbind {
	struct pb_proc **buckets;
	size_t n_buckets, count;
	struct pb_proc **order; /* creation order, after resolve */
	uint64_t next_order;
	uint32_t target_pid;
	uint64_t target_pstart;
	bool has_target;
	bool server_alive; /* the server was still running when recording stopped */
};

static size_t hash(uint32_t pid, uint64_t pstart)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ pstart * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

struct procbind *procbind__new(void)
{
	struct procbind *pb = calloc(1, sizeof(*pb));

	if (!pb)
		return NULL;
	pb->n_buckets = 256;
	pb->buckets = calloc(pb->n_buckets, sizeof(*pb->buckets));
	if (!pb->buckets) {
		free(pb);
		return NULL;
	}
	return pb;
}

void procbind__free(struct procbind *pb)
{
	struct pb_proc *p, *next;

	if (!pb)
		return;
	for (size_t i = 0; i < pb->n_buckets; i++) {
		for (p = pb->buckets[i]; p; p = next) {
			next = p->next;
			free(p->exe);
			free(p->argv);
			free(p);
		}
	}
	free(pb->buckets);
	free(pb->order);
	free(pb);
}

struct pb_proc *procbind__find(const struct procbind *pb, uint32_t pid, uint64_t pstart)
{
	struct pb_proc *p = pb->buckets[hash(pid, pstart) & (pb->n_buckets - 1)];

	while (p && !(p->pid == pid && p->pstart == pstart))
		p = p->next;
	return p;
}

static void grow(struct procbind *pb)
{
	size_t n = pb->n_buckets * 2;
	struct pb_proc **b = calloc(n, sizeof(*b)), *p, *next;

	if (!b)
		return;
	for (size_t i = 0; i < pb->n_buckets; i++) {
		for (p = pb->buckets[i]; p; p = next) {
			next = p->next;
			p->next = b[hash(p->pid, p->pstart) & (n - 1)];
			b[hash(p->pid, p->pstart) & (n - 1)] = p;
		}
	}
	free(pb->buckets);
	pb->buckets = b;
	pb->n_buckets = n;
}

static struct pb_proc *get(struct procbind *pb, uint32_t pid, uint64_t pstart)
{
	struct pb_proc *p = procbind__find(pb, pid, pstart);
	size_t b;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->pstart = pstart;
	p->order = pb->next_order++;
	p->is_target = pb->has_target && pid == pb->target_pid &&
		       (pstart == pb->target_pstart || !pb->target_pstart);
	if (pb->count >= pb->n_buckets)
		grow(pb);
	b = hash(pid, pstart) & (pb->n_buckets - 1);
	p->next = pb->buckets[b];
	pb->buckets[b] = p;
	pb->count++;
	return p;
}

int procbind__set_target(struct procbind *pb, uint32_t pid, uint64_t pstart)
{
	pb->has_target = true;
	pb->target_pid = pid;
	pb->target_pstart = pstart;
	return get(pb, pid, pstart) ? 0 : -ENOMEM;
}

int procbind__alive(struct procbind *pb, uint32_t pid, uint64_t pstart, uint64_t ts, uint64_t index,
		    bool killed)
{
	struct pb_proc *p = get(pb, pid, pstart);

	if (!p)
		return -ENOMEM;
	p->alive_at_end = true;
	p->killed_at_end = killed;
	p->alive_ts = ts;
	p->alive_index = index;
	pb->server_alive |= p->is_target;
	return 0;
}

bool procbind__server_alive(const struct procbind *pb)
{
	return pb->server_alive;
}

static int copy(uint8_t **dst, size_t *dlen, const struct ev_bytes *b)
{
	uint8_t *p = malloc(b->n ? b->n : 1);

	if (!p)
		return -ENOMEM;
	if (b->n)
		memcpy(p, b->p, b->n);
	free(*dst);
	*dst = p;
	*dlen = b->n;
	return 0;
}

int procbind__event(struct procbind *pb, const struct ev_view *v)
{
	struct pb_proc *p;
	int err = 0;

	switch (v->op) {
	case MCPT__OP__OP_FORK:
		if (v->thread || !v->child_pid || !get(pb, v->pid, v->pstart))
			return v->thread || !v->child_pid ? 0 : -ENOMEM;
		p = get(pb, v->child_pid, v->child_pstart);
		if (!p)
			return -ENOMEM;
		if (!p->forked && !p->is_target) {
			p->has_uid = true;
			p->uid = v->uid;
			p->forked = p->has_parent = true;
			p->ppid = v->pid;
			p->ppstart = v->pstart;
			p->fork_ts = v->ts;
		}
		return 0;
	case MCPT__OP__OP_EXEC:
		p = get(pb, v->pid, v->pstart);
		if (!p)
			return -ENOMEM;
		p->has_uid = true;
		p->uid = v->uid;
		if (!p->execd) {
			p->execd = true;
			p->exec_ts = v->ts;
			err = copy(&p->argv, &p->argv_len, &v->argv);
		}
		return err ?: copy(&p->exe, &p->exe_len, &v->path);
	case MCPT__OP__OP_EXIT:
		if (!v->group_dead && v->tid != v->pid)
			return 0;
		p = get(pb, v->pid, v->pstart);
		if (!p)
			return -ENOMEM;
		p->exited = true;
		p->exit_status = v->exit_status;
		p->exit_ts = v->ts;
		return 0;
	default:
		return 0;
	}
}

/* --- binding -------------------------------------------------------------------------------- */

static int cmp_created(const void *a, const void *b)
{
	const struct pb_proc *x = *(struct pb_proc *const *)a, *y = *(struct pb_proc *const *)b;
	uint64_t tx = x->forked ? x->fork_ts : 0, ty = y->forked ? y->fork_ts : 0;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Among candidates, the one call whose arguments name argv best, or 0. */
static size_t by_evidence(const struct callset *cs, const size_t *cand, size_t n,
			  const uint8_t *argv, size_t len, const char **matched)
{
	size_t best = 0, best_score = 0, s;
	const char *m;
	bool tie = false;

	for (size_t i = 0; i < n; i++) {
		s = evidence_score_argv(callset__get(cs, cand[i]), argv, len, &m);
		if (s > best_score) {
			best_score = s;
			best = cand[i];
			*matched = m;
			tie = false;
		} else if (s && s == best_score) {
			tie = true;
		}
	}
	return tie ? 0 : best;
}

static void bind_at(struct pb_proc *p, const struct winidx *wi, uint64_t ts)
{
	size_t n = winidx__at(wi, ts, p->cand, BIND_CANDIDATES_MAX);

	if (n == 1) {
		p->bind = BIND_LINEAGE;
		p->call = p->cand[0];
		p->n_cand = 0;
	} else if (n > 1 && n <= BIND_CANDIDATES_MAX) {
		p->bind = BIND_AMBIGUOUS;
		p->n_cand = n;
	} /* more candidates than kept: the server's, each event decides at its own time */
}

static void bind_one(struct procbind *pb, struct pb_proc *p, const struct callset *cs,
		     const struct winidx *wi)
{
	const struct pb_proc *parent =
		p->has_parent ? procbind__find(pb, p->ppid, p->ppstart) : NULL;
	size_t call;

	if (p->is_target)
		return;
	if (parent && parent->bind != BIND_SERVER) { /* a child of a call's process */
		p->bind = parent->bind;
		p->call = parent->call;
		p->matched = parent->matched;
		p->n_cand = parent->n_cand;
		memcpy(p->cand, parent->cand, sizeof(p->cand));
	} else if (p->forked) {
		bind_at(p, wi, p->fork_ts);
	}
	if (p->execd && p->bind == BIND_AMBIGUOUS &&
	    (call = by_evidence(cs, p->cand, p->n_cand, p->argv, p->argv_len, &p->matched))) {
		p->bind = BIND_EVIDENCE;
		p->call = call;
		p->n_cand = 0;
	} else if (p->execd && p->bind == BIND_SERVER && (p->forked || !parent)) {
		bind_at(p, wi, p->exec_ts); /* created by exec inside one window */
		if (p->bind == BIND_AMBIGUOUS) {
			p->bind = BIND_SERVER; /* stays the server's: attributed event by event */
			p->n_cand = 0;
		}
	}
}

int procbind__resolve(struct procbind *pb, const struct callset *cs, const struct winidx *wi)
{
	struct pb_proc *p;
	size_t k = 0;

	free(pb->order);
	pb->order = malloc((pb->count ? pb->count : 1) * sizeof(*pb->order));
	if (!pb->order)
		return -ENOMEM;
	for (size_t i = 0; i < pb->n_buckets; i++)
		for (p = pb->buckets[i]; p; p = p->next)
			pb->order[k++] = p;
	qsort(pb->order, pb->count, sizeof(*pb->order), cmp_created);
	for (size_t i = 0; i < pb->count; i++)
		bind_one(pb, pb->order[i], cs, wi);
	return 0;
}

const struct pb_proc *procbind__at(const struct procbind *pb, size_t i)
{
	return pb->order && i < pb->count ? pb->order[i] : NULL;
}

size_t procbind__count(const struct procbind *pb)
{
	return pb->count;
}

const char *procbind_bind_name(enum bind_kind b)
{
	return b == BIND_LINEAGE     ? "lineage"
	       : b == BIND_EVIDENCE  ? "evidence"
	       : b == BIND_AMBIGUOUS ? "ambiguous"
				     : "server";
}

void procbind_exe_text(struct strbuf *sb, const struct pb_proc *p, const char *no_exec)
{
	struct ev_bytes argv = {p->argv, p->argv_len};

	if (p->exe_len)
		strbuf_escape(sb, p->exe, p->exe_len, 0);
	else if (no_exec)
		strbuf_puts(sb, no_exec);
	else if (p->has_parent)
		strbuf_printf(sb, "(a fork of pid %u, no exec seen)", p->ppid);
	else
		strbuf_puts(sb, "(no exec seen)");
	if (p->argv_len) {
		strbuf_puts(sb, " [");
		event_format_argv(sb, &argv, true);
		strbuf_putc(sb, ']');
	}
}
