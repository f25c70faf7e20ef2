/*
 * report_sarif.c - the analysis report as SARIF 2.1.0, for code-scanning dashboards and audit
 * tickets. One run:
 *   tool.driver       mcpwitness and its version; every rule of the merged policy with its
 *                     description, its severity as the SARIF level and as
 *                     properties.security-severity (the 0-10 scale dashboards sort by), its
 *                     category and tags, and whether it is enabled
 *   invocations       one: whether the whole trace was analyzed, and notifications stating
 *                     the verification verdict, lost events and findings counted but not listed
 *   artifacts         [0] the trace (analysisTarget) with its length and BLAKE2b-256 digest,
 *                     then each policy file (role policy) with its digest
 *   logicalLocations  every call ("call 3 tools/call read_file (id 3)"), then the buckets
 *   results           one per finding: the rule, the message, the trace as physical location
 *                     and the call it was attributed to (every candidate when ambiguous) as
 *                     logical location, and the finding as the JSON report has it in
 *                     properties.finding (evidence, process lineage, record index); when that
 *                     call's request carried a W3C trace context, properties.traceparent (and
 *                     tracestate), where tracing systems join findings to the agent's spans
 *   properties        the trace, the policies, the coverage, and the identity block of every
 *                     report (identity.h): client, server, user, host, trace id
 * Deterministic: keys in a fixed order, no clock, no environment. Text from the trace is
 * already escaped (findings.h, calls.h); JSON escaping does the rest.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "identity.h"
#include "jsonw.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

#define SARIF_SCHEMA                                                                               \
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"                      \
	"sarif-schema-2.1.0.json"

/* SARIF level and security-severity (GitHub's bands: critical >= 9.0, high 7.0-8.9, medium
 * 4.0-6.9, low 0.1-3.9; info is no security severity at all). */
static const struct {
	const char *level, *score;
} sev_sarif[SEV_COUNT] = {
	[SEV_INFO] = {"note", "0.0"},	   [SEV_LOW] = {"note", "3.0"},
	[SEV_MEDIUM] = {"warning", "5.5"}, [SEV_HIGH] = {"error", "8.0"},
	[SEV_CRITICAL] = {"error", "9.5"},
};

static json_t *message(const char *text)
{
	return json_pack("{s:s}", "text", text);
}

/* A file name as a URI reference: absolute paths as file:// URIs, relative ones relative;
 * everything but unreserved characters and '/' percent-encoded (':' too, so a relative name
 * never reads as a scheme). */
static json_t *path_uri(const char *path)
{
	static const char unreserved[] = "-._~/";
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	if (path[0] == '/')
		strbuf_puts(&sb, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr(unreserved, *p))
			strbuf_putc(&sb, (char)*p);
		else
			strbuf_printf(&sb, "%%%02X", *p);
	}
	j = strbuf_str(&sb) ? json_string(strbuf_str(&sb)) : NULL;
	strbuf_fini(&sb);
	return j;
}

/* Appends s to the array of strings unless it is there (SARIF tags are unique). */
static int tag_add(json_t *tags, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(tags, i, v) {
		if (!strcmp(json_string_value(v), s))
			return 0;
	}
	return json_array_append_new(tags, json_string(s)) ? -ENOMEM : 0;
}

/* "security" (dashboards show security-severity only on such rules), the category, then the
 * policy's tags. */
static json_t *rule_tags(const struct pol_rule *r)
{
	json_t *tags = json_array();
	int err = tags ? 0 : -ENOMEM;

	err = err ?: tag_add(tags, "security");
	err = err ?: tag_add(tags, r->category);
	for (size_t i = 0; !err && i < r->n_tags; i++)
		err = tag_add(tags, r->tags[i]);
	if (err) {
		json_decref(tags);
		return NULL;
	}
	return tags;
}

/* The description's first sentence (all of it when it has one). */
static json_t *first_sentence(const char *d)
{
	const char *end = strstr(d, ". ");
	char *s;
	json_t *j;

	if (!end)
		return message(d);
	s = strndup(d, (size_t)(end - d + 1));
	j = s ? message(s) : NULL;
	free(s);
	return j;
}

static json_t *rule_json(const struct pol_rule *r)
{
	return json_pack("{s:s,s:o,s:o,s:{s:b,s:s},s:{s:s,s:s,s:s,s:o}}", "id", r->id,
			 "shortDescription", first_sentence(r->description), "fullDescription",
			 message(r->description), "defaultConfiguration", "enabled", r->enabled,
			 "level", sev_sarif[r->severity].level, "properties", "security-severity",
			 sev_sarif[r->severity].score, "severity", severity_name(r->severity),
			 "category", r->category, "tags", rule_tags(r));
}

static json_t *driver_json(const struct analysis *a)
{
	json_t *rules = json_array();

	for (size_t i = 0; rules && i < a->pol->n_rules; i++)
		if (json_array_append_new(rules, rule_json(a->pol->rules[i]))) {
			json_decref(rules);
			return NULL;
		}
	return json_pack("{s:s,s:s,s:s,s:o}", "name", "mcpwitness", "version", MW_VERSION,
			 "semanticVersion", MW_VERSION, "rules", rules);
}

