/*
 * callinfo.c - how reports name a call and an attribution, in text and JSON (see analyze.h).
 * Call fields are escaped when the call is built (calls.c), so they are printed as they are.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "identity.h"
#include "jsonw.h"
#include "strbuf.h"
#include "traceinfo.h"

const char *callinfo_method(const struct call *c)
{
	if (c->method)
		return c->method;
	return (c->incomplete & CI_BEFORE_ATTACH) ? "(method unknown)" : "(marked)";
}

void callinfo_name(struct strbuf *sb, const struct call *c)
{
	if (!c) {
		strbuf_puts(sb, "call ?");
		return;
	}
	strbuf_printf(sb, "call %zu %s", c->index, callinfo_method(c));
	if (c->tool)
		strbuf_printf(sb, " %s", c->tool);
	if (c->id)
		strbuf_printf(sb, " (id %s)", c->id);
	else if (c->mark_call_id)
		strbuf_printf(sb, " (call_id %s)", c->mark_call_id);
}

void callinfo_attr(struct strbuf *sb, const struct callset *cs, const struct attribution *a,
		   const char *matched)
{
	switch (a->rule) {
	case ATTR_BUCKET:
		strbuf_printf(sb, "%s (outside every call)", attr_bucket_name(a->bucket));
		return;
	case ATTR_AMBIGUOUS:
		strbuf_puts(sb, "ambiguous between ");
		for (size_t i = 0; i < a->n_cand; i++) {
			if (i)
				strbuf_puts(sb, i + 1 == a->n_cand && a->n_cand == a->n_cand_total
							? " and "
							: ", ");
			callinfo_name(sb, callset__get(cs, a->cand[i]));
		}
		if (a->n_cand_total > a->n_cand)
			strbuf_printf(sb, " and %zu more", a->n_cand_total - a->n_cand);
		return;
	default:
		callinfo_name(sb, callset__get(cs, a->call));
		strbuf_printf(sb, " by %s", attr_rule_name(a->rule));
		if (matched) {
			strbuf_puts(sb, " (argument \"");
			strbuf_escape(sb, (const uint8_t *)matched, strlen(matched), ESC_QUOTE);
			strbuf_puts(sb, "\")");
		}
	}
}

const char *callinfo_status(const struct call *c, char *buf, size_t len)
{
	switch (c->status) {
	case CALL_OK:
		return c->task_id ? "task" : "ok";
	case CALL_TOOL_ERROR:
		return "isError";
	case CALL_ERROR:
		snprintf(buf, len, "error %lld", (long long)c->error_code);
		return buf;
	default:
		return c->from_mark ? "marked" : c->cancelled ? "cancelled" : "no response";
	}
}

void callinfo_incomplete(struct strbuf *sb, unsigned inc)
{
	static const char *const why[] = {"no response", "request damaged", "response damaged",
					  "events lost", "invalid UTF-8",   "task never finished",
					  "request before the attach"};
	bool first = true;

	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
		if (!(inc & (1u << i)))
			continue;
		strbuf_printf(sb, "%s%s", first ? "" : ", ", why[i]);
		first = false;
	}
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *callinfo_ref_json(const struct call *c)
{
	if (!c)
		return json_null();
	return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "index", (json_int_t)c->index, "id",
			 str_or_null(c->id), "method", str_or_null(c->method), "tool",
			 str_or_null(c->tool), "arguments_digest",
			 c->digest[0] ? json_string(c->digest) : json_null(), "trace_context",
			 identity_trace_context_json(c));
}

json_t *callinfo_attr_json(const struct callset *cs, const struct attribution *a,
			   const char *matched)
{
	json_t *cand = json_array(), *o;

	for (size_t i = 0; cand && i < a->n_cand; i++)
		if (json_array_append_new(cand, callinfo_ref_json(callset__get(cs, a->cand[i])))) {
			json_decref(cand);
			return NULL;
		}
	o = json_pack(
		"{s:s,s:o,s:o,s:I,s:o,s:o}", "rule", attr_rule_name(a->rule), "call",
		a->call ? callinfo_ref_json(callset__get(cs, a->call)) : json_null(), "candidates",
		cand, "candidates_total", (json_int_t)a->n_cand_total, "bucket",
		a->rule == ATTR_BUCKET ? json_string(attr_bucket_name(a->bucket)) : json_null(),
		"matched",
		matched ? json_bytes((const uint8_t *)matched, strlen(matched)) : json_null());
	return o;
}

static void window_write(struct jsonw *w, const struct call *c)
{
	jsonw_open(w, "window", '{');
	jsonw_u64(w, "begin", c->begin_ts);
	if (c->end_ts == CALL_OPEN)
		jsonw_null(w, "end");
	else
		jsonw_u64(w, "end", c->end_ts);
	jsonw_str(w, "ended_by",
		  c->end_how == END_RESPONSE	? "response"
		  : c->end_how == END_CANCELLED ? "cancellation"
		  : c->end_how == END_TASK	? "task"
		  : c->end_how == END_MARK	? "mark"
						: "nothing");
	if (c->incomplete & CI_BEFORE_ATTACH) /* no request in the trace */
		jsonw_null(w, "record");
	else
		jsonw_u64(w, "record", c->begin_record);
	jsonw_close(w);
}

