/*
 * policy_field.c - the fields a condition can test, how their values are written and
 * compiled, and how they are read from an event.
 *
 * One table: a field has a name and a value kind. Every value of a test is compiled to a
 * struct fvalue; a test holds when any of its values matches (a list is "any of its items").
 * A field the event does not carry (a path on a connect, an address on an open) makes the test
 * false, so `not:` of it is true.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "events.h"
#include "glob.h"
#include "policy.h"

enum vkind {
	VK_GLOB_PATH, /* glob, '/' is special */
	VK_GLOB_TEXT, /* glob over text (argv), wildcards cross '/' */
	VK_FAMILY,
	VK_OP,
	VK_RESULT,
	VK_AF,
	VK_ERRNO,
	VK_BOOL,
	VK_CIDR,
	VK_PORT,
	VK_BUCKET,
	VK_ATTRIBUTION,
};

enum field_id {
	F_FAMILY,
	F_OP,
	F_PATH,
	F_PATH_ARG,
	F_OPENED_PATH,
	F_EXE,
	F_ARGV,
	F_ADDR,
	F_PORT,
	F_AF,
	F_RESULT,
	F_ERRNO,
	F_WRITE,
	F_LAUNCH,
	F_TRUNCATED,
	F_UNRESOLVED,
	F_TAMPERED,
	F_TOOL,
	F_METHOD,
	F_ARGUMENTS,
	F_BUCKET,
	F_ATTRIBUTION,
};

struct field_desc {
	const char *name;
	enum field_id id;
	enum vkind vk;
};

static const struct field_desc fields[] = {
	{"family", F_FAMILY, VK_FAMILY},
	{"op", F_OP, VK_OP},
	{"path", F_PATH, VK_GLOB_PATH},
	{"path_arg", F_PATH_ARG, VK_GLOB_PATH},
	{"opened_path", F_OPENED_PATH, VK_GLOB_PATH},
	{"exe", F_EXE, VK_GLOB_PATH},
	{"argv", F_ARGV, VK_GLOB_TEXT},
	{"addr", F_ADDR, VK_CIDR},
	{"port", F_PORT, VK_PORT},
	{"af", F_AF, VK_AF},
	{"result", F_RESULT, VK_RESULT},
	{"errno", F_ERRNO, VK_ERRNO},
	{"write", F_WRITE, VK_BOOL},
	{"launch", F_LAUNCH, VK_BOOL},
	{"truncated", F_TRUNCATED, VK_BOOL},
	{"unresolved", F_UNRESOLVED, VK_BOOL},
	{"tampered", F_TAMPERED, VK_BOOL},
	{"tool", F_TOOL, VK_GLOB_TEXT},
	{"method", F_METHOD, VK_GLOB_TEXT},
	{"arguments", F_ARGUMENTS, VK_GLOB_TEXT},
	{"bucket", F_BUCKET, VK_BUCKET},
	{"attribution", F_ATTRIBUTION, VK_ATTRIBUTION},
};

static const char *const af_names[] = {
	[SA_INET] = "inet",	[SA_INET6] = "inet6", [SA_UNIX] = "unix",
	[SA_UNSPEC] = "unspec", [SA_OTHER] = "other",
};

/* Every key a condition mapping can hold, for "did you mean" hints (check_policy tests that
 * each field of the table above is here). */
static const char *const key_names[] = {
	"all",	       "any",	 "not",	      "macro",	    "family",	"op", "path",	"path_arg",
	"opened_path", "exe",	 "argv",      "addr",	    "port",	"af", "result", "errno",
	"write",       "launch", "truncated", "unresolved", "tampered", "tool",
	"method",      "arguments", "bucket",  "attribution", NULL,
};

const char *const *field_key_names(void)
{
	return key_names;
}

const struct field_desc *field_find(const char *name)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

const char *field_name(const struct field_desc *f)
{
	return f->name;
}

bool field_single_value(const struct field_desc *f)
{
	return f->vk == VK_BOOL;
}

/* --- compiling ---------------------------------------------------------------------------- */

struct fcomp {
	struct field_test *t;
	struct pol_compile *pc;
	const struct vars *vs;
	bool warn_unset;
	char unset[64]; /* set by the variable callback: a variable without a value */
	struct diag *d;
	size_t cap;
	const struct pol_list *via; /* the list being expanded, for messages */
	int errors;
};

static int var_cb(void *ctx, const char *name, const char **val, size_t *len)
{
	struct fcomp *fc = ctx;
	int err = vars__get(fc->vs, name, val, len);

	if (err == -ENODATA) {
		snprintf(fc->unset, sizeof(fc->unset), "%s", name);
		*val = "";
		*len = 0;
		return fc->warn_unset ? -ENODATA : 0;
	}
	return err;
}

