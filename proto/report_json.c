/*
 * report_json.c - the JSON rendering of a verification report (TRACE-FORMAT.md 4.11): one
 * object, keys in a fixed order (jansson keeps insertion order), integers as JSON numbers
 * (jansson uses long long: values above 2^63 would not fit, and none of ours get there in
 * practice), ids as lower-case hex. Stable for golden tests.
 */
#include <jansson.h>
#include <stdio.h>

#include "internal.h"

static json_t *hexstr(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2 * MCPT_HASH_LEN + 1];

	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = digits[p[i] >> 4];
		buf[2 * i + 1] = digits[p[i] & 15];
	}
	buf[2 * n] = '\0';
	return json_string(buf);
}

/* A message as a JSON string: sanitized first, so it is ASCII (jansson refuses invalid UTF-8,
 * which would lose the whole report). */
static json_t *text(const char *s)
{
	char buf[1024];

	return json_string(mcpt_sanitize(buf, sizeof(buf), s));
}

static json_t *num(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *bad_segments(const struct mcpt_report *rep)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rep->n_bad_segments; i++) {
		const struct mcpt_bad_segment *b = &rep->bad_segments[i];

		json_array_append_new(
			a, json_pack("{s:o, s:o, s:o, s:s, s:o}", "seal_index", num(b->seal_index),
				     "first_record", num(b->first_record), "record_count",
				     num(b->record_count), "code", mcpt_code_name(b->code),
				     "reason", text(b->reason)));
	}
	return a;
}

static json_t *warnings(const struct mcpt_report *rep)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < rep->n_warnings; i++)
		json_array_append_new(a, json_pack("{s:s, s:o}", "code",
						   mcpt_code_name(rep->warnings[i].code), "text",
						   text(rep->warnings[i].text)));
	return a;
}

static json_t *loss(const struct mcpt_report *rep)
{
	Mcpt__LossTotals t = rep->loss;
	json_t *o = json_object();

	for (unsigned s = 1; o && s < MCPT_LOSS_SOURCES; s++)
		json_object_set_new(o, mcpt_loss_name(s), num(*mcpt_loss_field(&t, s)));
	return o;
}

static json_t *ids(const struct mcpt_report *rep, json_t *o)
{
	char kid[17], tk[17];

	mcpt_key_id_hex(rep->key_id, kid);
	mcpt_key_id_hex(rep->trusted_key_id, tk);
	json_object_set_new(o, "trace_id",
			    rep->have_header ? hexstr(rep->trace_id, MCPT_TRACE_ID_LEN)
					     : json_null());
	json_object_set_new(o, "key_id", json_string(kid));
	json_object_set_new(o, "trusted_key_id", json_string(tk));
	json_object_set_new(o, "signatures_checked", json_boolean(rep->signatures_checked));
	return o;
}

static json_t *build(const struct mcpt_report *rep)
{
	json_t *o = json_pack("{s:s, s:i, s:s, s:o}", "verdict", mcpt_report_verdict_name(rep),
			      "exit_code", mcpt_verdict_exit_code(rep->verdict), "code",
			      mcpt_code_name(rep->code), "message", text(rep->message));

	if (!o)
		return NULL;
	ids(rep, o);
	json_object_set_new(o, "records", num(rep->records));
	json_object_set_new(o, "bytes", num(rep->bytes));
	json_object_set_new(o, "seals", num(rep->seals));
	json_object_set_new(o, "seals_verified", num(rep->seals_ok));
	json_object_set_new(o, "final", json_boolean(rep->final));
	json_object_set_new(o, "end_reason", json_string(mcpt_end_reason_name(rep->end_reason)));
	json_object_set_new(o, "verified_through_record", num(rep->verified_through_record));
	json_object_set_new(o, "last_seal_digest", hexstr(rep->last_seal_digest, MCPT_HASH_LEN));
	json_object_set_new(o, "unsealed_tail",
			    json_pack("{s:o, s:o, s:o, s:b, s:b, s:o}", "from_record",
				      num(rep->unsealed_from_record), "records",
				      num(rep->unsealed_records), "bytes", num(rep->unsealed_bytes),
				      "truncated", rep->truncated, "zero_tail", rep->zero_tail,
				      "trailing_bytes", num(rep->trailing_bytes)));
	json_object_set_new(o, "first_bad_record", num(rep->first_bad_record));
	json_object_set_new(o, "first_bad_offset", num(rep->first_bad_offset));
	json_object_set_new(o, "bad_segments_total", num(rep->bad_segments_total));
	json_object_set_new(o, "bad_segments", bad_segments(rep));
	json_object_set_new(o, "unknown_types", num(rep->unknown_types));
	json_object_set_new(o, "time_range",
			    json_pack("{s:o, s:o}", "min_event_ts", num(rep->min_event_ts),
				      "max_event_ts", num(rep->max_event_ts)));
	json_object_set_new(o, "loss", loss(rep));
	json_object_set_new(o, "warnings", warnings(rep));
	json_object_set_new(o, "warnings_dropped", num(rep->warnings_dropped));
	return o;
}

void mcpt_report_print_json(FILE *out, const struct mcpt_report *rep)
{
	json_t *o = build(rep);

	if (!o) {
		fputs("{\"verdict\":\"INVALID\",\"code\":\"E_IO\",\"message\":\"out of memory\"}",
		      out);
		return;
	}
	/* a failing stream shows in ferror(out), which the caller checks when it closes it */
	(void)json_dumpf(o, out, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
}