static json_t *hashes(const uint8_t digest[32])
{
	return json_pack("{s:o}", "blake2b-256", report_hex(digest, 32));
}

/* The trace: named by the path it was read from (none for standard input), its length and
 * digest when it could be read again (not from a pipe). */
static json_t *trace_artifact(const struct analysis *a)
{
	const char *path = a->o->trace;
	json_t *o = json_pack("{s:[s]}", "roles", "analysisTarget");
	int err = o ? 0 : -ENOMEM;

	if (strcmp(path, "-"))
		err = err ?: json_put(o, "location", json_pack("{s:o}", "uri", path_uri(path)));
	else
		err = err ?: json_put(o, "description", message("standard input"));
	err = err ?: json_put(o, "mimeType", json_string("application/vnd.mcpwitness.trace"));
	if (a->has_file_digest) {
		err = err ?: json_put(o, "length", json_u64(a->file_length));
		err = err ?: json_put(o, "hashes", hashes(a->file_digest));
	}
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *artifacts_json(const struct analysis *a)
{
	json_t *arr = json_array();

	if (!arr || json_array_append_new(arr, trace_artifact(a))) {
		json_decref(arr);
		return NULL;
	}
	for (size_t i = 0; i < a->pol->n_files; i++) {
		const struct pol_file *f = &a->pol->files[i];
		json_t *o = json_pack("{s:{s:o},s:o,s:[s],s:o}", "location", "uri",
				      path_uri(f->path), "length", json_u64(f->size), "roles",
				      "policy", "hashes", hashes(f->digest));

		if (json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static size_t n_calls(const struct analysis *a)
{
	return a->cm ? callset__count(callmodel__calls(a->cm)) : 0;
}

static json_t *call_location(const struct call *c)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o;

	callinfo_name(&sb, c);
	o = strbuf_str(&sb) ? json_pack("{s:s,s:s,s:s,s:o}", "name",
					c->tool ? c->tool : callinfo_method(c),
					"fullyQualifiedName", strbuf_str(&sb), "kind", "function",
					"properties", callinfo_ref_json(c))
			    : NULL;
	strbuf_fini(&sb);
	return o;
}

/* Calls 1..n at indices 0..n-1, then the buckets (startup, ambient, shutdown). */
/* One logical location a call (indexed from 0 in call order), then one a bucket. */
static void write_locations(struct jsonw *w, const struct analysis *a)
{
	size_t n = n_calls(a);

	jsonw_open(w, "logicalLocations", '[');
	for (size_t i = 1; !w->err && i <= n; i++)
		jsonw_put(w, NULL, call_location(callset__get(callmodel__calls(a->cm), i)));
	for (int b = BUCKET_STARTUP; !w->err && b < BUCKETS; b++)
		jsonw_put(w, NULL,
			  json_pack("{s:s,s:s,s:s}", "name", attr_bucket_name(b),
				    "fullyQualifiedName", attr_bucket_name(b), "kind", "module"));
	jsonw_close(w);
}

static json_t *logical_ref(size_t index)
{
	return json_pack("{s:I}", "index", (json_int_t)index);
}

/* References to the run's logical locations for a finding's attribution. */
static json_t *finding_logical(const struct analysis *a, const struct finding *f)
{
	const struct attribution *at = &f->attr;
	json_t *arr = json_array();
	int err = arr ? 0 : -ENOMEM;

	if (at->rule == ATTR_BUCKET && at->bucket != BUCKET_NONE)
		err = json_array_append_new(arr, logical_ref(n_calls(a) + at->bucket - 1));
	else if (at->rule == ATTR_AMBIGUOUS)
		for (size_t i = 0; !err && i < at->n_cand; i++)
			err = json_array_append_new(arr, logical_ref(at->cand[i] - 1));
	else if (at->rule != ATTR_BUCKET && at->call)
		err = json_array_append_new(arr, logical_ref(at->call - 1));
	if (err) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *finding_location(const struct analysis *a, const struct finding *f)
{
	json_t *loc =
		json_pack("{s:{s:{s:i}}}", "physicalLocation", "artifactLocation", "index", 0);

	if (loc && strcmp(a->o->trace, "-") &&
	    json_put(json_object_get(json_object_get(loc, "physicalLocation"), "artifactLocation"),
		     "uri", path_uri(a->o->trace))) {
		json_decref(loc);
		return NULL;
	}
	if (loc && f->has_attr && a->cm &&
	    json_put(loc, "logicalLocations", finding_logical(a, f))) {
		json_decref(loc);
		return NULL;
	}
	return loc;
}

/* The call a finding was attributed to alone (not a bucket, not ambiguous), else NULL. */
static const struct call *finding_call(const struct analysis *a, const struct finding *f)
{
	const struct attribution *at = &f->attr;

	if (!f->has_attr || !a->cm || at->rule == ATTR_BUCKET || at->rule == ATTR_AMBIGUOUS ||
	    !at->call)
		return NULL;
	return callset__get(callmodel__calls(a->cm), at->call);
}

/* {"traceparent", "tracestate", "finding"}: the trace context only when the call's request
 * carried one (a property bag holds no nulls that dashboards would show as text). */
static json_t *result_properties(const struct analysis *a, const struct finding *f)
{
	const struct call *c = finding_call(a, f);
	json_t *o = json_object();
	int err = o ? 0 : -ENOMEM;

	if (c && c->traceparent)
		err = err ?: json_put(o, "traceparent", json_string(c->traceparent));
	if (c && c->traceparent && c->tracestate)
		err = err ?: json_put(o, "tracestate", json_string(c->tracestate));
	err = err ?: json_put(o, "finding", report_finding_json(a, f));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *result_json(const struct analysis *a, const struct finding *f)
{
	const struct pol_rule *r = f->rule;

	return json_pack("{s:s,s:I,s:s,s:s,s:o,s:[o],s:o}", "ruleId", r->id, "ruleIndex",
			 (json_int_t)f->rule_index, "kind", "fail", "level",
			 sev_sarif[r->severity].level, "message", message(f->message), "locations",
			 finding_location(a, f), "properties", result_properties(a, f));
}

static void write_results(struct jsonw *w, const struct analysis *a)
{
	jsonw_open(w, "results", '[');
	for (size_t i = 0; !w->err && i < a->fs->n; i++)
		jsonw_put(w, NULL, result_json(a, &a->fs->v[i]));
	jsonw_close(w);
}

/* Whether the findings cover the whole recorded session: a complete, verified trace (or,
 * without verification, undamaged framing) and no lost events. */
static bool whole_trace(const struct analysis *a)
{
	if (a->verified)
		return a->rep->verdict == MCPT_VALID_COMPLETE;
	return !replay_damaged(a->rep);
}

static int notify(json_t *arr, const char *id, const char *level, const char *text)
{
	return json_array_append_new(arr, json_pack("{s:{s:s},s:s,s:o}", "descriptor", "id", id,
						    "level", level, "message", message(text)))
		       ? -ENOMEM
		       : 0;
}

/* The verdict first (as every format states it), then what the findings do not cover. */
static json_t *notifications_json(const struct analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	struct verdict_view v;
	json_t *arr = json_array();
	int err = arr ? 0 : -ENOMEM;

	analysis_verdict_view(a, &v);
	strbuf_printf(&sb, "verification: %s%s%s", v.verdict, v.message[0] ? ": " : "", v.message);
	err = err
		      ?: notify(arr, "verification", whole_trace(a) ? "note" : "error",
				strbuf_str(&sb) ?: "?");
	strbuf_reset(&sb);
	strbuf_printf(&sb,
		      "%llu loss records: %llu events were not recorded; the calls they "
		      "touch are incomplete",
		      (unsigned long long)a->loss_records, (unsigned long long)a->st->events_lost);
	if (a->loss_records)
		err = err ?: notify(arr, "coverage", "warning", strbuf_str(&sb) ?: "?");
	if (analysis_trace_gap(a))
		err = err ?: notify(arr, "coverage", "warning", analysis_trace_gap(a));
	strbuf_reset(&sb);
	strbuf_printf(&sb, "%llu findings over --max-per-rule were counted, not listed",
		      (unsigned long long)a->fs->dropped);
	if (a->fs->dropped)
		err = err ?: notify(arr, "findings-dropped", "warning", strbuf_str(&sb) ?: "?");
	err = err ?: strbuf_error(&sb);
	strbuf_fini(&sb);
	if (err) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *invocation_json(const struct analysis *a)
{
	return json_pack("{s:b,s:o}", "executionSuccessful", whole_trace(a),
			 "toolExecutionNotifications", notifications_json(a));
}

/* Written member by member (jsonw.h): the calls' locations and the results one at a time. */
int report_sarif(FILE *out, const struct analysis *a)
{
	struct jsonw w;

	jsonw_init(&w, out);
	jsonw_open(&w, NULL, '{');
	jsonw_put(&w, "$schema", json_string(SARIF_SCHEMA));
	jsonw_put(&w, "version", json_string("2.1.0"));
	jsonw_open(&w, "runs", '[');
	jsonw_open(&w, NULL, '{');
	jsonw_put(&w, "tool", json_pack("{s:o}", "driver", driver_json(a)));
	jsonw_put(&w, "invocations", json_pack("[o]", invocation_json(a)));
	jsonw_put(&w, "artifacts", artifacts_json(a));
	write_locations(&w, a);
	write_results(&w, a);
	jsonw_put(&w, "properties",
		  json_pack("{s:o,s:o,s:o,s:o}", "trace", report_trace_json(a), "identity",
			    identity_json(a->hdr, a->cm ? callmodel__calls(a->cm) : NULL),
			    "policies", report_policies_json(a), "coverage",
			    report_coverage_json(a)));
	jsonw_close(&w);
	jsonw_close(&w);
	jsonw_close(&w);
	return jsonw_finish(&w);
}
