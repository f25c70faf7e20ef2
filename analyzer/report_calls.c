/*
 * report_calls.c - `mcpwitness calls` in text and JSON (see calls_cmd.h). Deterministic: calls
 * in index order, effects by (group, first record), processes in creation order.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "calls_cmd.h"
#include "identity.h"
#include "jsonw.h"
#include "outlived.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

#define TREE_MAX 256 /* processes shown per call */

/* The processes of each call, in creation order: made once per report. (Each call used to scan
 * every process of the trace: calls x processes, which made `calls` grow with the square of
 * the trace's length.) */
struct procs_by_call {
	size_t n_calls;
	size_t *start; /* call i's processes: list[start[i] .. start[i + 1]) */
	const struct pb_proc **list;
};

/* The calls p belongs to, each once: its call, or its candidates when ambiguous. */
static size_t calls_of(const struct pb_proc *p, size_t out[BIND_CANDIDATES_MAX])
{
	size_t n = 0;

	if (p->bind == BIND_LINEAGE || p->bind == BIND_EVIDENCE)
		out[n++] = p->call;
	for (size_t i = 0; p->bind == BIND_AMBIGUOUS && i < p->n_cand; i++) {
		size_t j = 0;

		while (j < n && out[j] != p->cand[i])
			j++;
		if (j == n)
			out[n++] = p->cand[i];
	}
	return n;
}

static void procs_by_call_fini(struct procs_by_call *ix)
{
	free(ix->start);
	free(ix->list);
}

/* 0 or -ENOMEM. */
static int procs_by_call_init(struct procs_by_call *ix, const struct procbind *pb, size_t n_calls)
{
	size_t calls[BIND_CANDIDATES_MAX], *at;
	const struct pb_proc *p;
	size_t total;

	ix->n_calls = n_calls;
	ix->start = calloc(n_calls + 2, sizeof(*ix->start));
	ix->list = NULL;
	if (!ix->start)
		return -ENOMEM;
	for (size_t i = 0; (p = procbind__at(pb, i)); i++)
		for (size_t k = 0, n = calls_of(p, calls); k < n; k++)
			if (calls[k] >= 1 && calls[k] <= n_calls)
				ix->start[calls[k] + 1]++;
	for (size_t c = 1; c <= n_calls + 1; c++)
		ix->start[c] += ix->start[c - 1];
	total = ix->start[n_calls + 1];
	ix->list = malloc((total ? total : 1) * sizeof(*ix->list));
	at = calloc(n_calls + 1, sizeof(*at));
	if (!ix->list || !at) {
		free(at);
		procs_by_call_fini(ix);
		return -ENOMEM;
	}
	for (size_t i = 0; (p = procbind__at(pb, i)); i++)
		for (size_t k = 0, n = calls_of(p, calls); k < n; k++)
			if (calls[k] >= 1 && calls[k] <= n_calls)
				ix->list[ix->start[calls[k]] + at[calls[k]]++] = p;
	free(at);
	return 0;
}

/* The processes of a call, in creation order, at most TREE_MAX. */
static size_t call_procs(const struct calls_view *v, size_t call, const struct pb_proc **out)
{
	const struct procs_by_call *ix = v->by_call;
	size_t n;

	if (!ix || call < 1 || call > ix->n_calls)
		return 0;
	n = ix->start[call + 1] - ix->start[call];
	n = n < TREE_MAX ? n : TREE_MAX;
	memcpy(out, ix->list + ix->start[call], n * sizeof(*out));
	return n;
}

static bool is_child(const struct pb_proc *c, const struct pb_proc *p)
{
	return c->has_parent && c->ppid == p->pid && c->ppstart == p->pstart;
}

/* --- text ------------------------------------------------------------------------------------ */

static void text_proc(struct strbuf *sb, const struct pb_proc *p, int depth)
{
	strbuf_printf(sb, "    %*s%u ", 2 * depth, "", p->pid);
	procbind_exe_text(sb, p, "(no exec)");
	strbuf_printf(sb, " %s", procbind_bind_name(p->bind));
	if (p->matched) {
		strbuf_puts(sb, " (argument \"");
		strbuf_escape(sb, (const uint8_t *)p->matched, strlen(p->matched), ESC_QUOTE);
		strbuf_puts(sb, "\")");
	}
	if (p->exited) {
		strbuf_puts(sb, ", exit ");
		event_format_exit(sb, p->exit_status);
	} else if (p->alive_at_end) {
		strbuf_puts(sb, ", still running when recording stopped");
	}
	if (p->killed_at_end)
		strbuf_puts(sb, " (killed by the collector when the linger ran out)");
	strbuf_putc(sb, '\n');
}

