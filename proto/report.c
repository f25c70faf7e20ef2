/*
 * report.c - presenting a verification report: stable names for verdicts, codes and end
 * reasons, the exit codes of `mcpwitness verify` (TRACE-FORMAT.md 4.11), a human rendering (one
 * verdict line, then facts, bad segments and warnings) and a JSON object (jansson, keys in a
 * fixed order) for tickets and golden tests. Messages are the library's own ASCII text with
 * any trace string escaped at its source (escape.c); both renderings still pass every message
 * through the sanitizer, so a message that missed that step cannot reach a terminal raw.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

typedef unsigned long long ull;

int mcpt_verdict_exit_code(enum mcpt_verdict v)
{
	switch (v) {
	case MCPT_VALID_COMPLETE:
		return 0;
	case MCPT_INVALID:
		return 1;
	case MCPT_WRONG_KEY:
		return 3;
	case MCPT_UNSUPPORTED:
		return 4;
	case MCPT_VALID_PREFIX:
		return 5;
	}
	return 1;
}

const char *mcpt_verdict_name(enum mcpt_verdict v)
{
	switch (v) {
	case MCPT_VALID_COMPLETE:
		return "VALID_COMPLETE";
	case MCPT_INVALID:
		return "INVALID";
	case MCPT_WRONG_KEY:
		return "WRONG_KEY";
	case MCPT_UNSUPPORTED:
		return "UNSUPPORTED";
	case MCPT_VALID_PREFIX:
		return "VALID_PREFIX";
	}
	return "INVALID";
}

const char *mcpt_report_verdict_name(const struct mcpt_report *rep)
{
	if (rep->verdict == MCPT_WRONG_KEY && rep->code == MCPT_E_UNSIGNED)
		return "UNSIGNED";
	if (rep->verdict == MCPT_VALID_PREFIX && rep->code == MCPT_E_UNVERIFIED)
		return "UNVERIFIED";
	return mcpt_verdict_name(rep->verdict);
}

const char *mcpt_code_name(enum mcpt_code c)
{
	static const char *const names[MCPT_CODE_COUNT] = {
		[MCPT_OK] = "OK",
		[MCPT_E_IO] = "E_IO",
		[MCPT_E_NOT_A_TRACE] = "E_NOT_A_TRACE",
		[MCPT_E_VERSION] = "E_VERSION",
		[MCPT_E_HEADER] = "E_HEADER",
		[MCPT_E_FEATURE] = "E_FEATURE",
		[MCPT_E_WRONG_KEY] = "E_WRONG_KEY",
		[MCPT_E_UNSIGNED] = "E_UNSIGNED",
		[MCPT_E_FRAME_VARINT] = "E_FRAME_VARINT",
		[MCPT_E_FRAME_LEN] = "E_FRAME_LEN",
		[MCPT_E_FRAME_STRUCT] = "E_FRAME_STRUCT",
		[MCPT_E_TRUNCATED] = "E_TRUNCATED",
		[MCPT_E_ZERO_TAIL] = "E_ZERO_TAIL",
		[MCPT_E_SEAL_SIG] = "E_SEAL_SIG",
		[MCPT_E_SEAL_PARSE] = "E_SEAL_PARSE",
		[MCPT_E_SEAL_TRACE] = "E_SEAL_TRACE",
		[MCPT_E_SEAL_CHAIN] = "E_SEAL_CHAIN",
		[MCPT_E_SEAL_COUNT] = "E_SEAL_COUNT",
		[MCPT_E_SEAL_ROOT] = "E_SEAL_ROOT",
		[MCPT_E_SEAL_TIME] = "E_SEAL_TIME",
		[MCPT_E_LOSS_REGRESSION] = "E_LOSS_REGRESSION",
		[MCPT_E_TRAILING] = "E_TRAILING",
		[MCPT_E_RECORD_PARSE] = "E_RECORD_PARSE",
		[MCPT_E_UNVERIFIED] = "E_UNVERIFIED",
		[MCPT_E_NO_FINAL] = "E_NO_FINAL",
		[MCPT_W_LOSS] = "W_LOSS",
		[MCPT_W_UNKNOWN_TYPE] = "W_UNKNOWN_TYPE",
		[MCPT_W_CLOCK_STEP] = "W_CLOCK_STEP",
		[MCPT_W_NTP_UNSYNC] = "W_NTP_UNSYNC",
		[MCPT_W_SEAL_GAP] = "W_SEAL_GAP",
		[MCPT_W_UNSEALED_TAIL] = "W_UNSEALED_TAIL",
		[MCPT_E_LIMIT] = "E_LIMIT",
		[MCPT_W_SEAL_FLOOD] = "W_SEAL_FLOOD",
		[MCPT_E_EXCERPT] = "E_EXCERPT",
	};

	return (unsigned)c < MCPT_CODE_COUNT && names[c] ? names[c] : "E_UNKNOWN";
}

const char *mcpt_end_reason_name(unsigned r)
{
	static const char *const names[] = {"UNSPECIFIED", "CLEAN",	"SIGNAL", "TARGET_EXITED",
					    "ERROR",	   "DISK_FULL", "ROTATED"};

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "UNKNOWN";
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static void print_ids(FILE *out, const struct mcpt_report *rep)
{
	char tid[33], kid[17], tk[17];

	hex(tid, rep->trace_id, MCPT_TRACE_ID_LEN);
	mcpt_key_id_hex(rep->key_id, kid);
	mcpt_key_id_hex(rep->trusted_key_id, tk);
	fprintf(out, "  trace    %s\n", tid);
	if (rep->signatures_checked)
		fprintf(out, "  key      %s (trusted %s, signatures checked)\n", kid, tk);
	else
		fprintf(out, "  key      %s (signatures NOT checked)\n", kid);
}

void mcpt_report_print(FILE *out, const struct mcpt_report *rep)
{
	fprintf(out, "%s: ", mcpt_report_verdict_name(rep));
	mcpt_fputs_safe(out, rep->message);
	fputc('\n', out);
	if (rep->have_header)
		print_ids(out, rep);
	fprintf(out, "  records  %llu (%llu bytes), seals %llu (%llu verified), %s\n",
		(ull)rep->records, (ull)rep->bytes, (ull)rep->seals, (ull)rep->seals_ok,
		rep->final ? "FINAL seal" : "no FINAL seal");
	if (rep->verdict == MCPT_INVALID)
		fprintf(out, "  first bad record %llu at offset %llu (%s)\n",
			(ull)rep->first_bad_record, (ull)rep->first_bad_offset,
			mcpt_code_name(rep->code));
	for (size_t i = 0; i < rep->n_bad_segments; i++) {
		const struct mcpt_bad_segment *b = &rep->bad_segments[i];

		fprintf(out, "  BAD seal %llu, %llu records from %llu: %s: ", (ull)b->seal_index,
			(ull)b->record_count, (ull)b->first_record, mcpt_code_name(b->code));
		mcpt_fputs_safe(out, b->reason);
		fputc('\n', out);
	}
	if (rep->bad_segments_total > rep->n_bad_segments)
		fprintf(out, "  ... %llu more bad segments\n",
			(ull)(rep->bad_segments_total - rep->n_bad_segments));
	for (size_t i = 0; i < rep->n_warnings; i++) {
		fprintf(out, "  warning %s: ", mcpt_code_name(rep->warnings[i].code));
		mcpt_fputs_safe(out, rep->warnings[i].text);
		fputc('\n', out);
	}
	if (rep->warnings_dropped)
		fprintf(out, "  ... %llu more warnings\n", (ull)rep->warnings_dropped);
}