/* Counts a pattern made void by a variable without a value (one warning per variable). */
static void note_unset(struct pol_compile *pc, const char *name, const struct srcpos *pos)
{
	size_t i;

	for (i = 0; i < pc->n_unset && strcmp(pc->unset[i].name, name); i++)
		;
	if (i == pc->n_unset) {
		if (i == POL_UNSET_MAX)
			return;
		snprintf(pc->unset[i].name, sizeof(pc->unset[i].name), "%s", name);
		pc->unset[i].first = *pos;
		pc->n_unset++;
	}
	pc->unset[i].patterns++;
}

static void value_error(struct fcomp *fc, const struct pol_value *pv, const char *reason)
{
	char *s = pol_strdup_escaped(pv->str, pv->len);

	if (fc->via)
		diag_error(fc->d, &pv->pos, "%s: \"%s\" (item of list \"%s\" used by %s at %u:%u)",
			   reason, s ? s : "?", fc->via->name, fc->t->f->name, fc->t->pos.line,
			   fc->t->pos.col);
	else
		diag_error(fc->d, &pv->pos, "%s: \"%s\"", reason, s ? s : "?");
	free(s);
	fc->errors++;
}

static int compile_glob(struct fcomp *fc, const struct pol_value *pv, struct fvalue *fv)
{
	unsigned flags = fc->t->f->vk == VK_GLOB_PATH ? GLOB_PATH : 0;
	char why[160];

	fc->unset[0] = '\0';
	fv->glob = glob_compile(pv->str, pv->len, flags, var_cb, fc, why, sizeof(why));
	if (fv->glob)
		return 0;
	if (errno == ENOMEM)
		return -ENOMEM;
	if (errno == ENODATA && fc->unset[0]) {
		fv->never = true;
		note_unset(fc->pc, fc->unset, &pv->pos);
		return 0;
	}
	if (fc->warn_unset) {
		/* the syntax was checked before the trace was read: only the trace's values (a
		 * home longer than a pattern may be) can fail here; they must not stop it */
		fv->never = true;
		diag_warn(fc->d, &pv->pos,
			  "%s with this trace's variables; the pattern matches "
			  "nothing",
			  why[0] ? why : "bad pattern");
		return 0;
	}
	value_error(fc, pv, why[0] ? why : "bad pattern");
	return 0;
}

/* An unknown operation: with the nearest known name as a hint. */
static void op_error(struct fcomp *fc, const struct pol_value *pv)
{
	const char *names[256];
	const char *hint;
	char why[96];
	size_t n = 0;

	while (n < 255 && (names[n] = event_op_name_at(n)))
		n++;
	names[n] = NULL;
	hint = pol_suggest(pv->str, names);
	if (hint)
		snprintf(why, sizeof(why), "unknown op (did you mean \"%s\"?)", hint);
	else
		snprintf(why, sizeof(why),
			 "unknown op (the operations are listed in "
			 "policies/README.md)");
	value_error(fc, pv, why);
}

static int parse_port_range(const char *s, int64_t *lo, int64_t *hi)
{
	char *end;
	long a, b;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	a = strtol(s, &end, 10);
	b = a;
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			return -EINVAL;
		b = strtol(end + 1, &end, 10);
	}
	if (*end || a < 0 || b > 65535 || a > b)
		return -EINVAL;
	*lo = a;
	*hi = b;
	return 0;
}

