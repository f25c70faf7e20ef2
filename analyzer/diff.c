/*
 * diff.c - the comparison of a trace's model with its baseline's (see diff.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

const char *diff_category(enum lk_kind k)
{
	switch (k) {
	case LK_READ:
	case LK_WRITE:
	case LK_CHANGE:
	case LK_SECRET:
		return "files";
	case LK_CONNECT:
	case LK_LISTEN:
	case LK_DNS:
		return "network";
	case LK_PROC:
	case LK_EXEC:
		return "processes";
	case LK_EDGE:
		return "sequence";
	default:
		return "other";
	}
}

void diff_item_text(struct strbuf *sb, const struct litem *it)
{
	switch (it->kind) {
	case LK_PROC:
		strbuf_printf(sb, "process %s", it->f1);
		break;
	case LK_EXEC:
		strbuf_printf(sb, "exec %s: %s", it->f1, it->f2);
		break;
	case LK_READ:
	case LK_WRITE:
		strbuf_printf(sb, "%s %s", lk_kind_name(it->kind), it->f1);
		break;
	case LK_CHANGE:
		strbuf_printf(sb, "%s %s%s", it->f1, it->f2, it->opened ? " (by fd)" : "");
		break;
	case LK_SECRET:
		strbuf_printf(sb, "secret %s", it->f1);
		break;
	case LK_CONNECT:
		if (!strcmp(it->f1, "unix"))
			strbuf_puts(sb, "connect unix socket");
		else if (strchr(it->f1, ':'))
			strbuf_printf(sb, "connect [%s]:%s", it->f1, it->f2);
		else
			strbuf_printf(sb, "connect %s:%s", it->f1, it->f2);
		break;
	case LK_LISTEN:
		strbuf_printf(sb, "listen port %s", it->f2);
		break;
	case LK_DNS:
		strbuf_printf(sb, "dns %s", it->f1);
		break;
	case LK_EDGE:
		strbuf_printf(sb, "%s -> %s", it->f1, it->f2);
		break;
	default:
		strbuf_printf(sb, "%s", it->f1);
		break;
	}
}

static int push(struct dscope *s, const struct litem *it, bool gone)
{
	struct dentry *e = realloc(s->e, (s->n + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	s->e = e;
	s->e[s->n++] = (struct dentry){.it = it, .gone = gone};
	return 0;
}

/* A process item that an exec item of the same scope and program explains. */
static bool exec_explains(const struct lmodel *a, const struct litem *proc)
{
	for (size_t i = 0; i < a->n_items; i++)
		if (a->items[i].scope == proc->scope && a->items[i].kind == LK_EXEC &&
		    !strcmp(a->items[i].f1, proc->f1))
			return true;
	return false;
}

/* Items of scope si of a not in scope sj of b (sj < 0: none there), into s; a process is
 * listed only when no exec of its program in the scope says it already. */
static int missing(struct dscope *s, const struct lmodel *a, size_t si, const struct lmodel *b,
		   long sj, bool gone, size_t *count)
{
	for (size_t i = 0; i < a->n_items; i++) {
		const struct litem *it = &a->items[i];

		if (it->scope != si ||
		    (sj >= 0 && lmodel__find(b, (size_t)sj, it->kind, it->f1, it->f2)) ||
		    (it->kind == LK_PROC && exec_explains(a, it)))
			continue;
		if (push(s, it, gone))
			return -ENOMEM;
		(*count)++;
	}
	return 0;
}

static struct dscope *new_scope(struct diff *d, const struct lscope *ls)
{
	struct dscope *s = realloc(d->scopes, (d->n_scopes + 1) * sizeof(*s));

	if (!s)
		return NULL;
	d->scopes = s;
	s = &d->scopes[d->n_scopes++];
	memset(s, 0, sizeof(*s));
	s->kind = ls->kind;
	s->name = ls->name;
	return s;
}

static bool call_scope(enum ls_kind k)
{
	return k == LS_TOOL || k == LS_METHOD;
}

