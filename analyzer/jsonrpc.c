/*
 * jsonrpc.c - from channel lines to JSON-RPC messages and calls: the chan_ops of a callset.
 *
 * A whole line is decoded with jansson (a JSON array is a batch: each element is a message).
 * Invalid UTF-8 is reported and decoded with U+FFFD replacements, as Node's decoder does, and
 * the call it carries is marked incomplete. A line that is not JSON, is unbalanced or is not
 * valid JSON is reported with its stream offset and skipped. A line that was cut by a gap or
 * is longer than the limit cannot be decoded: the scanner's view of it (top-level id, method,
 * result/error) still opens or ends the call, which is marked incomplete.
 *
 * A whole line goes to the fast path first (jsonrpc_fast.c), which reads the common messages
 * without a jansson tree and declines, before doing anything, every line it is not sure of.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "identity.h"
#include "strbuf.h"

static size_t utf8_seq(const uint8_t *p, size_t n)
{
	uint32_t cp;

	return strbuf_utf8_seq(p, n, &cp);
}

/* The first invalid byte, or n when p is valid UTF-8. */
static size_t utf8_check(const uint8_t *p, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		k = utf8_seq(p + i, n - i);
		if (!k)
			return i;
		i += k;
	}
	return n;
}

/* A copy of p with every invalid byte replaced by U+FFFD. */
static char *utf8_repair(const uint8_t *p, size_t n, size_t *out_len)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i = 0, k;

	while (i < n) {
		k = utf8_seq(p + i, n - i);
		if (k) {
			strbuf_put(&sb, p + i, k);
			i += k;
		} else {
			strbuf_puts(&sb, "\xef\xbf\xbd");
			i++;
		}
	}
	*out_len = sb.len;
	return strbuf_detach(&sb);
}

struct msgctx {
	struct callset *cs;
	const struct chan_line *l;
	bool invalid_utf8;
	bool damaged; /* only the scanner's view */
};

static const char *dir_name(const struct msgctx *m)
{
	return chan_dir_name(m->l->dir);
}

/* --- session facts -------------------------------------------------------------------------- */

static void set_protocol(struct call_session *s, const json_t *v)
{
	if (!json_is_string(v) || s->protocol)
		return;
	s->protocol = strndup(json_string_value(v), 64);
}

static void session_request(struct callset *cs, const char *method, const json_t *params)
{
	struct call_session *s = callset__session_mut(cs);
	const json_t *meta = json_object_get(params, "_meta"), *v;
	const char *k;

	if (!strcmp(method, "initialize")) {
		s->initialize_seen = true;
		set_protocol(s, json_object_get(params, "protocolVersion"));
	} else if (!strcmp(method, "server/discover")) {
		s->discover_seen = true;
	}
	json_object_foreach((json_t *)meta, k, v)
	{
		size_t n = strlen(k);

		if (n >= 15 && !strcmp(k + n - 15, "protocolVersion")) {
			s->per_request_meta = true;
			set_protocol(s, v);
		}
	}
}

/* --- requests, notifications, responses ------------------------------------------------------ */

static int on_request(struct msgctx *m, const char *method, const json_t *id, const json_t *params)
{
	char *canon = call_id_canon(id);
	struct call *c;
	const json_t *tid;

	if (!canon) {
		callset__note(
			m->cs, m->l->ts,
			"%s offset %llu: request \"%.64s\" with an id that is neither a string "
			"nor a number: skipped",
			dir_name(m), (unsigned long long)m->l->offset, method);
		return 0;
	}
	c = callset__open(m->cs, m->l->dir, canon, method, params, m->l->offset, m->l->ts,
			  m->l->record);
	free(canon);
	if (!c)
		return -ENOMEM;
	if (m->invalid_utf8)
		c->incomplete |= CI_INVALID_UTF8;
	if (m->damaged)
		c->incomplete |= CI_REQUEST_DAMAGED;
	if (m->l->dir == CHAN_IN) {
		session_request(m->cs, method, params);
		if (identity_request(callset__session_mut(m->cs), c, method, params))
			return -ENOMEM;
	}
	tid = json_object_get(params, "taskId");
	if (!strncmp(method, "tasks/", 6) && json_is_string(tid) &&
	    !(c->task_ref = strdup(json_string_value(tid))))
		return -ENOMEM;
	return 0;
}

static void on_cancel(struct msgctx *m, const json_t *params)
{
	const json_t *rid = json_object_get(params, "requestId");
	char *canon = call_id_canon(rid);
	/* a party cancels its own request: the client a request it sent, the server one of its */
	struct call *c = canon ? callset__pending(m->cs, m->l->dir, canon) : NULL;

	if (c)
		callset__cancel(m->cs, c, m->l->ts);
	else
		callset__note(m->cs, m->l->ts,
			      "%s offset %llu: notifications/cancelled for request id %s, which is "
			      "not pending",
			      dir_name(m), (unsigned long long)m->l->offset, canon ? canon : "?");
	free(canon);
}

