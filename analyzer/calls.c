/*
 * calls.c - the call table, the pending-request table keyed by (direction, id), windows,
 * cancellation, tasks and notes (see calls.h). Messages are read in jsonrpc.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "fnv.h"
#include "strbuf.h"

struct pend {
	enum chan_dir dir;
	char *id;
	size_t call; /* 0-based */
	struct pend *next;
};

/* Calls live in blocks that never move: growing the set copies nothing, and peak memory is
 * what the calls hold (a doubling array briefly held its old and new copies). */
#define CALL_BLOCK 1024

struct callset {
	struct call **blk;
	size_t n, n_blk;
	struct pend **buckets;
	size_t n_buckets, n_pend;
	size_t *tasks; /* calls with a task, 0-based */
	size_t n_tasks, cap_tasks;
	struct call_note *notes;
	size_t n_notes;
	uint64_t notes_total;
	struct call_session sess;
	uint64_t grace;
	char *home;
	bool attached;	       /* a trace of an attached server */
	uint64_t attach_ts;    /* its start */
	size_t before_checked; /* responses without a request examined (callset__before_attach) */
};

/* Requests in flight at an attach are few (a client's concurrent requests); the responses
 * without a request examined as theirs are capped, each costing a pass over the calls. */
#define CALL_BEFORE_ATTACH_CHECKS 256

static struct call *call_at(const struct callset *cs, size_t i)
{
	return &cs->blk[i / CALL_BLOCK][i % CALL_BLOCK];
}

struct callset *callset__new(uint64_t grace_ns, const char *home)
{
	struct callset *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->grace = grace_ns;
	cs->n_buckets = 64;
	cs->buckets = calloc(cs->n_buckets, sizeof(*cs->buckets));
	cs->home = home && *home ? strdup(home) : NULL;
	if (!cs->buckets || (home && *home && !cs->home)) {
		callset__free(cs);
		errno = ENOMEM;
		return NULL;
	}
	return cs;
}

static void call_fini(struct call *c)
{
	free(c->id);
	free(c->method);
	free(c->tool);
	if (c->args != c->args_full)
		free(c->args);
	free(c->args_full);
	for (size_t i = 0; i < c->n_ev; i++)
		free(c->ev[i]);
	free(c->ev);
	free(c->result);
	free(c->task_id);
	free(c->task_status);
	free(c->task_ref);
	free(c->mark_call_id);
	free(c->traceparent);
	free(c->tracestate);
}

void callset__free(struct callset *cs)
{
	struct pend *p, *next;

	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		call_fini(call_at(cs, i));
	for (size_t i = 0; i < cs->n_blk; i++)
		free(cs->blk[i]);
	free(cs->blk);
	for (size_t i = 0; cs->buckets && i < cs->n_buckets; i++) {
		for (p = cs->buckets[i]; p; p = next) {
			next = p->next;
			free(p->id);
			free(p);
		}
	}
	free(cs->buckets);
	free(cs->tasks);
	for (size_t i = 0; i < cs->n_notes; i++)
		free(cs->notes[i].text);
	free(cs->notes);
	free(cs->sess.protocol);
	free(cs->sess.client.name);
	free(cs->sess.client.version);
	free(cs->sess.server.name);
	free(cs->sess.server.version);
	free(cs->home);
	free(cs);
}

size_t callset__count(const struct callset *cs)
{
	return cs->n;
}

struct call *callset__at(struct callset *cs, size_t i)
{
	return i < cs->n ? call_at(cs, i) : NULL;
}

const struct call *callset__get(const struct callset *cs, size_t index)
{
	return index && index <= cs->n ? call_at(cs, index - 1) : NULL;
}

const struct call_session *callset__session(const struct callset *cs)
{
	return &cs->sess;
}

struct call_session *callset__session_mut(struct callset *cs)
{
	return &cs->sess;
}

uint64_t callset__grace(const struct callset *cs)
{
	return cs->grace;
}

size_t callset__n_notes(const struct callset *cs)
{
	return cs->n_notes;
}

const struct call_note *callset__note_at(const struct callset *cs, size_t i)
{
	return i < cs->n_notes ? &cs->notes[i] : NULL;
}

uint64_t callset__notes_total(const struct callset *cs)
{
	return cs->notes_total;
}

