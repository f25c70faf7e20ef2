/*
 * marks.c - parsing, pairing and matching explicit marks (see marks.h).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marks.h"
#include "strbuf.h"

struct mark {
	uint64_t ts, record;
	bool begin;
	char *call_id; /* the id as text */
	char *tool;    /* escaped; may be NULL */
	bool paired;
};

struct markset {
	struct mark *v;
	size_t n, cap;
	struct mark_scope *scopes;
	size_t n_scopes;
	uint64_t shutdown_ts;
};

struct markset *markset__new(void)
{
	return calloc(1, sizeof(struct markset));
}

void markset__free(struct markset *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++) {
		free(ms->v[i].call_id);
		free(ms->v[i].tool);
	}
	free(ms->v);
	free(ms->scopes);
	free(ms);
}

uint64_t markset__shutdown_ts(const struct markset *ms)
{
	return ms->shutdown_ts;
}

size_t markset__count(const struct markset *ms)
{
	return ms->n;
}

size_t markset__n_scopes(const struct markset *ms)
{
	return ms->n_scopes;
}

const struct mark_scope *markset__scope(const struct markset *ms, size_t i)
{
	return i < ms->n_scopes ? &ms->scopes[i] : NULL;
}

static char *esc(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_escape(&sb, (const uint8_t *)s, n, 0);
	return strbuf_detach(&sb);
}

static int push(struct markset *ms, uint64_t ts, uint64_t record, bool begin, const char *id,
		size_t id_len, const char *tool, size_t tool_len)
{
	struct mark *m;

	if (ms->n == ms->cap) {
		size_t cap = ms->cap ? ms->cap * 2 : 16;

		m = realloc(ms->v, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		ms->v = m;
		ms->cap = cap;
	}
	m = &ms->v[ms->n];
	memset(m, 0, sizeof(*m));
	m->ts = ts;
	m->record = record;
	m->begin = begin;
	m->call_id = esc(id, id_len);
	m->tool = tool ? esc(tool, tool_len) : NULL;
	if (!m->call_id || (tool && !m->tool)) {
		free(m->call_id);
		free(m->tool);
		return -ENOMEM;
	}
	ms->n++;
	return 0;
}

static int phase_of(const char *p)
{
	if (!strcmp(p, "begin"))
		return 1;
	if (!strcmp(p, "end") || !strcmp(p, "error") || !strcmp(p, "cancel") ||
	    !strcmp(p, "timeout"))
		return 0;
	return -1;
}

static int add_mark(struct markset *ms, struct callset *cs, const json_t *o, uint64_t ts,
		    uint64_t record)
{
	const json_t *ph = json_object_get(o, "phase"), *id = json_object_get(o, "call_id");
	const json_t *tool = json_object_get(o, "tool");
	char num[32];
	int phase = json_is_string(ph) ? phase_of(json_string_value(ph)) : -1;

	if (phase < 0) {
		callset__note(cs, ts,
			      "control record %llu: mark without a phase begin or end: "
			      "skipped",
			      (unsigned long long)record);
		return 0;
	}
	if (json_is_integer(id)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(id));
		return push(ms, ts, record, phase, num, strlen(num),
			    json_is_string(tool) ? json_string_value(tool) : NULL,
			    json_string_length(tool));
	}
	if (!json_is_string(id) || !json_string_length(id)) {
		callset__note(cs, ts, "control record %llu: mark without a call_id: skipped",
			      (unsigned long long)record);
		return 0;
	}
	return push(ms, ts, record, phase, json_string_value(id), json_string_length(id),
		    json_is_string(tool) ? json_string_value(tool) : NULL,
		    json_string_length(tool));
}

