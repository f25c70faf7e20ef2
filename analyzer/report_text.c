/*
 * report_text.c - the analysis report for people: the verdict first, what was analyzed, then the
 * findings, most severe first, each with its evidence, process lineage, time and record index,
 * and a summary line of counts by severity. Deterministic: no clock, no environment.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "identity.h"
#include "outlived.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

static void head_trace(struct strbuf *sb, const struct analysis *a)
{
	struct verdict_view v;

	analysis_verdict_view(a, &v);
	strbuf_printf(sb, "verification: %s", v.verdict);
	if (v.message[0])
		strbuf_printf(sb, ": %s", v.message);
	if (v.released_verified_only)
		strbuf_printf(sb,
			      "\nreleased: only records whose seal verified were analyzed "
			      "(--verify-before-release); %llu not released",
			      (unsigned long long)v.not_released);
	strbuf_puts(sb, "\ntrace: ");
	if (a->hdr)
		trace_hex(sb, &a->hdr->trace_id);
	else
		strbuf_puts(sb, "(no header)");
	strbuf_printf(sb, " analyzed by mcpwitness %s\n", MW_VERSION);
	identity_text(sb, a->hdr, a->cm ? callmodel__calls(a->cm) : NULL, "");
	for (size_t i = 0; i < a->pol->n_files; i++) {
		const struct pol_file *f = &a->pol->files[i];

		strbuf_puts(sb, "policy: ");
		strbuf_escape(sb, (const uint8_t *)f->path, strlen(f->path), 0);
		strbuf_puts(sb, " blake2b-256:");
		strbuf_hex(sb, f->digest, sizeof(f->digest));
		strbuf_putc(sb, '\n');
	}
}

static void put_bin(struct strbuf *sb, const char *label, const ProtobufCBinaryData *b)
{
	if (!b->len)
		return;
	strbuf_printf(sb, " %s \"", label);
	strbuf_escape(sb, b->data, b->len, ESC_QUOTE);
	strbuf_putc(sb, '"');
}

static void head_server(struct strbuf *sb, const struct analysis *a)
{
	const Mcpt__Target *t = a->hdr ? a->hdr->target : NULL;

	if (t) {
		strbuf_printf(sb, "server: pid %u uid %u", t->pid, t->uid);
		put_bin(sb, "exe", &t->exe);
		put_bin(sb, "home", &t->home);
		put_bin(sb, "workspace", &t->cwd);
		strbuf_putc(sb, '\n');
	}
	strbuf_printf(sb, "replayed: %llu events, %zu processes, %llu records",
		      (unsigned long long)a->st->events, a->processes,
		      (unsigned long long)a->rep->records);
	if (a->malformed)
		strbuf_printf(sb, ", %llu malformed", (unsigned long long)a->malformed);
	if (a->loss_records)
		strbuf_printf(sb, ", %llu loss record%s: events are missing",
			      (unsigned long long)a->loss_records, a->loss_records == 1 ? "" : "s");
	strbuf_putc(sb, '\n');
}

/* The calls in one line, then the incomplete ones and what could not be read on the channel. */
static void head_calls(struct strbuf *sb, const struct analysis *a)
{
	struct callset *cs = a->cm ? callmodel__calls(a->cm) : NULL;
	const struct call_note *n;
	const struct call *c;
	size_t incomplete = 0;

	if (!cs) {
		strbuf_putc(sb, '\n');
		return;
	}
	for (size_t i = 1; (c = callset__get(cs, i)); i++)
		incomplete += c->incomplete != 0;
	strbuf_printf(sb, "calls: %zu, %zu incomplete; channel notes: %llu\n", callset__count(cs),
		      incomplete, (unsigned long long)callset__notes_total(cs));
	for (size_t i = 1; (c = callset__get(cs, i)); i++) {
		if (!c->incomplete && !c->mark_disagrees)
			continue;
		strbuf_puts(sb, "  incomplete: ");
		callinfo_name(sb, c);
		strbuf_puts(sb, ": ");
		callinfo_incomplete(sb, c->incomplete);
		strbuf_puts(sb, c->mark_disagrees ? (c->incomplete ? ", disagrees with its marks"
								   : "disagrees with its marks")
						  : "");
		strbuf_putc(sb, '\n');
	}
	for (size_t i = 0; (n = callset__note_at(cs, i)); i++)
		strbuf_printf(sb, "  channel: %s\n", n->text);
	strbuf_putc(sb, '\n');
}