void callset__note(struct callset *cs, uint64_t ts, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct call_note *v;
	va_list ap;

	cs->notes_total++;
	if (cs->n_notes >= CALL_NOTES_MAX)
		return;
	v = realloc(cs->notes, (cs->n_notes + 1) * sizeof(*v));
	if (!v)
		return; /* a note lost to ENOMEM: counted all the same */
	cs->notes = v;
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	v[cs->n_notes].text = strbuf_detach(&sb);
	v[cs->n_notes].ts = ts;
	if (v[cs->n_notes].text)
		cs->n_notes++;
}

/* --- helpers ------------------------------------------------------------------------------ */

bool call_task_terminal(const char *status)
{
	return status && (!strcmp(status, "completed") || !strcmp(status, "failed") ||
			  !strcmp(status, "cancelled"));
}

/* True when strbuf_escape copies s[0..n) as it is: printable ASCII without a backslash. */
static bool plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)s[i] < 0x20 || (uint8_t)s[i] > 0x7e || s[i] == '\\')
			return false;
	return true;
}

/* An escaped copy of its own size (a strbuf's capacity is a power of two: every call keeps
 * its method and tool). */
static char *escaped(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char *out;

	if (plain(s, n))
		return strndup(s, n);
	strbuf_escape(&sb, (const uint8_t *)s, n, 0);
	out = strbuf_str(&sb) ? strdup(strbuf_str(&sb)) : NULL;
	strbuf_fini(&sb);
	return out;
}

/* --- evidence strings ----------------------------------------------------------------------- */

