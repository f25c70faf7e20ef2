/*
 * callinfo.c - how reports name a call and an attribution, in text and JSON (see analyze.h).
 * Call fields are escaped when the call is built (calls.c), so they are printed as they are.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "strbuf.h"
#include "traceinfo.h"

void callinfo_name(struct strbuf *sb, const struct call *c)
{
	if (!c) {
		strbuf_puts(sb, "call ?");
		return;
	}
	strbuf_printf(sb, "call %zu %s", c->index, c->method ? c->method : "(marked)");
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
					  "events lost", "invalid UTF-8",   "task never finished"};
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
	return json_pack("{s:I,s:o,s:o,s:o,s:o}", "index", (json_int_t)c->index, "id",
			 str_or_null(c->id), "method", str_or_null(c->method), "tool",
			 str_or_null(c->tool), "arguments_digest",
			 c->digest[0] ? json_string(c->digest) : json_null());
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

static json_t *window_json(const struct call *c)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "begin", json_u64(c->begin_ts), "end",
			 c->end_ts == CALL_OPEN ? json_null() : json_u64(c->end_ts), "ended_by",
			 json_string(c->end_how == END_RESPONSE	   ? "response"
				     : c->end_how == END_CANCELLED ? "cancellation"
				     : c->end_how == END_TASK	   ? "task"
				     : c->end_how == END_MARK	   ? "mark"
								   : "nothing"),
			 "record", json_u64(c->begin_record));
}

static json_t *marks_json(const struct call *c)
{
	if (!c->marked)
		return json_null();
	return json_pack("{s:o,s:o,s:o,s:b}", "call_id", str_or_null(c->mark_call_id), "begin",
			 json_u64(c->mark_begin), "end",
			 c->mark_end == CALL_OPEN ? json_null() : json_u64(c->mark_end),
			 "disagrees", c->mark_disagrees);
}

json_t *callinfo_call_json(const struct call *c)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o = callinfo_ref_json(c);
	char buf[32];
	int err;

	callinfo_incomplete(&sb, c->incomplete);
	err = json_put(o, "direction",
		       json_string(c->dir == CHAN_IN ? "client_to_server" : "server_to_client"));
	err = err ?: json_put(o, "arguments", c->args ? json_string(c->args) : json_null());
	err = err ?: json_put(o, "status", json_string(callinfo_status(c, buf, sizeof(buf))));
	err = err ?: json_put(o, "result", c->result ? json_string(c->result) : json_null());
	err = err ?: json_put(o, "stream_offset", json_u64(c->offset));
	err = err ?: json_put(o, "window", window_json(c));
	err = err
		      ?: json_put(o, "duration_ns",
				  c->end_ts == CALL_OPEN ? json_null()
							 : json_u64(c->end_ts - c->begin_ts));
	err = err ?: json_put(o, "cancelled", json_boolean(c->cancelled));
	err = err
		      ?: json_put(o, "task",
				  c->task_id ? json_pack("{s:s,s:o}", "id", c->task_id, "status",
							 str_or_null(c->task_status))
					     : json_null());
	err = err ?: json_put(o, "marks", marks_json(c));
	err = err
		      ?: json_put(o, "incomplete",
				  c->incomplete ? json_string(strbuf_str(&sb) ?: "?")
						: json_null());
	strbuf_fini(&sb);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
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