static void on_notification(struct msgctx *m, const char *method, const json_t *params)
{
	const json_t *tid = json_object_get(params, "taskId");
	const json_t *st = json_object_get(params, "status");

	if (!strcmp(method, "notifications/cancelled"))
		on_cancel(m, params);
	else if (!strcmp(method, "notifications/tasks/status") && json_is_string(tid))
		callset__task_status(m->cs, json_string_value(tid),
				     json_is_string(st) ? json_string_value(st) : NULL, m->l->ts);
}

/* The answer to tasks/get, tasks/result or tasks/cancel tells the task's status. */
static void task_answer(struct msgctx *m, const struct call *c, const json_t *result,
			const json_t *error)
{
	const json_t *st = json_object_get(result, "status");
	const char *status = json_is_string(st) ? json_string_value(st) : NULL;

	if (!c->task_ref || !c->method)
		return;
	if (!strcmp(c->method, "tasks/result"))
		status = error ? "failed" : "completed"; /* it answers only once the task is done */
	else if (!strcmp(c->method, "tasks/cancel") && !status && !error)
		status = "cancelled";
	if (status)
		callset__task_status(m->cs, c->task_ref, status, m->l->ts);
}

static int on_response(struct msgctx *m, const json_t *id, const json_t *result,
		       const json_t *error)
{
	enum chan_dir req = m->l->dir == CHAN_IN ? CHAN_OUT : CHAN_IN;
	char *canon = call_id_canon(id);
	struct call *c = canon ? callset__take(m->cs, req, canon) : NULL;
	int err = !c && canon ? callset__before_attach(m->cs, req, canon, &c) : 0;

	if (err) {
		free(canon);
		return err;
	}
	if (!c) {
		if (json_is_null(id) && error)
			callset__note(m->cs, m->l->ts,
				      "%s offset %llu: error response with id null (a request that "
				      "could not be read?)",
				      dir_name(m), (unsigned long long)m->l->offset);
		else
			callset__note(
				m->cs, m->l->ts,
				"%s offset %llu: response to id %s without a pending request: "
				"skipped",
				dir_name(m), (unsigned long long)m->l->offset,
				canon ? canon : "(not a string or number)");
		free(canon);
		return 0;
	}
	free(canon);
	callset__answer(m->cs, c, result, error, m->l->ts, m->l->record);
	if (m->damaged)
		c->incomplete |= CI_RESPONSE_DAMAGED;
	task_answer(m, c, result, error);
	return identity_response(callset__session_mut(m->cs), c, result);
}

static int on_message(struct msgctx *m, const json_t *msg)
{
	const json_t *method = json_object_get(msg, "method");
	const json_t *id = json_object_get(msg, "id");
	const json_t *result = json_object_get(msg, "result");
	const json_t *error = json_object_get(msg, "error");

	if (json_is_string(method) && id && !json_is_null(id))
		return on_request(m, json_string_value(method), id, json_object_get(msg, "params"));
	if (json_is_string(method)) {
		on_notification(m, json_string_value(method), json_object_get(msg, "params"));
		return 0;
	}
	if (id && (result || error))
		return on_response(m, id, result, error);
	callset__note(m->cs, m->l->ts, "%s offset %llu: %s that is not a JSON-RPC message: skipped",
		      dir_name(m), (unsigned long long)m->l->offset,
		      json_is_object(msg) ? "an object" : "a value");
	return 0;
}

/* --- whole lines ----------------------------------------------------------------------------- */

static int on_value(struct msgctx *m, const json_t *v)
{
	const json_t *x;
	size_t i;
	int err = 0;

	if (!json_is_array(v))
		return on_message(m, v);
	callset__session_mut(m->cs)->batches++;
	if (!json_array_size(v))
		callset__note(m->cs, m->l->ts, "%s offset %llu: an empty batch", dir_name(m),
			      (unsigned long long)m->l->offset);
	json_array_foreach(v, i, x) if ((err = on_message(m, x))) break;
	return err;
}