static int lookup_name(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* Enumerations, booleans, CIDRs and ports: no variables, a literal value each. */
static void compile_scalar(struct fcomp *fc, const struct pol_value *pv, struct fvalue *fv)
{
	char why[160];
	int v = -1;

	switch (fc->t->f->vk) {
	case VK_FAMILY:
		if ((v = event_family_by_name(pv->str)) < 0)
			value_error(fc, pv,
				    "unknown family (process, file, network, privilege, "
				    "evasion, channel)");
		break;
	case VK_OP:
		if ((v = event_op_by_name(pv->str)) < 0)
			op_error(fc, pv);
		break;
	case VK_RESULT:
		if ((v = event_result_by_name(pv->str)) < 0)
			value_error(fc, pv, "unknown result (success, failure, pending)");
		break;
	case VK_AF:
		if ((v = lookup_name(pv->str, af_names, sizeof(af_names) / sizeof(af_names[0]))) <
		    0)
			value_error(fc, pv,
				    "unknown address family (inet, inet6, unix, unspec, other)");
		break;
	case VK_ERRNO:
		if ((v = event_errno_by_name(pv->str)) < 0)
			value_error(fc, pv, "unknown errno name");
		break;
	case VK_BOOL:
		v = strcmp(pv->str, "true") == 0 ? 1 : strcmp(pv->str, "false") == 0 ? 0 : -1;
		if (v < 0)
			value_error(fc, pv, "expected true or false");
		break;
	case VK_CIDR:
		if (cidr_parse(&fv->cidr, pv->str, why, sizeof(why)))
			value_error(fc, pv, "bad address or network");
		return;
	case VK_PORT:
		if (parse_port_range(pv->str, &fv->lo, &fv->hi))
			value_error(fc, pv, "bad port or port range (0..65535, \"LO-HI\")");
		return;
	case VK_BUCKET:
		if ((v = attr_bucket_by_name(pv->str)) < 0)
			value_error(fc, pv, "unknown bucket (startup, ambient, shutdown)");
		break;
	case VK_ATTRIBUTION:
		if ((v = attr_rule_by_name(pv->str)) < 0)
			value_error(fc, pv,
				    "unknown attribution (lineage, window, evidence, ambiguous, "
				    "bucket)");
		break;
	default:
		return;
	}
	fv->lo = fv->hi = v;
}

static int push_value(struct fcomp *fc, const struct pol_value *pv)
{
	struct fvalue *fv;

	if (fc->t->n == fc->cap) {
		size_t cap = fc->cap ? fc->cap * 2 : 4;

		fv = realloc(fc->t->v, cap * sizeof(*fv));
		if (!fv)
			return -ENOMEM;
		fc->t->v = fv;
		fc->cap = cap;
	}
	fv = &fc->t->v[fc->t->n++];
	memset(fv, 0, sizeof(*fv));
	fv->pos = pv->pos;
	if (fc->t->f->vk == VK_GLOB_PATH || fc->t->f->vk == VK_GLOB_TEXT)
		return compile_glob(fc, pv, fv);
	compile_scalar(fc, pv, fv);
	return 0;
}

#define LIST_DEPTH_MAX 16

static int push_values(struct fcomp *fc, const struct pol_value *v, size_t n, int depth)
{
	const struct pol_list *saved = fc->via;
	int err = 0;

	if (depth > LIST_DEPTH_MAX) {
		diag_error(fc->d, &fc->t->pos, "lists nested deeper than %d (a cycle?)",
			   LIST_DEPTH_MAX);
		fc->errors++;
		return 0;
	}
	for (size_t i = 0; i < n && !err; i++) {
		if (v[i].ref) {
			fc->via = v[i].ref;
			err = push_values(fc, v[i].ref->items, v[i].ref->n, depth + 1);
			fc->via = saved;
		} else {
			err = push_value(fc, &v[i]);
		}
	}
	return err;
}

/* Paths repeat: a server opens the same files again and again, and every rule tests the same
 * path of an event. Each glob test keeps a direct-mapped cache of its verdict for recently
 * seen strings, compared in full (never by hash alone), so a repeated path costs a hash and a
 * memcmp instead of a glob match per pattern. Strings longer than MEMO_BYTES are matched
 * every time. The verdict depends only on the bytes and the compiled test, so output is
 * unchanged. */
#define MEMO_SLOTS 1024
#define MEMO_BYTES 118

struct memo_slot {
	uint8_t used, hit;
	uint8_t bytes[MEMO_BYTES];
	uint32_t len;
};

struct match_memo {
	struct memo_slot slot[MEMO_SLOTS];
};

static void fvalues_free(struct field_test *t)
{
	for (size_t i = 0; i < t->n; i++)
		glob_free(t->v[i].glob);
	free(t->v);
	t->v = NULL;
	t->n = 0;
	free(t->memo);
	t->memo = NULL;
}

int field_test_compile(struct field_test *t, struct pol_compile *pc)
{
	struct fcomp fc = {
		.t = t, .pc = pc, .vs = pc->vs, .warn_unset = pc->warn_unset, .d = pc->d};
	int err;

	fvalues_free(t);
	err = push_values(&fc, t->src, t->n_src, 0);
	if (err)
		return err;
	if (fc.errors)
		return -EINVAL;
	if (t->f->vk == VK_GLOB_PATH || t->f->vk == VK_GLOB_TEXT) {
		t->memo = calloc(1, sizeof(*t->memo));
		if (!t->memo)
			return -ENOMEM;
	}
	return 0;
}

void field_test_free(struct field_test *t)
{
	if (!t)
		return;
	fvalues_free(t);
	for (size_t i = 0; i < t->n_src; i++)
		pol_value_fini(&t->src[i]);
	free(t->src);
	free(t);
}

/* --- evaluating --------------------------------------------------------------------------- */

static bool match_globs(const struct field_test *t, struct ev_bytes b)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].never && glob_match(t->v[i].glob, b.p, b.n))
			return true;
	return false;
}