/* The processes that outlived the server: what they did after the recording is not in it. */
static void head_outlived(struct strbuf *sb, const struct analysis *a)
{
	if (a->cm && outlived_server_gone(a->cm) && outlived_count(a->cm)) {
		strbuf_printf(sb, "  %s:\n", outlived_heading(a->cm));
		outlived_text(sb, a->cm, "    ");
	}
	strbuf_putc(sb, '\n');
}

/* Whether every event was recorded: a trace cut short or with losses never reads as clean;
 * the calls whose window saw a loss are named; then the processes that outlived the server. */
static void head_coverage(struct strbuf *sb, const struct analysis *a)
{
	struct callset *cs = a->cm ? callmodel__calls(a->cm) : NULL;
	const char *gap = analysis_trace_gap(a);
	const struct call *c;
	size_t n = 0;

	if (analysis_coverage_complete(a)) {
		strbuf_puts(sb, "coverage: complete (no events lost)\n");
		head_outlived(sb, a);
		return;
	}
	strbuf_puts(sb, "coverage: INCOMPLETE: ");
	strbuf_puts(sb, gap ?: "");
	if (a->loss_records)
		strbuf_printf(sb, "%s%llu events lost in %llu loss record%s", gap ? "; " : "",
			      (unsigned long long)a->st->events_lost,
			      (unsigned long long)a->loss_records, a->loss_records == 1 ? "" : "s");
	strbuf_putc(sb, '\n');
	for (size_t i = 1; cs && (c = callset__get(cs, i)); i++) {
		if (!(c->incomplete & CI_EVENTS_LOST))
			continue;
		strbuf_puts(sb, "  incomplete coverage: ");
		callinfo_name(sb, c);
		strbuf_putc(sb, '\n');
		n++;
	}
	if (!n && a->loss_records)
		strbuf_puts(sb, "  no call's window saw the loss: startup, ambient or shutdown\n");
	head_outlived(sb, a);
}

/* Finding strings are escaped already (backslashes doubled); between double quotes in text,
 * a '"' is escaped too so the quoting stays unambiguous. */
static void put_quoted(struct strbuf *sb, const char *pre, const char *s, const char *post)
{
	strbuf_puts(sb, pre);
	strbuf_putc(sb, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_putc(sb, '\\');
		strbuf_putc(sb, *s);
	}
	strbuf_putc(sb, '"');
	strbuf_puts(sb, post);
}

static void finding_evidence(struct strbuf *sb, const struct finding *f)
{
	char buf[40];

	strbuf_printf(sb, "  event: %s %s", f->op, finding_result(f, buf, sizeof(buf)));
	if (f->path)
		put_quoted(sb, " path ", f->path, "");
	if (f->path_arg && (!f->path || strcmp(f->path, f->path_arg)))
		put_quoted(sb, " (as passed ", f->path_arg, ")");
	if (f->opened_path && (!f->path || strcmp(f->path, f->opened_path)))
		put_quoted(sb, " opened ", f->opened_path, "");
	if (f->addr)
		strbuf_printf(sb, " addr %s", f->addr);
	if (f->dns)
		put_quoted(sb, " dns ", f->dns, "");
	if (f->detail)
		strbuf_printf(sb, ": %s", f->detail);
	strbuf_putc(sb, '\n');
	if (f->attempted)
		strbuf_printf(sb, "  attempts: %u failed (PATH search): %s\n", f->attempts,
			      f->attempted);
}