static int add_scope(struct markset *ms, struct callset *cs, const json_t *o, uint64_t ts,
		     uint64_t record)
{
	const json_t *pg = json_object_get(o, "pgid"), *gen = json_object_get(o, "generation");
	struct mark_scope *v;

	if (!json_is_integer(pg) || json_integer_value(pg) <= 0 || (gen && !json_is_integer(gen))) {
		callset__note(cs, ts,
			      "control record %llu: scope without a positive integer pgid: "
			      "skipped",
			      (unsigned long long)record);
		return 0;
	}
	v = realloc(ms->scopes, (ms->n_scopes + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ms->scopes = v;
	v[ms->n_scopes++] = (struct mark_scope){ts, json_integer_value(pg),
						json_is_integer(gen) ? json_integer_value(gen) : 0};
	return 0;
}

static int add_raw(struct markset *ms, struct callset *cs, const Mcpt__Mark *m, uint64_t record)
{
	json_error_t je;
	json_t *o;
	const json_t *op;
	int err = 0;

	if (m->flags & 1) {
		callset__note(cs, m->ts,
			      "control record %llu: line cut at the collector's limit: "
			      "skipped",
			      (unsigned long long)record);
		return 0;
	}
	o = json_loadb((const char *)m->raw.data, m->raw.len, 0, &je);
	op = json_object_get(o, "op");
	if (!json_is_object(o) || !json_is_string(op)) {
		callset__note(cs, m->ts, "control record %llu: %s: skipped",
			      (unsigned long long)record,
			      !o ? "not JSON" : "not an object with an \"op\"");
	} else if (!strcmp(json_string_value(op), "mark")) {
		err = add_mark(ms, cs, o, m->ts, record);
	} else if (!strcmp(json_string_value(op), "scope")) {
		err = add_scope(ms, cs, o, m->ts, record);
	} else if (!strcmp(json_string_value(op), "shutdown")) {
		if (!ms->shutdown_ts)
			ms->shutdown_ts = m->ts;
	} else {
		callset__note(cs, m->ts, "control record %llu: unknown op \"%.32s\": skipped",
			      (unsigned long long)record, json_string_value(op));
	}
	json_decref(o);
	return err;
}

int markset__add(struct markset *ms, struct callset *cs, const Mcpt__Mark *m, uint64_t index)
{
	bool begin;

	if (m->source == MCPT__MARK__SOURCE__CONTROL)
		return add_raw(ms, cs, m, index);
	/* structured marks (from a proxy or the channel): their fields say it all */
	if (m->phase == MCPT__MARK__PHASE__PHASE_UNSPECIFIED || !m->call_id.len)
		return 0;
	begin = m->phase == MCPT__MARK__PHASE__BEGIN;
	return push(ms, m->ts, index, begin, (const char *)m->call_id.data, m->call_id.len,
		    m->tool.len ? (const char *)m->tool.data : NULL, m->tool.len);
}

/* --- matching --------------------------------------------------------------------------------- */

/* The id of a call as a mark writes it: 17 for 17, abc for "abc". */
static bool id_is(const struct call *c, const char *text)
{
	json_t *v;
	bool same;

	if (!c->id)
		return false;
	if (c->id[0] != '"')
		return !strcmp(c->id, text);
	v = json_loads(c->id, JSON_DECODE_ANY, NULL);
	same = json_is_string(v) && !strcmp(json_string_value(v), text);
	json_decref(v);
	return same;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static struct call *match(struct callset *cs, const struct mark *b, uint64_t end)
{
	struct call *best = NULL, *c;
	uint64_t lo = b->ts > MARK_TOLERANCE_NS ? b->ts - MARK_TOLERANCE_NS : 0;

	for (size_t i = 0; (c = callset__at(cs, i)); i++) /* by id, wherever it was read */
		if (c->dir == CHAN_IN && !c->marked && id_is(c, b->call_id) &&
		    (!best || dist(c->begin_ts, b->ts) < dist(best->begin_ts, b->ts)))
			best = c;
	if (best || !b->tool)
		return best;
	for (size_t i = 0; (c = callset__at(cs, i)); i++) /* by tool, inside the marked span */
		if (c->dir == CHAN_IN && !c->marked && c->tool && !strcmp(c->tool, b->tool) &&
		    c->begin_ts >= lo &&
		    (end == CALL_OPEN || c->begin_ts <= end + MARK_TOLERANCE_NS))
			return c;
	return NULL;
}

static void check(struct callset *cs, struct call *c)
{
	bool early = c->begin_ts + MARK_TOLERANCE_NS < c->mark_begin;
	bool late = c->mark_end != CALL_OPEN && c->end_ts != CALL_OPEN &&
		    c->end_ts > c->mark_end + MARK_TOLERANCE_NS;

	if (!early && !late)
		return;
	c->mark_disagrees = true;
	callset__note(cs, c->begin_ts,
		      "call %zu (id %s%s%s): its window disagrees with its marks (call_id %s): %s "
		      "(forged or misplaced mark)",
		      c->index, c->id ? c->id : "?", c->tool ? ", tool " : "",
		      c->tool ? c->tool : "", c->mark_call_id,
		      early ? "the request was read before the begin mark"
			    : "the response was written after the end mark");
}

static int mark_only_call(struct callset *cs, const struct mark *b, uint64_t end)
{
	struct call *c = callset__open(cs, CHAN_IN, NULL, NULL, NULL, 0, b->ts, b->record);

	if (!c)
		return -ENOMEM;
	c->from_mark = true;
	c->marked = true;
	c->mark_begin = b->ts;
	c->mark_end = end;
	c->end_ts = end;
	c->end_how = END_MARK;
	c->tool = b->tool ? strdup(b->tool) : NULL;
	c->mark_call_id = strdup(b->call_id);
	return (b->tool && !c->tool) || !c->mark_call_id ? -ENOMEM : 0;
}

static int apply_pair(struct callset *cs, const struct mark *b, uint64_t end, bool captured)
{
	struct call *c;

	if (!captured)
		return mark_only_call(cs, b, end);
	c = match(cs, b, end);
	if (!c) {
		callset__note(
			cs, b->ts,
			"control record %llu: mark call_id %s%s%s names no request seen on the "
			"channel",
			(unsigned long long)b->record, b->call_id, b->tool ? ", tool " : "",
			b->tool ? b->tool : "");
		return 0;
	}
	c->marked = true;
	c->mark_begin = b->ts;
	c->mark_end = end;
	c->mark_call_id = strdup(b->call_id);
	if (!c->mark_call_id)
		return -ENOMEM;
	check(cs, c);
	return 0;
}

/* The end mark of begin mark i: the first unpaired end with its call_id after it. */
static uint64_t find_end(struct markset *ms, size_t i)
{
	for (size_t j = i + 1; j < ms->n; j++) {
		struct mark *e = &ms->v[j];

		if (!e->begin && !e->paired && !strcmp(e->call_id, ms->v[i].call_id)) {
			e->paired = true;
			return e->ts;
		}
	}
	return CALL_OPEN;
}

int markset__resolve(struct markset *ms, struct callset *cs, bool channel_captured)
{
	uint64_t end;
	int err = 0;

	for (size_t i = 0; i < ms->n && !err; i++) {
		if (!ms->v[i].begin)
			continue;
		end = find_end(ms, i);
		if (end == CALL_OPEN)
			callset__note(cs, ms->v[i].ts,
				      "control record %llu: begin mark of call_id %s "
				      "has no end mark",
				      (unsigned long long)ms->v[i].record, ms->v[i].call_id);
		err = apply_pair(cs, &ms->v[i], end, channel_captured);
	}
	for (size_t i = 0; i < ms->n && !err; i++)
		if (!ms->v[i].begin && !ms->v[i].paired)
			callset__note(cs, ms->v[i].ts,
				      "control record %llu: end mark of call_id %s without a begin "
				      "mark",
				      (unsigned long long)ms->v[i].record, ms->v[i].call_id);
	return err;
}
