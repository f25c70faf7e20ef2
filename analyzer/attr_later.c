/*
 * attr_later.c - findings attributed after the read that found them (see attr_later.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr_later.h"

/* What one kept finding's attribution needs. */
struct later {
	size_t finding; /* its index in the findings' list */
	int op;
	uint64_t ts, seq;
	uint32_t pid; /* a subject without a record: its process (outlived), or 0 (a loss) */
	uint64_t pstart;
	uint8_t *packed; /* an event: its record, decoded again */
	size_t len;
	bool has_key;
	struct chanmsg_key key; /* a message */
};

struct attr_later {
	struct later *v;
	size_t n, cap;
};

struct attr_later *attr_later__new(void)
{
	return calloc(1, sizeof(struct attr_later));
}

static void later_fini(struct later *x)
{
	free(x->packed);
	chanmsg_key_fini(&x->key);
}

void attr_later__free(struct attr_later *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		later_fini(&l->v[i]);
	free(l->v);
	free(l);
}

/* The event's known fields, packed. Its unknown fields are left out: no attribution reads
 * them, and one protobuf-c accepted but cannot read back (a field numbered 0) would make the
 * record fail to unpack in attribute(). 0 or -ENOMEM. */
static int pack_known(const Mcpt__Event *raw, struct later *x)
{
	Mcpt__Event known = *raw; /* shallow: packing only reads it */

	known.base.n_unknown_fields = 0;
	known.base.unknown_fields = NULL;
	x->len = mcpt__event__get_packed_size(&known);
	x->packed = malloc(x->len ? x->len : 1);
	if (!x->packed)
		return -ENOMEM;
	mcpt__event__pack(&known, x->packed);
	return 0;
}

int attr_later__keep(struct attr_later *l, size_t finding, const struct ev_view *v, void *msg_ctx)
{
	struct later *x;
	int err = 0;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;

		x = realloc(l->v, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		l->v = x;
		l->cap = cap;
	}
	x = &l->v[l->n];
	memset(x, 0, sizeof(*x));
	x->finding = finding;
	x->op = v->op;
	x->ts = v->ts;
	x->seq = v->seq;
	x->pid = v->pid;
	x->pstart = v->pstart;
	if (v->op == EV_OP_MESSAGE && msg_ctx) {
		err = chanmsg_key_of(msg_ctx, &x->key);
		x->has_key = !err;
	} else if (v->raw) {
		err = pack_known(v->raw, x);
	}
	if (err) {
		later_fini(x);
		return err;
	}
	l->n++;
	return 0;
}

/* The attribution of one kept subject. 0 or -ENOMEM: what pack_known packed always unpacks
 * again, so only an allocation can fail. */
static int attribute(const struct later *x, const struct callmodel *cm, struct chanmsg *cmsg,
		     struct attribution *a)
{
	Mcpt__Event *ev;
	struct ev_view v;

	if (x->has_key && cmsg)
		return chanmsg__attribute_key(cmsg, &x->key, a);
	if (!x->packed) { /* a Loss record: its time and sequence (engine__loss); a process that
			   * outlived the server: its process too (engine.c, evaluate_outlived) */
		memset(&v, 0, sizeof(v));
		v.op = x->op;
		v.family = event_op_family(x->op);
		v.ts = x->ts;
		v.seq = x->seq;
		v.pid = v.tid = x->pid;
		v.pstart = x->pstart;
		callmodel__attribution(cm, &v, a);
		return 0;
	}
	ev = mcpt__event__unpack(NULL, x->len, x->packed);
	if (!ev)
		return -ENOMEM;
	event_decode(&v, ev);
	callmodel__attribution(cm, &v, a);
	mcpt__event__free_unpacked(ev, NULL);
	return 0;
}

int attr_later__settle(struct attr_later *l, struct findings *fs, const struct callmodel *cm,
		       struct chanmsg *cmsg)
{
	struct attribution a;
	int err = 0;

	for (size_t i = 0; i < l->n && !err; i++) {
		struct finding *f = &fs->v[l->v[i].finding];

		err = attribute(&l->v[i], cm, cmsg, &a);
		if (err)
			break;
		f->has_attr = true;
		f->attr = a;
		f->attr.matched = NULL;
		if (a.matched && !(f->matched = strdup(a.matched)))
			err = -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++)
		later_fini(&l->v[i]);
	l->n = 0;
	return err;
}
