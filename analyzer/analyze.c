/*
 * analyze.c - the analysis pipeline and its exit codes (see analyze.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "cmd.h"
#include "log.h"
#include "passes.h"
#include "replay.h"

struct run {
	const struct analyze_opts *o;
	struct replay_opts ro;
	struct policy *pol;
	struct vars *vars;
	struct engine *eng;
	struct replay *rp;
	struct callmodel *cm;
	struct callsum *sum; /* --format html: the effects of each call */
	struct mcpt_pubkey key;
	bool compiled; /* with the header's variables */
	uint64_t loss_records;
	uint64_t released; /* records handed over by the verifier */
	bool has_file_digest;
	uint8_t file_digest[32];
	uint64_t file_length;
	unsigned reads;		     /* of the trace: 1, or 2 */
	struct pass_model_feed feed; /* the one read's model */
	bool loss_met;		     /* by the one read: it gives way to two */
	bool tail_left;		     /* the model left out records after the last seal */
	uint64_t malformed_events;   /* Events no reader may accept (event_malformed) */
	uint64_t first_malformed;    /* the record index of the first of them */
};

/* Policies are loaded and checked before the trace is opened: a broken policy costs nothing. */
static int load_policies(struct run *r)
{
	static const char *const dflt[] = {MW_DEFAULT_POLICY};
	const char *const *files = r->o->n_policies ? r->o->policies : dflt;
	size_t n = r->o->n_policies ? r->o->n_policies : 1;
	struct diag d = {0};
	char err[256];
	int rc = 0;

	if (!r->o->n_policies && cmd_default_policy_readable())
		return -ENOENT;
	for (size_t i = 0; i < r->o->n_sets && !rc; i++) {
		rc = vars__set_arg(r->vars, r->o->sets[i], err, sizeof(err));
		if (rc)
			p_err("%s", err);
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = policy__load_file(r->pol, files[i], &d);
	if (!rc)
		rc = policy__compile(r->pol, r->vars, false, &d);
	diag_print(&d, stderr, "mcpwitness: ");
	diag_fini(&d);
	return rc;
}

/* Once the header is known: the policy is compiled again with the trace's variables. */
static int on_header(struct run *r, const Mcpt__Header *h)
{
	struct diag d = {0};
	int rc;

	if (r->compiled)
		return 0;
	r->compiled = true;
	rc = vars__from_header(r->vars, h);
	rc = rc ?: policy__compile(r->pol, r->vars, true, &d);
	if (log_level() >= LOG_WARN)
		diag_print(&d, stderr, "mcpwitness: ");
	diag_fini(&d);
	return rc ?: engine__set_header(r->eng, h);
}

/* An event as one of the effects of the call it belongs to (the HTML timeline). */
static int add_effect(struct run *r, const Mcpt__Event *e, uint64_t index)
{
	struct attribution a;
	struct ev_view v;

	event_decode(&v, e);
	callmodel__attribute(r->cm, &v, &a);
	return callsum__add(r->sum, &v, &a, index);
}

/* An Event that protobuf-c unpacked though it is not protobuf: an unknown field numbered 0 (a
 * non-minimal tag, "80 00", slips past protobuf-c's check of the first tag byte). Such a record
 * cannot be packed and read back, and no writer makes it: the trace is malformed there. */
static bool event_malformed(const ProtobufCMessage *m)
{
	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return true;
	return false;
}

static int on_record(void *ctx, const struct replay_rec *rr)
{
	struct run *r = ctx;
	int rc = 0;

	r->released++;
	if (!rr->msg)
		return 0;
	if (rr->rec->type == MCPT_T_EVENT && event_malformed(rr->msg)) {
		if (!r->malformed_events++)
			r->first_malformed = rr->rec->index;
		return 0; /* read on: the verdict decides first (refused) */
	}
	/* Nothing is evaluated without the header, whose variables the policy needs: a trace
	 * whose header is never released (its segment failed, later ones held back verified)
	 * is refused by its verdict, as one without a header is. */
	if (!replay__header(r->rp))
		return 0;
	if (rr->rec->type == MCPT_T_HEADER || !r->compiled)
		rc = on_header(r, replay__header(r->rp));
	if (!rc && rr->rec->type == MCPT_T_EVENT)
		rc = engine__event(r->eng, (const Mcpt__Event *)rr->msg, rr->rec->index);
	if (!rc && rr->rec->type == MCPT_T_EVENT && r->sum)
		rc = add_effect(r, (const Mcpt__Event *)rr->msg, rr->rec->index);
	if (!rc && rr->rec->type == MCPT_T_STDIO)
		rc = engine__stdio(r->eng, (const Mcpt__StdioFrame *)rr->msg, rr->rec->index);
	if (!rc && rr->rec->type == MCPT_T_LOSS) {
		r->loss_records++;
		rc = engine__loss(r->eng, (const Mcpt__Loss *)rr->msg, rr->rec->index);
	}
	return rc;
}

/* The one read: the call model and the rules fed from the same records. A Loss record ends it:
 * the events around a loss bound it (callmodel__seen), known only once it is read, so such a
 * trace is read twice instead. */
static int on_record_once(void *ctx, const struct replay_rec *rr)
{
	struct run *r = ctx;
	int rc;

	if (rr->msg && rr->rec->type == MCPT_T_LOSS) {
		r->loss_met = true;
		return -ECANCELED;
	}
	rc = pass_feed_model(&r->feed, rr);
	return rc ?: on_record(ctx, rr);
}

/* One read is enough when nothing evaluated during it needs an attribution: no rule reads a
 * call, no segment is held back (the model of two reads would then see records the rules do
 * not), no HTML timeline (every event's call). */
static bool one_read_enough(const struct run *r)
{
	return !r->o->two_reads && !r->o->verify_before_release && r->o->format != FORMAT_HTML &&
	       !policy_reads_calls(r->pol);
}

/* The reports that name the trace file by its digest and length: all but the text one. */
static bool names_file_digest(enum report_format f)
{
	return f != FORMAT_TEXT;
}

static int read_once(struct run *r, int fd, struct pass_digest *d)
{
	struct callmodel_opts co = {.cancel_grace_ns = r->o->cancel_grace_ns};
	int rc;

	r->reads = 1;
	r->cm = callmodel__new(&co);
	if (!r->cm)
		return -ENOMEM;
	r->feed = (struct pass_model_feed){.cm = r->cm, .rp = r->rp};
	rc = engine__later(r->eng);
	rc = rc ?: engine__set_model(r->eng, r->cm);
	r->has_file_digest = names_file_digest(r->o->format);
	rc = rc
		     ?: pass_once(r->rp, fd, on_record_once, r, d,
				  r->has_file_digest ? r->file_digest : NULL);
	return rc ?: callmodel__resolve(r->cm);
}

/* After a one read that met a Loss record, or fed its model records after the last seal:
 * everything again from the start, in two reads. */
static int start_over(struct run *r, int fd)
{
	struct engine *eng = engine__new(r->pol, r->o->max_per_rule);
	struct replay *rp = replay__new(&r->ro);
	int rc = eng && rp ? 0 : -ENOMEM;

	if (!rc && r->compiled)
		rc = engine__set_header(eng, replay__header(r->rp));
	if (!rc && lseek(fd, 0, SEEK_SET) < 0)
		rc = -errno;
	engine__free(rc ? eng : r->eng);
	replay__free(rc ? rp : r->rp);
	if (rc)
		return rc;
	r->eng = eng;
	r->rp = rp;
	callmodel__free(r->cm);
	r->cm = NULL;
	r->loss_records = r->released = r->malformed_events = 0;
	p_info("%s: %s: reading the trace twice", r->o->trace,
	       r->loss_met ? "a Loss record" : "call records after the last seal");
	return 0;
}

/* The first read: calls, marks, processes (see attribute.h); for the HTML timeline, the sinks
 * of each call's effects. */
static int read_model(struct run *r, int fd, struct pass_digest *d, uint8_t digest[32])
{
	struct callmodel_opts co = {.cancel_grace_ns = r->o->cancel_grace_ns};
	int rc;

	rc = pass_model(fd, &co, !r->o->no_verify, &r->cm, &r->tail_left, d, digest);
	if (!rc)
		rc = engine__set_model(r->eng, r->cm);
	if (!rc && r->o->format == FORMAT_HTML &&
	    !(r->sum = callsum__new(callset__count(callmodel__calls(r->cm)))))
		rc = -ENOMEM;
	return rc;
}

/* Two reads: the model, then the rules; the second read's digest is the whole file's, as
 * verified (the reports name it), and must be the first's. */
static int read_twice(struct run *r, int fd, struct pass_digest *d)
{
	struct pass_digest first;
	uint8_t d1[32];

	r->reads = 2;
	r->has_file_digest = true;
	return read_model(r, fd, &first, d1)
		       ?: pass_second(r->rp, fd, on_record, r, d1, d, r->file_digest);
}

static int read_trace(struct run *r)
{
	struct pass_digest d;
	char err[REPLAY_MESSAGE_MAX];
	int fd, rc;

	r->ro = (struct replay_opts){.allow_unsigned = r->o->allow_unsigned,
				     .hold_segments = r->o->verify_before_release};
	if (!r->o->no_verify) {
		if (cmd_load_pubkey(r->o->pubkey ? r->o->pubkey : MW_DEFAULT_PUBKEY, &r->key))
			return -EINVAL;
		r->ro.key = &r->key;
	}
	r->rp = replay__new(&r->ro);
	if (!r->rp)
		return -ENOMEM;
	fd = pass_open(r->o->trace, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		return fd;
	}
	if (one_read_enough(r)) {
		rc = read_once(r, fd, &d);
		/* a Loss record, or a model fed records no seal proves (two reads leave them out,
		 * pass_model): again from the start */
		if ((rc && r->loss_met) || (!rc && !r->o->no_verify && r->feed.tail_fed))
			rc = start_over(r, fd) ?: read_twice(r, fd, &d);
	} else {
		rc = read_twice(r, fd, &d);
	}
	p_info("%s: read %s", r->o->trace, r->reads == 1 ? "once" : "twice");
	r->has_file_digest = r->has_file_digest && !rc;
	r->file_length = r->has_file_digest ? d.length : 0;
	if (fd > 0)
		close(fd);
	if (rc == -ESTALE)
		p_err("failed to analyze %s: the trace changed while it was read", r->o->trace);
	else if (rc == -ENOBUFS) /* a held segment outgrew its limit: the report says which */
		p_err("failed to analyze %s: %s", r->o->trace,
		      replay_message(replay__report(r->rp), err));
	else if (rc)
		p_err("failed to analyze %s: %s", r->o->trace, strerror(rc < 0 ? -rc : EIO));
	return rc;
}

/* What the read leaves refused before anything else is done with it: not a trace, a failed
 * verification (exit 3, no report), a malformed Event. MW_EXIT_OK to go on. */
static int refused(const struct run *r)
{
	int code = cmd_refuse(r->o->trace, replay__report(r->rp), !r->o->no_verify);

	if (code == MW_EXIT_OK && r->malformed_events) {
		p_err("failed to analyze %s: record %llu is malformed (an Event with a field "
		      "numbered 0)%s",
		      r->o->trace, (unsigned long long)r->first_malformed,
		      r->malformed_events > 1 ? ", and others after it" : "");
		code = MW_EXIT_USAGE;
	}
	return code;
}

/* After the read: the engine's last events, the attributions made later, the call model. */
static int settle(struct run *r)
{
	int rc = engine__finish(r->eng);

	rc = rc ?: engine__settle(r->eng);
	if (!rc)
		callmodel__finish(r->cm);
	if (!rc && r->sum && !(rc = callsum__finish(r->sum)))
		callsum__sort(r->sum);
	if (rc)
		p_err("failed to analyze %s: %s", r->o->trace, strerror(rc < 0 ? -rc : EIO));
	return rc;
}

const char *const report_format_names[FORMAT_COUNT] = {
	[FORMAT_TEXT] = "text",
	[FORMAT_JSON] = "json",
	[FORMAT_SARIF] = "sarif",
	[FORMAT_HTML] = "html",
};

const char *analysis_verdict(const struct analysis *a)
{
	if (!a->verified)
		return "NOT VERIFIED (--no-verify)";
	return mcpt_report_verdict_name(a->rep);
}

const char *analysis_trace_gap(const struct analysis *a)
{
	const struct mcpt_report *rep = a->rep;

	if (!cmd_incomplete(rep, a->verified))
		return NULL;
	if (rep->truncated)
		return "the trace is torn before its FINAL seal (it ends inside a record); what "
		       "followed is missing";
	if (rep->zero_tail)
		return "the trace ends in zero bytes before its FINAL seal; what followed is "
		       "missing";
	if (!rep->final)
		return "the trace ends before its FINAL seal; what followed is missing";
	return "no verified seal covers the end of the trace";
}

bool analysis_coverage_complete(const struct analysis *a)
{
	return !a->loss_records && !analysis_trace_gap(a);
}

void analysis_verdict_view(const struct analysis *a, struct verdict_view *v)
{
	const struct mcpt_report *rep = a->rep;

	memset(v, 0, sizeof(*v));
	v->verdict = analysis_verdict(a);
	v->code = mcpt_code_name(rep->code);
	v->message = replay_message(rep, v->buf);
	v->signatures_checked = a->verified && rep->signatures_checked;
	v->final = rep->final;
	v->records = rep->records;
	v->verified_through_record = rep->verified_through_record;
	v->released_verified_only = a->o->verify_before_release;
	if (v->released_verified_only)
		v->not_released = rep->records > a->released ? rep->records - a->released : 0;
}

int report_write(FILE *out, const struct analysis *a)
{
	switch (a->o->format) {
	case FORMAT_JSON:
		return report_json(out, a);
	case FORMAT_SARIF:
		return report_sarif(out, a);
	case FORMAT_HTML:
		return report_html(out, a);
	case FORMAT_TEXT:
	case FORMAT_COUNT:
		break;
	}
	return report_text(out, a);
}

/* Marks findings whose record no verified seal covers. */
static void mark_unproven(struct analysis *a)
{
	bool complete = a->verified && a->rep->verdict == MCPT_VALID_COMPLETE;

	for (size_t i = 0; i < a->fs->n; i++) {
		struct finding *f = &a->fs->v[i];

		f->unproven = !complete && a->verified &&
			      (a->rep->verified_through_record == 0 ||
			       f->index > a->rep->verified_through_record);
	}
}

/* An incomplete trace (no FINAL seal, torn tail, with or without verification) is reported,
 * but exits 3 unless --allow-incomplete: a gate must not pass on half a trace. */
static int exit_code(const struct analysis *a)
{
	const struct findings *fs = a->fs;
	char msg[REPLAY_MESSAGE_MAX];

	if (cmd_incomplete(a->rep, a->verified) && !a->o->allow_incomplete) {
		p_err("%s: trace incomplete: %s (--allow-incomplete accepts it)", a->o->trace,
		      replay_message(a->rep, msg));
		return MW_EXIT_VERIFY;
	}
	if (a->o->fail_on >= 0)
		for (int s = a->o->fail_on; s < SEV_COUNT; s++)
			if (fs->by_sev[s])
				return MW_EXIT_FINDINGS;
	return MW_EXIT_OK;
}

static int report(struct run *r, FILE *out)
{
	struct analysis a = {
		.o = r->o,
		.pol = r->pol,
		.vars = r->vars,
		.hdr = replay__header(r->rp),
		.rep = replay__report(r->rp),
		.verified = !r->o->no_verify,
		.fs = engine__findings(r->eng),
		.st = engine__stats(r->eng),
		.processes = proctree__count(engine__proctree(r->eng)),
		.malformed = replay__malformed(r->rp),
		.loss_records = r->loss_records,
		.cm = r->cm,
		.released = r->released,
		.has_file_digest = r->has_file_digest,
		.file_length = r->file_length,
		.sum = r->sum,
	};
	int rc;

	memcpy(a.file_digest, r->file_digest, sizeof(a.file_digest));
	mark_unproven(&a);
	findings_sort(a.fs, r->o->format == FORMAT_TEXT ? ORDER_SEVERITY : ORDER_SEQUENCE);
	rc = report_write(out, &a);
	if (cmd_output_done(out, "report", rc))
		return MW_EXIT_USAGE;
	return exit_code(&a);
}

int analyze_run(const struct analyze_opts *o, FILE *out)
{
	return analyze_run_reads(o, out, NULL);
}

int analyze_run_reads(const struct analyze_opts *o, FILE *out, unsigned *reads)
{
	struct run r = {.o = o};
	int code = cmd_check_stdin(o->trace);

	if (code)
		return code;
	code = MW_EXIT_USAGE;
	r.pol = policy__new();
	r.vars = vars__new();
	if (!r.pol || !r.vars) {
		p_err("failed to analyze %s: %s", o->trace, strerror(ENOMEM));
		goto cleanup;
	}
	if (load_policies(&r))
		goto cleanup;
	r.eng = engine__new(r.pol, o->max_per_rule);
	if (!r.eng) {
		p_err("failed to analyze %s: %s", o->trace, strerror(ENOMEM));
		goto cleanup;
	}
	if (read_trace(&r))
		goto cleanup;
	code = refused(&r);
	if (code)
		goto cleanup;
	if (r.tail_left && o->allow_incomplete) /* else refused as incomplete, one line */
		p_warn("%s: records after the last seal do not attribute findings to calls: no "
		       "seal proves them",
		       o->trace);
	code = MW_EXIT_USAGE;
	if (settle(&r))
		goto cleanup;
	code = report(&r, out);
	if (reads)
		*reads = r.reads;
cleanup:
	engine__free(r.eng);
	callmodel__free(r.cm);
	callsum__free(r.sum);
	replay__free(r.rp);
	policy__free(r.pol);
	vars__free(r.vars);
	return code;
}
