/*
 * report_html.c - the analysis report as one self-contained HTML page: the verdict on top,
 * who and what (the identity block of every report: client, server with its command line,
 * executable and digest, user, host), what was analyzed (trace, digest, server process,
 * policies, analyzer), the counts by severity and the coverage, then the timeline: the startup
 * bucket, every call in the order its request was read (method, tool, arguments, W3C
 * traceparent, status, duration) with its effects (what its processes did:
 * files, network, processes, from callsum) and the findings attributed to it, then the ambient
 * and shutdown buckets; then every finding in a table, and the channel notes.
 *
 * The trace is hostile input: every string that comes from it (and from the command line or
 * the policy) goes through html_text, which HTML-escapes text that strbuf_escape already made
 * printable. The page has no script and loads nothing: inline CSS only, and a
 * Content-Security-Policy that forbids scripts and every fetch, so even a missed escape could
 * not run code or reach the network. Deterministic: no clock, no environment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "callsum.h"
#include "identity.h"
#include "outlived.h"
#include "strbuf.h"
#include "traceinfo.h"

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em;"
	"color:#1d1d1f;background:#fff}"
	"h1{font-size:1.5em;margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #ccc}"
	"code,.mono{font-family:ui-monospace,monospace;font-size:.92em;word-break:break-all}"
	".verdict{padding:.5em .8em;border-radius:4px;font-weight:600}"
	".ok{background:#e3f4e1}.bad{background:#fbe0e0}.warn{background:#fff4d6;padding:.3em .6em}"
	"dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}"
	"dl.meta dt{font-weight:600}dl.meta dd{margin:0}"
	"ol.timeline{list-style:none;padding:0}"
	".block{border-left:6px solid #bbb;margin:.8em 0;padding:.3em .8em;background:#fafafa}"
	".block h3{font-size:1.05em;margin:.2em 0}.when{color:#666;font-weight:400}"
	".sev{display:inline-block;min-width:4.5em;text-align:center;border-radius:3px;"
	"font-size:.85em;font-weight:600;color:#fff}"
	".s-critical{background:#8b0000;border-color:#8b0000}.s-high{background:#d1421b;"
	"border-color:#d1421b}.s-medium{background:#c98a00;border-color:#c98a00}"
	".s-low{background:#3b73b9;border-color:#3b73b9}.s-info{background:#777;border-color:#777}"
	".block.s-critical,.block.s-high,.block.s-medium,.block.s-low,.block.s-info"
	"{background:#fafafa}"
	"ul.effects,ul.findings{margin:.3em 0;padding-left:1.2em}"
	"ul.findings li{margin:.3em 0}.detail{color:#444;font-size:.92em}"
	"table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.25em .4em;"
	"vertical-align:top;text-align:left}";

/* Text that is already printable and valid UTF-8 (escaped when it was read), made safe for
 * HTML element content and double-quoted attribute values. */
static void html_text_n(struct strbuf *sb, const char *s, const char *end)
{
	static const char *const entity[256] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
	};

	for (; s && s < end && *s; s++) {
		const char *e = entity[(unsigned char)*s];

		if (e)
			strbuf_puts(sb, e);
		else
			strbuf_putc(sb, *s);
	}
}

static void html_text(struct strbuf *sb, const char *s)
{
	html_text_n(sb, s, s ? s + strlen(s) : NULL);
}

/* Raw bytes (header fields, file names): escaped to printable text first, then for HTML. */
static void html_bytes(struct strbuf *sb, const uint8_t *p, size_t n)
{
	struct strbuf t = STRBUF_INIT;

	strbuf_escape(&t, p, n, 0);
	html_text(sb, strbuf_str(&t) ?: "?");
	strbuf_fini(&t);
}

static void html_tag_text(struct strbuf *sb, const char *open, const char *s, const char *close)
{
	strbuf_puts(sb, open);
	html_text(sb, s);
	strbuf_puts(sb, close);
}

