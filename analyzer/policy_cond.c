/*
 * policy_cond.c - conditions: parsing from YAML, compiling, evaluating.
 *
 * A condition is a mapping. Its entries are combined with "and"; each entry is one of
 *   all: [cond, ...]    every condition holds
 *   any: [cond, ...]    at least one holds
 *   not: cond           the condition does not hold
 *   macro: NAME         the named macro holds (macros are defined before use)
 *   FIELD: VALUE        a field test; VALUE is a scalar, "@list", or a sequence of them
 * so {op: openat, write: true} means "an open with write intent".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define COND_DEPTH_MAX 32

static struct cond *cond_new(enum cond_kind kind, const struct srcpos *pos)
{
	struct cond *c = calloc(1, sizeof(*c));

	if (c) {
		c->kind = kind;
		c->pos = *pos;
	}
	return c;
}

static int kids_add(struct cond *c, struct cond *kid)
{
	struct cond **v = realloc(c->kids, (c->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	c->kids = v;
	c->kids[c->n++] = kid;
	return 0;
}

static void oom(struct pol_loader *ld, const struct srcpos *pos)
{
	diag_error(ld->d, pos, "out of memory");
}

static struct cond *parse_list_op(struct pol_loader *ld, const struct ynode *key,
				  const struct ynode *v, enum cond_kind kind, int depth)
{
	struct cond *c, *kid;

	if (v->kind != YN_SEQ || v->n == 0) {
		diag_error(ld->d, &v->pos,
			   "\"%s\" takes a non-empty sequence of conditions, not %s", key->str,
			   v->kind == YN_SEQ ? "an empty one" : ynode_kind_name(v));
		return NULL;
	}
	c = cond_new(kind, &key->pos);
	if (!c) {
		oom(ld, &key->pos);
		return NULL;
	}
	for (size_t i = 0; i < v->n; i++) {
		kid = cond_parse(ld, v->kids[i], depth + 1);
		if (!kid || kids_add(c, kid)) {
			if (kid)
				oom(ld, &v->kids[i]->pos);
			cond_free(kid);
			cond_free(c);
			return NULL;
		}
	}
	return c;
}

static struct cond *parse_not(struct pol_loader *ld, const struct ynode *key, const struct ynode *v,
			      int depth)
{
	struct cond *c, *kid = cond_parse(ld, v, depth + 1);

	if (!kid)
		return NULL;
	c = cond_new(COND_NOT, &key->pos);
	if (!c || kids_add(c, kid)) {
		oom(ld, &key->pos);
		cond_free(kid);
		cond_free(c);
		return NULL;
	}
	return c;
}

static struct cond *parse_macro_ref(struct pol_loader *ld, const struct ynode *key,
				    const struct ynode *v)
{
	struct pol_macro *m;
	struct cond *c;

	if (!ynode_is_string(v)) {
		diag_error(ld->d, &v->pos, "\"macro\" takes a macro name, not %s",
			   ynode_kind_name(v));
		return NULL;
	}
	/* a name with a NUL byte is no macro's ("m\0x" must not find m) */
	m = strlen(v->str) == v->len ? policy_find_macro(ld->p, v->str) : NULL;
	if (!m) {
		char *s = pol_strdup_escaped(v->str, v->len);

		diag_error(ld->d, &v->pos,
			   "unknown macro \"%s\" (macros must be defined before use)", s ? s : "?");
		free(s);
		return NULL;
	}
	c = cond_new(COND_MACRO, &key->pos);
	if (!c) {
		oom(ld, &key->pos);
		return NULL;
	}
	c->macro = m;
	return c;
}

static int test_add_value(struct pol_loader *ld, struct field_test *t, const struct ynode *n)
{
	struct pol_value *v = realloc(t->src, (t->n_src + 1) * sizeof(*v));

	if (!v) {
		oom(ld, &n->pos);
		return -ENOMEM;
	}
	t->src = v;
	if (pol_value_parse(ld, n, &t->src[t->n_src]))
		return -EINVAL;
	t->n_src++;
	return 0;
}

static int parse_test_values(struct pol_loader *ld, struct field_test *t, const struct ynode *v)
{
	const char *name = field_name(t->f);

	if (v->kind == YN_MAP || ynode_is_null(v) || (v->kind == YN_SEQ && v->n == 0)) {
		diag_error(ld->d, &v->pos,
			   "\"%s\" takes a value, \"@list\" or a sequence of them, "
			   "not %s",
			   name, v->kind == YN_SEQ ? "an empty sequence" : ynode_kind_name(v));
		return -EINVAL;
	}
	if (v->kind == YN_SEQ && field_single_value(t->f)) {
		diag_error(ld->d, &v->pos, "\"%s\" takes one value (true or false)", name);
		return -EINVAL;
	}
	if (v->kind == YN_SCALAR)
		return test_add_value(ld, t, v);
	for (size_t i = 0; i < v->n; i++) {
		if (test_add_value(ld, t, v->kids[i]))
			return -EINVAL;
	}
	return 0;
}