static uint64_t memo_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static bool match_bytes(const struct field_test *t, struct ev_bytes b)
{
	struct memo_slot *m;
	bool hit;

	if (!b.n)
		return false;
	if (!t->memo || b.n > MEMO_BYTES)
		return match_globs(t, b);
	m = &t->memo->slot[memo_hash(b.p, b.n) % MEMO_SLOTS];
	if (m->used && m->len == b.n && memcmp(m->bytes, b.p, b.n) == 0)
		return m->hit;
	hit = match_globs(t, b);
	m->used = 1;
	m->hit = hit;
	m->len = (uint32_t)b.n;
	memcpy(m->bytes, b.p, b.n);
	return hit;
}

static bool match_int(const struct field_test *t, int64_t x)
{
	for (size_t i = 0; i < t->n; i++)
		if (x >= t->v[i].lo && x <= t->v[i].hi)
			return true;
	return false;
}

static bool is_ip(const struct ev_view *ev)
{
	return ev->has_addr && (ev->addr.kind == SA_INET || ev->addr.kind == SA_INET6);
}

static bool match_addr(const struct field_test *t, const struct ev_view *ev)
{
	if (!is_ip(ev))
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (cidr_match(&t->v[i].cidr, &ev->addr.ip))
			return true;
	return false;
}

static int af_of(const struct ev_view *ev)
{
	switch (ev->addr.kind) {
	case SA_INET:
	case SA_INET6:
	case SA_UNIX:
	case SA_UNSPEC:
		return ev->addr.kind;
	default:
		return SA_OTHER;
	}
}

/* A text of the call(s) an event belongs to: an ambiguous event matches only when every
 * candidate does (the value is then certain); an event outside every call never matches. */
static const char *call_text(const struct call *c, enum field_id id)
{
	if (!c)
		return NULL;
	if (id == F_TOOL)
		return c->tool;
	if (id == F_METHOD)
		return c->method;
	return c->args_full;
}

static bool match_text(const struct field_test *t, const char *s)
{
	return s && match_bytes(t, (struct ev_bytes){(const uint8_t *)s, strlen(s)});
}

static bool match_call(const struct field_test *t, const struct eval_subject *s)
{
	const struct attribution *a = s->attr;

	if (!a || !s->calls)
		return false;
	if (a->rule == ATTR_AMBIGUOUS) {
		if (a->n_cand < a->n_cand_total || !a->n_cand)
			return false;
		for (size_t i = 0; i < a->n_cand; i++)
			if (!match_text(t, call_text(callset__get(s->calls, a->cand[i]), t->f->id)))
				return false;
		return true;
	}
	return a->call && match_text(t, call_text(callset__get(s->calls, a->call), t->f->id));
}

#define TRUNC_BITS ((1u << MW_SLOTS) - 1)
#define UNRES_BITS (TRUNC_BITS << 8)

bool field_test_eval(const struct field_test *t, const struct eval_subject *s)
{
	const struct ev_view *ev = s->ev;

	switch (t->f->id) {
	case F_FAMILY:
		return match_int(t, ev->family);
	case F_OP:
		return match_int(t, ev->op);
	case F_PATH:
		return match_bytes(t, ev->subject);
	case F_PATH_ARG:
		return match_bytes(t, ev->path);
	case F_OPENED_PATH:
		return match_bytes(t, ev->opened);
	case F_EXE:
		return match_bytes(t, s->exe);
	case F_ARGV:
		return match_bytes(t, s->argv);
	case F_ADDR:
		return match_addr(t, ev);
	case F_PORT:
		return is_ip(ev) && match_int(t, ev->addr.port);
	case F_AF:
		return ev->has_addr && match_int(t, af_of(ev));
	case F_RESULT:
		return match_int(t, ev->result);
	case F_ERRNO:
		return ev->result == RES_FAILURE && match_int(t, ev->err);
	case F_WRITE:
		return ev->has_open && match_int(t, ev->write_intent);
	case F_LAUNCH:
		return match_int(t, s->launch);
	case F_TRUNCATED:
		return match_int(t, (ev->flags & (TRUNC_BITS | MW_F_ARGV_ENTRIES)) != 0);
	case F_UNRESOLVED:
		return match_int(t, (ev->flags & UNRES_BITS) != 0);
	case F_TAMPERED:
		return match_int(t, (ev->flags & MW_F_TAMPERED) != 0);
	case F_TOOL:
	case F_METHOD:
	case F_ARGUMENTS:
		return match_call(t, s);
	case F_BUCKET:
		return s->attr && s->attr->rule == ATTR_BUCKET && match_int(t, s->attr->bucket);
	case F_ATTRIBUTION:
		return s->attr && match_int(t, s->attr->rule);
	}
	return false;
}