static const char *sev_class(enum severity s)
{
	static const char *const names[SEV_COUNT] = {"s-info", "s-low", "s-medium", "s-high",
						     "s-critical"};

	return s < SEV_COUNT ? names[s] : "s-info";
}

static struct callset *calls_of(const struct analysis *a)
{
	return a->cm ? callmodel__calls(a->cm) : NULL;
}

/* --- the head: verdict, what was analyzed, counts, coverage -------------------------------- */

static void head_verdict(struct strbuf *sb, const struct analysis *a)
{
	struct verdict_view v;
	bool ok;

	analysis_verdict_view(a, &v);
	ok = a->verified && a->rep->verdict == MCPT_VALID_COMPLETE;
	strbuf_printf(sb,
		      "<p class=\"verdict %s\" id=\"verdict\">verification: ", ok ? "ok" : "bad");
	html_text(sb, v.verdict);
	if (v.message[0])
		html_tag_text(sb, ": ", v.message, "");
	if (v.released_verified_only)
		strbuf_printf(sb,
			      "; only records whose seal verified were analyzed, %llu not released",
			      (unsigned long long)v.not_released);
	strbuf_puts(sb, "</p>\n");
}

static void meta_trace(struct strbuf *sb, const struct analysis *a)
{
	strbuf_puts(sb, "<dt>trace</dt><dd class=\"mono\">");
	if (a->hdr)
		trace_hex(sb, &a->hdr->trace_id);
	else
		strbuf_puts(sb, "(no header)");
	strbuf_puts(sb, "</dd>\n<dt>file</dt><dd class=\"mono\">");
	html_bytes(sb, (const uint8_t *)a->o->trace, strlen(a->o->trace));
	if (a->has_file_digest) {
		strbuf_printf(sb, ", %llu bytes, blake2b-256:", (unsigned long long)a->file_length);
		strbuf_hex(sb, a->file_digest, sizeof(a->file_digest));
	}
	strbuf_puts(sb, "</dd>\n");
}

/* The identity block as the text report has it (identity_text: one "key: value" line each,
 * already escaped to printable text), one dt/dd pair a line, each dd with id identity-KEY. */
static void head_identity(struct strbuf *sb, const struct analysis *a)
{
	struct strbuf t = STRBUF_INIT;
	const char *line, *nl, *colon, *value;

	identity_text(&t, a->hdr, calls_of(a), "");
	strbuf_puts(sb, "<dl class=\"meta\" id=\"identity\">\n");
	for (line = strbuf_str(&t) ?: ""; (nl = strchr(line, '\n')); line = nl + 1) {
		/* the keys are identity_text's own words (client, server, user, host), never
		 * trace text, and end at the line's first colon */
		colon = memchr(line, ':', (size_t)(nl - line));
		if (!colon)
			continue;
		value = colon + 1 < nl ? colon + 2 : nl; /* "host:" when nothing is known */
		strbuf_printf(sb, "<dt>%.*s</dt><dd class=\"mono\" id=\"identity-%.*s\">",
			      (int)(colon - line), line, (int)(colon - line), line);
		html_text_n(sb, value, nl);
		strbuf_puts(sb, "</dd>\n");
	}
	strbuf_puts(sb, "</dl>\n");
	strbuf_fini(&t);
}

static void meta_server(struct strbuf *sb, const struct analysis *a)
{
	const Mcpt__Target *t = a->hdr ? a->hdr->target : NULL;

	if (!t)
		return;
	strbuf_printf(sb, "<dt>process</dt><dd class=\"mono\">pid %u</dd>\n", t->pid);
	strbuf_puts(sb, "<dt>workspace</dt><dd class=\"mono\">");
	html_bytes(sb, t->cwd.data, t->cwd.len);
	strbuf_puts(sb, "</dd>\n");
}

