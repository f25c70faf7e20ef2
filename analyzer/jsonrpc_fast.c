/*
 * jsonrpc_fast.c - the fast path of jsonrpc.c: a common JSON-RPC message read from the tape of
 * its line (msgclass_tape) instead of a jansson tree.
 *
 * It takes only a line it can prove it reads as jsonrpc.c does: one object (no batch) that is
 * a request needing nothing of the session (not initialize, server/discover or tasks/..., and no
 * _meta or traceparent in the params of a client request), a notification jsonrpc.c ignores,
 * or a response to a pending request that is neither about a task nor an identity. What a call
 * keeps is written from the tape as jansson's compact dump would write it, and only where that
 * is certain: no \u or \/ escape, no real number, no -0 (a dump cut to a bound only looks that
 * far). Anything else is declined before any effect, and jsonrpc.c reads the line with jansson.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "msgclass.h"

#define FAST_TEXT_MAX 256 /* bytes of a method or id read here (longer: declined) */

/* The members of the message that pairing reads. */
struct fast {
	const struct jtape *t;
	const struct jt_node *id, *method, *params, *result, *error;
};

static const char *text_of(const struct jtape *t, const struct jt_node *n)
{
	return (const char *)t->text + n->start;
}

/* The member k (len bytes) of o, or NULL (also when o is NULL or not an object, as
 * json_object_get). */
static const struct jt_node *member_n(const struct jtape *t, const struct jt_node *o, const char *k,
				      size_t len)
{
	const struct jt_node *x, *end;

	if (!o || o->type != JT_OBJ)
		return NULL;
	end = &t->n[o->next];
	for (x = o + 1; x < end; x = &t->n[x->next])
		if (x->key_len == len && !memcmp(t->text + x->key, k, len))
			return x;
	return NULL;
}

#define MEMBER(t, o, k) member_n(t, o, "" k, sizeof(k) - 1) /* k: a string literal */

/* A NUL-terminated copy of n's text (a string without its quotes); false when too long. */
static bool copy_text(char out[FAST_TEXT_MAX], const struct jtape *t, const struct jt_node *n,
		      bool unquote)
{
	size_t len = n->len - (unquote ? 2 : 0);

	if (len >= FAST_TEXT_MAX)
		return false;
	memcpy(out, text_of(t, n) + (unquote ? 1 : 0), len);
	out[len] = '\0';
	return true;
}

/* call_id_canon of a string or integer id written as jansson writes it. */
static bool id_canon(char out[FAST_TEXT_MAX], const struct jtape *t, const struct jt_node *id)
{
	return id && (id->type == JT_STR || id->type == JT_INT) && id->canon &&
	       copy_text(out, t, id, false);
}

/* --- dumps ---------------------------------------------------------------------------------- */

enum { D_OK, D_FULL, D_NO }; /* written; stopped at the bound; not as jansson would write it */

/* jansson's compact dump of a value, its first cap bytes. */
struct dump {
	const struct jtape *t;
	char *buf;
	size_t len, cap;
	bool sorted;   /* keys in JSON_SORT_KEYS order */
	bool in_order; /* every object had its keys in that order already */
};

static int put(struct dump *d, const void *p, size_t n)
{
	size_t room = d->cap - d->len;

	memcpy(d->buf + d->len, p, n < room ? n : room);
	d->len += n < room ? n : room;
	return n > room ? D_FULL : D_OK;
}

/* JSON_SORT_KEYS order (strcmp: no key has a NUL, it would need an escape). */
static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	int r = memcmp(a, b, na < nb ? na : nb);

	return r ? r : (na > nb) - (na < nb);
}

/* A member to sort: its key and its node. */
struct member {
	const uint8_t *key;
	size_t len;
	const struct jt_node *n;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return key_cmp(x->key, x->len, y->key, y->len);
}

static int emit(struct dump *d, const struct jt_node *n);

/* "key":value, the key as written (it has no escape) */
static int emit_member(struct dump *d, const struct jt_node *x)
{
	int r = put(d, d->t->text + x->key - 1, x->key_len + 1);

	return r ?: put(d, "\":", 2) ?: emit(d, x);
}

static int emit_sorted(struct dump *d, const struct jt_node *o)
{
	const struct jt_node *x, *end = &d->t->n[o->next];
	struct member stack[32], *v = stack;
	size_t k = 0, n = 0;
	int r = D_OK;

	for (x = o + 1; x < end; x = &d->t->n[x->next])
		n++;
	if (n > 32 && !(v = malloc(n * sizeof(*v))))
		return D_NO; /* jansson's path says what ENOMEM does */
	for (x = o + 1; x < end; x = &d->t->n[x->next])
		v[k++] = (struct member){d->t->text + x->key, x->key_len, x};
	qsort(v, n, sizeof(*v), member_cmp);
	for (k = 0; k < n && r == D_OK; k++)
		r = (k ? put(d, ",", 1) : D_OK) ?: emit_member(d, v[k].n);
	if (v != stack)
		free(v);
	return r;
}

