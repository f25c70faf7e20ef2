/*
 * proctree.c - process table: a chained hash on (pid, pstart) (see proctree.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proctree.h"

struct proctree {
	struct proc **buckets;
	size_t n_buckets; /* power of two */
	size_t count;
	struct proc *target;
};

static size_t hash(uint32_t pid, uint64_t pstart)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ pstart * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ (h >> 29));
}

struct proctree *proctree__new(void)
{
	struct proctree *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->n_buckets = 256;
	pt->buckets = calloc(pt->n_buckets, sizeof(*pt->buckets));
	if (!pt->buckets) {
		free(pt);
		return NULL;
	}
	return pt;
}

static void proc_free(struct proc *p)
{
	free(p->exe);
	free(p->argv);
	free(p->argv_join);
	free(p);
}

void proctree__free(struct proctree *pt)
{
	struct proc *p, *next;

	if (!pt)
		return;
	for (size_t i = 0; i < pt->n_buckets; i++) {
		for (p = pt->buckets[i]; p; p = next) {
			next = p->next;
			proc_free(p);
		}
	}
	free(pt->buckets);
	free(pt);
}

struct proc *proctree__find(const struct proctree *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *p = pt->buckets[hash(pid, pstart) & (pt->n_buckets - 1)];

	while (p && !(p->pid == pid && p->pstart == pstart))
		p = p->next;
	return p;
}

struct proc *proctree__target(const struct proctree *pt)
{
	return pt->target;
}

static void grow(struct proctree *pt)
{
	size_t n = pt->n_buckets * 2;
	struct proc **b = calloc(n, sizeof(*b)), *p, *next;

	if (!b)
		return; /* keep the longer chains: correct, only slower */
	for (size_t i = 0; i < pt->n_buckets; i++) {
		for (p = pt->buckets[i]; p; p = next) {
			next = p->next;
			p->next = b[hash(p->pid, p->pstart) & (n - 1)];
			b[hash(p->pid, p->pstart) & (n - 1)] = p;
		}
	}
	free(pt->buckets);
	pt->buckets = b;
	pt->n_buckets = n;
}

static void unlink_proc(struct proctree *pt, struct proc *p)
{
	struct proc **pp = &pt->buckets[hash(p->pid, p->pstart) & (pt->n_buckets - 1)];

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
}

static void link_proc(struct proctree *pt, struct proc *p)
{
	size_t b = hash(p->pid, p->pstart) & (pt->n_buckets - 1);

	p->next = pt->buckets[b];
	pt->buckets[b] = p;
}

/* A header without the server's start time: its first record with the server's pid tells it. */
static struct proc *adopt_target(struct proctree *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *t = pt->target;

	if (!t || t->pid != pid || t->pstart != 0 || pstart == 0)
		return NULL;
	unlink_proc(pt, t);
	t->pstart = pstart;
	link_proc(pt, t);
	return t;
}

struct proc *proctree__get(struct proctree *pt, uint32_t pid, uint64_t pstart)
{
	struct proc *p = proctree__find(pt, pid, pstart);

	if (p || (p = adopt_target(pt, pid, pstart)))
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->pstart = pstart;
	if (pt->count >= pt->n_buckets)
		grow(pt);
	link_proc(pt, p);
	pt->count++;
	return p;
}

static int dup_bytes(uint8_t **dst, size_t *dlen, const uint8_t *src, size_t len)
{
	uint8_t *p = NULL;

	if (len) {
		p = malloc(len);
		if (!p)
			return -ENOMEM;
		memcpy(p, src, len);
	}
	free(*dst);
	*dst = p;
	*dlen = len;
	return 0;
}

/* Sets argv from NUL-separated bytes and rebuilds the space-joined form. */
static int set_argv(struct proc *p, const uint8_t *argv, size_t len)
{
	struct ev_bytes all = {argv, len}, a;
	size_t pos = 0, n = 0;
	int err = dup_bytes(&p->argv, &p->argv_len, argv, len);

	err = err ?: dup_bytes(&p->argv_join, &p->join_len, argv, len);
	if (err)
		return err;
	while (event_argv_next(&all, &pos, &a)) {
		if (n)
			p->argv_join[n++] = ' ';
		memmove(p->argv_join + n, a.p - argv + p->argv, a.n);
		n += a.n;
	}
	p->join_len = n;
	return 0;
}