static void text_tree(struct strbuf *sb, const struct pb_proc **v, size_t n, size_t at, int depth)
{
	text_proc(sb, v[at], depth);
	for (size_t i = at + 1; i < n && depth < 32; i++)
		if (is_child(v[i], v[at]))
			text_tree(sb, v, n, i, depth + 1);
}

static void text_procs(struct strbuf *sb, const struct calls_view *v, size_t call)
{
	const struct pb_proc *procs[TREE_MAX];
	size_t n = call_procs(v, call, procs);
	bool root;

	if (!n)
		return;
	strbuf_puts(sb, "  processes created:\n");
	for (size_t i = 0; i < n; i++) {
		root = true;
		for (size_t j = 0; j < i && root; j++)
			root = !is_child(procs[i], procs[j]);
		if (root)
			text_tree(sb, procs, n, i, 0);
	}
}

static void text_rules(struct strbuf *sb, unsigned rules)
{
	bool first = true;

	strbuf_puts(sb, " [");
	for (int r = 0; r < ATTR_RULES; r++) {
		if (!(rules & (1u << r)))
			continue;
		strbuf_printf(sb, "%s%s", first ? "" : ",", attr_rule_name((enum attr_rule)r));
		first = false;
	}
	strbuf_putc(sb, ']');
}

static void text_effects(struct strbuf *sb, const struct callsum_sink *k)
{
	int group = -1;

	if (!k || !k->events) {
		strbuf_puts(sb, "  (no events)\n");
		return;
	}
	for (size_t i = 0; i < k->n; i++) {
		const struct callsum_entry *e = &k->v[i];

		if ((int)e->group != group) {
			group = (int)e->group;
			strbuf_printf(sb, "  %s:\n", callsum_group_name(e->group));
		}
		strbuf_printf(sb, "    %s", e->text);
		if (e->count > 1)
			strbuf_printf(sb, " x%llu", (unsigned long long)e->count);
		text_rules(sb, e->rules);
		strbuf_printf(sb, " pid %u record %llu\n", e->first_pid,
			      (unsigned long long)e->first_record);
	}
	if (k->unlisted)
		strbuf_printf(sb, "  ... %llu more events of other effects not listed\n",
			      (unsigned long long)k->unlisted);
}

static void text_window(struct strbuf *sb, const struct call *c)
{
	static const char *const how[] = {"nothing", "the response", "its cancellation + grace",
					  "its task's terminal status", "its end mark"};
	char b[32], e[32];

	trace_ts(b, sizeof(b), c->begin_ts);
	if (c->end_ts == CALL_OPEN) {
		strbuf_printf(sb, "  window: %s -> end of trace (never closed)\n", b);
		return;
	}
	trace_ts(e, sizeof(e), c->end_ts);
	strbuf_printf(sb, "  window: %s -> %s (%.3f ms, ended by %s), ", b, e,
		      (double)(c->end_ts - c->begin_ts) / 1e6, how[c->end_how]);
	if (c->incomplete & CI_BEFORE_ATTACH)
		strbuf_puts(sb,
			    "from the start of the trace: the request came before the attach\n");
	else
		strbuf_printf(sb, "request at stream offset %llu, record %llu\n",
			      (unsigned long long)c->offset, (unsigned long long)c->begin_record);
}

