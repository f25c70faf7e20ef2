/*
 * learn.c - the store of the baseline model: scopes, items in a hash table keyed by (scope,
 * kind, f1, f2), and the one sort every output follows (see learn.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "learn.h"
#include "learn_op.h"
#include "fnv.h"

static const char *const kind_names[LK_KINDS] = {
	[LK_PROC] = "proc",	[LK_EXEC] = "exec",	[LK_READ] = "read",
	[LK_WRITE] = "write",	[LK_CHANGE] = "change", [LK_CONNECT] = "connect",
	[LK_LISTEN] = "listen", [LK_OTHER] = "other",	[LK_DNS] = "dns",
	[LK_SECRET] = "secret", [LK_EDGE] = "edge",
};

static const char *const scope_names[LS_KINDS] = {
	[LS_SERVER] = "server",	    [LS_RUNTIME] = "runtime", [LS_STARTUP] = "startup",
	[LS_TOOL] = "tool",	    [LS_METHOD] = "method",   [LS_AMBIENT] = "ambient",
	[LS_SHUTDOWN] = "shutdown", [LS_GRAPH] = "graph",
};

const char *lk_kind_name(enum lk_kind k)
{
	return (unsigned)k < LK_KINDS ? kind_names[k] : "?";
}

const char *ls_kind_name(enum ls_kind k)
{
	return (unsigned)k < LS_KINDS ? scope_names[k] : "?";
}

struct lmodel *lmodel__new(const struct lbase *base, const struct lmodel *ref)
{
	struct lmodel *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base = base;
	m->ref = ref;
	m->n_slots = 1024;
	m->slots = calloc(m->n_slots, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

static void item_fini(struct litem *it)
{
	free(it->f1);
	free(it->f2);
	free(it->example);
	free(it->names);
	free(it->call_id);
}

void lmodel__free(struct lmodel *m)
{
	if (!m)
		return;
	lmodel__drop_cur(m);
	for (size_t i = 0; i < m->n_items; i++)
		item_fini(&m->items[i]);
	for (size_t i = 0; i < m->n_scopes; i++)
		free(m->scopes[i].name);
	free(m->items);
	free(m->scopes);
	free(m->slots);
	free(m->facts);
	free(m);
}

/* --- scopes ------------------------------------------------------------------------------- */

