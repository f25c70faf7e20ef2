/*
 * report_finding.c - one finding as a JSON object (used by the JSON report, later by SARIF).
 */
#include <jansson.h>

#include "analyze.h"
#include "traceinfo.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *str_array(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		if (json_array_append_new(a, json_string(v[i]))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *lineage_json(const struct finding *f)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < f->n_lineage; i++) {
		json_t *o = json_pack("{s:i,s:o}", "pid", (json_int_t)f->lineage[i].pid, "exe",
				      str_or_null(f->lineage[i].exe));

		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *evidence_json(const struct finding *f)
{
	char buf[24];

	return json_pack("{s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:I}", "op", f->op, "result",
			 event_result_name(f->result), "ret", (json_int_t)f->ret, "errno",
			 f->result == RES_FAILURE
				 ? json_string(event_errno_name(f->err, buf, sizeof(buf)))
				 : json_null(),
			 "path", str_or_null(f->path), "path_arg", str_or_null(f->path_arg),
			 "opened_path", str_or_null(f->opened_path), "addr", str_or_null(f->addr),
			 "flags", (json_int_t)f->flags);
}

static json_t *process_json(const struct finding *f)
{
	return json_pack("{s:i,s:i,s:o,s:i,s:o,s:o,s:o,s:b}", "pid", (json_int_t)f->pid, "tid",
			 (json_int_t)f->tid, "pstart", json_u64(f->pstart), "uid",
			 (json_int_t)f->uid, "exe", str_or_null(f->exe), "argv",
			 str_array(f->argv, f->argc), "lineage", lineage_json(f),
			 "lineage_complete", !f->lineage_truncated);
}

json_t *report_finding_json(const struct analysis *a, const struct finding *f)
{
	const struct pol_rule *r = f->rule;
	char wall[48];

	json_t *call = f->has_attr && a->cm
			       ? callinfo_attr_json(callmodel__calls(a->cm), &f->attr, f->matched)
			       : json_null();

	return json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:o,s:o,s:o,s:o,s:b,s:o,s:o,s:o}", "rule", r->id,
			 "severity", severity_name(r->severity), "category", r->category, "tags",
			 str_array(r->tags, r->n_tags), "message", f->message, "description",
			 r->description, "record", json_u64(f->index), "seq", json_u64(f->seq),
			 "ts", json_u64(f->ts), "time",
			 trace_wallclock(a->hdr, f->ts, wall, sizeof(wall)) ? json_string(wall)
									    : json_null(),
			 "unproven", f->unproven, "call", call, "evidence", evidence_json(f),
			 "process", process_json(f));
}