static void text_call(struct strbuf *sb, const struct calls_view *v, const struct call *c)
{
	char buf[32];

	strbuf_puts(sb, "== ");
	callinfo_name(sb, c);
	strbuf_puts(sb, c->dir == CHAN_OUT ? " (a request of the server to the client)" : "");
	strbuf_printf(sb, ": %s ==\n", callinfo_status(c, buf, sizeof(buf)));
	if (c->args)
		strbuf_printf(sb, "  arguments: %s (digest %s)\n", c->args, c->digest);
	if (c->result)
		strbuf_printf(sb, "  result: %s\n", c->result);
	if (c->task_id)
		strbuf_printf(sb, "  task: %s, %s\n", c->task_id,
			      c->task_status ? c->task_status : "status unknown");
	if (c->cancelled)
		strbuf_puts(sb, "  cancelled by the client (notifications/cancelled)\n");
	text_window(sb, c);
	if (c->traceparent)
		strbuf_printf(sb, "  traceparent: %s%s%s\n", c->traceparent,
			      c->tracestate ? " tracestate: " : "", c->tracestate ? c->tracestate : "");
	if (c->marked)
		strbuf_printf(sb, "  marks: call_id %s%s\n",
			      c->mark_call_id ? c->mark_call_id : "?",
			      c->mark_disagrees ? ", DISAGREES with the channel (forged or "
						  "misplaced mark)"
						: "");
	if (c->incomplete) {
		strbuf_puts(sb, "  incomplete: ");
		callinfo_incomplete(sb, c->incomplete);
		strbuf_putc(sb, '\n');
	}
	if (c->dir == CHAN_IN) {
		text_procs(sb, v, c->index);
		text_effects(sb, callsum__call(v->sum, c->index));
	}
	strbuf_putc(sb, '\n');
}

static void text_head(struct strbuf *sb, const struct calls_view *v)
{
	const struct call_session *s = callset__session(callmodel__calls(v->cm));
	char msg[REPLAY_MESSAGE_MAX];

	strbuf_printf(sb, "verification: %s",
		      v->verified ? mcpt_report_verdict_name(v->rep)
				  : "NOT VERIFIED (--no-verify)");
	if (v->rep->message[0])
		strbuf_printf(sb, ": %s", replay_message(v->rep, msg));
	strbuf_puts(sb, "\ntrace: ");
	if (v->hdr)
		trace_hex(sb, &v->hdr->trace_id);
	strbuf_putc(sb, '\n');
	identity_text(sb, v->hdr, callmodel__calls(v->cm), "");
	strbuf_printf(sb, "protocol: %s%s%s%s%s\n", s->protocol ? s->protocol : "unknown",
		      !s->protocol && v->hdr && v->hdr->target && v->hdr->target->attached
			      ? " (no handshake since the attach)"
			      : "",
		      s->initialize_seen ? " (initialize handshake)" : "",
		      s->per_request_meta ? " (version in _meta of requests)" : "",
		      s->discover_seen ? " (server/discover)" : "");
	if (!callmodel__channel_captured(v->cm))
		strbuf_puts(sb,
			    "channel: not captured (--stdio off): calls come from marks only\n");
	strbuf_printf(sb, "calls: %zu; events: %llu; channel notes: %llu\n\n",
		      callset__count(callmodel__calls(v->cm)), (unsigned long long)v->events,
		      (unsigned long long)callset__notes_total(callmodel__calls(v->cm)));
}