static void head_meta(struct strbuf *sb, const struct analysis *a)
{
	strbuf_puts(sb, "<dl class=\"meta\">\n");
	meta_trace(sb, a);
	meta_server(sb, a);
	for (size_t i = 0; i < a->pol->n_files; i++) {
		const struct pol_file *f = &a->pol->files[i];

		strbuf_puts(sb, "<dt>policy</dt><dd class=\"mono\">");
		html_bytes(sb, (const uint8_t *)f->path, strlen(f->path));
		strbuf_puts(sb, " blake2b-256:");
		strbuf_hex(sb, f->digest, sizeof(f->digest));
		strbuf_puts(sb, "</dd>\n");
	}
	strbuf_printf(sb, "<dt>analyzer</dt><dd>mcpwitness %s</dd>\n", MW_VERSION);
	strbuf_printf(
		sb, "<dt>replayed</dt><dd>%llu events, %zu processes, %llu records, %zu calls",
		(unsigned long long)a->st->events, a->processes,
		(unsigned long long)a->rep->records, calls_of(a) ? callset__count(calls_of(a)) : 0);
	if (a->malformed)
		strbuf_printf(sb, ", %llu malformed", (unsigned long long)a->malformed);
	strbuf_puts(sb, "</dd>\n</dl>\n");
}

/* The processes still running after the server exited (outlived.h), one line each. */
static void head_outlived(struct strbuf *sb, const struct analysis *a)
{
	struct strbuf t = STRBUF_INIT;
	const char *line, *nl;

	if (!a->cm || !outlived_server_gone(a->cm) || !outlived_count(a->cm))
		return;
	outlived_text(&t, a->cm, "");
	strbuf_printf(sb, "<p id=\"outlived\" class=\"warn\">%s:</p>\n", outlived_heading(a->cm));
	strbuf_puts(sb, "<ul class=\"mono\">\n");
	for (line = strbuf_str(&t) ?: ""; (nl = strchr(line, '\n')); line = nl + 1) {
		strbuf_puts(sb, "<li>");
		html_text_n(sb, line, nl);
		strbuf_puts(sb, "</li>\n");
	}
	strbuf_puts(sb, "</ul>\n");
	strbuf_fini(&t);
}

static void head_counts(struct strbuf *sb, const struct analysis *a)
{
	const struct findings *fs = a->fs;

	strbuf_printf(sb, "<p id=\"summary\"><b>%llu finding%s:</b>", (unsigned long long)fs->total,
		      fs->total == 1 ? "" : "s");
	for (int s = SEV_COUNT - 1; s >= 0; s--)
		strbuf_printf(sb, " <span class=\"sev %s\">%llu %s</span>", sev_class(s),
			      (unsigned long long)fs->by_sev[s], severity_name((enum severity)s));
	if (fs->dropped)
		strbuf_printf(sb, " (%llu not listed: more than %zu for one rule)",
			      (unsigned long long)fs->dropped, fs->max_per_rule);
	strbuf_puts(sb, "</p>\n");
	if (analysis_coverage_complete(a)) {
		strbuf_puts(sb, "<p id=\"coverage\">coverage: complete (no events lost)</p>\n");
	} else {
		const char *gap = analysis_trace_gap(a);

		strbuf_printf(sb, "<p id=\"coverage\" class=\"warn\">coverage: INCOMPLETE: %s%s",
			      gap ?: "", gap && a->loss_records ? "; " : "");
		if (a->loss_records)
			strbuf_printf(sb,
				      "%llu events lost in %llu loss records; the calls whose "
				      "window saw a loss say so below",
				      (unsigned long long)a->st->events_lost,
				      (unsigned long long)a->loss_records);
		strbuf_puts(sb, "</p>\n");
	}
	head_outlived(sb, a);
}

/* --- findings ------------------------------------------------------------------------------ */