/* Scopes of the trace (new and gone), then the baseline's scopes the trace lacks. */
static int compare_scopes(struct diff *d, const struct lmodel *ref, const struct lmodel *cur)
{
	for (size_t i = 0; i < cur->n_scopes; i++) {
		const struct lscope *ls = &cur->scopes[i];
		long j = lmodel__find_scope(ref, ls->kind, ls->name);
		struct dscope *s = new_scope(d, ls);

		if (!s)
			return -ENOMEM;
		s->calls = ls->calls;
		s->base_calls = j >= 0 ? ref->scopes[j].calls : 0;
		if (missing(s, cur, i, ref, j, false, &d->n_new) ||
		    (j >= 0 && missing(s, ref, (size_t)j, cur, (long)i, true, &d->n_gone)))
			return -ENOMEM;
	}
	for (size_t j = 0; j < ref->n_scopes; j++) {
		const struct lscope *ls = &ref->scopes[j];
		struct dscope *s;
		const struct lscope **nc;

		if (lmodel__find_scope(cur, ls->kind, ls->name) >= 0)
			continue;
		if (call_scope(ls->kind)) {
			nc = realloc(d->not_called, (d->n_not_called + 1) * sizeof(*nc));
			if (!nc)
				return -ENOMEM;
			d->not_called = nc;
			nc[d->n_not_called++] = ls;
			continue;
		}
		if (!(s = new_scope(d, ls)))
			return -ENOMEM;
		s->base_calls = ls->calls;
		if (missing(s, ref, j, cur, -1, true, &d->n_gone))
			return -ENOMEM;
	}
	return 0;
}

/* "echo -> read_file -> fetch": the tools called up to and including call last. */
static char *sequence_to(const struct obs_trace *t, size_t last)
{
	const struct callset *cs = callmodel__calls(t->cm);
	struct strbuf sb = STRBUF_INIT;
	const struct call *c;

	for (size_t i = 1; i <= last && (c = callset__get(cs, i)); i++) {
		if (c->dir != CHAN_IN || !c->method || strcmp(c->method, "tools/call"))
			continue;
		strbuf_printf(&sb, "%s%s", sb.len ? " -> " : "", c->tool ?: "tools/call");
	}
	return strbuf_detach(&sb);
}

static int sequence_drift(struct diff *d, const struct lmodel *cur, const struct obs_trace *t)
{
	for (size_t s = 0; s < d->n_scopes; s++) {
		if (d->scopes[s].kind != LS_GRAPH)
			continue;
		for (size_t i = 0; i < d->scopes[s].n; i++) {
			const struct dentry *e = &d->scopes[s].e[i];
			const struct litem *it = e->it;
			const struct lcall_facts *from, *to;
			struct dseq *q;

			if (e->gone || !it->call2 || it->call >= cur->n_facts ||
			    it->call2 >= cur->n_facts)
				continue;
			from = &cur->facts[it->call2];
			to = &cur->facts[it->call];
			if (from->secret_read || from->sent || !(to->secret_read || to->sent))
				continue;
			q = realloc(d->seq, (d->n_seq + 1) * sizeof(*q));
			if (!q)
				return -ENOMEM;
			d->seq = q;
			q = &d->seq[d->n_seq];
			*q = (struct dseq){.edge = it,
					   .to_tool = it->f2,
					   .secret = to->secret_read,
					   .sent = to->sent,
					   .sequence = sequence_to(t, it->call)};
			if (!q->sequence)
				return -ENOMEM;
			d->n_seq++;
		}
	}
	return 0;
}

int diff_compute(struct diff *d, const struct lmodel *ref, const struct lmodel *cur,
		 const struct obs_trace *t)
{
	memset(d, 0, sizeof(*d));
	return compare_scopes(d, ref, cur) ?: sequence_drift(d, cur, t);
}

void diff_fini(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_scopes; i++)
		free(d->scopes[i].e);
	for (size_t i = 0; i < d->n_seq; i++)
		free(d->seq[i].sequence);
	free(d->scopes);
	free(d->seq);
	free(d->not_called);
	memset(d, 0, sizeof(*d));
}
