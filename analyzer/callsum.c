/*
 * callsum.c - per-call grouping of attributed events (see callsum.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callsum.h"
#include "events.h"
#include "fnv.h"
#include "strbuf.h"

/* An entry-time record (MW_F_ENTRY) waiting for its thread's next record: when that is the
 * same syscall's completion, the completion alone is the effect (as in the engine); otherwise
 * the attempt is listed on its own, as pending. */
struct held_entry {
	uint32_t tid, pid;
	int op;
	enum callsum_group group;
	char *text;
	uint64_t ts, index;
	struct attribution a;
};

#define HELD_ENTRIES_MAX 256

/* The effects' texts, each kept once (open addressing, at most half full). */
struct text_slot {
	uint64_t hash;
	char *text; /* NULL: free */
};

struct callsum {
	struct callsum_sink *sinks; /* [0..BUCKETS) buckets, then one per call */
	size_t n_calls;
	struct held_entry held[HELD_ENTRIES_MAX];
	size_t n_held;
	struct text_slot *texts;
	size_t n_texts, cap_texts; /* cap a power of two */
};

_Static_assert(ATTR_RULES <= 16, "callsum_entry.rules holds a bit per rule");

const char *callsum_group_name(enum callsum_group g)
{
	static const char *const names[CS_GROUPS] = {"files", "network", "processes"};

	return g < CS_GROUPS ? names[g] : "?";
}

struct callsum *callsum__new(size_t n_calls)
{
	struct callsum *s = calloc(1, sizeof(*s));

	if (!s || !(s->sinks = calloc(BUCKETS + n_calls, sizeof(*s->sinks)))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->n_calls = n_calls;
	return s;
}

void callsum__free(struct callsum *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_held; i++)
		free(s->held[i].text);
	for (size_t i = 0; i < BUCKETS + s->n_calls; i++)
		free(s->sinks[i].v);
	for (size_t i = 0; i < s->cap_texts; i++)
		free(s->texts[i].text);
	free(s->texts);
	free(s->sinks);
	free(s);
}

const struct callsum_sink *callsum__call(const struct callsum *s, size_t index)
{
	return index && index <= s->n_calls ? &s->sinks[BUCKETS + index - 1] : NULL;
}

const struct callsum_sink *callsum__bucket(const struct callsum *s, enum attr_bucket b)
{
	return b > BUCKET_NONE && b < BUCKETS ? &s->sinks[b] : NULL;
}

/* --- describing an effect ------------------------------------------------------------------ */

static enum callsum_group group_of(const struct ev_view *v)
{
	if (v->family == FAM_FILE)
		return CS_FILES;
	if (v->family == FAM_NETWORK)
		return CS_NETWORK;
	return CS_PROCESSES;
}

static void put_result(struct strbuf *sb, const struct ev_view *v)
{
	char e[24];

	if (v->result == RES_FAILURE)
		strbuf_printf(sb, " -> %s", event_errno_name(v->err, e, sizeof(e)));
	else if (v->result == RES_PENDING)
		strbuf_puts(sb, " -> pending");
}

static void put_path(struct strbuf *sb, const struct ev_bytes *b)
{
	strbuf_putc(sb, ' ');
	strbuf_escape(sb, b->p, b->n, 0);
}

static void describe(struct strbuf *sb, const struct ev_view *v)
{
	strbuf_puts(sb, v->op_name);
	switch (v->op) {
	case MCPT__OP__OP_FORK:
		strbuf_printf(sb, " child %u", v->child_pid);
		return;
	case MCPT__OP__OP_EXIT:
		strbuf_putc(sb, ' ');
		event_format_exit(sb, v->exit_status);
		return;
	case MCPT__OP__OP_FOREIGN_ABI: { /* "syscall N of the x32 ABI, not recorded" */
		const char *d = v->describe ? v->describe(v->describe_ctx) : NULL;

		strbuf_printf(sb, ": %s", d ? d : "?");
		return;
	}
	case MCPT__OP__OP_EXEC:
		put_path(sb, &v->path);
		strbuf_puts(sb, " [");
		event_format_argv(sb, &v->argv, true);
		strbuf_putc(sb, ']');
		break;
	default:
		if (v->subject.n)
			put_path(sb, &v->subject);
		if (v->abs2.n || v->path2.n)
			strbuf_puts(sb, " ->"), put_path(sb, v->abs2.n ? &v->abs2 : &v->path2);
		if (v->has_open)
			strbuf_puts(sb, v->write_intent ? " (write)" : " (read)");
		if (event_addr(v)) {
			strbuf_putc(sb, ' ');
			sockaddr_format(sb, event_addr(v));
		}
	}
	put_result(sb, v);
}

/* --- the texts, kept once ---------------------------------------------------------------- */

static struct text_slot *text_slot(struct text_slot *v, size_t cap, uint64_t h, const char *text)
{
	size_t i = (size_t)h & (cap - 1);

	while (v[i].text && (v[i].hash != h || strcmp(v[i].text, text)))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int texts_grow(struct callsum *s)
{
	size_t cap = s->cap_texts ? s->cap_texts * 2 : 1024;
	struct text_slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap_texts; i++)
		if (s->texts[i].text)
			*text_slot(v, cap, s->texts[i].hash, s->texts[i].text) = s->texts[i];
	free(s->texts);
	s->texts = v;
	s->cap_texts = cap;
	return 0;
}