static void finding_evidence(struct strbuf *sb, const struct finding *f)
{
	char buf[40];

	strbuf_printf(sb, "<div class=\"detail\">%s %s", f->op,
		      finding_result(f, buf, sizeof(buf)));
	if (f->path)
		html_tag_text(sb, " path <code>", f->path, "</code>");
	if (f->path_arg && (!f->path || strcmp(f->path, f->path_arg)))
		html_tag_text(sb, " (as passed <code>", f->path_arg, "</code>)");
	if (f->opened_path && (!f->path || strcmp(f->path, f->opened_path)))
		html_tag_text(sb, " opened <code>", f->opened_path, "</code>");
	if (f->addr)
		html_tag_text(sb, " addr <code>", f->addr, "</code>");
	if (f->dns)
		html_tag_text(sb, " dns <code>", f->dns, "</code>");
	if (f->attempted)
		strbuf_printf(sb, "; %u failed attempts (PATH search)", f->attempts);
	strbuf_puts(sb, "</div>\n");
}

static void finding_process(struct strbuf *sb, const struct finding *f)
{
	strbuf_printf(sb, "<div class=\"detail\">process %u/%u uid %u <code>", f->pid, f->tid,
		      f->uid);
	html_text(sb, f->exe ? f->exe : "?");
	for (size_t i = 0; i < f->argc; i++)
		html_tag_text(sb, i ? " " : "</code> [<code>", f->argv[i], "");
	strbuf_puts(sb, f->argc ? "</code>]" : "</code>");
	strbuf_puts(sb, "; lineage");
	for (size_t i = 0; i < f->n_lineage; i++) {
		strbuf_printf(sb, "%s %u ", i ? " &lt;" : "", f->lineage[i].pid);
		html_text(sb, f->lineage[i].exe ? f->lineage[i].exe : "?");
	}
	strbuf_puts(sb, f->lineage_truncated ? " &lt; ?</div>\n" : " (server)</div>\n");
}

static void finding_item(struct strbuf *sb, const struct analysis *a, const struct finding *f)
{
	const struct pol_rule *r = f->rule;
	struct strbuf at = STRBUF_INIT;
	char ts[32], wall[48];

	strbuf_printf(sb, "<li class=\"finding\"><span class=\"sev %s\">%s</span> <b>",
		      sev_class(r->severity), severity_name(r->severity));
	html_text(sb, r->id);
	html_tag_text(sb, "</b>: ", f->message, "");
	if (f->unproven)
		strbuf_puts(sb, " <i>[unproven: after the last verified seal]</i>");
	finding_evidence(sb, f);
	finding_process(sb, f);
	if (f->has_attr && a->cm)
		callinfo_attr(&at, callmodel__calls(a->cm), &f->attr, f->matched);
	trace_ts(ts, sizeof(ts), f->ts);
	strbuf_printf(sb, "<div class=\"detail\">at %s", ts);
	if (trace_wallclock(a->hdr, f->ts, wall, sizeof(wall)))
		strbuf_printf(sb, " (%s)", wall);
	strbuf_printf(sb, ", record %llu", (unsigned long long)f->index);
	if (at.len)
		html_tag_text(sb, "; attributed to ", strbuf_str(&at), "");
	strbuf_puts(sb, "</div></li>\n");
	strbuf_fini(&at);
}

/* --- the timeline ---------------------------------------------------------------------------- */

/* Which findings belong to which block: slots 0..n-1 are the calls, then the three buckets,
 * then "not attributed" (no call model). An ambiguous finding is in each candidate's slot. */
struct slots {
	size_t n_calls, n_slots;
	size_t *start; /* n_slots + 1 offsets into idx */
	size_t *idx;   /* finding indices, in report order within a slot */
};