static int emit_children(struct dump *d, const struct jt_node *o)
{
	const struct jt_node *x, *prev = NULL, *end = &d->t->n[o->next];
	const uint8_t *text = d->t->text;
	int r = D_OK;

	for (x = o + 1; x < end && r == D_OK; prev = x, x = &d->t->n[x->next]) {
		if (prev && o->type == JT_OBJ &&
		    key_cmp(text + prev->key, prev->key_len, text + x->key, x->key_len) >= 0)
			d->in_order = false;
		r = prev ? put(d, ",", 1) : D_OK;
		if (r == D_OK)
			r = o->type == JT_OBJ ? emit_member(d, x) : emit(d, x);
	}
	return r;
}

static int emit(struct dump *d, const struct jt_node *n)
{
	int r;

	if (n->type != JT_OBJ && n->type != JT_ARR)
		return n->canon ? put(d, text_of(d->t, n), n->len) : D_NO;
	r = put(d, n->type == JT_OBJ ? "{" : "[", 1);
	if (r == D_OK)
		r = n->type == JT_OBJ && d->sorted ? emit_sorted(d, n) : emit_children(d, n);
	return r ?: put(d, n->type == JT_OBJ ? "}" : "]", 1);
}

/* --- requests ------------------------------------------------------------------------------- */

/* The arguments' compact dump and key-sorted dump (the same buffer when in order already). */
struct args {
	char small[1024], *plain, *sorted;
	size_t plain_len, sorted_len;
};

static void args_fini(struct args *a)
{
	if (a->sorted != a->plain)
		free(a->sorted);
	if (a->plain != a->small)
		free(a->plain);
}

/* 0, or D_NO (declined) */
static int args_dump(struct args *a, const struct jtape *t, const struct jt_node *n)
{
	struct dump d = {.t = t, .cap = n->len, .in_order = true};

	a->plain = a->sorted = n->len <= sizeof(a->small) ? a->small : malloc(n->len);
	if (!a->plain || (d.buf = a->plain, emit(&d, n) != D_OK))
		return D_NO;
	a->plain_len = a->sorted_len = d.len;
	if (d.in_order)
		return 0;
	d = (struct dump){.t = t, .cap = n->len, .sorted = true, .buf = malloc(n->len)};
	if (!(a->sorted = d.buf) || emit(&d, n) != D_OK)
		return D_NO;
	a->sorted_len = d.len;
	return 0;
}

/* The value of a canonical string's text s[0..n): only these escapes can be in it. Returns
 * its length (out has room for n bytes). */
static size_t unescape(char *out, const char *s, size_t n)
{
	static const char from[] = "\"\\bfnrt", to[] = "\"\\\b\f\n\r\t";
	const char *e;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		e = s[i] == '\\' && i + 1 < n && s[i + 1] ? strchr(from, s[i + 1]) : NULL;
		out[k++] = e ? to[e - from] : s[i];
		i += e ? 1 : 0;
	}
	return k;
}

static int evidence_string(struct callset *cs, struct call *c, const char *s, size_t n)
{
	char *v;
	int err;

	if (!memchr(s, '\\', n))
		return callset__evidence_string(cs, c, s, n);
	if (!(v = malloc(n)))
		return -ENOMEM;
	err = callset__evidence_string(cs, c, v, unescape(v, s, n));
	free(v);
	return err;
}

/* ev_walk of calls.c over the tape. */
static int evidence(struct callset *cs, struct call *c, const struct jtape *t,
		    const struct jt_node *n, int depth)
{
	const struct jt_node *x, *end = &t->n[n->next];
	int err = 0;

	if (depth > 16)
		return 0;
	if (n->type == JT_STR)
		return evidence_string(cs, c, text_of(t, n) + 1, n->len - 2);
	if (n->type == JT_INT)
		return call_evidence_push(c, text_of(t, n), n->len);
	if (n->type == JT_OBJ || n->type == JT_ARR)
		for (x = n + 1; x < end && !err; x = &t->n[x->next])
			err = evidence(cs, c, t, x, depth + 1);
	return err;
}

static bool session_method(const char *method)
{
	return !strcmp(method, "initialize") || !strcmp(method, "server/discover");
}