static void finding_process(struct strbuf *sb, const struct finding *f)
{
	strbuf_printf(sb, "  process: %u/%u uid %u %s", f->pid, f->tid, f->uid,
		      f->exe ? f->exe : "?");
	for (size_t i = 0; i < f->argc; i++)
		put_quoted(sb, i ? " " : " [", f->argv[i], "");
	strbuf_puts(sb, f->argc ? "]\n" : "\n");
	strbuf_puts(sb, "  lineage:");
	for (size_t i = 0; i < f->n_lineage; i++)
		strbuf_printf(sb, "%s %u %s", i ? " <" : "", f->lineage[i].pid,
			      f->lineage[i].exe ? f->lineage[i].exe : "?");
	strbuf_puts(sb, f->lineage_truncated ? " < ?\n" : " (server)\n");
}

/* "call: call 17 tools/call fetch_url (id 17) by window" and the call's arguments. */
static void finding_call(struct strbuf *sb, const struct callset *cs, const struct finding *f)
{
	const struct call *c = f->attr.call ? callset__get(cs, f->attr.call) : NULL;

	strbuf_puts(sb, "  call: ");
	callinfo_attr(sb, cs, &f->attr, f->matched);
	strbuf_putc(sb, '\n');
	if (c && c->args)
		strbuf_printf(sb, "  arguments: %s (digest %s)\n", c->args, c->digest);
}

static void finding_text(struct strbuf *sb, const struct analysis *a, const struct finding *f)
{
	const struct pol_rule *r = f->rule;
	char ts[32], wall[48];

	strbuf_printf(sb, "[%s] %s: %s%s\n", severity_name(r->severity), r->id, f->message,
		      f->unproven ? " [unproven: after the last verified seal]" : "");
	if (f->has_attr && a->cm)
		finding_call(sb, callmodel__calls(a->cm), f);
	strbuf_printf(sb, "  rule: %s (category %s", r->description, r->category);
	for (size_t i = 0; i < r->n_tags; i++)
		strbuf_printf(sb, "%s%s", i ? ", " : "; tags ", r->tags[i]);
	strbuf_puts(sb, ")\n");
	finding_evidence(sb, f);
	finding_process(sb, f);
	trace_ts(ts, sizeof(ts), f->ts);
	strbuf_printf(sb, "  at: %s", ts);
	if (trace_wallclock(a->hdr, f->ts, wall, sizeof(wall)))
		strbuf_printf(sb, " (%s)", wall);
	strbuf_printf(sb, ", record %llu, seq %llu\n\n", (unsigned long long)f->index,
		      (unsigned long long)f->seq);
}

static void summary(struct strbuf *sb, const struct analysis *a)
{
	const struct findings *fs = a->fs;

	strbuf_printf(sb, "%llu finding%s:", (unsigned long long)fs->total,
		      fs->total == 1 ? "" : "s");
	for (int s = SEV_COUNT - 1; s >= 0; s--)
		strbuf_printf(sb, " %llu %s%s", (unsigned long long)fs->by_sev[s],
			      severity_name((enum severity)s), s ? "," : "");
	if (fs->dropped)
		strbuf_printf(sb, " (%llu not shown: more than %zu for one rule)",
			      (unsigned long long)fs->dropped, fs->max_per_rule);
	strbuf_putc(sb, '\n');
}

int report_text(FILE *out, const struct analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	head_trace(&sb, a);
	head_server(&sb, a);
	head_calls(&sb, a);
	head_coverage(&sb, a);
	for (size_t i = 0; i < a->fs->n; i++)
		finding_text(&sb, a, &a->fs->v[i]);
	summary(&sb, a);
	err = strbuf_error(&sb);
	if (!err && fwrite(sb.buf, 1, sb.len, out) != sb.len)
		err = -EIO;
	strbuf_fini(&sb);
	return err;
}
