/*
 * verify_end.c - the verifier's findings and its conclusion: the fatal error that stopped
 * reading, the list of BAD segments and the warnings (both bounded; the totals are kept), and at
 * the end the verdict of TRACE-FORMAT.md 4.11 with its deciding code and a one-line message that
 * says what holds and what does not ("verified through record N; M records (B bytes) after the
 * last seal are unproven; no FINAL seal").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

typedef unsigned long long ull;

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* The report's one-line message; long reasons are cut at its size on purpose. */
__attribute__((format(printf, 2, 3))) static void msgf(struct mcpt_report *rep, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->message, sizeof(rep->message), fmt, ap);
	va_end(ap);
}

static bool invalid_class(enum mcpt_code c)
{
	switch (c) {
	case MCPT_E_NOT_A_TRACE:
	case MCPT_E_VERSION:
	case MCPT_E_FEATURE:
	case MCPT_E_WRONG_KEY:
	case MCPT_E_UNSIGNED:
		return false;
	default:
		return true;
	}
}

void mcpt_v_fatal(struct vstate *v, enum mcpt_code code, uint64_t index, uint64_t offset,
		  const char *fmt, ...)
{
	va_list ap;

	v->done = true;
	if (v->fatal != MCPT_OK)
		return;
	v->fatal = code;
	va_start(ap, fmt);
	vsnprintf(v->fatal_msg, sizeof(v->fatal_msg), fmt, ap);
	va_end(ap);
	if (invalid_class(code) && v->first_err == MCPT_OK) {
		v->first_err = code;
		v->first_is_fatal = true;
		v->rep->first_bad_record = index;
		v->rep->first_bad_offset = offset;
	}
}

void mcpt_v_warn(struct vstate *v, enum mcpt_code code, const char *fmt, ...)
{
	struct mcpt_report *rep = v->rep;
	struct mcpt_warning *w;
	va_list ap;

	if (rep->n_warnings == MCPT_REPORT_MAX_LIST) {
		rep->warnings_dropped++;
		return;
	}
	if (rep->n_warnings % 16 == 0) {
		w = realloc(rep->warnings, (rep->n_warnings + 16) * sizeof(*w));
		if (!w) {
			rep->warnings_dropped++;
			return;
		}
		rep->warnings = w;
	}
	w = &rep->warnings[rep->n_warnings++];
	w->code = code;
	va_start(ap, fmt);
	vsnprintf(w->text, sizeof(w->text), fmt, ap);
	va_end(ap);
}

int mcpt_v_bad_segment(struct vstate *v, uint64_t seal_index, enum mcpt_code code,
		       const char *reason)
{
	struct mcpt_report *rep = v->rep;
	struct mcpt_bad_segment *b;

	rep->bad_segments_total++;
	if (v->first_err == MCPT_OK) {
		v->first_err = code;
		rep->first_bad_record = v->seg_first;
		rep->first_bad_offset = v->seg_offset;
	}
	if (rep->bad_segments_total >= v->opts.max_bad_segments) /* 5.14: bounded work */
		mcpt_v_fatal(v, MCPT_E_LIMIT, v->index, v->seg_offset,
			     "%llu bad segments: reading stopped, each costs a signature check",
			     (ull)v->opts.max_bad_segments);
	if (rep->n_bad_segments == MCPT_REPORT_MAX_LIST)
		return 0;
	if (rep->n_bad_segments % 16 == 0) {
		b = realloc(rep->bad_segments, (rep->n_bad_segments + 16) * sizeof(*b));
		if (!b)
			return -ENOMEM;
		rep->bad_segments = b;
	}
	b = &rep->bad_segments[rep->n_bad_segments++];
	b->seal_index = seal_index;
	b->first_record = v->seg_first;
	b->record_count = v->index - v->seg_first;
	b->code = code;
	snprintf(b->reason, sizeof(b->reason), "%s", reason);
	return 0;
}

/* "verified through record N" or "nothing verified". */
static void through(const struct mcpt_report *rep, char *out, size_t len)
{
	if (rep->seals_ok && rep->verified_through_record)
		snprintf(out, len, "verified through record %llu",
			 (ull)rep->verified_through_record);
	else
		snprintf(out, len, "nothing verified");
}

static void tail_note(const struct vstate *v, char *out, size_t len)
{
	const struct mcpt_report *rep = v->rep;

	if (rep->truncated)
		snprintf(out, len, "; torn frame at offset %llu (%llu bytes, crash artifact)",
			 (ull)v->tail_at, (ull)rep->trailing_bytes);
	else if (rep->zero_tail)
		snprintf(out, len, "; zero bytes from offset %llu to the end (crash artifact)",
			 (ull)v->zero_at);
	else
		out[0] = '\0';
}

static void msg_invalid(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;
	const struct mcpt_bad_segment *b = rep->bad_segments;
	char thr[64];

	through(rep, thr, sizeof(thr));
	if (v->first_is_fatal || !rep->n_bad_segments) {
		msgf(rep, "%s; %s", v->fatal_msg, thr);
		return;
	}
	msgf(rep, "%llu bad segment%s, first: seal %llu over %llu record%s from %llu: %s; %s%s",
	     (ull)rep->bad_segments_total, plural(rep->bad_segments_total), (ull)b->seal_index,
	     (ull)b->record_count, plural(b->record_count), (ull)b->first_record, b->reason, thr,
	     v->fatal == MCPT_E_LIMIT ? "; reading stopped at a limit"
	     : v->fatal != MCPT_OK    ? "; reading stopped at a framing error"
				      : "");
}