int call_evidence_push(struct call *c, const char *s, size_t n)
{
	char **v, *d;

	if (n < 2 || c->n_ev >= CALL_EVIDENCE_MAX)
		return 0;
	if (n > CALL_EVSTR_MAX)
		n = CALL_EVSTR_MAX;
	for (size_t i = 0; i < c->n_ev; i++)
		if (strlen(c->ev[i]) == n && !memcmp(c->ev[i], s, n))
			return 0;
	v = realloc(c->ev, (c->n_ev + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->ev = v;
	d = strndup(s, n);
	if (!d)
		return -ENOMEM;
	c->ev[c->n_ev++] = d;
	return 0;
}

int callset__evidence_string(struct callset *cs, struct call *c, const char *s, size_t n)
{
	char buf[CALL_EVSTR_MAX + 1];
	int err = call_evidence_push(c, s, n);

	if (!err && n > 2 && s[0] == '~' && s[1] == '/' && cs->home) {
		int k = snprintf(buf, sizeof(buf), "%s%.*s", cs->home, (int)(n - 1), s + 1);

		if (k > 0)
			err = call_evidence_push(c, buf,
				      (size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1);
	}
	if (!err && n > 7 && !strncmp(s, "file://", 7))
		err = call_evidence_push(c, s + 7, n - 7);
	return err;
}

static int ev_walk(struct callset *cs, struct call *c, const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;
	char num[32];
	int err = 0;

	if (depth > 16)
		return 0;
	if (json_is_string(v))
		return callset__evidence_string(cs, c, json_string_value(v),
				 strnlen(json_string_value(v), json_string_length(v)));
	if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return call_evidence_push(c, num, strlen(num));
	}
	if (json_is_array(v))
		json_array_foreach(v, i, x) if ((err = ev_walk(cs, c, x, depth + 1))) return err;
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k,
				    x) if ((err = ev_walk(cs, c, x, depth + 1))) return err;
	return err;
}

/* --- opening a call ------------------------------------------------------------------------- */

int call_set_tool(struct call *c, const char *s, size_t n)
{
	free(c->tool);
	c->tool = escaped(s, n);
	return c->tool ? 0 : -ENOMEM;
}

/* tools/call: the tool name and its arguments; otherwise the params are the arguments. */
static int fill_request(struct callset *cs, struct call *c, const json_t *params)
{
	const json_t *args = params;
	const json_t *name = json_object_get(params, "name");
	int err;

	if (c->method && !strcmp(c->method, "tools/call")) {
		if (json_is_string(name) &&
		    call_set_tool(c, json_string_value(name), json_string_length(name)))
			return -ENOMEM;
		args = json_object_get(params, "arguments");
	}
	if (!args)
		return 0;
	err = call_args_forms(args, &c->args, &c->args_full, c->digest);
	if (err)
		return err;
	err = ev_walk(cs, c, args, 0);
	return err;
}

static uint64_t id_hash(enum chan_dir dir, const char *id)
{
	return fnv1a_str(FNV1A_SEED ^ (uint64_t)dir, id);
}

static size_t bucket_of(const struct callset *cs, enum chan_dir dir, const char *id)
{
	return (size_t)(id_hash(dir, id) & (cs->n_buckets - 1));
}

static void pend_grow(struct callset *cs)
{
	size_t n = cs->n_buckets * 2, b;
	struct pend **nb = calloc(n, sizeof(*nb)), *p, *next, **tail;

	if (!nb)
		return; /* longer chains: slower, still right */
	for (size_t i = 0; i < cs->n_buckets; i++) {
		for (p = cs->buckets[i]; p; p = next) { /* keeps each chain's order */
			next = p->next;
			b = (size_t)(id_hash(p->dir, p->id) & (n - 1));
			for (tail = &nb[b]; *tail; tail = &(*tail)->next)
				;
			p->next = NULL;
			*tail = p;
		}
	}
	free(cs->buckets);
	cs->buckets = nb;
	cs->n_buckets = n;
}

static int pend_add(struct callset *cs, enum chan_dir dir, const char *id, size_t call)
{
	struct pend *p = calloc(1, sizeof(*p)), **tail;

	if (!p || !(p->id = strdup(id))) {
		free(p);
		return -ENOMEM;
	}
	p->dir = dir;
	p->call = call;
	if (cs->n_pend >= cs->n_buckets)
		pend_grow(cs);
	for (tail = &cs->buckets[bucket_of(cs, dir, id)]; *tail; tail = &(*tail)->next)
		;
	*tail = p; /* at the tail: a reused id answers the oldest request first */
	cs->n_pend++;
	return 0;
}

static struct pend **pend_find(struct callset *cs, enum chan_dir dir, const char *id)
{
	struct pend **pp = &cs->buckets[bucket_of(cs, dir, id)];

	while (*pp && ((*pp)->dir != dir || strcmp((*pp)->id, id)))
		pp = &(*pp)->next;
	return pp;
}

struct call *callset__pending(struct callset *cs, enum chan_dir dir, const char *id_canon)
{
	struct pend **pp = pend_find(cs, dir, id_canon);

	return *pp ? call_at(cs, (*pp)->call) : NULL;
}

struct call *callset__take(struct callset *cs, enum chan_dir dir, const char *id_canon)
{
	struct pend **pp = pend_find(cs, dir, id_canon), *p = *pp;
	size_t i;

	if (!p)
		return NULL;
	*pp = p->next;
	i = p->call;
	free(p->id);
	free(p);
	cs->n_pend--;
	return call_at(cs, i);
}

struct call *callset__open(struct callset *cs, enum chan_dir dir, const char *id_canon,
			   const char *method, const json_t *params, uint64_t offset, uint64_t ts,
			   uint64_t record)
{
	struct call *c, *old = id_canon ? callset__pending(cs, dir, id_canon) : NULL;

	if (cs->n == cs->n_blk * CALL_BLOCK) {
		struct call **blk = realloc(cs->blk, (cs->n_blk + 1) * sizeof(*blk));

		if (!blk)
			return NULL;
		cs->blk = blk;
		if (!(blk[cs->n_blk] = malloc(CALL_BLOCK * sizeof(struct call))))
			return NULL;
		cs->n_blk++;
	}
	if (old)
		callset__note(cs, ts,
			      "%s offset %llu: request id %s reused while call %zu is pending",
			      chan_dir_name(dir), (unsigned long long)offset, id_canon, old->index);
	c = call_at(cs, cs->n);
	memset(c, 0, sizeof(*c));
	c->index = cs->n + 1;
	c->dir = dir;
	c->offset = offset;
	c->begin_ts = ts;
	c->begin_record = record;
	c->end_ts = CALL_OPEN;
	c->mark_end = CALL_OPEN;
	cs->n++;
	c->id = id_canon ? strdup(id_canon) : NULL;
	c->method = method ? escaped(method, strlen(method)) : NULL;
	if ((id_canon && !c->id) || (method && !c->method) ||
	    (params && fill_request(cs, c, params)) ||
	    (id_canon && pend_add(cs, dir, id_canon, cs->n - 1)))
		return NULL;
	if (dir == CHAN_IN && !cs->sess.has_first_request) {
		cs->sess.has_first_request = true;
		cs->sess.first_request_ts = ts;
	}
	return c;
}

void callset__attached(struct callset *cs, uint64_t ts)
{
	cs->attached = true;
	cs->attach_ts = ts;
}

int callset__before_attach(struct callset *cs, enum chan_dir dir, const char *id_canon,
			   struct call **out)
{
	struct call *c;

	*out = NULL;
	if (!cs->attached || cs->before_checked >= CALL_BEFORE_ATTACH_CHECKS)
		return 0;
	cs->before_checked++;
	for (size_t i = 0; i < cs->n; i++) {
		c = call_at(cs, i);
		if (c->dir == dir && c->id && !strcmp(c->id, id_canon))
			return 0; /* a recorded request's: answered twice */
	}
	c = callset__open(cs, dir, id_canon, NULL, NULL, 0, cs->attach_ts, 0);
	if (!c)
		return -ENOMEM;
	callset__take(cs, dir, id_canon);
	c->incomplete |= CI_BEFORE_ATTACH;
	if (dir == CHAN_IN && cs->sess.first_request_ts > cs->attach_ts)
		cs->sess.first_request_ts = cs->attach_ts; /* no startup after the attach */
	*out = c;
	return 0;
}

/* --- the end of a window -------------------------------------------------------------------- */

static void end_at(struct call *c, uint64_t ts, enum call_end_how how)
{
	if (ts < c->end_ts) {
		c->end_ts = ts;
		c->end_how = how;
	}
}

static int add_task(struct callset *cs, struct call *c, const json_t *task)
{
	const json_t *id = json_object_get(task, "taskId");
	const json_t *st = json_object_get(task, "status");
	size_t *v;

	if (!json_is_string(id))
		return 0;
	free(c->task_id);
	c->task_id = strdup(json_string_value(id));
	c->task_status = json_is_string(st) ? strdup(json_string_value(st)) : NULL;
	if (!c->task_id)
		return -ENOMEM;
	if (cs->n_tasks == cs->cap_tasks) {
		size_t cap = cs->cap_tasks ? cs->cap_tasks * 2 : 8;

		v = realloc(cs->tasks, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		cs->tasks = v;
		cs->cap_tasks = cap;
	}
	cs->tasks[cs->n_tasks++] = c->index - 1;
	return 0;
}

static void answer(struct call *c, char *shown, enum call_status status, int64_t code,
		   uint64_t ts, uint64_t record)
{
	c->resp_ts = ts;
	c->resp_record = record;
	free(c->result);
	c->result = shown;
	c->status = status;
	c->error_code = code;
}

void call_answered(struct call *c, char *shown, enum call_status status, int64_t code, uint64_t ts,
		   uint64_t record)
{
	answer(c, shown, status, code, ts, record);
	end_at(c, ts, END_RESPONSE);
}

void callset__answer(struct callset *cs, struct call *c, const json_t *result, const json_t *error,
		     uint64_t ts, uint64_t record)
{
	const json_t *task = json_object_get(result, "task");
	const json_t *code = json_object_get(error, "code");
	char *shown = call_json_short(error ? error : result ? result : json_null(), CALL_SHOW_MAX);

	if (error)
		answer(c, shown, CALL_ERROR, json_is_integer(code) ? json_integer_value(code) : 0,
		       ts, record);
	else
		answer(c, shown,
		       json_is_true(json_object_get(result, "isError")) ? CALL_TOOL_ERROR : CALL_OK,
		       0, ts, record);
	if (json_is_object(task) && json_object_get(task, "taskId") &&
	    !json_object_get(result, "content") && add_task(cs, c, task) == 0 && c->task_id) {
		if (call_task_terminal(c->task_status))
			end_at(c, ts, END_TASK);
		return; /* the work goes on until the task's terminal status */
	}
	end_at(c, ts, END_RESPONSE);
}

void callset__cancel(struct callset *cs, struct call *c, uint64_t ts)
{
	if (c->cancelled)
		return;
	c->cancelled = true;
	c->cancel_ts = ts;
	end_at(c, ts > UINT64_MAX - cs->grace ? UINT64_MAX - 1 : ts + cs->grace, END_CANCELLED);
}

void callset__task_status(struct callset *cs, const char *task_id, const char *status, uint64_t ts)
{
	for (size_t i = cs->n_tasks; i-- > 0;) {
		struct call *c = call_at(cs, cs->tasks[i]);

		if (strcmp(c->task_id, task_id))
			continue;
		if (status && (!c->task_status || strcmp(c->task_status, status))) {
			free(c->task_status);
			c->task_status = strdup(status);
		}
		if (call_task_terminal(status))
			end_at(c, ts, END_TASK);
		return;
	}
}

void callset__finish(struct callset *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct call *c = call_at(cs, i);

		if (c->status == CALL_PENDING && !c->from_mark)
			c->incomplete |= CI_NO_RESPONSE;
		if (c->task_id && !call_task_terminal(c->task_status))
			c->incomplete |= CI_TASK_OPEN;
	}
}