/* The one copy of text, made on its first use. NULL when out of memory. */
static const char *text_intern(struct callsum *s, const char *text)
{
	uint64_t h = fnv1a_str(FNV1A_SEED, text);
	struct text_slot *t;

	if (2 * (s->n_texts + 1) > s->cap_texts && texts_grow(s))
		return NULL;
	t = text_slot(s->texts, s->cap_texts, h, text);
	if (!t->text) {
		if (!(t->text = strdup(text)))
			return NULL;
		t->hash = h;
		s->n_texts++;
	}
	return t->text;
}

/* --- the effects of each call ---------------------------------------------------------------- */

/* Lists the effect (group g, text: interned, so equal texts are the same pointer) in sink k. */
static int sink_add(struct callsum_sink *k, enum callsum_group g, const char *text,
		    uint64_t ts, uint32_t pid, enum attr_rule rule, uint64_t index)
{
	struct callsum_entry *e;

	k->events++;
	for (size_t i = 0; i < k->n; i++) {
		e = &k->v[i];
		if (e->text == text && e->group == g) {
			e->count++;
			e->rules |= (uint16_t)(1u << rule);
			return 0;
		}
	}
	if (k->n >= CALLSUM_ENTRIES_MAX) {
		k->unlisted++;
		return 0;
	}
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;

		e = realloc(k->v, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		k->v = e;
		k->cap = cap;
	}
	k->v[k->n++] = (struct callsum_entry){.text = text,
					      .count = 1,
					      .first_record = index,
					      .first_ts = ts,
					      .first_pid = pid,
					      .rules = (uint16_t)(1u << rule),
					      .group = (uint8_t)g};
	return 0;
}

/* Lists one effect under the call(s) or bucket a attributes it to. */
static int add_effect(struct callsum *s, enum callsum_group g, const char *text_in, uint64_t ts,
		      uint32_t pid, const struct attribution *a, uint64_t index)
{
	const char *text = text_intern(s, text_in);
	int err = 0;

	if (!text)
		return -ENOMEM;

	if (a->rule == ATTR_BUCKET)
		return sink_add(&s->sinks[a->bucket], g, text, ts, pid, a->rule, index);
	if (a->rule == ATTR_AMBIGUOUS) {
		for (size_t i = 0; i < a->n_cand && !err; i++)
			if (a->cand[i] <= s->n_calls)
				err = sink_add(&s->sinks[BUCKETS + a->cand[i] - 1], g, text, ts, pid,
					       a->rule, index);
		return err;
	}
	if (a->call && a->call <= s->n_calls)
		return sink_add(&s->sinks[BUCKETS + a->call - 1], g, text, ts, pid, a->rule,
				index);
	return 0;
}

/* Lists held entry i on its own (its completion never came) and forgets it. */
static int held_release(struct callsum *s, size_t i)
{
	struct held_entry *h = &s->held[i];
	int err = add_effect(s, h->group, h->text, h->ts, h->pid, &h->a, h->index);

	free(h->text);
	*h = s->held[--s->n_held];
	return err;
}

static int held_oldest(const struct callsum *s)
{
	size_t o = 0;

	for (size_t i = 1; i < s->n_held; i++)
		if (s->held[i].index < s->held[o].index)
			o = i;
	return (int)o;
}

int callsum__add(struct callsum *s, const struct ev_view *v, const struct attribution *a,
		 uint64_t index)
{
	struct strbuf sb = STRBUF_INIT;
	enum callsum_group g = group_of(v);
	int err = 0;

	for (size_t i = 0; i < s->n_held; i++) {
		if (s->held[i].tid != v->tid)
			continue;
		if (s->held[i].op == v->op && !(v->flags & MW_F_ENTRY)) {
			free(s->held[i].text); /* superseded by its completion */
			s->held[i] = s->held[--s->n_held];
		} else if ((err = held_release(s, i))) {
			return err;
		}
		break;
	}
	if ((v->op == MCPT__OP__OP_FORK && v->thread) ||
	    (v->op == MCPT__OP__OP_EXIT && !v->group_dead && v->tid != v->pid))
		return 0; /* threads come and go: not an effect */
	describe(&sb, v);
	if (strbuf_error(&sb))
		return -ENOMEM;
	if (v->flags & MW_F_ENTRY) {
		if (s->n_held == HELD_ENTRIES_MAX && (err = held_release(s, held_oldest(s)))) {
			strbuf_fini(&sb);
			return err;
		}
		s->held[s->n_held++] = (struct held_entry){.tid = v->tid,
							   .pid = v->pid,
							   .op = v->op,
							   .group = g,
							   .text = sb.buf,
							   .ts = v->ts,
							   .index = index,
							   .a = *a};
		return 0; /* sb.buf is owned by the held entry now */
	}
	err = add_effect(s, g, sb.buf, v->ts, v->pid, a, index);
	strbuf_fini(&sb);
	return err;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct callsum_entry *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->first_record < b->first_record ? -1 : a->first_record > b->first_record;
}

int callsum__finish(struct callsum *s)
{
	int err = 0;

	while (s->n_held && !err)
		err = held_release(s, (size_t)held_oldest(s));
	return err;
}

void callsum__sort(struct callsum *s)
{
	for (size_t i = 0; i < BUCKETS + s->n_calls; i++)
		if (s->sinks[i].n > 1)
			qsort(s->sinks[i].v, s->sinks[i].n, sizeof(*s->sinks[i].v), cmp_entry);
}