static void marks_write(struct jsonw *w, const struct call *c)
{
	if (!c->marked) {
		jsonw_null(w, "marks");
		return;
	}
	jsonw_open(w, "marks", '{');
	jsonw_str(w, "call_id", c->mark_call_id);
	jsonw_u64(w, "begin", c->mark_begin);
	if (c->mark_end == CALL_OPEN)
		jsonw_null(w, "end");
	else
		jsonw_u64(w, "end", c->mark_end);
	jsonw_bool(w, "disagrees", c->mark_disagrees);
	jsonw_close(w);
}

/* The call's members written one by one (the report of every call was a jansson tree built
 * and freed once; unit.outputs_pinned holds the bytes to what it gave). Strings of a call are
 * escaped when the call is built, so they are written as they are. */
void callinfo_call_write(struct jsonw *w, const struct call *c)
{
	json_t *ref = callinfo_ref_json(c), *x;
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	char buf[32];

	if (!ref) {
		jsonw_put(w, NULL, NULL); /* -ENOMEM, reported by jsonw_finish */
		return;
	}
	json_object_foreach(ref, k, x) jsonw_put(w, k, json_incref(x));
	json_decref(ref);
	jsonw_str(w, "direction", c->dir == CHAN_IN ? "client_to_server" : "server_to_client");
	jsonw_str(w, "arguments", c->args);
	jsonw_str(w, "status", callinfo_status(c, buf, sizeof(buf)));
	jsonw_str(w, "result", c->result);
	if (c->incomplete & CI_BEFORE_ATTACH)
		jsonw_null(w, "stream_offset");
	else
		jsonw_u64(w, "stream_offset", c->offset);
	window_write(w, c);
	if (c->end_ts == CALL_OPEN)
		jsonw_null(w, "duration_ns");
	else
		jsonw_u64(w, "duration_ns", c->end_ts - c->begin_ts);
	jsonw_bool(w, "cancelled", c->cancelled);
	if (c->task_id) {
		jsonw_open(w, "task", '{');
		jsonw_str(w, "id", c->task_id);
		jsonw_str(w, "status", c->task_status);
		jsonw_close(w);
	} else {
		jsonw_null(w, "task");
	}
	marks_write(w, c);
	callinfo_incomplete(&sb, c->incomplete);
	if (c->incomplete)
		jsonw_str(w, "incomplete", strbuf_str(&sb) ?: "?");
	else
		jsonw_null(w, "incomplete");
	strbuf_fini(&sb);
}

json_t *callinfo_notes_json(const struct callset *cs)
{
	const struct call_note *n;
	json_t *a = json_array();

	for (size_t i = 0; a && (n = callset__note_at(cs, i)); i++)
		if (json_array_append_new(a, json_string(n->text))) {
			json_decref(a);
			return NULL;
		}
	return a;
}
