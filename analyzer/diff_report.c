/*
 * diff_report.c - the text and JSON reports of `mcpwitness diff` (see diff.h). Every string
 * from the traces is already escaped text (learn_read.c), so both are printable.
 *
 * Text: the traces, then per scope "+ category item  (where first seen)" for what is new and
 * "- category item  (baseline where)" for what is gone, the sequence drifts with "!", the
 * tools not called, a summary line.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "diff.h"
#include "learn_emit.h"
#include "traceinfo.h"

static void trace_line(struct strbuf *sb, const char *label, const struct obs_trace *t)
{
	strbuf_printf(sb, "%s trace %s, %s, %zu calls, %llu events\n", label, t->id, obs_verdict(t),
		      callset__count(callmodel__calls(t->cm)), (unsigned long long)t->events);
}

static void scope_head(struct strbuf *sb, const struct dscope *s)
{
	strbuf_puts(sb, ls_kind_name(s->kind));
	if (s->name)
		strbuf_printf(sb, " \"%s\"", s->name);
	if (s->kind == LS_TOOL || s->kind == LS_METHOD)
		strbuf_printf(sb, " (%llu call%s; baseline %llu)", (unsigned long long)s->calls,
			      s->calls == 1 ? "" : "s", (unsigned long long)s->base_calls);
	strbuf_puts(sb, ":\n");
}

static void text_scopes(struct strbuf *sb, const struct diff *d)
{
	for (size_t i = 0; i < d->n_scopes; i++) {
		const struct dscope *s = &d->scopes[i];

		if (!s->n)
			continue;
		scope_head(sb, s);
		for (int gone = 0; gone < 2; gone++)
			for (size_t k = 0; k < s->n; k++) {
				const struct dentry *e = &s->e[k];

				if (e->gone != (gone != 0))
					continue;
				strbuf_printf(sb, "  %c %-9s ", gone ? '-' : '+',
					      diff_category(e->it->kind));
				diff_item_text(sb, e->it);
				strbuf_printf(sb, "  (%s", gone ? "baseline " : "");
				learn_prov(sb, e->it, gone);
				strbuf_puts(sb, ")\n");
			}
	}
}

static const char *seq_why(const struct dseq *q)
{
	return q->secret && q->sent ? "reads a secret and sends data"
	       : q->secret	    ? "reads a secret"
				    : "sends data";
}

int diff_report_text(FILE *out, const struct diff *d, const struct diff_input *in)
{
	struct strbuf sb = STRBUF_INIT;
	int err = 0;

	for (size_t i = 0; i < in->n_base; i++)
		trace_line(&sb, i ? "         " : "baseline:", &in->base[i]);
	trace_line(&sb, "this:    ", in->trace);
	strbuf_putc(&sb, '\n');
	text_scopes(&sb, d);
	for (size_t i = 0; i < d->n_seq; i++) {
		const struct dseq *q = &d->seq[i];

		strbuf_printf(&sb,
			      "sequence drift: %s -> %s (calls %zu -> %zu) never seen in the "
			      "baseline, and %s %s\n  sequence: %s\n",
			      q->edge->f1, q->edge->f2, q->edge->call2, q->edge->call, q->to_tool,
			      seq_why(q), q->sequence);
	}
	for (size_t i = 0; i < d->n_not_called; i++)
		strbuf_printf(&sb, "not called in this trace: %s \"%s\" (baseline %llu calls)\n",
			      ls_kind_name(d->not_called[i]->kind), d->not_called[i]->name,
			      (unsigned long long)d->not_called[i]->calls);
	strbuf_printf(&sb, "%zu new, %zu gone, %zu sequence drift%s\n", d->n_new, d->n_gone,
		      d->n_seq, d->n_seq == 1 ? "" : "s");
	if (strbuf_error(&sb))
		err = -ENOMEM;
	else if (fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = -EIO;
	strbuf_fini(&sb);
	return err;
}

/* --- JSON --------------------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *trace_json(const struct obs_trace *t)
{
	return json_pack("{s:s,s:s,s:I,s:o}", "trace_id", t->id, "verdict", obs_verdict(t), "calls",
			 (json_int_t)callset__count(callmodel__calls(t->cm)), "events",
			 json_u64(t->events));
}

/* An item; where it was first seen names the trace by its id. */
static json_t *item_json(const struct litem *it, const struct diff_input *in, bool gone)
{
	const struct obs_trace *t = gone && it->trace >= 1 && it->trace <= in->n_base
					    ? &in->base[it->trace - 1]
					    : in->trace;
	struct strbuf sb = STRBUF_INIT;
	json_t *o;

	diff_item_text(&sb, it);
	o = json_pack("{s:s,s:s,s:s%,s:s,s:s,s:{s:s,s:I,s:o,s:o,s:s},s:o,s:b}", "category",
		      diff_category(it->kind), "kind", lk_kind_name(it->kind), "text", sb.buf,
		      sb.len, "f1", it->f1, "f2", it->f2, "first", "trace", t->id, "call",
		      (json_int_t)it->call, "request_id", str_or_null(it->call_id), "record",
		      json_u64(it->record), "example", it->example ?: "", "count",
		      json_u64(it->count), "unproven", it->unproven);
	strbuf_fini(&sb);
	return o;
}