static void msg_prefix(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;
	char thr[64], tail[128];

	through(rep, thr, sizeof(thr));
	tail_note(v, tail, sizeof(tail));
	if (!rep->have_header)
		msgf(rep, "the stream ends before its Header (%llu bytes): nothing verified%s",
		     (ull)rep->bytes, tail);
	else if (!v->opts.key)
		msgf(rep,
		     "structure only (no key given): signatures not checked; %llu records, "
		     "%llu seals, %s%s",
		     (ull)rep->records, (ull)rep->seals,
		     rep->final ? "FINAL seal present" : "no FINAL seal", tail);
	else if (rep->seals == 0)
		msgf(rep, "no seal at all: nothing verified; %llu record%s (%llu bytes) unproven%s",
		     (ull)rep->unsealed_records, plural(rep->unsealed_records),
		     (ull)rep->unsealed_bytes, tail);
	else
		msgf(rep,
		     "%s; %llu record%s (%llu bytes) after the last seal %s unproven%s; "
		     "no FINAL seal",
		     thr, (ull)rep->unsealed_records, plural(rep->unsealed_records),
		     (ull)rep->unsealed_bytes, rep->unsealed_records == 1 ? "is" : "are", tail);
}

static void msg_complete(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;

	msgf(rep, "all %llu records verified (%llu seals)%s; FINAL seal, end reason %s",
	     (ull)rep->records, (ull)rep->seals,
	     rep->signatures_checked ? "" : " by hashes only: UNSIGNED trace allowed",
	     mcpt_end_reason_name(rep->end_reason));
}

static void final_warnings(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;

	if (rep->unknown_types)
		mcpt_v_warn(
			v, MCPT_W_UNKNOWN_TYPE,
			"%llu record%s of unknown types skipped (first: type %u at record %llu)",
			(ull)rep->unknown_types, plural(rep->unknown_types), v->first_unknown,
			(ull)v->first_unknown_at);
	for (unsigned s = 1; s < MCPT_LOSS_SOURCES; s++) {
		uint64_t n = *mcpt_loss_field(&rep->loss, s);

		if (n)
			mcpt_v_warn(v, MCPT_W_LOSS, "%llu lost (%s)", (ull)n, mcpt_loss_name(s));
	}
	if (v->flood_seals)
		mcpt_v_warn(
			v, MCPT_W_SEAL_FLOOD,
			"%llu signed empty seal%s sooner than the writer's policy allows (first: "
			"seal %llu)",
			(ull)v->flood_seals, plural(v->flood_seals), (ull)v->first_flood);
	if (rep->have_header && rep->unsealed_records)
		mcpt_v_warn(v, MCPT_W_UNSEALED_TAIL,
			    "%llu record%s (%llu bytes) from record %llu not covered by a seal",
			    (ull)rep->unsealed_records, plural(rep->unsealed_records),
			    (ull)rep->unsealed_bytes, (ull)rep->unsealed_from_record);
}

static void tail_counts(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;

	rep->records = v->index;
	rep->bytes = v->rd.pos + v->rd.len;
	if (!rep->have_header)
		return;
	rep->unsealed_from_record = rep->seals ? v->seg_first : 0;
	rep->unsealed_records = v->index - rep->unsealed_from_record;
	rep->unsealed_bytes = v->good_end - (rep->seals ? v->seg_offset : 0);
}

static void decide(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;

	if (v->fatal != MCPT_OK && !invalid_class(v->fatal)) {
		rep->code = v->fatal;
		rep->verdict = v->fatal == MCPT_E_WRONG_KEY || v->fatal == MCPT_E_UNSIGNED
				       ? MCPT_WRONG_KEY
				       : MCPT_UNSUPPORTED;
		msgf(rep, "%s", v->fatal_msg);
	} else if (v->first_err != MCPT_OK) {
		rep->verdict = MCPT_INVALID;
		rep->code = v->first_err;
		msg_invalid(v);
	} else if (rep->have_header && v->opts.key && rep->final && !v->opts.skim) {
		rep->verdict = MCPT_VALID_COMPLETE;
		rep->code = MCPT_OK;
		msg_complete(v);
	} else {
		rep->verdict = MCPT_VALID_PREFIX;
		if (!rep->have_header || !v->opts.key || rep->seals == 0 || v->opts.skim)
			rep->code = MCPT_E_UNVERIFIED;
		else if (rep->truncated)
			rep->code = MCPT_E_TRUNCATED;
		else if (rep->zero_tail)
			rep->code = MCPT_E_ZERO_TAIL;
		else
			rep->code = MCPT_E_NO_FINAL;
		msg_prefix(v);
	}
}

void mcpt_v_finish(struct vstate *v)
{
	struct mcpt_report *rep = v->rep;
	size_t n;

	tail_counts(v);
	decide(v);
	if (v->cb_ret) {
		n = strlen(rep->message);
		snprintf(rep->message + n, sizeof(rep->message) - n,
			 "; reading stopped by the caller after record %llu", (ull)v->index);
	}
	if (rep->verdict != MCPT_UNSUPPORTED && rep->verdict != MCPT_WRONG_KEY)
		final_warnings(v);
}

void mcpt_report__fini(struct mcpt_report *rep)
{
	if (!rep)
		return;
	free(rep->bad_segments);
	free(rep->warnings);
	rep->bad_segments = NULL;
	rep->warnings = NULL;
	rep->n_bad_segments = rep->n_warnings = 0;
}