static bool same_name(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

long lmodel__find_scope(const struct lmodel *m, enum ls_kind kind, const char *name)
{
	for (size_t i = 0; i < m->n_scopes; i++)
		if (m->scopes[i].kind == kind && same_name(m->scopes[i].name, name))
			return (long)i;
	return -1;
}

long lmodel__scope(struct lmodel *m, enum ls_kind kind, const char *name)
{
	long i = lmodel__find_scope(m, kind, name);
	struct lscope *s;

	if (i >= 0)
		return i;
	if (m->n_scopes == m->cap_scopes) {
		size_t cap = m->cap_scopes ? m->cap_scopes * 2 : 16;

		s = realloc(m->scopes, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		m->scopes = s;
		m->cap_scopes = cap;
	}
	s = &m->scopes[m->n_scopes];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	if (name && !(s->name = strdup(name)))
		return -ENOMEM;
	return (long)m->n_scopes++;
}

/* --- items -------------------------------------------------------------------------------- */

static uint64_t key_hash(size_t scope, enum lk_kind kind, const char *f1, const char *f2)
{
	uint64_t h = FNV1A_SEED;
	uint32_t k = (uint32_t)kind;

	h = fnv1a_bytes(h, &scope, sizeof(scope));
	h = fnv1a_bytes(h, &k, sizeof(k));
	h = fnv1a_bytes(h, f1, strlen(f1) + 1);
	return fnv1a_bytes(h, f2, strlen(f2) + 1);
}

static bool item_is(const struct litem *it, size_t scope, enum lk_kind kind, const char *f1,
		    const char *f2)
{
	return it->scope == scope && it->kind == kind && !strcmp(it->f1, f1) && !strcmp(it->f2, f2);
}

/* The slot of the key: holding it, or the empty one where it goes. */
static size_t *slot_of(const struct lmodel *m, size_t scope, enum lk_kind kind, const char *f1,
		       const char *f2)
{
	size_t i = (size_t)key_hash(scope, kind, f1, f2) & (m->n_slots - 1);

	while (m->slots[i] && !item_is(&m->items[m->slots[i] - 1], scope, kind, f1, f2))
		i = (i + 1) & (m->n_slots - 1);
	return &m->slots[i];
}

static int rehash(struct lmodel *m, size_t n_slots)
{
	size_t *slots = calloc(n_slots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(m->slots);
	m->slots = slots;
	m->n_slots = n_slots;
	for (size_t i = 0; i < m->n_items; i++) {
		const struct litem *it = &m->items[i];

		*slot_of(m, it->scope, it->kind, it->f1, it->f2) = i + 1;
	}
	return 0;
}

const struct litem *lmodel__find(const struct lmodel *m, size_t scope, enum lk_kind kind,
				 const char *f1, const char *f2)
{
	size_t *s = slot_of(m, scope, kind, f1, f2 ? f2 : "");

	return *s ? &m->items[*s - 1] : NULL;
}

static struct litem *new_item(struct lmodel *m)
{
	struct litem *it;

	if (2 * (m->n_items + 1) > m->n_slots && rehash(m, m->n_slots * 2))
		return NULL;
	if (m->n_items == m->cap_items) {
		size_t cap = m->cap_items ? m->cap_items * 2 : 64;

		it = realloc(m->items, cap * sizeof(*it));
		if (!it)
			return NULL;
		m->items = it;
		m->cap_items = cap;
	}
	it = &m->items[m->n_items];
	memset(it, 0, sizeof(*it));
	return it;
}

struct litem *lmodel__add(struct lmodel *m, size_t scope, enum lk_kind kind, const char *f1,
			  const char *f2, bool *added)
{
	size_t *s;
	struct litem *it;

	f2 = f2 ? f2 : "";
	s = slot_of(m, scope, kind, f1, f2);
	*added = !*s;
	if (*s) {
		it = &m->items[*s - 1];
		it->count++;
		return it;
	}
	it = new_item(m);
	if (!it)
		return NULL;
	it->scope = scope;
	it->kind = kind;
	it->f1 = strdup(f1);
	it->f2 = strdup(f2);
	it->count = 1;
	if (!it->f1 || !it->f2) {
		item_fini(it);
		return NULL;
	}
	m->n_items++;
	/* new_item may have grown the table: find the empty slot again */
	*slot_of(m, scope, kind, f1, f2) = m->n_items;
	return it;
}

void lmodel__seen(const struct lmodel *m, struct litem *it, uint64_t record)
{
	if (it->seen_trace == m->traces)
		return; /* records come in stream order: the first sighting is the earliest */
	it->seen_trace = m->traces;
	it->seen_first = record;
}

/* --- sorting ------------------------------------------------------------------------------ */

static int cmp_name(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

static int cmp_scope(const void *x, const void *y)
{
	const struct lscope *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return cmp_name(a->name, b->name);
}

static int cmp_item(const void *x, const void *y)
{
	const struct litem *a = x, *b = y;
	int c;

	if (a->scope != b->scope)
		return a->scope < b->scope ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	c = strcmp(a->f1, b->f1);
	return c ? c : strcmp(a->f2, b->f2);
}

int lmodel__sort(struct lmodel *m)
{
	struct lscope *old = malloc((m->n_scopes ? m->n_scopes : 1) * sizeof(*old));
	size_t *map = malloc((m->n_scopes ? m->n_scopes : 1) * sizeof(*map));

	if (!old || !map) {
		free(old);
		free(map);
		return -ENOMEM;
	}
	if (m->n_scopes) { /* scopes is NULL before the first */
		memcpy(old, m->scopes, m->n_scopes * sizeof(*old));
		qsort(m->scopes, m->n_scopes, sizeof(*m->scopes), cmp_scope);
	}
	for (size_t i = 0; i < m->n_scopes; i++)
		for (size_t j = 0; j < m->n_scopes; j++)
			if (old[i].kind == m->scopes[j].kind &&
			    same_name(old[i].name, m->scopes[j].name))
				map[i] = j;
	for (size_t i = 0; i < m->n_items; i++)
		m->items[i].scope = map[m->items[i].scope];
	free(old);
	free(map);
	if (m->n_items)
		qsort(m->items, m->n_items, sizeof(*m->items), cmp_item);
	return rehash(m, m->n_slots);
}

/* --- operation classes (learn_op.h) --------------------------------------------------------- */

enum lop_class learn_op_class(int op)
{
	const char *name = event_op_name(op);

	if (!name)
		return LOP_SKIP;
	switch (op) {
	case MCPT__OP__OP_FORK:
	case MCPT__OP__OP_EXIT:
		return LOP_SKIP;
	case MCPT__OP__OP_EXEC:
		return LOP_EXEC;
	case MCPT__OP__OP_OPEN:
	case MCPT__OP__OP_OPENAT:
	case MCPT__OP__OP_OPENAT2:
	case MCPT__OP__OP_CREAT:
	case MCPT__OP__OP_OPEN_BY_HANDLE_AT:
		return LOP_OPEN;
	case MCPT__OP__OP_CONNECT:
	case MCPT__OP__OP_SENDTO:
	case MCPT__OP__OP_SENDMSG:
	case MCPT__OP__OP_SENDMMSG:
		return LOP_NET;
	case MCPT__OP__OP_BIND:
		return LOP_BIND;
	default:
		break;
	}
	switch (event_op_family(op)) {
	case FAM_FILE:
		return LOP_CHANGE;
	case FAM_CHANNEL:
	case FAM_NONE:
		return LOP_SKIP;
	default:
		return LOP_OTHER;
	}
}
