/*
 * findings.c - recording, rendering and ordering findings (see findings.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "strbuf.h"

int findings_init(struct findings *fs, size_t n_rules, size_t max_per_rule)
{
	memset(fs, 0, sizeof(*fs));
	fs->max_per_rule = max_per_rule ? max_per_rule : FINDINGS_PER_RULE_DEFAULT;
	fs->n_rules = n_rules;
	fs->per_rule = calloc(n_rules ? n_rules : 1, sizeof(*fs->per_rule));
	return fs->per_rule ? 0 : -ENOMEM;
}

static void finding_fini(struct finding *f)
{
	free(f->message);
	free(f->path);
	free(f->path_arg);
	free(f->opened_path);
	free(f->addr);
	free(f->dns);
	free(f->detail);
	free(f->attempted);
	free(f->matched);
	free(f->exe);
	for (size_t i = 0; i < f->argc; i++)
		free(f->argv[i]);
	free(f->argv);
	for (size_t i = 0; i < f->n_lineage; i++)
		free(f->lineage[i].exe);
	free(f->lineage);
}

void findings_fini(struct findings *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		finding_fini(&fs->v[i]);
	free(fs->v);
	free(fs->per_rule);
	memset(fs, 0, sizeof(*fs));
}

const char *finding_result(const struct finding *f, char *buf, size_t len)
{
	char e[24];

	if (f->result != RES_FAILURE)
		return event_result_name(f->result);
	snprintf(buf, len, "failure %s", event_errno_name(f->err, e, sizeof(e)));
	return buf;
}

/* Escaped copy of b, or NULL when b is empty. *err is set on allocation failure. */
static char *esc(struct ev_bytes b, int *err)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	if (!b.n)
		return NULL;
	strbuf_escape(&sb, b.p, b.n, 0);
	s = strbuf_detach(&sb);
	if (!s)
		*err = -ENOMEM;
	return s;
}

static char *fmt_addr(const struct ev_view *v, int *err)
{
	const struct mw_sockaddr *a = event_sock_addr(v);
	struct strbuf sb = STRBUF_INIT;
	char *s;

	if (!a)
		return NULL;
	sockaddr_format(&sb, a);
	s = strbuf_detach(&sb);
	if (!s)
		*err = -ENOMEM;
	return s;
}

static int fill_argv(struct finding *f, const struct proc *p)
{
	struct ev_bytes all, a;
	size_t pos = 0, n = 0;
	int err = 0;

	if (!p || !p->argv_len)
		return 0;
	all = (struct ev_bytes){p->argv, p->argv_len};
	while (event_argv_next(&all, &pos, &a))
		n++;
	f->argv = calloc(n, sizeof(*f->argv));
	if (!f->argv)
		return -ENOMEM;
	pos = 0;
	while (!err && event_argv_next(&all, &pos, &a)) {
		f->argv[f->argc] = esc(a, &err);
		if (!f->argv[f->argc] && !err)
			f->argv[f->argc] = strdup("");
		if (!f->argv[f->argc++])
			err = -ENOMEM;
	}
	return err;
}

/* argv words joined by spaces, for messages. */
static void put_argv(struct strbuf *sb, const struct finding *f)
{
	for (size_t i = 0; i < f->argc; i++) {
		if (i)
			strbuf_putc(sb, ' ');
		strbuf_puts(sb, f->argv[i]);
	}
}

static bool name_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && strncmp(p, name, n) == 0;
}

/* Appends the value of placeholder p[0..n) ("?" when the event has none); false if p names no
 * placeholder (the braces are then literal text). */
static bool put_placeholder(struct strbuf *sb, const struct finding *f, const char *p, size_t n)
{
	const char *val = NULL;
	char buf[40];

	if (name_is(p, n, "path"))
		val = f->path ? f->path : f->path_arg;
	else if (name_is(p, n, "path_arg"))
		val = f->path_arg;
	else if (name_is(p, n, "opened_path"))
		val = f->opened_path;
	else if (name_is(p, n, "exe"))
		val = f->exe;
	else if (name_is(p, n, "addr"))
		val = f->addr;
	else if (name_is(p, n, "op"))
		val = f->op;
	else if (name_is(p, n, "result"))
		val = finding_result(f, buf, sizeof(buf));
	else if (name_is(p, n, "pid"))
		snprintf(buf, sizeof(buf), "%u", f->pid), val = buf;
	else if (name_is(p, n, "uid"))
		snprintf(buf, sizeof(buf), "%u", f->uid), val = buf;
	else if (name_is(p, n, "dns"))
		val = f->dns;
	else if (name_is(p, n, "detail"))
		val = f->detail;
	else if (name_is(p, n, "attempts"))
		snprintf(buf, sizeof(buf), "%u", f->attempts), val = buf;
	else if (name_is(p, n, "argv") && f->argc)
		put_argv(sb, f), val = "";
	else if (!name_is(p, n, "argv"))
		return false;
	if (!val || (!*val && !name_is(p, n, "argv")))
		val = "?";
	strbuf_puts(sb, val);
	return true;
}