/* Joins header argv entries into the NUL-separated form. */
static int argv_from_list(struct proc *p, const ProtobufCBinaryData *argv, size_t argc)
{
	size_t len = 0, off = 0;
	uint8_t *buf;
	int err;

	for (size_t i = 0; i < argc; i++)
		len += argv[i].len + 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++) {
		if (argv[i].len)
			memcpy(buf + off, argv[i].data, argv[i].len);
		off += argv[i].len;
		buf[off++] = '\0';
	}
	err = set_argv(p, buf, len);
	free(buf);
	return err;
}

int proctree__set_target(struct proctree *pt, uint32_t pid, uint64_t pstart,
			 const ProtobufCBinaryData *exe, const ProtobufCBinaryData *argv,
			 size_t argc, bool attached)
{
	struct proc *p = proctree__get(pt, pid, pstart);
	int err;

	if (!p)
		return -ENOMEM;
	p->is_target = true;
	p->launching = !attached;
	pt->target = p;
	err = exe && exe->len ? dup_bytes(&p->exe, &p->exe_len, exe->data, exe->len) : 0;
	return err ?: argv_from_list(p, argv, argc);
}

static int on_proc_fork(struct proctree *pt, const struct ev_view *v)
{
	struct proc *parent, *child;
	int err = 0;

	if (v->thread || v->child_pid == 0)
		return 0;
	parent = proctree__get(pt, v->pid, v->pstart);
	if (!parent)
		return -ENOMEM;
	parent->launching = false;
	child = proctree__get(pt, v->child_pid, v->child_pstart);
	if (!child)
		return -ENOMEM;
	if (child == parent || child->has_parent)
		return 0;
	child->has_parent = true;
	child->ppid = parent->pid;
	child->ppstart = parent->pstart;
	if (!child->exe && !child->execs) { /* inherits what the parent runs */
		err = dup_bytes(&child->exe, &child->exe_len, parent->exe, parent->exe_len);
		err = err ?: set_argv(child, parent->argv, parent->argv_len);
	}
	return err;
}

static int on_proc_exec(struct proctree *pt, const struct ev_view *v, bool *launch)
{
	struct proc *p = proctree__get(pt, v->pid, v->pstart);
	int err;

	if (!p)
		return -ENOMEM;
	*launch = p->is_target && p->launching;
	p->execs++;
	err = dup_bytes(&p->exe, &p->exe_len, v->path.p, v->path.n);
	return err ?: set_argv(p, v->argv.p, v->argv.n);
}

static int on_proc_exit(struct proctree *pt, const struct ev_view *v)
{
	struct proc *p;

	if (!v->group_dead && v->tid != v->pid)
		return 0; /* a thread ended, the process lives on */
	p = proctree__get(pt, v->pid, v->pstart);
	if (!p)
		return -ENOMEM;
	p->exited = true;
	p->exit_status = v->exit_status;
	return 0;
}

int proctree__apply(struct proctree *pt, const struct ev_view *v, bool *launch)
{
	*launch = false;
	switch (v->op) {
	case MCPT__OP__OP_FORK:
		return on_proc_fork(pt, v);
	case MCPT__OP__OP_EXEC:
		return on_proc_exec(pt, v, launch);
	case MCPT__OP__OP_EXIT:
		return on_proc_exit(pt, v);
	default:
		return 0;
	}
}

size_t proctree__lineage(const struct proctree *pt, const struct proc *p, struct lineage_ent *out,
			 size_t max, bool *truncated)
{
	size_t n = 0;

	*truncated = false;
	while (p && n < max) {
		for (size_t i = 0; i < n; i++)
			if (out[i].proc == p)
				return n; /* a cycle: only a forged trace has one */
		out[n].pid = p->pid;
		out[n].proc = p;
		n++;
		if (p->is_target)
			return n;
		p = p->has_parent ? proctree__find(pt, p->ppid, p->ppstart) : NULL;
		if (!p) {
			*truncated = true;
			return n;
		}
	}
	if (p)
		*truncated = true;
	return n;
}

size_t proctree__count(const struct proctree *pt)
{
	return pt->count;
}
