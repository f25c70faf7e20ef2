/*
 * policy_field.c - the fields a condition can test and how their values are written and
 * compiled (policy_eval.c reads them from a subject).
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
#include "policy_field.h"

static const struct field_desc fields[] = {
	{"family", F_FAMILY, VK_FAMILY, FAMS_ALL},
	{"op", F_OP, VK_OP, FAMS_ALL},
	{"path", F_PATH, VK_GLOB_PATH, FAMS_PATHS},
	{"path_arg", F_PATH_ARG, VK_GLOB_PATH, FAMS_PATHS},
	{"opened_path", F_OPENED_PATH, VK_GLOB_PATH, FAMS_PATHS},
	{"exe", F_EXE, VK_GLOB_PATH, FAMS_ALL},
	{"argv", F_ARGV, VK_GLOB_TEXT, FAMS_ALL},
	{"addr", F_ADDR, VK_CIDR, FAMS_NET},
	{"port", F_PORT, VK_PORT, FAMS_NET},
	{"af", F_AF, VK_AF, FAMS_NET},
	{"result", F_RESULT, VK_RESULT, FAMS_EVENTS},
	{"errno", F_ERRNO, VK_ERRNO, FAMS_EVENTS},
	{"write", F_WRITE, VK_BOOL, FAM_BIT(FAM_FILE) | FAM_BIT(FAM_EVASION)},
	{"launch", F_LAUNCH, VK_BOOL, FAMS_ALL},
	{"truncated", F_TRUNCATED, VK_BOOL, FAMS_ALL},
	{"unresolved", F_UNRESOLVED, VK_BOOL, FAMS_ALL},
	{"tampered", F_TAMPERED, VK_BOOL, FAMS_ALL},
	{"unchecked", F_UNCHECKED, VK_BOOL, FAMS_ALL},
	{"differs", F_DIFFERS, VK_BOOL, FAMS_ALL},
	{"target", F_TARGET, VK_GLOB_PATH, FAMS_PATHS},
	{"exec_bits", F_EXEC_BITS, VK_BOOL, FAM_BIT(FAM_FILE)},
	{"dev", F_DEV, VK_DEV, FAMS_PATHS},
	{"ino", F_INO, VK_INT, FAMS_PATHS},
	{"dns", F_DNS, VK_GLOB_TEXT, FAMS_NET},
	{"uid", F_UID, VK_INT, FAMS_EVENTS},
	{"parent_exe", F_PARENT_EXE, VK_GLOB_PATH, FAMS_ALL},
	{"ancestor_exe", F_ANCESTOR_EXE, VK_GLOB_PATH, FAMS_ALL},
	{"server", F_SERVER, VK_BOOL, FAMS_ALL},
	{"tool", F_TOOL, VK_GLOB_TEXT, FAMS_ALL},
	{"method", F_METHOD, VK_GLOB_TEXT, FAMS_ALL},
	{"arguments", F_ARGUMENTS, VK_GLOB_TEXT, FAMS_ALL},
	{"bucket", F_BUCKET, VK_BUCKET, FAMS_ALL},
	{"attribution", F_ATTRIBUTION, VK_ATTRIBUTION, FAMS_ALL},
	{"message", F_MESSAGE, VK_GLOB_TEXT, FAMS_CHANNEL},
	{"direction", F_DIRECTION, VK_DIRECTION, FAMS_CHANNEL},
	{"kind", F_KIND, VK_MSGKIND, FAMS_CHANNEL},
	{"foreign", F_FOREIGN, VK_BOOL, FAMS_EVENTS},
	{"new_namespaces", F_NEW_NAMESPACES, VK_BOOL, FAM_BIT(FAM_PROCESS)},
	{"socket_path", F_SOCKET_PATH, VK_GLOB_PATH, FAMS_NET},
	{"exit_code", F_EXIT_CODE, VK_INT, FAM_BIT(FAM_PROCESS)},
	{"exit_signal", F_EXIT_SIGNAL, VK_SIGNAL, FAM_BIT(FAM_PROCESS)},
	{"proc_self", F_PROC_SELF, VK_BOOL, FAMS_PATHS},
};

static const char *const af_names[] = {
	[SA_INET] = "inet",	[SA_INET6] = "inet6", [SA_UNIX] = "unix",
	[SA_UNSPEC] = "unspec", [SA_OTHER] = "other",
};

/* Every key a condition mapping can hold, for "did you mean" hints (check_policy tests that
 * each field of the table above is here). */