static size_t slot_targets(const struct slots *sl, const struct finding *f, size_t out[])
{
	const struct attribution *at = &f->attr;
	size_t n = 0;

	if (!f->has_attr)
		out[n++] = sl->n_slots - 1;
	else if (at->rule == ATTR_BUCKET)
		out[n++] = sl->n_calls + (at->bucket ? at->bucket - 1 : BUCKET_AMBIENT - 1);
	else if (at->rule == ATTR_AMBIGUOUS)
		for (size_t i = 0; i < at->n_cand; i++)
			out[n++] = at->cand[i] - 1;
	else
		out[n++] = at->call - 1;
	if (!n) /* ambiguous with no candidate kept: shown apart rather than lost */
		out[n++] = sl->n_slots - 1;
	for (size_t i = 0; i < n; i++)
		if (out[i] >= sl->n_slots)
			out[i] = sl->n_slots - 1;
	return n;
}

static int slots_build(struct slots *sl, const struct analysis *a)
{
	size_t t[ATTR_CANDIDATES_MAX + 1] = {0}, total = 0, *fill;

	sl->n_calls = calls_of(a) ? callset__count(calls_of(a)) : 0;
	sl->n_slots = sl->n_calls + BUCKETS; /* 3 buckets + not attributed */
	sl->start = calloc(sl->n_slots + 1, sizeof(*sl->start));
	fill = calloc(sl->n_slots, sizeof(*fill));
	if (!sl->start || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->fs->n; i++)
		for (size_t k = slot_targets(sl, &a->fs->v[i], t); k-- > 0;)
			sl->start[t[k] + 1]++;
	for (size_t s = 0; s < sl->n_slots; s++)
		sl->start[s + 1] += sl->start[s];
	total = sl->start[sl->n_slots];
	sl->idx = calloc(total ? total : 1, sizeof(*sl->idx));
	for (size_t i = 0; sl->idx && i < a->fs->n; i++) {
		size_t k = slot_targets(sl, &a->fs->v[i], t);

		for (size_t j = 0; j < k; j++)
			sl->idx[sl->start[t[j]] + fill[t[j]]++] = i;
	}
	free(fill);
	return sl->idx ? 0 : -ENOMEM;
}

static void slots_fini(struct slots *sl)
{
	free(sl->start);
	free(sl->idx);
}

/* The most severe finding of a slot, -1 for none. */
static int slot_severity(const struct slots *sl, const struct analysis *a, size_t s)
{
	int max = -1;

	for (size_t k = sl->start[s]; k < sl->start[s + 1]; k++)
		if ((int)a->fs->v[sl->idx[k]].rule->severity > max)
			max = (int)a->fs->v[sl->idx[k]].rule->severity;
	return max;
}

static void block_effects(struct strbuf *sb, const struct callsum_sink *k)
{
	if (!k || !k->n) {
		strbuf_puts(sb, "<div class=\"detail\">effects: none recorded</div>\n");
		return;
	}
	strbuf_printf(sb,
		      "<details><summary>effects: %llu events</summary><ul class=\"effects\">\n",
		      (unsigned long long)k->events);
	for (size_t i = 0; i < k->n; i++) {
		const struct callsum_entry *e = &k->v[i];

		strbuf_printf(sb, "<li>%s: <code>", callsum_group_name(e->group));
		html_text(sb, e->text);
		strbuf_printf(sb, "</code> &times;%llu (record %llu", (unsigned long long)e->count,
			      (unsigned long long)e->first_record);
		for (int r = 0; r < ATTR_RULES; r++)
			if (e->rules & (1u << r))
				strbuf_printf(sb, ", %s", attr_rule_name(r));
		strbuf_puts(sb, ")</li>\n");
	}
	if (k->unlisted)
		strbuf_printf(sb, "<li>%llu more events not listed</li>\n",
			      (unsigned long long)k->unlisted);
	strbuf_puts(sb, "</ul></details>\n");
}

static void block_findings(struct strbuf *sb, const struct analysis *a, const struct slots *sl,
			   size_t s)
{
	if (sl->start[s] == sl->start[s + 1])
		return;
	strbuf_puts(sb, "<ul class=\"findings\">\n");
	for (size_t k = sl->start[s]; k < sl->start[s + 1]; k++)
		finding_item(sb, a, &a->fs->v[sl->idx[k]]);
	strbuf_puts(sb, "</ul>\n");
}

