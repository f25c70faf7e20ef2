/*
 * policy_rule.c - the "rules" section: one mapping per rule, with its exceptions and the
 * override forms (replace an earlier rule, or append tags and exceptions to it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static const char *const rule_keys[] = {"id",	    "description", "message",	"severity",
					"category", "tags",	   "condition", "exceptions",
					"enabled",  "override",	   NULL};
static const char *const exception_keys[] = {"name", "condition", NULL};

/* The value nodes of one rule entry, by key. */
struct rule_src {
	const struct ynode *map, *id, *description, *message, *severity, *category, *tags;
	const struct ynode *condition, *exceptions, *enabled, *override;
};

static void rule_src_get(struct rule_src *s, const struct ynode *map)
{
	s->map = map;
	s->id = ynode_get(map, "id");
	s->description = ynode_get(map, "description");
	s->message = ynode_get(map, "message");
	s->severity = ynode_get(map, "severity");
	s->category = ynode_get(map, "category");
	s->tags = ynode_get(map, "tags");
	s->condition = ynode_get(map, "condition");
	s->exceptions = ynode_get(map, "exceptions");
	s->enabled = ynode_get(map, "enabled");
	s->override = ynode_get(map, "override");
}

void rule_free(struct pol_rule *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_tags; i++)
		free(r->tags[i]);
	for (size_t i = 0; i < r->n_exceptions; i++) {
		free(r->exceptions[i].name);
		cond_free(r->exceptions[i].cond);
	}
	free(r->tags);
	free(r->exceptions);
	cond_free(r->cond);
	free(r->id);
	free(r->description);
	free(r->message);
	free(r->category);
	free(r);
}

static int get_string(struct pol_loader *ld, const struct ynode *n, const char *key, char **out)
{
	if (!ynode_is_string(n) || strlen(n->str) != n->len) {
		diag_error(ld->d, &n->pos, "\"%s\" takes a string, not %s", key,
			   n->kind == YN_SCALAR && !ynode_is_null(n) ? "one with a NUL byte"
								     : ynode_kind_name(n));
		return -EINVAL;
	}
	free(*out);
	*out = strdup(n->str);
	return *out ? 0 : -ENOMEM;
}

const char *const policy_placeholders[] = {
	"path", "path_arg", "opened_path", "exe", "argv",   "addr",	"op",
	"pid",	"uid",	    "result",	   "dns", "detail", "attempts", NULL,
};

/* Every "{name}" in a message must name a placeholder; other braces are literal. */
static int check_message(struct pol_loader *ld, const struct ynode *n, const char *msg)
{
	const char *p = msg, *end;
	size_t k, len;

	while ((p = strchr(p, '{'))) {
		end = strchr(p + 1, '}');
		len = end ? (size_t)(end - p - 1) : 0;
		if (!end || len == 0 || strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_") != len) {
			p++;
			continue;
		}
		for (k = 0; policy_placeholders[k]; k++)
			if (strlen(policy_placeholders[k]) == len &&
			    strncmp(policy_placeholders[k], p + 1, len) == 0)
				break;
		if (!policy_placeholders[k]) {
			diag_error(ld->d, &n->pos,
				   "unknown placeholder {%.*s} in message (path, path_arg, "
				   "opened_path, exe, argv, addr, op, pid, uid, result, dns, "
				   "detail, attempts)",
				   (int)len, p + 1);
			return -EINVAL;
		}
		p = end + 1;
	}
	return 0;
}

#define CATEGORY_MAX 64 /* bytes */

static bool category_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int parse_severity(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	int s = ynode_is_string(n) && strlen(n->str) == n->len ? severity_by_name(n->str) : -1;

	if (s < 0) {
		diag_error(ld->d, &n->pos,
			   "\"severity\" is one of info, low, medium, high, critical");
		return -EINVAL;
	}
	r->severity = (enum severity)s;
	return 0;
}

static int parse_category(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	int err = get_string(ld, n, "category", &r->category);

	if (!err && n->len > CATEGORY_MAX) {
		diag_error(ld->d, &n->pos, "\"category\" is %zu characters long (at most %d)",
			   n->len, CATEGORY_MAX);
		err = -EINVAL;
	} else if (!err && !category_ok(r->category)) {
		diag_error(ld->d, &n->pos, "\"category\" takes lower-case letters, digits and '_'");
		err = -EINVAL;
	}
	return err;
}

