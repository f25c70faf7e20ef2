/*
 * policy.c - policy files: reading and digesting them, the top level (version, lists, macros,
 * rules), lists and macros, the definitions table, and compilation of the whole set.
 * Rules are parsed in policy_rule.c, conditions in policy_cond.c, field values in
 * policy_field.c, shared helpers in policy_util.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "strbuf.h"

struct policy *policy__new(void)
{
	struct policy *p = calloc(1, sizeof(struct policy));

	/* without the name tables, lookups scan (policy_names.c) */
	if (p)
		p->names = policy_names_new();
	return p;
}

static int ptr_push(void *arrp, size_t *n, void *item)
{
	void ***arr = arrp;
	void **v = realloc(*arr, (*n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*arr = v;
	v[(*n)++] = item;
	return 0;
}

/* --- values and lists --------------------------------------------------------------------- */

int pol_value_parse(struct pol_loader *ld, const struct ynode *n, struct pol_value *out)
{
	memset(out, 0, sizeof(*out));
	out->pos = n->pos;
	if (!ynode_is_string(n)) {
		diag_error(ld->d, &n->pos, "expected a value (a scalar), not %s",
			   ynode_kind_name(n));
		return -EINVAL;
	}
	if (strlen(n->str) != n->len) {
		diag_error(ld->d, &n->pos, "a value cannot hold a NUL byte");
		return -EINVAL;
	}
	if (n->str[0] == '@') {
		out->ref = policy_find_list(ld->p, n->str + 1);
		if (!out->ref) {
			char *s = pol_strdup_escaped(n->str + 1, n->len - 1);

			diag_error(ld->d, &n->pos,
				   "unknown list \"%s\" (lists must be defined before "
				   "use)",
				   s ? s : "?");
			free(s);
			return -EINVAL;
		}
		return 0;
	}
	out->str = strdup(n->str);
	if (!out->str) {
		diag_error(ld->d, &n->pos, "out of memory");
		return -ENOMEM;
	}
	out->len = n->len;
	return 0;
}

void pol_value_fini(struct pol_value *v)
{
	free(v->str);
	v->str = NULL;
}

static void list_free(struct pol_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		pol_value_fini(&l->items[i]);
	free(l->items);
	free(l->name);
	free(l);
}

static int list_add_items(struct pol_loader *ld, struct pol_list *l, const struct ynode *seq)
{
	struct pol_value *v;
	int errs = 0;

	if (seq->kind != YN_SEQ) {
		diag_error(ld->d, &seq->pos, "list \"%s\" takes a sequence of values, not %s",
			   l->name, ynode_kind_name(seq));
		return -EINVAL;
	}
	v = realloc(l->items, (l->n + seq->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->items = v;
	for (size_t i = 0; i < seq->n; i++) {
		if (pol_value_parse(ld, seq->kids[i], &l->items[l->n])) {
			errs++;
			continue;
		}
		if (l->items[l->n].ref == l) {
			diag_error(ld->d, &seq->kids[i]->pos, "list \"%s\" includes itself",
				   l->name);
			errs++;
			continue;
		}
		l->n++;
	}
	return errs ? -EINVAL : 0;
}

static const char *const listdef_keys[] = {"items", "override", NULL};

/* "name: [items]" or "name: {items: [...], override: append|replace}". */
static int list_parse(struct pol_loader *ld, const struct ynode *key, const struct ynode *val)
{
	const struct ynode *items = val, *ov = NULL;
	struct pol_list *l, *old;
	int err;

	if (pol_check_name(ld, key, "list name"))
		return -EINVAL;
	if (val->kind == YN_MAP) {
		if (pol_check_keys(ld, val, listdef_keys, "list definition"))
			return -EINVAL;
		items = ynode_get(val, "items");
		ov = ynode_get(val, "override");
		if (!items) {
			diag_error(ld->d, &val->pos, "list \"%s\" has no \"items\"", key->str);
			return -EINVAL;
		}
	}
	old = policy_find_list(ld->p, key->str);
	err = pol_override_check(ld, key, ov, old ? &old->pos : NULL, "list");
	if (err < 0)
		return err;
	if (err == POL_OVERRIDE_REPLACE) {
		for (size_t i = 0; i < old->n; i++)
			pol_value_fini(&old->items[i]);
		old->n = 0;
	}
	if (old)
		return list_add_items(ld, old, items);
	l = calloc(1, sizeof(*l));
	if (!l || !(l->name = strdup(key->str))) {
		free(l);
		return -ENOMEM;
	}
	l->pos = key->pos;
	err = list_add_items(ld, l, items);
	if (!err)
		err = ptr_push(&ld->p->lists, &ld->p->n_lists, l);
	if (err)
		list_free(l);
	return err;
}

/* --- macros ------------------------------------------------------------------------------- */

static void macro_free(struct pol_macro *m)
{
	if (!m)
		return;
	cond_free(m->cond);
	free(m->name);
	free(m);
}

/* Macros using macros this deep are refused when overridden: the bound of cond_uses's
 * recursion, far past what a rule may use (POL_DEPTH_MAX, policy_bounds.c). */
#define USES_DEPTH_MAX 4096

/* Does c use macro m, directly or through other macros? 1, 0, or -E2BIG past USES_DEPTH_MAX
 * levels. Each macro is looked into once (seen[], by index): linear in the policy, however
 * often a macro is used by the next. */
static int cond_uses(const struct cond *c, const struct pol_macro *m, uint8_t *seen, int depth)
{
	int r;

	if (depth > USES_DEPTH_MAX)
		return -E2BIG;
	if (c->kind == COND_MACRO) {
		if (c->macro == m)
			return 1;
		if (seen[c->macro->index])
			return 0;
		seen[c->macro->index] = 1;
		return cond_uses(c->macro->cond, m, seen, depth + 1);
	}
	for (size_t i = 0; i < c->n; i++)
		if ((r = cond_uses(c->kids[i], m, seen, depth + 1)) != 0)
			return r;
	return 0;
}

static const char *const macrodef_keys[] = {"condition", "override", NULL};

/* An override of an earlier macro: append (the old condition or the new one) or replace. */
static int macro_override(struct pol_loader *ld, const struct ynode *key, struct pol_macro *m,
			  int how, const struct ynode *cond_node)
{
	struct cond *c = cond_parse(ld, cond_node, 0), *any;
	uint8_t *seen;
	int uses;

	if (!c)
		return -EINVAL;
	seen = calloc(ld->p->n_macros + 1, 1);
	uses = seen ? cond_uses(c, m, seen, 0) : -ENOMEM;
	free(seen);
	if (uses) {
		if (uses == 1)
			diag_error(ld->d, &cond_node->pos, "macro \"%s\" would use itself", key->str);
		else if (uses == -E2BIG)
			diag_error(ld->d, &cond_node->pos,
				   "macro \"%s\": its condition nests more than %d levels deep "
				   "through macros",
				   key->str, USES_DEPTH_MAX);
		cond_free(c);
		return uses == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	if (how == POL_OVERRIDE_REPLACE) {
		cond_free(m->cond);
		m->cond = c;
		return 0;
	}
	any = calloc(1, sizeof(*any));
	if (!any || !(any->kids = calloc(2, sizeof(*any->kids)))) {
		free(any);
		cond_free(c);
		return -ENOMEM;
	}
	any->kind = COND_ANY;
	any->pos = key->pos;
	any->kids[0] = m->cond;
	any->kids[1] = c;
	any->n = 2;
	m->cond = any;
	return 0;
}

/* "name: COND" or "name: {condition: COND, override: append|replace}". */
static int macro_parse(struct pol_loader *ld, const struct ynode *key, const struct ynode *val)
{
	const struct ynode *cond_node = val, *ov = NULL;
	struct pol_macro *m, *old;
	int err;

	if (pol_check_name(ld, key, "macro name"))
		return -EINVAL;
	if (val->kind == YN_MAP && (ynode_get(val, "condition") || ynode_get(val, "override"))) {
		if (pol_check_keys(ld, val, macrodef_keys, "macro definition"))
			return -EINVAL;
		cond_node = ynode_get(val, "condition");
		ov = ynode_get(val, "override");
		if (!cond_node) {
			diag_error(ld->d, &val->pos, "macro \"%s\" has no \"condition\"", key->str);
			return -EINVAL;
		}
	}
	old = policy_find_macro(ld->p, key->str);
	err = pol_override_check(ld, key, ov, old ? &old->pos : NULL, "macro");
	if (err < 0)
		return err;
	if (old)
		return macro_override(ld, key, old, err, cond_node);
	m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(key->str))) {
		free(m);
		return -ENOMEM;
	}
	m->pos = key->pos;
	m->index = ld->p->n_macros;
	m->cond = cond_parse(ld, cond_node, 0);
	err = m->cond ? ptr_push(&ld->p->macros, &ld->p->n_macros, m) : -EINVAL;
	if (err)
		macro_free(m);
	return err;
}

/* Runs parse over the entries of a mapping section; errors in one entry do not stop the
 * others, so one run reports them all. */
static int section_each(struct pol_loader *ld, const struct ynode *map, const char *what,
			int (*parse)(struct pol_loader *, const struct ynode *,
				     const struct ynode *))
{
	int err, ret = 0;

	if (map->kind != YN_MAP) {
		if (ynode_is_null(map))
			return 0;
		diag_error(ld->d, &map->pos, "\"%s\" takes a mapping of names, not %s", what,
			   ynode_kind_name(map));
		return -EINVAL;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		err = parse(ld, map->kids[i], map->kids[i + 1]);
		if (err == -ENOMEM)
			return err;
		ret = ret ?: err;
	}
	return ret;
}

/* --- files and the top level -------------------------------------------------------------- */

static int read_all(int fd, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0, cap;
	bool sized;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return -ENOTSUP; /* a device: no end to trust (/dev/zero), or one that blocks */
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > POLICY_FILE_MAX)
		return -EFBIG;
	/* a regular file: its size, a short read is an error (it shrank); a pipe (<(...)), or a
	 * file that gives no size (/proc, /sys): to its end, up to one byte past the limit, to
	 * tell a policy at it from one beyond */
	sized = S_ISREG(st.st_mode) && st.st_size > 0;
	cap = sized ? (size_t)st.st_size : POLICY_FILE_MAX + 1;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	while (got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && !sized)
			break;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	if (got > POLICY_FILE_MAX) {
		free(buf);
		return -EFBIG;
	}
	*out = buf;
	*len = got;
	return 0;
}

static int add_file(struct policy *p, const char *path, struct pol_file **out)
{
	struct pol_file *v = realloc(p->files, (p->n_files + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->files = v;
	memset(&v[p->n_files], 0, sizeof(*v));
	v[p->n_files].path = strdup(path);
	if (!v[p->n_files].path)
		return -ENOMEM;
	*out = &v[p->n_files++];
	return 0;
}

static const char *const top_keys[] = {"version", "lists", "macros", "rules", NULL};

static int check_version(struct pol_loader *ld, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "version");
	int64_t ver;

	if (!v) {
		diag_error(ld->d, &root->pos,
			   "missing \"version\" (this analyzer reads version %d)", POLICY_VERSION);
		return -EINVAL;
	}
	if (ynode_int(v, &ver)) {
		char *q = v->kind == YN_SCALAR ? pol_strdup_escaped(v->str, v->len) : NULL;

		if (q)
			diag_error(ld->d, &v->pos, "\"version\" takes an integer, not %s\"%s\"",
				   v->quoted ? "the string " : "", q);
		else
			diag_error(ld->d, &v->pos, "\"version\" takes an integer, not %s",
				   ynode_kind_name(v));
		free(q);
		return -EINVAL;
	}
	if (ver != POLICY_VERSION) {
		diag_error(ld->d, &v->pos,
			   "unsupported policy version %lld (this analyzer reads %d)",
			   (long long)ver, POLICY_VERSION);
		return -EINVAL;
	}
	return 0;
}

/* Sections in a fixed order (lists, macros, rules) whatever their order in the file. */
static int load_root(struct pol_loader *ld, const struct ynode *root)
{
	const struct ynode *sec;
	int err, ret;

	if (root->kind != YN_MAP) {
		diag_error(ld->d, &root->pos,
			   "a policy is a mapping (version, lists, macros, rules), "
			   "not %s",
			   ynode_kind_name(root));
		return -EINVAL;
	}
	/* an unknown key is one error among the others; a version this analyzer does not read
	 * ends the file's checks (its sections may mean something else) */
	ret = pol_check_keys(ld, root, top_keys, "top-level");
	err = check_version(ld, root);
	if (err)
		return ret ?: err;
	if ((sec = ynode_get(root, "lists")) &&
	    (err = section_each(ld, sec, "lists", list_parse)) && !ret)
		ret = err;
	if ((sec = ynode_get(root, "macros")) &&
	    (err = section_each(ld, sec, "macros", macro_parse)) && !ret)
		ret = err;
	if ((sec = ynode_get(root, "rules")) && (err = rules_parse(ld, sec)) && !ret)
		ret = err;
	return ret;
}

int policy__load_file(struct policy *p, const char *path, struct diag *d)
{
	struct pol_loader ld = {.p = p, .d = d};
	struct ynode *root = NULL;
	struct pol_file *f;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd = -1, err;

	p->compiled = false; /* its lists, macros and rules may change the others */
	err = add_file(p, path, &f);
	if (err)
		goto cleanup;
	ld.file = f->path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : read_all(fd, &buf, &len);
	if (err) {
		struct srcpos whole = {.file = f->path};

		diag_error(d, &whole, "failed to read policy: %s",
			   err == -EFBIG     ? "larger than 16 MiB"
			   : err == -ENOTSUP ? "not a regular file or a pipe"
					     : strerror(-err));
		goto cleanup;
	}
	f->size = len;
	crypto_generichash(f->digest, sizeof(f->digest), buf, len, NULL, 0);
	root = ytree_parse(f->path, buf, len, d);
	err = root ? load_root(&ld, root) : -EINVAL;
cleanup:
	if (fd >= 0)
		close(fd);
	ynode_free(root);
	free(buf);
	return err;
}

/* One warning per variable without a value, at its first use. */
static void warn_unset(const struct pol_compile *pc)
{
	for (size_t i = 0; i < pc->n_unset; i++)
		diag_warn(pc->d, &pc->unset[i].first,
			  "variable ${%s} has no value in this trace: "
			  "patterns using it match nothing (%u use%s, the first here)",
			  pc->unset[i].name, pc->unset[i].patterns,
			  pc->unset[i].patterns == 1 ? "" : "s");
}

int policy__compile(struct policy *p, const struct vars *vs, bool warn, struct diag *d)
{
	struct pol_compile pc = {.vs = vs, .warn_unset = warn, .d = d, .vars_only = p->compiled};
	int err = match_memo_size(&p->memo, 0), e; /* every test's old verdicts go */

	p->compiled = false;
	if (err)
		return err;
	pc.memo = p->memo;
	for (size_t i = 0; i < p->n_lists; i++) /* counted again (policy_field.c) */
		p->lists[i]->expand_state = 0;
	for (size_t i = 0; i < p->n_macros && err != -ENOMEM; i++) {
		e = cond_compile(p->macros[i]->cond, &pc);
		err = err ?: e;
	}
	for (size_t i = 0; i < p->n_rules && err != -ENOMEM; i++) {
		struct pol_rule *r = p->rules[i];

		e = cond_compile(r->cond, &pc);
		err = err ?: e;
		for (size_t j = 0; j < r->n_exceptions && err != -ENOMEM; j++) {
			e = cond_compile(r->exceptions[j].cond, &pc);
			err = err ?: e;
		}
	}
	warn_unset(&pc);
	err = err ?: match_memo_size(&p->memo, pc.n_memo);
	if (pc.vars_only) { /* the rest reads no variable: as the last compilation left it */
		p->compiled = !err;
		return err;
	}
	err = err ?: policy_check_bounds(p, d);
	for (size_t i = 0; i < p->n_rules && !err; i++) {
		policy_rule_subjects(p->rules[i]);
		/* once: the first compilation (policy check, or before the trace) */
		if (!warn && p->rules[i]->enabled)
			policy_warn_unreachable(p->rules[i], d);
	}
	err = err ?: policy_index_build(p);
	p->compiled = !err;
	return err;
}

size_t policy__enabled_rules(const struct policy *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_rules; i++)
		n += p->rules[i]->enabled;
	return n;
}

void policy__free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		rule_free(p->rules[i]);
	for (size_t i = 0; i < p->n_macros; i++)
		macro_free(p->macros[i]);
	for (size_t i = 0; i < p->n_lists; i++)
		list_free(p->lists[i]);
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i].path);
	free(p->rules);
	free(p->index.rules);
	free(p->index.keys);
	free(p->index.skips);
	free(p->index.direct);
	free(p->macros);
	free(p->lists);
	free(p->files);
	match_memo_free(p->memo);
	policy_names_free(p->names);
	free(p);
}