static void block_open(struct strbuf *sb, const char *id, int sev)
{
	strbuf_printf(sb, "<li class=\"block %s\" id=\"%s\">\n", sev >= 0 ? sev_class(sev) : "",
		      id);
}

static void call_head(struct strbuf *sb, const struct analysis *a, const struct call *c)
{
	struct strbuf name = STRBUF_INIT, inc = STRBUF_INIT;
	char ts[32], wall[48], buf[32];

	callinfo_name(&name, c);
	trace_ts(ts, sizeof(ts), c->begin_ts);
	html_tag_text(sb, "<h3>", strbuf_str(&name), " <span class=\"when\">");
	if (trace_wallclock(a->hdr, c->begin_ts, wall, sizeof(wall)))
		strbuf_printf(sb, "%s", wall);
	else
		strbuf_printf(sb, "at %s", ts);
	html_tag_text(sb, ", ", callinfo_status(c, buf, sizeof(buf)), "");
	if (c->end_ts != CALL_OPEN)
		strbuf_printf(sb, ", %.3f ms", (double)(c->end_ts - c->begin_ts) / 1e6);
	strbuf_puts(sb, "</span></h3>\n");
	if (c->args)
		html_tag_text(sb, "<div class=\"detail\">arguments <code>", c->args, "</code>");
	if (c->args && c->digest[0])
		strbuf_printf(sb, " (digest %s)", c->digest);
	strbuf_puts(sb, c->args ? "</div>\n" : "");
	if (c->traceparent)
		html_tag_text(sb, "<div class=\"detail\">traceparent <code>", c->traceparent,
			      "</code></div>\n");
	if (c->result)
		html_tag_text(sb, "<div class=\"detail\">result <code>", c->result,
			      "</code></div>\n");
	callinfo_incomplete(&inc, c->incomplete);
	if (inc.len)
		html_tag_text(sb, "<div class=\"warn\">incomplete: ", strbuf_str(&inc), "</div>\n");
	strbuf_fini(&name);
	strbuf_fini(&inc);
}

static void timeline_call(struct strbuf *sb, const struct analysis *a, const struct slots *sl,
			  size_t i)
{
	const struct call *c = callset__get(calls_of(a), i);
	char id[32];

	snprintf(id, sizeof(id), "call-%zu", i);
	block_open(sb, id, slot_severity(sl, a, i - 1));
	call_head(sb, a, c);
	block_effects(sb, a->sum ? callsum__call(a->sum, i) : NULL);
	block_findings(sb, a, sl, i - 1);
	strbuf_puts(sb, "</li>\n");
}

static void timeline_bucket(struct strbuf *sb, const struct analysis *a, const struct slots *sl,
			    enum attr_bucket b)
{
	static const char *const what[BUCKETS] = {
		[BUCKET_STARTUP] = "before the first request was read",
		[BUCKET_AMBIENT] = "between calls, outside every window",
		[BUCKET_SHUTDOWN] = "after the server's stdin closed",
	};
	size_t s = sl->n_calls + b - 1;

	block_open(sb, attr_bucket_name(b), slot_severity(sl, a, s));
	strbuf_printf(sb, "<h3>%s <span class=\"when\">%s</span></h3>\n", attr_bucket_name(b),
		      what[b]);
	block_effects(sb, a->sum ? callsum__bucket(a->sum, b) : NULL);
	block_findings(sb, a, sl, s);
	strbuf_puts(sb, "</li>\n");
}