static int report_calls_text_of(FILE *out, const struct calls_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	struct callset *cs = callmodel__calls(v->cm);
	const struct call_note *n;
	const struct call *c;
	int err;

	text_head(&sb, v);
	strbuf_puts(&sb, callmodel__attached(v->cm)
				 ? "== startup (none: the server was attached to, its start not "
				   "recorded) ==\n"
				 : "== startup (before the first request) ==\n");
	text_effects(&sb, callsum__bucket(v->sum, BUCKET_STARTUP));
	strbuf_putc(&sb, '\n');
	for (size_t i = 1; (c = callset__get(cs, i)); i++)
		text_call(&sb, v, c);
	strbuf_puts(&sb, "== ambient (between calls) ==\n");
	text_effects(&sb, callsum__bucket(v->sum, BUCKET_AMBIENT));
	strbuf_puts(&sb, "\n== shutdown (after the shutdown mark, the end of stdin or the server's exit) ==\n");
	text_effects(&sb, callsum__bucket(v->sum, BUCKET_SHUTDOWN));
	if (outlived_count(v->cm)) {
		const char *when = outlived_server_gone(v->cm)
					   ? "after the server exited"
					   : "when recording stopped, with the server";

		strbuf_printf(&sb, "\n== still running %s (%s) ==\n", when,
			      outlived_all_killed(v->cm)
				      ? "killed by the collector when the linger ran out"
				      : "not recorded after the end of the trace");
		outlived_text(&sb, v->cm, "  ");
	}
	if (callset__notes_total(cs))
		strbuf_puts(&sb, "\nchannel notes:\n");
	for (size_t i = 0; (n = callset__note_at(cs, i)); i++)
		strbuf_printf(&sb, "  %s\n", n->text);
	if (callset__notes_total(cs) > callset__n_notes(cs))
		strbuf_printf(
			&sb, "  ... and %llu more\n",
			(unsigned long long)(callset__notes_total(cs) - callset__n_notes(cs)));
	err = strbuf_error(&sb);
	if (!err && fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = -EIO;
	strbuf_fini(&sb);
	return err;
}

/* --- JSON ------------------------------------------------------------------------------------ */

/* The calls' processes and effects are written member by member (jsonw_int and the others):
 * a call's report was a jansson tree of them, built with json_pack and freed after one use,
 * most of the time of `calls --json`. The bytes are those of that tree (unit.outputs_pinned). */
static void proc_write(struct jsonw *w, const struct pb_proc *p)
{
	struct ev_bytes all = {p->argv, p->argv_len}, a;
	size_t pos = 0;

	jsonw_open(w, NULL, '{');
	jsonw_int(w, "pid", p->pid);
	jsonw_u64(w, "pstart", p->pstart);
	if (p->has_parent)
		jsonw_int(w, "parent", p->ppid);
	else
		jsonw_null(w, "parent");
	if (p->exe_len)
		jsonw_bytes(w, "exe", p->exe, p->exe_len);
	else
		jsonw_null(w, "exe");
	jsonw_open(w, "argv", '[');
	while (event_argv_next(&all, &pos, &a))
		jsonw_bytes(w, NULL, a.p, a.n);
	jsonw_close(w);
	jsonw_str(w, "binding", procbind_bind_name(p->bind));
	if (p->matched)
		jsonw_bytes(w, "matched", (const uint8_t *)p->matched, strlen(p->matched));
	else
		jsonw_null(w, "matched");
	if (p->exited) {
		char buf[16];
		const char *sig = event_exit_signal(p->exit_status, buf, sizeof(buf));

		jsonw_int(w, "exit_status", p->exit_status); /* the wait status, raw */
		if (sig)
			jsonw_null(w, "exit_code");
		else
			jsonw_int(w, "exit_code", event_exit_code(p->exit_status));
		jsonw_str(w, "exit_signal", sig);
	} else {
		jsonw_null(w, "exit_status");
		jsonw_null(w, "exit_code");
		jsonw_null(w, "exit_signal");
	}
	jsonw_bool(w, "still_running", !p->exited && p->alive_at_end);
	jsonw_bool(w, "killed", p->killed_at_end); /* by the collector after the linger */
	jsonw_close(w);
}

static void procs_write(struct jsonw *w, const struct calls_view *v, size_t call)
{
	const struct pb_proc *procs[TREE_MAX];
	size_t n = call_procs(v, call, procs);

	jsonw_open(w, "processes", '[');
	for (size_t i = 0; i < n; i++)
		proc_write(w, procs[i]);
	jsonw_close(w);
}

/* The effects of a call or a bucket, by group: each group's array holds its entries in the
 * order the sink has them. */
static void effects_write(struct jsonw *w, const char *key, const struct callsum_sink *k)
{
	jsonw_open(w, key, '{');
	for (int g = 0; g < CS_GROUPS; g++) {
		jsonw_open(w, callsum_group_name((enum callsum_group)g), '[');
		for (size_t i = 0; k && i < k->n; i++) {
			const struct callsum_entry *e = &k->v[i];

			if (e->group != (enum callsum_group)g)
				continue;
			jsonw_open(w, NULL, '{');
			jsonw_str(w, "effect", e->text);
			jsonw_u64(w, "count", e->count);
			jsonw_u64(w, "first_record", e->first_record);
			jsonw_int(w, "first_pid", e->first_pid);
			jsonw_open(w, "rules", '[');
			for (int r = 0; r < ATTR_RULES; r++)
				if (e->rules & (1u << r))
					jsonw_str(w, NULL, attr_rule_name((enum attr_rule)r));
			jsonw_close(w);
			jsonw_close(w);
		}
		jsonw_close(w);
	}
	jsonw_u64(w, "events", k ? k->events : 0);
	jsonw_u64(w, "unlisted", k ? k->unlisted : 0);
	jsonw_close(w);
}

/* One call with its processes and effects (a request's): the call's own members as reports
 * write them (callinfo_call_write), then the rest. */
static void call_write(struct jsonw *w, const struct calls_view *v, const struct call *c)
{
	jsonw_open(w, NULL, '{');
	callinfo_call_write(w, c);
	if (c->dir == CHAN_IN) {
		procs_write(w, v, c->index);
		effects_write(w, "effects", callsum__call(v->sum, c->index));
	}
	jsonw_close(w);
}

static json_t *session_json(const struct calls_view *v)
{
	const struct call_session *s = callset__session(callmodel__calls(v->cm));

	return json_pack("{s:o,s:b,s:b,s:b,s:o,s:b}", "protocol",
			 s->protocol ? json_bytes((const uint8_t *)s->protocol, strlen(s->protocol))
				     : json_null(),
			 "initialize", s->initialize_seen, "meta_version", s->per_request_meta,
			 "discover", s->discover_seen, "batches", json_u64(s->batches),
			 "channel_captured", callmodel__channel_captured(v->cm));
}

/* Written member by member (jsonw.h): the calls one at a time. */
static int report_calls_json_of(FILE *out, const struct calls_view *v)
{
	struct callset *cs = callmodel__calls(v->cm);
	struct strbuf sb = STRBUF_INIT;
	const struct call *c;
	struct jsonw w;

	if (v->hdr)
		trace_hex(&sb, &v->hdr->trace_id);
	jsonw_init(&w, out);
	jsonw_open(&w, NULL, '{');
	jsonw_put(&w, "trace",
		  json_pack("{s:o,s:s,s:b}", "id",
			    v->hdr ? json_string(strbuf_str(&sb) ?: "") : json_null(), "verdict",
			    v->verified ? mcpt_report_verdict_name(v->rep)
					: "NOT VERIFIED (--no-verify)",
			    "signatures_checked", v->verified));
	strbuf_fini(&sb);
	jsonw_put(&w, "identity", identity_json(v->hdr, cs));
	jsonw_put(&w, "session", session_json(v));
	jsonw_put(&w, "events", json_u64(v->events));
	effects_write(&w, "startup", callsum__bucket(v->sum, BUCKET_STARTUP));
	jsonw_open(&w, "calls", '[');
	for (size_t i = 1; !w.err && (c = callset__get(cs, i)); i++)
		call_write(&w, v, c);
	jsonw_close(&w);
	effects_write(&w, "ambient", callsum__bucket(v->sum, BUCKET_AMBIENT));
	effects_write(&w, "shutdown", callsum__bucket(v->sum, BUCKET_SHUTDOWN));
	jsonw_put(&w, "still_running", outlived_json(v->cm));
	jsonw_put(&w, "server_still_running", json_boolean(!outlived_server_gone(v->cm)));
	jsonw_put(&w, "channel_notes", callinfo_notes_json(cs));
	jsonw_put(&w, "channel_notes_total", json_u64(callset__notes_total(cs)));
	jsonw_close(&w);
	return jsonw_finish(&w);
}

/* The view with the processes of each call indexed, handed to a report. */
static int with_index(FILE *out, const struct calls_view *v,
		      int (*report)(FILE *out, const struct calls_view *v))
{
	struct calls_view indexed = *v;
	struct procs_by_call ix;
	int err = procs_by_call_init(&ix, callmodel__procs(v->cm),
				     callset__count(callmodel__calls(v->cm)));

	if (err)
		return err;
	indexed.by_call = &ix;
	err = report(out, &indexed);
	procs_by_call_fini(&ix);
	return err;
}

int report_calls_text(FILE *out, const struct calls_view *v)
{
	return with_index(out, v, report_calls_text_of);
}

int report_calls_json(FILE *out, const struct calls_view *v)
{
	return with_index(out, v, report_calls_json_of);
}