static int request(struct callset *cs, const struct chan_line *l, const struct fast *f)
{
	const struct jtape *t = f->t;
	const struct jt_node *args = f->params, *name = NULL;
	char method[FAST_TEXT_MAX], id[FAST_TEXT_MAX];
	struct args a;
	struct call *c;
	int err;

	a.plain = a.sorted = NULL;
	if (!copy_text(method, t, f->method, true) || !id_canon(id, t, f->id) ||
	    session_method(method) || !strncmp(method, "tasks/", 6) ||
	    (f->params && f->params->type != JT_OBJ))
		return 0;
	if (l->dir == CHAN_IN &&
	    (MEMBER(t, f->params, "_meta") || MEMBER(t, f->params, "traceparent")))
		return 0; /* identity.c reads these */
	if (!strcmp(method, "tools/call")) {
		name = MEMBER(t, f->params, "name");
		name = name && name->type == JT_STR ? name : NULL;
		args = MEMBER(t, f->params, "arguments");
	}
	if ((name && name->esc) || (args && args_dump(&a, t, args))) {
		args_fini(&a);
		return 0;
	}
	c = callset__open(cs, l->dir, id, method, NULL, l->offset, l->ts, l->record);
	err = c ? 0 : -ENOMEM;
	if (!err && name)
		err = call_set_tool(c, text_of(t, name) + 1, name->len - 2);
	if (!err && args)
		err = call_args_forms_dump(a.plain, a.plain_len, a.sorted, a.sorted_len, &c->args,
					   &c->args_full, c->digest)
			      ?: evidence(cs, c, t, args, 0);
	args_fini(&a);
	return err ?: 1;
}

/* --- responses ------------------------------------------------------------------------------ */

/* json_integer_value of an integer of at most 18 digits. */
static int64_t int_value(const struct jtape *t, const struct jt_node *n)
{
	const char *s = text_of(t, n);
	int64_t v = 0;

	for (uint32_t i = *s == '-'; i < n->len; i++)
		v = v * 10 + (s[i] - '0');
	return *s == '-' ? -v : v;
}

static int response(struct callset *cs, const struct chan_line *l, const struct fast *f)
{
	enum chan_dir req = l->dir == CHAN_IN ? CHAN_OUT : CHAN_IN;
	const struct jtape *t = f->t;
	const struct jt_node *code = MEMBER(t, f->error, "code");
	const struct jt_node *is_error = MEMBER(t, f->result, "isError");
	char id[FAST_TEXT_MAX], buf[CALL_SHOW_MAX + 1], *shown;
	struct dump d = {.t = t, .buf = buf, .cap = sizeof(buf)};
	struct call *c;

	if (!id_canon(id, t, f->id) || !(c = callset__pending(cs, req, id)) || c->task_ref ||
	    (c->dir == CHAN_IN && c->method && session_method(c->method)) ||
	    MEMBER(t, f->result, "task") || MEMBER(t, f->result, "_meta") ||
	    emit(&d, f->error ? f->error : f->result) == D_NO)
		return 0; /* tasks and identities are read by jsonrpc.c */
	if (!(shown = call_text_short(buf, d.len, CALL_SHOW_MAX)))
		return -ENOMEM;
	c = callset__take(cs, req, id);
	if (f->error)
		call_answered(c, shown, CALL_ERROR,
			      code && code->type == JT_INT ? int_value(t, code) : 0, l->ts,
			      l->record);
	else
		call_answered(c, shown,
			      is_error && is_error->type == JT_TRUE ? CALL_TOOL_ERROR : CALL_OK, 0,
			      l->ts, l->record);
	return 1;
}

/* --- lines ---------------------------------------------------------------------------------- */

static bool ignored_notification(const struct jtape *t, const struct jt_node *method)
{
	char m[FAST_TEXT_MAX];

	return copy_text(m, t, method, true) && strcmp(m, "notifications/cancelled") &&
	       strcmp(m, "notifications/tasks/status");
}

int jsonrpc_fast_line(struct callset *cs, const struct chan_line *l)
{
	struct jtape t;
	struct fast f = {.t = &t};
	int done = 0;

	if (msgclass_tape(&t, l->data, l->len)) {
		f.id = MEMBER(&t, &t.n[0], "id");
		f.method = MEMBER(&t, &t.n[0], "method");
		f.params = MEMBER(&t, &t.n[0], "params");
		f.result = MEMBER(&t, &t.n[0], "result");
		f.error = MEMBER(&t, &t.n[0], "error");
		if (f.method && (f.method->type != JT_STR || f.method->esc))
			done = 0;
		else if (f.method && f.id && f.id->type != JT_NULL)
			done = request(cs, l, &f);
		else if (f.method)
			done = ignored_notification(&t, f.method);
		else if (f.id && (f.result || f.error))
			done = response(cs, l, &f);
	}
	jtape_fini(&t);
	return done;
}