static int parse_tags(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	char **v;
	int err = 0;

	if (n->kind != YN_SEQ) {
		diag_error(ld->d, &n->pos, "\"tags\" takes a sequence of strings, not %s",
			   ynode_kind_name(n));
		return -EINVAL;
	}
	v = realloc(r->tags, (r->n_tags + n->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->tags = v;
	for (size_t i = 0; i < n->n && !err; i++) {
		bool again = false;

		r->tags[r->n_tags] = NULL;
		err = get_string(ld, n->kids[i], "tags", &r->tags[r->n_tags]);
		for (size_t k = 0; !err && k < r->n_tags && !again; k++)
			again = !strcmp(r->tags[k], r->tags[r->n_tags]);
		if (again) { /* a tag once: an appended one the rule has, or one given twice */
			free(r->tags[r->n_tags]);
			r->tags[r->n_tags] = NULL;
		} else if (!err) {
			r->n_tags++;
		}
	}
	return err;
}

static int parse_enabled(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	if (ynode_bool(n, &r->enabled)) {
		diag_error(ld->d, &n->pos, "\"enabled\" takes true or false");
		return -EINVAL;
	}
	return 0;
}

static bool exception_named(const struct pol_rule *r, const char *name)
{
	for (size_t i = 0; i < r->n_exceptions; i++)
		if (strcmp(r->exceptions[i].name, name) == 0)
			return true;
	return false;
}

static int parse_exception(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	struct pol_exception *e = &r->exceptions[r->n_exceptions];
	const struct ynode *name, *cond;

	if (n->kind != YN_MAP) {
		diag_error(ld->d, &n->pos,
			   "an exception is a mapping with name and condition, not %s",
			   ynode_kind_name(n));
		return -EINVAL;
	}
	if (pol_check_keys(ld, n, exception_keys, "exception"))
		return -EINVAL;
	name = ynode_get(n, "name");
	cond = ynode_get(n, "condition");
	if (!name || !cond) {
		diag_error(ld->d, &n->pos, "an exception needs \"%s\"",
			   name ? "condition" : "name");
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	if (get_string(ld, name, "name", &e->name))
		return -EINVAL;
	if (exception_named(r, e->name)) {
		diag_error(ld->d, &name->pos, "rule \"%s\" already has an exception \"%s\"", r->id,
			   e->name);
		free(e->name);
		return -EINVAL;
	}
	e->pos = n->pos;
	e->cond = cond_parse(ld, cond, 0);
	if (!e->cond) {
		free(e->name);
		return -EINVAL;
	}
	r->n_exceptions++;
	return 0;
}

static int parse_exceptions(struct pol_loader *ld, const struct ynode *n, struct pol_rule *r)
{
	struct pol_exception *v;

	if (n->kind != YN_SEQ) {
		diag_error(ld->d, &n->pos, "\"exceptions\" takes a sequence, not %s",
			   ynode_kind_name(n));
		return -EINVAL;
	}
	v = realloc(r->exceptions, (r->n_exceptions + n->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->exceptions = v;
	for (size_t i = 0; i < n->n; i++)
		if (parse_exception(ld, n->kids[i], r))
			return -EINVAL;
	return 0;
}

static int require(struct pol_loader *ld, const struct rule_src *s)
{
	static const char *const names[] = {"description", "severity", "category", "condition"};
	const struct ynode *v[] = {s->description, s->severity, s->category, s->condition};

	for (size_t i = 0; i < 4; i++) {
		if (!v[i]) {
			diag_error(ld->d, &s->map->pos, "rule \"%s\" has no \"%s\"", s->id->str,
				   names[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* A complete definition (new, or replacing an earlier one). */
static int rule_build(struct pol_loader *ld, const struct rule_src *s, struct pol_rule *r)
{
	int err;

	err = require(ld, s);
	err = err ?: get_string(ld, s->description, "description", &r->description);
	if (!err && !*r->description) {
		diag_error(ld->d, &s->description->pos, "\"description\" is empty");
		err = -EINVAL;
	}
	if (!err && s->message)
		err = get_string(ld, s->message, "message", &r->message);
	if (!err && r->message && !*r->message) {
		diag_error(ld->d, &s->message->pos,
			   "\"message\" is empty (leave it out: it defaults to the description)");
		err = -EINVAL;
	}
	/* without a message the description is the finding's text: the same placeholders */
	if (!err)
		err = check_message(ld, s->message ? s->message : s->description,
				    r->message ? r->message : r->description);
	if (!err && !r->message && !(r->message = strdup(r->description)))
		err = -ENOMEM;
	err = err ?: parse_severity(ld, s->severity, r);
	err = err ?: parse_category(ld, s->category, r);
	if (!err && s->tags)
		err = parse_tags(ld, s->tags, r);
	if (!err && s->enabled)
		err = parse_enabled(ld, s->enabled, r);
	if (!err && !(r->cond = cond_parse(ld, s->condition, 0)))
		err = -EINVAL;
	if (!err && s->exceptions)
		err = parse_exceptions(ld, s->exceptions, r);
	return err;
}

/* An override changes what an earlier file defined: within one file the definition itself is
 * the place to change, and an override there would hide a second definition made by mistake.
 * (Lists and macros cannot get here: a mapping holds a name once.) Every position of one
 * loaded file shares its path pointer, ld->file, so a path given twice counts as two files. */
static int check_earlier_file(struct pol_loader *ld, const struct rule_src *s,
			      const struct pol_rule *old)
{
	if (old->pos.file != ld->file)
		return 0;
	diag_error(ld->d, &s->override->pos,
		   "override of rule \"%s\", defined in this same file at %u:%u (an override "
		   "changes only what an earlier file defines)",
		   old->id, old->pos.line, old->pos.col);
	return -EINVAL;
}

/* override: append adds tags and exceptions and may switch enabled; nothing else. */
static int check_append_keys(struct pol_loader *ld, const struct rule_src *s)
{
	const struct ynode *bad[] = {s->description, s->message, s->severity, s->category,
				     s->condition};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i]) {
			diag_error(ld->d, &bad[i]->pos,
				   "override: append takes only tags, exceptions "
				   "and enabled (use replace to change the rest)");
			return -EINVAL;
		}
	}
	return 0;
}

static int rule_append(struct pol_loader *ld, const struct rule_src *s, struct pol_rule *r)
{
	int err = check_append_keys(ld, s) ?: check_earlier_file(ld, s, r);

	if (err)
		return err;
	if (s->tags)
		err = parse_tags(ld, s->tags, r);
	if (!err && s->exceptions)
		err = parse_exceptions(ld, s->exceptions, r);
	if (!err && s->enabled)
		err = parse_enabled(ld, s->enabled, r);
	return err;
}

static int rule_new(struct pol_loader *ld, const struct rule_src *s, struct pol_rule **out)
{
	struct pol_rule *r = calloc(1, sizeof(*r));
	int err;

	if (!r || !(r->id = strdup(s->id->str))) {
		free(r);
		return -ENOMEM;
	}
	r->pos = s->id->pos;
	r->enabled = true;
	err = rule_build(ld, s, r);
	if (err) {
		rule_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* The rule's id: present, a name (pol_name_ok). */
static int check_id(struct pol_loader *ld, const struct ynode *rule, const struct ynode *id)
{
	if (!id) {
		diag_error(ld->d, &rule->pos, "rule has no \"id\"");
		return -EINVAL;
	}
	return pol_check_name(ld, id, "rule id");
}

static int rule_parse(struct pol_loader *ld, const struct ynode *n)
{
	struct rule_src s;
	struct pol_rule *old, *r = NULL, **v;
	struct policy *p = ld->p;
	int ov;

	if (n->kind != YN_MAP) {
		diag_error(ld->d, &n->pos, "a rule is a mapping, not %s", ynode_kind_name(n));
		return -EINVAL;
	}
	if (pol_check_keys(ld, n, rule_keys, "rule"))
		return -EINVAL;
	rule_src_get(&s, n);
	if (check_id(ld, n, s.id))
		return -EINVAL;
	old = policy_find_rule(p, s.id->str);
	ov = pol_override_check(ld, s.id, s.override, old ? &old->pos : NULL, "rule");
	if (ov < 0)
		return ov;
	if (ov == POL_OVERRIDE_APPEND)
		return rule_append(ld, &s, old);
	if (ov == POL_OVERRIDE_REPLACE && check_earlier_file(ld, &s, old))
		return -EINVAL;
	if (rule_new(ld, &s, &r))
		return -EINVAL;
	if (ov == POL_OVERRIDE_REPLACE) {
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i] == old)
				p->rules[i] = r;
		rule_free(old);
		return 0;
	}
	v = realloc(p->rules, (p->n_rules + 1) * sizeof(*v));
	if (!v) {
		rule_free(r);
		return -ENOMEM;
	}
	p->rules = v;
	p->rules[p->n_rules++] = r;
	return 0;
}

int rules_parse(struct pol_loader *ld, const struct ynode *seq)
{
	int err, ret = 0;

	if (seq->kind != YN_SEQ) {
		if (ynode_is_null(seq))
			return 0;
		diag_error(ld->d, &seq->pos, "\"rules\" takes a sequence of rules, not %s",
			   ynode_kind_name(seq));
		return -EINVAL;
	}
	for (size_t i = 0; i < seq->n; i++) {
		err = rule_parse(ld, seq->kids[i]);
		if (err == -ENOMEM)
			return err;
		ret = ret ?: err;
	}
	return ret;
}
