/*
 * analyze.h - `mcpwitness analyze`: policies compiled first, then the trace streamed through
 * the verifier into the engine, then one report.
 *
 * Verification decides what is printed and the exit code:
 *   UNSUPPORTED (not a trace, unknown version)  an input error: one line, exit 2, no report
 *   INVALID, WRONG_KEY/UNSIGNED                 refused: one line on stderr, exit 3, no report
 *                                               (unless --no-verify)
 *   a malformed Event (analyze.c)               one line naming its record, exit 2, no report
 *   VALID_PREFIX (no FINAL seal, torn tail...)  the report, verdict on top, coverage
 *                                               INCOMPLETE (analysis_trace_gap), findings past
 *                                               the last good seal marked unproven; one line on
 *                                               stderr and exit 3 unless --allow-incomplete
 *   VALID_COMPLETE                              the report; exit 1 if a finding reaches
 *                                               --fail-on, else 0
 * --no-verify reads the structure only: the report says NOT VERIFIED on top; a missing FINAL
 * seal or damaged framing (torn tail...) is then what makes the trace incomplete.
 * --verify-before-release hands the engine only records whose seal verified (live input:
 * nothing provisional is analyzed).
 */
#ifndef MW_ANALYZE_H
#define MW_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "attribute.h"
#include "callsum.h"
#include "engine.h"
#include "mcpt.h"
#include "policy.h"
#include "replay.h"
#include "vars.h"

enum report_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_SARIF,
	FORMAT_HTML,
	FORMAT_COUNT,
};

/* --format names, indexed by enum report_format. */
extern const char *const report_format_names[FORMAT_COUNT];

struct analyze_opts {
	const char *trace;
	const char **policies; /* -p, in order; none = the installed default policy */
	size_t n_policies;
	const char **sets; /* --set NAME=VALUE */
	size_t n_sets;
	const char *pubkey;
	bool no_verify;
	bool allow_incomplete;
	bool allow_unsigned;
	bool verify_before_release; /* hold each segment until its seal verified */
	enum report_format format;
	int fail_on; /* enum severity, or -1 for never */
	size_t max_per_rule;
	uint64_t cancel_grace_ns; /* 0: CANCEL_GRACE_DEFAULT_NS */
	bool two_reads; /* read twice even where once would do (the tests compare both) */
};

/* What a report shows. */
struct analysis {
	const struct analyze_opts *o;
	const struct policy *pol;
	const struct vars *vars;
	const Mcpt__Header *hdr;
	const struct mcpt_report *rep;
	bool verified; /* signatures were checked */
	struct findings *fs;
	const struct engine_stats *st;
	size_t processes;
	uint64_t malformed; /* records that did not unpack */
	uint64_t loss_records;
	struct callmodel *cm; /* the calls findings name */
	uint64_t released; /* records the verifier handed over (all, unless held back) */
	bool has_file_digest;
	uint8_t file_digest[32]; /* BLAKE2b-256 of the trace file's bytes */
	uint64_t file_length;	 /* its size in bytes (with the digest) */
	const struct callsum *sum; /* what each call caused (--format html only; else NULL) */
};

/* Runs a whole analysis and writes the report to out. Returns the exit code.
 *
 * The trace is read once when no rule reads a call (policy_reads_calls), no segment is held
 * back and the format is not HTML: the call model is built from the records the rules are
 * evaluated on, and the findings are attributed after (attr_later.h). Otherwise, and when the
 * one read meets a Loss record (the events around it bound it), it is read twice: the call
 * model first (passes.h), then the rules. The report is the same either way. */
int analyze_run(const struct analyze_opts *o, FILE *out);
/* The same; *reads (when not NULL) gets how many reads it took, once a report was written. */
int analyze_run_reads(const struct analyze_opts *o, FILE *out, unsigned *reads);