static struct cond *parse_field(struct pol_loader *ld, const struct ynode *key,
				const struct ynode *v)
{
	const struct field_desc *f = field_find(key->str);
	struct field_test *t;
	struct cond *c;

	if (!f || strlen(key->str) != key->len) {
		pol_unknown_key(ld, key, "condition", field_key_names());
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	c = cond_new(COND_FIELD, &key->pos);
	if (!t || !c) {
		oom(ld, &key->pos);
		goto fail;
	}
	t->f = f;
	t->pos = key->pos;
	c->test = t;
	if (parse_test_values(ld, t, v))
		goto fail;
	return c;
fail:
	if (c)
		c->test = NULL;
	field_test_free(t);
	cond_free(c);
	return NULL;
}

static struct cond *parse_entry(struct pol_loader *ld, const struct ynode *key,
				const struct ynode *v, int depth)
{
	if (strcmp(key->str, "all") == 0)
		return parse_list_op(ld, key, v, COND_ALL, depth);
	if (strcmp(key->str, "any") == 0)
		return parse_list_op(ld, key, v, COND_ANY, depth);
	if (strcmp(key->str, "not") == 0)
		return parse_not(ld, key, v, depth);
	if (strcmp(key->str, "macro") == 0)
		return parse_macro_ref(ld, key, v);
	return parse_field(ld, key, v);
}

struct cond *cond_parse(struct pol_loader *ld, const struct ynode *n, int depth)
{
	struct cond *all = NULL, *c;

	if (depth > COND_DEPTH_MAX) {
		diag_error(ld->d, &n->pos, "condition nested deeper than %d levels",
			   COND_DEPTH_MAX);
		return NULL;
	}
	if (n->kind != YN_MAP || n->n == 0) {
		diag_error(ld->d, &n->pos,
			   "expected a condition (a mapping such as {op: exec}), "
			   "not %s",
			   n->kind == YN_MAP ? "an empty mapping" : ynode_kind_name(n));
		return NULL;
	}
	if (n->n == 2)
		return parse_entry(ld, n->kids[0], n->kids[1], depth);
	all = cond_new(COND_ALL, &n->pos);
	if (!all) {
		oom(ld, &n->pos);
		return NULL;
	}
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		c = parse_entry(ld, n->kids[i], n->kids[i + 1], depth);
		if (!c || kids_add(all, c)) {
			if (c)
				oom(ld, &n->pos);
			cond_free(c);
			cond_free(all);
			return NULL;
		}
	}
	return all;
}

void cond_free(struct cond *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		cond_free(c->kids[i]);
	free(c->kids);
	field_test_free(c->test);
	free(c);
}

int cond_compile(struct cond *c, struct pol_compile *pc)
{
	int err = 0, e;

	if (c->kind == COND_FIELD)
		return field_test_compile(c->test, pc);
	for (size_t i = 0; i < c->n; i++) {
		e = cond_compile(c->kids[i], pc);
		if (e == -ENOMEM)
			return e;
		err = err ?: e;
	}
	return err;
}

static bool macro_eval(const struct pol_macro *m, const struct eval_subject *s)
{
	uint8_t *memo = s->macro_memo ? &s->macro_memo[m->index] : NULL;
	bool r;

	if (memo && *memo)
		return *memo == 2;
	r = cond_eval(m->cond, s);
	if (memo)
		*memo = r ? 2 : 1;
	return r;
}

bool cond_eval(const struct cond *c, const struct eval_subject *s)
{
	switch (c->kind) {
	case COND_ALL:
		for (size_t i = 0; i < c->n; i++)
			if (!cond_eval(c->kids[i], s))
				return false;
		return true;
	case COND_ANY:
		for (size_t i = 0; i < c->n; i++)
			if (cond_eval(c->kids[i], s))
				return true;
		return false;
	case COND_NOT:
		return !cond_eval(c->kids[0], s);
	case COND_MACRO:
		return macro_eval(c->macro, s);
	case COND_FIELD:
		return field_test_eval(c->test, s);
	}
	return false;
}

const struct cond *policy_cond_top(const struct cond *c)
{
	while (c->kind == COND_ALL && c->n == 1 && c->kids[0]->kind == COND_ALL)
		c = c->kids[0];
	return c;
}

/* c on s, the kids of its top-level "all" in skip taken as holding. */
static bool cond_holds(const struct cond *c, const struct eval_subject *s, uint64_t skip)
{
	if (!skip)
		return cond_eval(c, s);
	c = policy_cond_top(c);
	for (size_t i = 0; i < c->n; i++)
		if (!(i < 64 && ((skip >> i) & 1)) && !cond_eval(c->kids[i], s))
			return false;
	return true;
}

/* A rule whose condition held: whether no exception does (*exc the first that does). */
static bool no_exception(const struct pol_rule *r, const struct eval_subject *s, int *exc)
{
	for (size_t i = 0; i < r->n_exceptions; i++) {
		if (cond_eval(r->exceptions[i].cond, s)) {
			*exc = (int)i;
			return false;
		}
	}
	return true;
}

bool policy_rule_match(const struct pol_rule *r, const struct eval_subject *s, uint64_t skip,
		       int *exc)
{
	*exc = -1;
	return r->enabled && cond_holds(r->cond, s, skip) && no_exception(r, s, exc);
}

bool policy_rule_match_direct(const struct pol_rule *r, const struct eval_subject *s,
			      const struct field_test *t, int *exc)
{
	*exc = -1;
	return r->enabled && field_test_eval(t, s) && no_exception(r, s, exc);
}