static void timeline(struct strbuf *sb, const struct analysis *a, const struct slots *sl)
{
	strbuf_puts(sb, "<h2>Timeline</h2>\n<ol class=\"timeline\" id=\"timeline\">\n");
	timeline_bucket(sb, a, sl, BUCKET_STARTUP);
	for (size_t i = 1; i <= sl->n_calls; i++)
		timeline_call(sb, a, sl, i);
	timeline_bucket(sb, a, sl, BUCKET_AMBIENT);
	timeline_bucket(sb, a, sl, BUCKET_SHUTDOWN);
	if (sl->start[sl->n_slots - 1] != sl->start[sl->n_slots]) {
		block_open(sb, "unattributed", slot_severity(sl, a, sl->n_slots - 1));
		strbuf_puts(sb, "<h3>not attributed (no call model)</h3>\n");
		block_findings(sb, a, sl, sl->n_slots - 1);
		strbuf_puts(sb, "</li>\n");
	}
	strbuf_puts(sb, "</ol>\n");
}

/* --- the findings table and the channel notes ------------------------------------------------ */

static void findings_table(struct strbuf *sb, const struct analysis *a)
{
	struct strbuf at = STRBUF_INIT;

	strbuf_puts(sb, "<h2>Findings</h2>\n<table id=\"findings\">\n<tr><th>severity</th>"
			"<th>rule</th><th>message</th><th>call</th><th>record</th></tr>\n");
	for (size_t i = 0; i < a->fs->n; i++) {
		const struct finding *f = &a->fs->v[i];

		strbuf_reset(&at);
		if (f->has_attr && a->cm)
			callinfo_attr(&at, callmodel__calls(a->cm), &f->attr, f->matched);
		strbuf_printf(sb, "<tr><td><span class=\"sev %s\">%s</span></td>",
			      sev_class(f->rule->severity), severity_name(f->rule->severity));
		html_tag_text(sb, "<td>", f->rule->id, "</td>");
		html_tag_text(sb, "<td>", f->message, "</td>");
		html_tag_text(sb, "<td>", strbuf_str(&at) ?: "", "</td>");
		strbuf_printf(sb, "<td>%llu</td></tr>\n", (unsigned long long)f->index);
	}
	strbuf_puts(sb, "</table>\n");
	strbuf_fini(&at);
}

static void channel_notes(struct strbuf *sb, const struct analysis *a)
{
	const struct call_note *n;

	if (!calls_of(a) || !callset__n_notes(calls_of(a)))
		return;
	strbuf_printf(sb,
		      "<h2>Channel notes</h2>\n<p>%llu notes: what could not be read as "
		      "JSON-RPC on the channel</p>\n<ul id=\"notes\">\n",
		      (unsigned long long)callset__notes_total(calls_of(a)));
	for (size_t i = 0; (n = callset__note_at(calls_of(a), i)); i++)
		html_tag_text(sb, "<li><code>", n->text, "</code></li>\n");
	strbuf_puts(sb, "</ul>\n");
}

static void document(struct strbuf *sb, const struct analysis *a, const struct slots *sl)
{
	strbuf_puts(sb,
		    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" "
		    "content=\"width=device-width, initial-scale=1\">\n<title>mcpwitness report: "
		    "trace ");
	if (a->hdr)
		trace_hex(sb, &a->hdr->trace_id);
	strbuf_printf(sb,
		      "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n"
		      "<h1>mcpwitness report</h1>\n",
		      css);
	head_verdict(sb, a);
	head_identity(sb, a);
	head_meta(sb, a);
	head_counts(sb, a);
	strbuf_puts(sb, "</header>\n<main>\n");
	timeline(sb, a, sl);
	findings_table(sb, a);
	channel_notes(sb, a);
	strbuf_puts(sb, "</main>\n</body>\n</html>\n");
}

int report_html(FILE *out, const struct analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	struct slots sl = {0};
	int err = slots_build(&sl, a);

	if (!err) {
		document(&sb, a, &sl);
		err = strbuf_error(&sb);
	}
	if (!err && fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = -EIO;
	strbuf_fini(&sb);
	slots_fini(&sl);
	return err;
}
