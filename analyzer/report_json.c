/*
 * report_json.c - the analysis report as one JSON document: analyzer, trace and verdict,
 * policies with their digests, variables, server, counts, findings in stream order.
 * Deterministic: keys in a fixed order, no clock, no environment.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "analyze.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

static json_t *hex_str(const uint8_t *p, size_t n)
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

static json_t *trace_json(const struct analysis *a)
{
	const struct mcpt_report *rep = a->rep;
	struct verdict_view v;
	json_t *t = json_object();
	int err;

	if (!t)
		return NULL;
	analysis_verdict_view(a, &v);
	err = json_put(t, "id",
		       a->hdr ? hex_str(a->hdr->trace_id.data, a->hdr->trace_id.len) : json_null());
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
	if (err) {
		json_decref(t);
		return NULL;
	}
	return t;
}

static json_t *policies_json(const struct analysis *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < a->pol->n_files; i++) {
		const struct pol_file *f = &a->pol->files[i];
		json_t *o = json_pack("{s:o,s:o}", "path",
				      json_bytes((const uint8_t *)f->path, strlen(f->path)),
				      "blake2b_256", hex_str(f->digest, sizeof(f->digest)));

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

static json_t *calls_json(const struct analysis *a)
{
	struct callset *cs = a->cm ? callmodel__calls(a->cm) : NULL;
	const struct call *c;
	json_t *arr = json_array();

	for (size_t i = 1; arr && cs && (c = callset__get(cs, i)); i++)
		if (json_array_append_new(arr, callinfo_call_json(c))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

int report_json(FILE *out, const struct analysis *a)
{
	json_t *doc = json_object(), *arr = json_array();
	int err = doc && arr ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < a->fs->n; i++)
		if (json_array_append_new(arr, report_finding_json(a, &a->fs->v[i])))
			err = -ENOMEM;
	err = err
		      ?: json_put(doc, "analyzer",
				  json_pack("{s:s,s:s}", "name", "mcpwitness", "version",
					    MW_VERSION));
	err = err ?: json_put(doc, "trace", trace_json(a));
	err = err ?: json_put(doc, "policies", policies_json(a));
	err = err ?: json_put(doc, "variables", vars_json(a->vars));
	err = err ?: json_put(doc, "stats", stats_json(a));
	err = err ?: json_put(doc, "summary", summary_json(a->fs));
	err = err ?: json_put(doc, "calls", calls_json(a));
	err = err ?: json_put(doc, "channel_notes",
			      a->cm ? callinfo_notes_json(callmodel__calls(a->cm)) : json_array());
	if (!err) {
		err = json_put(doc, "findings", arr);
		arr = NULL;
	}
	if (!err && (json_dumpf(doc, out, JSON_INDENT(2)) || fputc('\n', out) == EOF))
		err = -EIO;
	json_decref(arr);
	json_decref(doc);
	return err;
}