static void parse_failed(struct msgctx *m, const json_error_t *je)
{
	const struct jscan *sc = chan_line_scan(m->l);
	struct strbuf sb = STRBUF_INIT;
	size_t n = m->l->len < 60 ? (size_t)m->l->len : 60;

	switch (jscan_end(sc)) {
	case JSCAN_NOT_JSON:
		strbuf_escape(&sb, m->l->data, n, ESC_QUOTE);
		callset__note(m->cs, m->l->ts, "%s offset %llu: not JSON, skipped: \"%s%s\"",
			      dir_name(m), (unsigned long long)m->l->offset,
			      strbuf_str(&sb) ? strbuf_str(&sb) : "", m->l->len > n ? "..." : "");
		break;
	case JSCAN_UNBALANCED:
		callset__note(m->cs, m->l->ts,
			      "%s offset %llu: unbalanced JSON (structure error at byte %llu of "
			      "%llu), skipped",
			      dir_name(m), (unsigned long long)m->l->offset,
			      (unsigned long long)(sc->bad ? sc->bad_at : sc->pos),
			      (unsigned long long)m->l->len);
		break;
	default:
		callset__note(m->cs, m->l->ts,
			      "%s offset %llu: invalid JSON (%s at byte %d), skipped", dir_name(m),
			      (unsigned long long)m->l->offset, je->text, je->position);
		break;
	}
	strbuf_fini(&sb);
}

static int decode_line(struct msgctx *m)
{
	const struct chan_line *l = m->l;
	size_t bad = utf8_check(l->data, (size_t)l->len), len = (size_t)l->len;
	char *fixed = NULL;
	json_error_t je;
	json_t *v;
	int err;

	if (bad < len && jscan_end(chan_line_scan(l)) == JSCAN_BALANCED) {
		m->invalid_utf8 = true;
		callset__note(
			m->cs, l->ts,
			"%s offset %llu: invalid UTF-8 at byte %zu of the message; decoded with "
			"U+FFFD replacements",
			dir_name(m), (unsigned long long)l->offset, bad);
		fixed = utf8_repair(l->data, len, &len);
		if (!fixed)
			return -ENOMEM;
	}
	v = json_loadb(fixed ? fixed : (const char *)l->data, len, JSON_ALLOW_NUL | JSON_DECODE_ANY,
		       &je);
	free(fixed);
	if (!v) {
		parse_failed(m, &je);
		return 0;
	}
	err = on_value(m, v);
	json_decref(v);
	return err;
}

/* A raw token of the scanner as a JSON value (NULL when cut or absent). */
static json_t *token_value(const struct jscan_token *t)
{
	if (!t->present || t->cut || !t->len)
		return NULL;
	return json_loadb(t->raw, t->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

/* A line that cannot be decoded whole: what the scanner saw of it. */
static int scanned_line(struct msgctx *m)
{
	const struct jscan *sc = chan_line_scan(m->l);
	json_t *id = token_value(&sc->id), *method = token_value(&sc->method);
	json_t *fake = json_object();
	int err = 0;

	m->damaged = true;
	if (!fake) {
		err = -ENOMEM;
	} else if (sc->top != '{' || !id) {
		callset__note(m->cs, m->l->ts,
			      "%s offset %llu: a message that could not be read whole and whose id "
			      "is unknown: skipped",
			      dir_name(m), (unsigned long long)m->l->offset);
	} else if (json_is_string(method)) {
		err = on_request(m, json_string_value(method), id, NULL);
	} else if (sc->has_result || sc->has_error || !sc->method.present) {
		json_object_set(fake, sc->has_error ? "error" : "result", json_null());
		err = on_response(m, id, sc->has_error ? NULL : json_object_get(fake, "result"),
				  sc->has_error ? json_object_get(fake, "error") : NULL);
	}
	json_decref(fake);
	json_decref(id);
	json_decref(method);
	return err;
}

static int line(void *ctx, const struct chan_line *l, bool fast)
{
	struct msgctx m = {.cs = ctx, .l = l};
	int done;

	/* what the fast path reads is one valid JSON object: the scanner would say balanced */
	if (fast && l->data && !(l->flags & CHAN_L_GAP) && (done = jsonrpc_fast_line(ctx, l)))
		return done < 0 ? done : 0;
	if (jscan_end(chan_line_scan(l)) == JSCAN_EMPTY)
		return 0;
	if (!l->data || (l->flags & CHAN_L_GAP) ||
	    ((l->flags & CHAN_L_UNTERMINATED) && jscan_end(chan_line_scan(l)) != JSCAN_BALANCED))
		return scanned_line(&m);
	return decode_line(&m);
}

static int on_line(void *ctx, const struct chan_line *l)
{
	return line(ctx, l, true);
}

static int on_line_jansson(void *ctx, const struct chan_line *l)
{
	return line(ctx, l, false);
}

static void on_note(void *ctx, enum chan_dir dir, uint64_t offset, uint64_t ts, const char *msg)
{
	callset__note(ctx, ts, "%s offset %llu: %s", chan_dir_name(dir), (unsigned long long)offset,
		      msg);
}

const struct chan_ops callset_chan_ops = {.line = on_line, .note = on_note};
const struct chan_ops callset_chan_ops_jansson = {.line = on_line_jansson, .note = on_note};