static const char *const key_names[] = {
	"all",	      "any",	      "not",	      "macro",	   "family",	 "op",
	"path",	      "path_arg",     "opened_path",  "exe",	   "argv",	 "addr",
	"port",	      "af",	      "result",	      "errno",	   "write",	 "launch",
	"truncated",  "unresolved",   "tampered",     "unchecked", "differs",	 "dev",
	"ino",	      "dns",	      "uid",	      "parent_exe", "ancestor_exe", "server",
	"tool",	      "method",	      "arguments",    "bucket",	   "attribution", "message",
	"direction",  "kind",	      "target",	      "exec_bits", "foreign",	 "new_namespaces",
	"socket_path", "exit_code",	"exit_signal", "proc_self", NULL,
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

	fc->t->reads_vars = true;
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

/* An error whose text already names the value (cidr_parse's reasons). */
static void value_error_named(struct fcomp *fc, const struct pol_value *pv, const char *text)
{
	if (fc->via)
		diag_error(fc->d, &pv->pos, "%s (item of list \"%s\" used by %s at %s:%u:%u)", text,
			   fc->via->name, fc->t->f->name, fc->t->pos.file ? fc->t->pos.file : "?",
			   fc->t->pos.line, fc->t->pos.col);
	else
		diag_error(fc->d, &pv->pos, "%s", text);
	fc->errors++;
}

static void value_error(struct fcomp *fc, const struct pol_value *pv, const char *reason)
{
	char *s = pol_strdup_escaped(pv->str, pv->len);

	if (fc->via)
		diag_error(
			fc->d, &pv->pos, "%s: \"%s\" (item of list \"%s\" used by %s at %s:%u:%u)",
			reason, s ? s : "?", fc->via->name, fc->t->f->name,
			fc->t->pos.file ? fc->t->pos.file : "?", fc->t->pos.line, fc->t->pos.col);
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

/* "N" or "LO-HI", unsigned 64-bit decimal numbers (uid, ino). */
static int parse_int_range(const char *s, int64_t *lo, int64_t *hi)
{
	unsigned long long a, b;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	a = strtoull(s, &end, 10);
	b = a;
	if (*end == '-') {
		if (end[1] < '0' || end[1] > '9')
			return -EINVAL;
		b = strtoull(end + 1, &end, 10);
	}
	if (*end || errno || a > b || b > INT64_MAX)
		return -EINVAL;
	*lo = (int64_t)a;
	*hi = (int64_t)b;
	return 0;
}

/* "MAJOR:MINOR" as st_dev encodes it (glibc's makedev). */
static int parse_dev(const char *s, int64_t *out)
{
	unsigned long maj, min;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	maj = strtoul(s, &end, 10);
	if (*end != ':' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	min = strtoul(end + 1, &end, 10);
	if (*end || maj > 0xfffff || min > 0xfffff)
		return -EINVAL;
	*out = (int64_t)(((uint64_t)(maj & 0xfffff000) << 32) | ((uint64_t)(maj & 0xfff) << 8) |
			 ((uint64_t)(min & 0xffffff00) << 12) | (min & 0xff));
	return 0;
}

static const char *const dir_names[] = {"in", "out"};

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
				    "evasion, channel, health)");
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
			value_error_named(fc, pv, why);
		return;
	case VK_PORT:
		if (parse_port_range(pv->str, &fv->lo, &fv->hi))
			value_error(fc, pv, "bad port or port range (0..65535, \"LO-HI\")");
		return;
	case VK_INT:
		if (parse_int_range(pv->str, &fv->lo, &fv->hi))
			value_error(fc, pv, "bad number or range (\"N\" or \"LO-HI\")");
		return;
	case VK_DEV:
		if (parse_dev(pv->str, &fv->lo))
			value_error(fc, pv, "bad device (\"MAJOR:MINOR\")");
		fv->hi = fv->lo;
		return;
	case VK_DIRECTION:
		if ((v = lookup_name(pv->str, dir_names, 2)) < 0)
			value_error(fc, pv,
				    "unknown direction (in: client to server, out: server to client)");
		break;
	case VK_MSGKIND:
		if ((v = event_msg_kind_by_name(pv->str)) < 0)
			value_error(fc, pv,
				    "unknown message kind (request, response, notification, other)");
		break;
	case VK_SIGNAL:
		if ((v = event_signal_by_name(pv->str)) < 0)
			value_error(fc, pv, "unknown signal (a name such as SIGSYS, or 1..64)");
		break;
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

/* The values of v[0..n), lists expanded: count_values has checked them (no cycle, at most
 * LIST_DEPTH_MAX deep, within POL_VALUES_MAX), so the recursion is bounded. */
static int push_values(struct fcomp *fc, const struct pol_value *v, size_t n)
{
	const struct pol_list *saved = fc->via;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (v[i].ref) {
			fc->via = v[i].ref;
			err = push_values(fc, v[i].ref->items, v[i].ref->n);
			fc->via = saved;
		} else {
			err = push_value(fc, &v[i]);
		}
	}
	return err;
}

enum { LIST_UNSEEN = 0, LIST_OPEN, LIST_DONE };

/* How many values l expands to, saturated at POL_VALUES_MAX + 1 and kept in l until the next
 * compilation (policy__compile forgets the counts: a file loaded since may have changed a
 * list), so a list used ten times by the next costs one count: -ELOOP when l
 * includes itself through other lists, -E2BIG deeper than LIST_DEPTH_MAX. */
static int64_t list_values(struct pol_list *l, int depth)
{
	uint64_t n = 0;

	if (l->expand_state == LIST_DONE)
		return l->n_expanded;
	if (l->expand_state == LIST_OPEN)
		return -ELOOP;
	if (depth > LIST_DEPTH_MAX)
		return -E2BIG;
	l->expand_state = LIST_OPEN;
	for (size_t i = 0; i < l->n; i++) {
		int64_t k = l->items[i].ref ? list_values(l->items[i].ref, depth + 1) : 1;

		if (k < 0) {
			l->expand_state = LIST_UNSEEN;
			return k;
		}
		n += (uint64_t)k;
		if (n > POL_VALUES_MAX)
			n = POL_VALUES_MAX + 1;
	}
	l->n_expanded = (uint32_t)n;
	l->expand_state = LIST_DONE;
	return (int64_t)n;
}

/* Counts t's values before they are built: 0, or an error in d (a cycle, lists nested too
 * deep, or more values than a policy may hold). */
static int count_values(struct fcomp *fc)
{
	const struct field_test *t = fc->t;
	uint64_t n = 0;

	for (size_t i = 0; i < t->n_src; i++) {
		int64_t k = t->src[i].ref ? list_values(t->src[i].ref, 1) : 1;

		if (k == -ELOOP)
			diag_error(fc->d, &t->src[i].pos,
				   "list \"%s\" includes itself through other lists",
				   t->src[i].ref->name);
		else if (k == -E2BIG)
			diag_error(fc->d, &t->src[i].pos, "list \"%s\" nests lists deeper than %d",
				   t->src[i].ref->name, LIST_DEPTH_MAX);
		if (k < 0)
			return -EINVAL;
		n += (uint64_t)k;
	}
	fc->pc->n_values += n;
	if (n > POL_VALUES_MAX) {
		diag_error(fc->d, &t->pos,
			   "this test's lists expand to more than %d values, the most a policy may "
			   "hold",
			   POL_VALUES_MAX);
		return -EINVAL;
	}
	if (fc->pc->n_values > POL_VALUES_MAX) {
		diag_error(fc->d, &t->pos,
			   "with this test's %llu values (lists expanded) the policy's tests hold more "
			   "than %d, the most a policy may hold",
			   (unsigned long long)n, POL_VALUES_MAX);
		return -EINVAL;
	}
	return 0;
}

static void fvalues_free(struct field_test *t)
{
	for (size_t i = 0; i < t->n; i++)
		glob_free(t->v[i].glob);
	free(t->v);
	t->v = NULL;
	t->n = 0;
	t->memo = NULL;
}

int field_test_compile(struct field_test *t, struct pol_compile *pc)
{
	struct fcomp fc = {
		.t = t, .pc = pc, .vs = pc->vs, .warn_unset = pc->warn_unset, .d = pc->d};
	int err;

	if (!pc->vars_only || t->reads_vars) {
		fvalues_free(t);
		t->reads_vars = false;
		err = count_values(&fc);
		if (err)
			return err;
		err = push_values(&fc, t->src, t->n_src);
		if (err)
			return err;
		if (fc.errors)
			return -EINVAL;
	}
	t->memo = NULL;
	if ((t->f->vk == VK_GLOB_PATH || t->f->vk == VK_GLOB_TEXT) && pc->memo) {
		t->memo = pc->memo;
		t->memo_bit = pc->n_memo++;
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