static json_t *scope_json(const struct dscope *s, const struct diff_input *in)
{
	json_t *o = json_pack("{s:s,s:o,s:I,s:I,s:[],s:[]}", "scope", ls_kind_name(s->kind), "name",
			      str_or_null(s->name), "calls", (json_int_t)s->calls, "baseline_calls",
			      (json_int_t)s->base_calls, "new", "gone");

	for (size_t i = 0; o && i < s->n; i++) {
		json_t *arr = json_object_get(o, s->e[i].gone ? "gone" : "new");

		if (json_array_append_new(arr, item_json(s->e[i].it, in, s->e[i].gone))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *seq_json(const struct dseq *q)
{
	return json_pack("{s:s,s:s,s:I,s:I,s:b,s:b,s:s}", "from", q->edge->f1, "to", q->edge->f2,
			 "from_call", (json_int_t)q->edge->call2, "to_call",
			 (json_int_t)q->edge->call, "reads_secret", q->secret, "sends_data",
			 q->sent, "sequence", q->sequence);
}

static int fill(json_t *doc, const struct diff *d, const struct diff_input *in)
{
	json_t *base = json_object_get(doc, "baseline"), *sc = json_object_get(doc, "scopes"),
	       *seq = json_object_get(doc, "sequence_drift"),
	       *nc = json_object_get(doc, "not_called");
	int err = 0;

	for (size_t i = 0; i < in->n_base && !err; i++)
		err = json_array_append_new(base, trace_json(&in->base[i]));
	for (size_t i = 0; i < d->n_scopes && !err; i++)
		if (d->scopes[i].n)
			err = json_array_append_new(sc, scope_json(&d->scopes[i], in));
	for (size_t i = 0; i < d->n_seq && !err; i++)
		err = json_array_append_new(seq, seq_json(&d->seq[i]));
	for (size_t i = 0; i < d->n_not_called && !err; i++)
		err = json_array_append_new(nc, json_pack("{s:s,s:s,s:I}", "scope",
							  ls_kind_name(d->not_called[i]->kind),
							  "name", d->not_called[i]->name, "calls",
							  (json_int_t)d->not_called[i]->calls));
	return err ? -ENOMEM : 0;
}

int diff_report_json(FILE *out, const struct diff *d, const struct diff_input *in)
{
	json_t *doc = json_pack("{s:[],s:o,s:[],s:[],s:[],s:{s:I,s:I,s:I}}", "baseline", "trace",
				trace_json(in->trace), "scopes", "sequence_drift", "not_called",
				"summary", "new", (json_int_t)d->n_new, "gone",
				(json_int_t)d->n_gone, "sequence_drift", (json_int_t)d->n_seq);
	int err = doc ? fill(doc, d, in) : -ENOMEM;

	if (!err && (json_dumpf(doc, out, JSON_INDENT(2)) || fputc('\n', out) == EOF))
		err = -EIO;
	json_decref(doc);
	return err;
}