/* Expands the {placeholders} of a rule message with the finding's evidence. */
static char *render_message(const char *tmpl, const struct finding *f)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = tmpl, *end;

	while (*p) {
		end = *p == '{' ? strchr(p, '}') : NULL;
		if (end && put_placeholder(&sb, f, p + 1, (size_t)(end - p - 1))) {
			p = end + 1;
			continue;
		}
		strbuf_putc(&sb, *p++);
	}
	return strbuf_detach(&sb);
}

static int fill_lineage(struct finding *f, const struct proc *p, const struct proctree *pt)
{
	struct lineage_ent ents[LINEAGE_MAX];
	size_t n = p ? proctree__lineage(pt, p, ents, LINEAGE_MAX, &f->lineage_truncated) : 0;
	int err = 0;

	if (!n)
		return 0;
	f->lineage = calloc(n, sizeof(*f->lineage));
	if (!f->lineage)
		return -ENOMEM;
	f->n_lineage = n;
	for (size_t i = 0; i < n; i++) {
		const struct proc *a = ents[i].proc;

		f->lineage[i].pid = ents[i].pid;
		f->lineage[i].exe = esc((struct ev_bytes){a->exe, a->exe_len}, &err);
	}
	return err;
}

static int fill(struct finding *f, const struct ev_view *v, const struct eval_subject *s,
		const struct proc *p, const struct proctree *pt)
{
	const struct attribution *a;
	const struct dns_query *q;
	const char *detail;
	int err = 0;

	f->seq = v->seq;
	f->ts = v->ts;
	f->pid = v->pid;
	f->tid = v->tid;
	f->uid = v->uid;
	f->pstart = v->pstart;
	snprintf(f->op, sizeof(f->op), "%s", v->op_name);
	f->path = esc(v->subject, &err);
	f->path_arg = esc(v->path, &err);
	f->opened_path = esc(v->opened, &err);
	f->addr = fmt_addr(v, &err);
	f->exe = esc(s->exe, &err);
	if ((q = event_dns(v)))
		f->dns = esc((struct ev_bytes){(const uint8_t *)q->name, q->name_len}, &err);
	detail = v->detail ? v->detail : v->describe ? v->describe(v->describe_ctx) : NULL;
	if (detail)
		f->detail = esc((struct ev_bytes){(const uint8_t *)detail, strlen(detail)}, &err);
	/* a failed exec evaluated on its own is one attempt */
	f->attempts = s->attempts ? s->attempts : v->op == MCPT__OP__OP_EXEC_FAILED;
	if (s->attempted && !(f->attempted = strdup(s->attempted)))
		err = -ENOMEM;
	f->dev = v->dev;
	f->ino = v->ino;
	f->differs = event_differs(v);
	err = err ?: fill_argv(f, p);
	f->result = v->result;
	f->err = v->err;
	f->ret = v->ret;
	f->flags = v->flags;
	if ((a = eval_subject_attr(s))) {
		f->has_attr = true;
		f->attr = *a;
		f->attr.matched = NULL;
		if (a->matched && !(f->matched = strdup(a->matched)))
			err = -ENOMEM;
	}
	err = err ?: fill_lineage(f, p, pt);
	if (!err && !(f->message = render_message(f->rule->message, f)))
		err = -ENOMEM;
	return err;
}

int findings_add(struct findings *fs, const struct pol_rule *rule, size_t rule_index,
		 const struct ev_view *v, uint64_t index, const struct eval_subject *s,
		 const struct proc *p, const struct proctree *pt)
{
	struct finding *f;
	int err;

	fs->total++;
	fs->by_sev[rule->severity]++;
	if (rule_index < fs->n_rules && fs->per_rule[rule_index]++ >= fs->max_per_rule) {
		fs->dropped++;
		return 0;
	}
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 16;

		f = realloc(fs->v, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		fs->v = f;
		fs->cap = cap;
	}
	f = &fs->v[fs->n];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->rule_index = rule_index;
	f->index = index;
	err = fill(f, v, s, p, pt);
	if (err) {
		finding_fini(f);
		return err;
	}
	fs->n++;
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* (call, sequence, record, rule id): findings of one call together, in call order; findings
 * outside every call between the calls they happened between. */
static int cmp_stream(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;
	int c = cmp_u64(a->has_attr ? a->attr.order : 0, b->has_attr ? b->attr.order : 0);

	c = c ?: cmp_u64(a->seq, b->seq);

	c = c ?: cmp_u64(a->index, b->index);
	return c ?: strcmp(a->rule->id, b->rule->id);
}

static int cmp_severity(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;

	if (a->rule->severity != b->rule->severity)
		return a->rule->severity > b->rule->severity ? -1 : 1;
	return cmp_stream(pa, pb);
}

void findings_sort(struct findings *fs, enum findings_order order)
{
	if (fs->n > 1)
		qsort(fs->v, fs->n, sizeof(*fs->v),
		      order == ORDER_SEVERITY ? cmp_severity : cmp_stream);
}
