/*
 * report_json.c - the analysis report as one JSON document: analyzer, trace and verdict,
 * policies with their digests, variables, server, counts, findings in stream order.
 * Deterministic: keys in a fixed order, no clock, no environment.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "analyze.h"
#include "identity.h"
#include "jsonw.h"
#include "outlived.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

json_t *report_hex(const uint8_t *p, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	strbuf_hex(&sb, p, n);
	j = strbuf_str(&sb) ? json_string(strbuf_str(&sb)) : NULL;
	strbuf_fini(&sb);
	return j;
}

static json_t *key_id_str(const uint8_t id[MCPT_KEY_ID_LEN])
{
	char hex[17];

	mcpt_key_id_hex(id, hex);
	return json_string(hex);
}

json_t *report_trace_json(const struct analysis *a)
{
	const struct mcpt_report *rep = a->rep;
	struct verdict_view v;
	json_t *t = json_object();
	int err;

	if (!t)
		return NULL;
	analysis_verdict_view(a, &v);
	err = json_put(t, "id",
		       a->hdr ? report_hex(a->hdr->trace_id.data, a->hdr->trace_id.len) : json_null());
	err = err ?: json_put(t, "verdict", json_string(v.verdict));
	err = err ?: json_put(t, "code", json_string(v.code));
	err = err ?: json_put(t, "message", json_string(v.message));
	err = err ?: json_put(t, "signatures_checked", json_boolean(a->verified));
	err = err ?: json_put(t, "key_id", key_id_str(rep->key_id));
	err = err ?: json_put(t, "records", json_u64(v.records));
	err = err ?: json_put(t, "verified_through_record", json_u64(v.verified_through_record));
	err = err ?: json_put(t, "final_seal", json_boolean(v.final));
	err = err ?: json_put(t, "verify_before_release", json_boolean(v.released_verified_only));
	if (v.released_verified_only)
		err = err ?: json_put(t, "records_not_released", json_u64(v.not_released));
	err = err ?: json_put(t, "malformed_records", json_u64(a->malformed));
	err = err ?: json_put(t, "loss_records", json_u64(a->loss_records));
	err = err ?: json_put(t, "file_blake2b_256",
			      a->has_file_digest ? report_hex(a->file_digest, 32) : json_null());
	err = err ?: json_put(t, "file_length",
			      a->has_file_digest ? json_u64(a->file_length) : json_null());
	if (err) {
		json_decref(t);
		return NULL;
	}
	return t;
}

json_t *report_policies_json(const struct analysis *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < a->pol->n_files; i++) {
		const struct pol_file *f = &a->pol->files[i];
		json_t *o = json_pack("{s:o,s:o}", "path",
				      json_bytes((const uint8_t *)f->path, strlen(f->path)),
				      "blake2b_256", report_hex(f->digest, sizeof(f->digest)));

		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *vars_json(const struct vars *vs)
{
	json_t *o = json_object();
	const char *name, *val;
	size_t len;

	for (int i = 0; o && (name = vars__name(vs, i)); i++) {
		json_t *v = vars__get(vs, name, &val, &len) ? json_null()
							    : json_bytes((const uint8_t *)val, len);

		if (json_put(o, name, v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *summary_json(const struct findings *fs)
{
	json_t *o = json_object();
	int err;

	if (!o)
		return NULL;
	err = json_put(o, "total", json_u64(fs->total));
	err = err ?: json_put(o, "shown", json_u64(fs->n));
	for (int s = SEV_COUNT - 1; s >= 0 && !err; s--)
		err = json_put(o, severity_name((enum severity)s), json_u64(fs->by_sev[s]));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *stats_json(const struct analysis *a)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "events", json_u64(a->st->events), "processes",
			 json_u64(a->processes), "entries_held", json_u64(a->st->held_entries),
			 "exceptions_hit", json_u64(a->st->exceptions_hit));
}

/* {"complete", "loss_records", "events_lost", "incomplete_calls": [call refs],
 *  "outlived_server": [processes still running after the server exited (outlived.h)]}, and
 * "trace_incomplete" (why: analysis_trace_gap) when the trace itself is cut short. */
json_t *report_coverage_json(const struct analysis *a)
{
	struct callset *cs = a->cm ? callmodel__calls(a->cm) : NULL;
	json_t *o = json_object(), *arr = json_array();
	const struct call *c;
	int err = o && arr ? 0 : -ENOMEM;

	for (size_t i = 1; !err && cs && (c = callset__get(cs, i)); i++)
		if ((c->incomplete & CI_EVENTS_LOST) &&
		    json_array_append_new(arr, callinfo_ref_json(c)))
			err = -ENOMEM;
	err = err ?: json_put(o, "complete", json_boolean(analysis_coverage_complete(a)));
	if (analysis_trace_gap(a))
		err = err ?: json_put(o, "trace_incomplete", json_string(analysis_trace_gap(a)));
	err = err ?: json_put(o, "loss_records", json_u64(a->loss_records));
	err = err ?: json_put(o, "events_lost", json_u64(a->st->events_lost));
	if (!err) {
		err = json_put(o, "incomplete_calls", arr);
		arr = NULL;
	}
	if (!err)
		err = json_put(o, "outlived_server", a->cm && outlived_server_gone(a->cm)
							     ? outlived_json(a->cm)
							     : json_array());
	json_decref(arr);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Written member by member (jsonw.h): the calls and the findings one at a time. */
int report_json(FILE *out, const struct analysis *a)
{
	struct callset *cs = a->cm ? callmodel__calls(a->cm) : NULL;
	const struct call *c;
	struct jsonw w;

	jsonw_init(&w, out);
	jsonw_open(&w, NULL, '{');
	jsonw_put(&w, "analyzer",
		  json_pack("{s:s,s:s}", "name", "mcpwitness", "version", MW_VERSION));
	jsonw_put(&w, "trace", report_trace_json(a));
	jsonw_put(&w, "identity", identity_json(a->hdr, cs));
	jsonw_put(&w, "policies", report_policies_json(a));
	jsonw_put(&w, "variables", vars_json(a->vars));
	jsonw_put(&w, "stats", stats_json(a));
	jsonw_put(&w, "summary", summary_json(a->fs));
	jsonw_put(&w, "coverage", report_coverage_json(a));
	jsonw_open(&w, "calls", '[');
	for (size_t i = 1; !w.err && cs && (c = callset__get(cs, i)); i++) {
		jsonw_open(&w, NULL, '{');
		callinfo_call_write(&w, c);
		jsonw_close(&w);
	}
	jsonw_close(&w);
	jsonw_put(&w, "channel_notes", cs ? callinfo_notes_json(cs) : json_array());
	jsonw_open(&w, "findings", '[');
	for (size_t i = 0; !w.err && i < a->fs->n; i++)
		jsonw_put(&w, NULL, report_finding_json(a, &a->fs->v[i]));
	jsonw_close(&w);
	jsonw_close(&w);
	return jsonw_finish(&w);
}