/* What every report format says about verification, decided in one place (analyze.c): the
 * verdict, its code and message, and how much of the trace the findings rest on. Each format
 * (report_text, report_json, and any added later) states it first; a unit test runs every
 * name in report_format_names and looks for it. */
struct verdict_view {
	const char *verdict; /* analysis_verdict() */
	const char *code;    /* "OK", "E_NO_FINAL", ... */
	const char *message; /* sanitized one line (points into buf) */
	bool signatures_checked, final;
	bool released_verified_only; /* --verify-before-release */
	uint64_t records, verified_through_record;
	uint64_t not_released; /* --verify-before-release: records never analyzed (no good seal) */
	char buf[REPLAY_MESSAGE_MAX];
};

void analysis_verdict_view(const struct analysis *a, struct verdict_view *v);

/* Reports (report_text.c, report_json.c, report_sarif.c, report_html.c); report_write picks
 * a->o->format. Return 0 or -ENOMEM / -EIO. */
int report_write(FILE *out, const struct analysis *a);
int report_text(FILE *out, const struct analysis *a);
int report_json(FILE *out, const struct analysis *a);
int report_sarif(FILE *out, const struct analysis *a);
int report_html(FILE *out, const struct analysis *a);
/* Parts of the JSON report that other formats carry too (report_json.c); NULL on ENOMEM. */
struct json_t *report_trace_json(const struct analysis *a);
struct json_t *report_policies_json(const struct analysis *a);
struct json_t *report_coverage_json(const struct analysis *a);
struct json_t *report_hex(const uint8_t *p, size_t n);
/* One finding as a JSON object (report_finding.c); NULL on ENOMEM. */
struct json_t;
struct json_t *report_finding_json(const struct analysis *a, const struct finding *f);

/* A call as reports name it (callinfo.c): "call 17 tools/call fetch_url (id 17)"; and the
 * attribution of a finding: "call 17 ... by window", "ambiguous: ...", "ambient". */
struct strbuf;
void callinfo_name(struct strbuf *sb, const struct call *c);
/* The call's method, or what stands for it: "(marked)" (known from marks only), "(method
 * unknown)" (its request came before an attach). */
const char *callinfo_method(const struct call *c);
void callinfo_attr(struct strbuf *sb, const struct callset *cs, const struct attribution *a,
		   const char *matched);
/* {"index", "id", "method", "tool", "arguments_digest", ...} of a call; NULL on ENOMEM. */
struct json_t *callinfo_ref_json(const struct call *c);
/* {"rule", "call", "candidates", "bucket", "matched"} of an attribution; NULL on ENOMEM. */
struct json_t *callinfo_attr_json(const struct callset *cs, const struct attribution *a,
				  const char *matched);
/* Everything a report says of one call (no events), as members of the object open in w: the
 * reference's members, then the rest written one by one (jsonw.h). */
struct jsonw;
void callinfo_call_write(struct jsonw *w, const struct call *c);
/* The channel notes as an array of strings. */
struct json_t *callinfo_notes_json(const struct callset *cs);
/* "ok", "isError", "error -32602", "no response" */
const char *callinfo_status(const struct call *c, char *buf, size_t len);
/* "no response, request damaged" (the CI_* reasons), "" when complete. */
void callinfo_incomplete(struct strbuf *sb, unsigned incomplete);

/* The verdict as reports state it: "VALID_COMPLETE", ..., or "NOT VERIFIED (--no-verify)". */
const char *analysis_verdict(const struct analysis *a);
/* Why the trace itself is incomplete, as the coverage of every report states it ("the trace
 * ends before its FINAL seal; what followed is missing"), or NULL when it is whole: what was
 * never read is not covered, whatever the loss counters say (cmd_incomplete decides). */
const char *analysis_trace_gap(const struct analysis *a);
/* Whether the coverage is complete: a whole trace and no events lost. */
bool analysis_coverage_complete(const struct analysis *a);

#endif /* MW_ANALYZE_H */
