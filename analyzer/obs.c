/*
 * obs.c - verified traces for learn and diff (see obs.h): the two reads of cmd_calls.c, with
 * the process table of engine.c, and the verdict checks of analyze.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "obs.h"
#include "passes.h"

struct obs_run {
	struct obs_trace *t;
	const struct obs_ops *ops;
	void *ctx;
	bool header_done;
};

static int on_header(struct obs_run *r)
{
	const Mcpt__Header *h = replay__header(r->t->rp);
	const Mcpt__Target *tg = h ? h->target : NULL;
	struct strbuf sb = STRBUF_INIT;
	int err;

	r->header_done = true;
	if (h)
		strbuf_hex(&sb, h->trace_id.data, h->trace_id.len < 16 ? h->trace_id.len : 16);
	snprintf(r->t->id, sizeof(r->t->id), "%s", strbuf_str(&sb) ?: "");
	strbuf_fini(&sb);
	err = vars__from_header(r->t->vars, h);
	if (!err && tg)
		err = proctree__set_target(r->t->pt, tg->pid, tg->pstart, &tg->exe, tg->argv,
					   tg->n_argv, tg->attached);
	if (!err && r->ops->header)
		err = r->ops->header(r->ctx, r->t);
	return err;
}

static int on_event(struct obs_run *r, const Mcpt__Event *raw, uint64_t index)
{
	struct obs_trace *t = r->t;
	struct attribution a;
	struct obs_event e = {.index = index};
	struct ev_view v;
	struct proc *p;
	bool launch = false;
	int err;

	event_decode(&v, raw);
	err = proctree__apply(t->pt, &v, &launch);
	p = err ? NULL : proctree__get(t->pt, v.pid, v.pstart);
	if (!p)
		return -ENOMEM;
	callmodel__attribute(t->cm, &v, &a);
	t->events++;
	e.v = &v;
	e.a = &a;
	/* as engine.c: before its first exec, the server process is the collector's launcher */
	e.launch = launch || (p->is_target && p->launching && p->execs == 0);
	e.server = p->is_target;
	e.exe = (struct ev_bytes){p->exe, p->exe_len};
	e.argv = (struct ev_bytes){p->argv, p->argv_len};
	return r->ops->event(r->ctx, t, &e);
}

static int on_record(void *ctx, const struct replay_rec *rr)
{
	struct obs_run *r = ctx;
	int err = 0;

	if (!rr->msg)
		return 0;
	if (!r->header_done)
		err = on_header(r);
	if (!err && rr->rec->type == MCPT_T_EVENT)
		err = on_event(r, (const Mcpt__Event *)rr->msg, rr->rec->index);
	return err;
}

/* Both reads; -ESTALE when the file changed between them. */
static int read_both(struct obs_run *r, int fd, const struct callmodel_opts *co)
{
	struct pass_digest first, second;
	uint8_t d1[32], d2[32];
	int rc;

	rc = pass_model(fd, co, true, &r->t->cm, NULL, &first, d1);
	if (rc)
		return rc;
	rc = pass_second(r->t->rp, fd, on_record, r, d1, &second, d2);
	if (rc == -ESTALE)
		return rc;
	callmodel__finish(r->t->cm);
	return rc;
}

/* Exit code of the verdict: refused, incomplete, or 0; an incomplete trace accepted is said
 * to be used unproven. */
static int verdict_code(const struct obs_trace *t, const struct obs_opts *o)
{
	const struct mcpt_report *rep = replay__report(t->rp);
	char msg[REPLAY_MESSAGE_MAX];
	int code = cmd_refuse(t->path, rep, true);

	if (code || !cmd_incomplete(rep, true))
		return code;
	if (!o->allow_incomplete) {
		p_err("%s: trace incomplete: %s (--allow-incomplete accepts it)", t->path,
		      replay_message(rep, msg));
		return MW_EXIT_VERIFY;
	}
	p_warn("%s: trace incomplete, its records after the last verified seal used unproven "
	       "(--allow-incomplete): %s",
	       t->path, replay_message(rep, msg));
	return MW_EXIT_OK;
}

int obs_read(struct obs_trace *t, const char *path, const struct obs_opts *o,
	     const struct obs_ops *ops, void *ctx)
{
	/* held back until its seal verified, unless an unsealed tail is to be used at all */
	struct replay_opts ro = {.hold_segments = !o->allow_incomplete};
	struct callmodel_opts co = {0};
	struct obs_run r = {.t = t, .ops = ops, .ctx = ctx};
	struct mcpt_pubkey key;
	char err[REPLAY_MESSAGE_MAX];
	int fd, rc;

	t->path = path;
	if (cmd_load_pubkey(o->pubkey ? o->pubkey : MW_DEFAULT_PUBKEY, &key))
		return MW_EXIT_USAGE;
	ro.key = &key;
	t->rp = replay__new(&ro);
	t->vars = vars__new();
	t->pt = proctree__new();
	if (!t->rp || !t->vars || !t->pt) {
		p_err("failed to read %s: %s", path, strerror(ENOMEM));
		return MW_EXIT_USAGE;
	}
	fd = pass_open(path, err, sizeof(err));
	if (fd < 0) {
		p_err("%s", err);
		return MW_EXIT_USAGE;
	}
	rc = read_both(&r, fd, &co);
	if (fd > 0)
		close(fd);
	if (!rc && !r.header_done && replay__header(t->rp))
		rc = on_header(&r); /* no record released: the trace is still named */
	if (rc == -ENOBUFS)
		p_err("failed to read %s: %s", path, replay_message(replay__report(t->rp), err));
	else if (rc)
		p_err("failed to read %s: %s", path,
		      rc == -ESTALE ? "the trace changed while it was read"
				    : strerror(rc < 0 ? -rc : EIO));
	return rc ? MW_EXIT_USAGE : verdict_code(t, o);
}

const char *obs_verdict(const struct obs_trace *t)
{
	return t->rp ? mcpt_report_verdict_name(replay__report(t->rp)) : "?";
}

void obs_fini(struct obs_trace *t)
{
	if (!t)
		return;
	proctree__free(t->pt);
	vars__free(t->vars);
	callmodel__free(t->cm);
	replay__free(t->rp);
	memset(t, 0, sizeof(*t));
}
