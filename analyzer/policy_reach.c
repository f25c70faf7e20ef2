/*
 * policy_reach.c - what a condition can hold for, decided from its field tests alone, once the
 * policy is compiled:
 *   - the operations it can hold for (a set of op numbers): a test of `op` or `family` limits
 *     it, so does any field that only some families carry (`path` is never on a connect); an
 *     exception whose set does not meet its rule's can never match, and `policy check` warns;
 *   - which subjects a rule is evaluated on: events always, channel messages and Loss records
 *     only when the rule names them (family channel or health, op message or loss, or a field
 *     only messages carry), so a rule written for events never fires on a message by accident;
 *   - the rule index: for each op number, the enabled rules whose condition can hold for it,
 *     so the engine evaluates per subject only those. The index narrows by `op` and `family`
 *     tests alone, which read the subject's op and its family (a function of the op, see
 *     event_op_family): exact, so skipping a rule outside its set changes nothing (no finding,
 *     no exception evaluated). The other fields' family table (FAM_BIT in policy_field.h) is
 *     exact too (field_test_eval checks it before it reads a field), but the index keeps to
 *     op and family tests. Beside each entry of the index, the keys of cheap facts
 *     for which that rule can hold on that op (policy_pre.c);
 *   - whether any enabled rule reads the call of its subject (a call field in its condition or
 *     an exception): if none does, analyze needs no call model while it evaluates, and reads
 *     the trace once (analyze.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_field.h"

#define OPS_WORDS (POL_INDEX_OPS / 64) /* op numbers 0..255 */

struct opset {
	uint64_t w[OPS_WORDS];
};

static void ops_all(struct opset *s)
{
	memset(s->w, 0xff, sizeof(s->w));
}

static void ops_add(struct opset *s, int64_t op)
{
	if (op >= 0 && op < 64 * OPS_WORDS)
		s->w[op / 64] |= 1ull << (op % 64);
}

static bool ops_empty(const struct opset *s)
{
	for (int i = 0; i < OPS_WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

static void ops_of_families(struct opset *s, uint32_t fams)
{
	memset(s, 0, sizeof(*s));
	for (int op = 0; op < 64 * OPS_WORDS; op++)
		if (fams & FAM_BIT(event_op_family(op)))
			ops_add(s, op);
}

/* With exact set, only op and family tests narrow (see the top of this file). */
static void field_ops(const struct field_test *t, struct opset *s, bool exact)
{
	uint32_t fams = 0;

	if (t->f->id == F_OP) {
		memset(s, 0, sizeof(*s));
		for (size_t i = 0; i < t->n; i++)
			for (int64_t op = t->v[i].lo; op <= t->v[i].hi && op < POL_INDEX_OPS; op++)
				ops_add(s, op);
		return;
	}
	if (t->f->id == F_FAMILY) {
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].lo >= 0 && t->v[i].lo < 32)
				fams |= FAM_BIT(t->v[i].lo);
		ops_of_families(s, fams);
		return;
	}
	if (exact || t->f->fams == FAMS_ALL)
		ops_all(s);
	else
		ops_of_families(s, t->f->fams);
}

/* The operations c can hold for (a superset). */
static void cond_ops(const struct cond *c, struct opset *s, bool exact, int depth)
{
	struct opset k;

	if (depth > POL_DEPTH_MAX) {
		ops_all(s);
		return;
	}
	switch (c->kind) {
	case COND_FIELD:
		field_ops(c->test, s, exact);
		return;
	case COND_MACRO:
		cond_ops(c->macro->cond, s, exact, depth + 1);
		return;
	case COND_NOT:
		ops_all(s);
		return;
	case COND_ALL:
		ops_all(s);
		for (size_t i = 0; i < c->n; i++) {
			cond_ops(c->kids[i], &k, exact, depth + 1);
			for (int w = 0; w < OPS_WORDS; w++)
				s->w[w] &= k.w[w];
		}
		return;
	case COND_ANY:
		memset(s, 0, sizeof(*s));
		for (size_t i = 0; i < c->n; i++) {
			cond_ops(c->kids[i], &k, exact, depth + 1);
			for (int w = 0; w < OPS_WORDS; w++)
				s->w[w] |= k.w[w];
		}
		return;
	}
}

static bool test_names(const struct field_test *t, int fam, int op)
{
	if (t->f->fams == FAM_BIT(fam))
		return true;
	for (size_t i = 0; i < t->n; i++) {
		if (t->f->id == F_FAMILY && t->v[i].lo == fam)
			return true;
		if (t->f->id == F_OP && t->v[i].lo == op)
			return true;
	}
	return false;
}

/* Does c name the family fam (or its op) anywhere? Exact: policy_check_bounds keeps every rule
 * within POL_DEPTH_MAX, so the cut below is never reached. */
static bool cond_names(const struct cond *c, int fam, int op, int depth)
{
	if (depth > POL_DEPTH_MAX)
		return false;
	if (c->kind == COND_FIELD)
		return test_names(c->test, fam, op);
	if (c->kind == COND_MACRO)
		return cond_names(c->macro->cond, fam, op, depth + 1);
	for (size_t i = 0; i < c->n; i++)
		if (cond_names(c->kids[i], fam, op, depth + 1))
			return true;
	return false;
}

/* Does c read the subject's call (tool, method, arguments, bucket, attribution)? Past the
 * depth limit it is assumed to. */
static bool cond_reads_calls(const struct cond *c, int depth)
{
	if (depth > POL_DEPTH_MAX)
		return true;
	if (c->kind == COND_FIELD) {
		switch (c->test->f->id) {
		case F_TOOL:
		case F_METHOD:
		case F_ARGUMENTS:
		case F_BUCKET:
		case F_ATTRIBUTION:
			return true;
		default:
			return false;
		}
	}
	if (c->kind == COND_MACRO)
		return cond_reads_calls(c->macro->cond, depth + 1);
	for (size_t i = 0; i < c->n; i++)
		if (cond_reads_calls(c->kids[i], depth + 1))
			return true;
	return false;
}

static bool rule_reads_calls(const struct pol_rule *r)
{
	if (cond_reads_calls(r->cond, 0))
		return true;
	for (size_t i = 0; i < r->n_exceptions; i++)
		if (cond_reads_calls(r->exceptions[i].cond, 0))
			return true;
	return false;
}

void policy_rule_subjects(struct pol_rule *r)
{
	r->subjects = POL_SUBJ_EVENTS;
	if (cond_names(r->cond, FAM_CHANNEL, EV_OP_MESSAGE, 0))
		r->subjects |= POL_SUBJ_MESSAGES;
	if (cond_names(r->cond, FAM_HEALTH, EV_OP_LOSS, 0))
		r->subjects |= POL_SUBJ_LOSSES;
	if (cond_names(r->cond, FAM_HEALTH, EV_OP_OUTLIVED, 0))
		r->subjects |= POL_SUBJ_OUTLIVED;
}

void policy_warn_unreachable(const struct pol_rule *r, struct diag *d)
{
	struct opset rs, es;

	cond_ops(r->cond, &rs, false, 0);
	if (ops_empty(&rs)) {
		diag_warn(d, &r->pos, "rule \"%s\" can never match: its tests exclude each other",
			  r->id);
		return;
	}
	for (size_t i = 0; i < r->n_exceptions; i++) {
		const struct pol_exception *x = &r->exceptions[i];
		bool meet = false;

		cond_ops(x->cond, &es, false, 0);
		for (int w = 0; w < OPS_WORDS; w++)
			meet |= (rs.w[w] & es.w[w]) != 0;
		if (!meet)
			diag_warn(d, &x->pos,
				  "exception \"%s\" of rule \"%s\" can never match: it holds only "
				  "for operations the rule's condition excludes",
				  x->name, r->id);
	}
}

static bool ops_has(const struct opset *s, int op)
{
	return (s->w[op / 64] >> (op % 64)) & 1;
}

/* Does c test the op, the family or the result? If not, its rule's prefilter keys and skips
 * are the same for every op: policy_pre.c reads the op through those three fields only. */
static bool cond_reads_op(const struct cond *c, int depth)
{
	if (depth > POL_DEPTH_MAX)
		return true;
	if (c->kind == COND_FIELD)
		return c->test->f->id == F_OP || c->test->f->id == F_FAMILY ||
		       c->test->f->id == F_RESULT;
	if (c->kind == COND_MACRO)
		return cond_reads_op(c->macro->cond, depth + 1);
	for (size_t i = 0; i < c->n; i++)
		if (cond_reads_op(c->kids[i], depth + 1))
			return true;
	return false;
}

/* A rule's prefilter entry for ops it does not test, found once (by index_fill). */
struct op_free {
	bool known, same; /* same: the rule tests neither op nor family */
	uint64_t keys, skips;
	const struct field_test *direct;
};

/* Sets index entry k to rule i on op: its keys, skips and direct test, evaluated per op only
 * for a rule that tests the op (a policy of many rules without op tests would otherwise
 * evaluate each rule's condition 54 times for every op). */
static void index_entry(const struct policy *p, size_t i, int op, struct op_free *of,
			struct pol_index *ix, uint32_t k)
{
	const struct pol_rule *r = p->rules[i];

	if (!of->known) {
		of->known = true;
		of->same = !cond_reads_op(r->cond, 0);
		if (of->same) {
			of->keys = policy_rule_keys(r, -1);
			of->skips = policy_rule_skips(r, -1, of->keys);
			of->direct = policy_rule_direct(r, -1, of->keys);
		}
	}
	if (of->same) {
		ix->keys[k] = of->keys;
		ix->skips[k] = of->skips;
		ix->direct[k] = of->direct;
	} else {
		ix->keys[k] = policy_rule_keys(r, op);
		ix->skips[k] = policy_rule_skips(r, op, ix->keys[k]);
		ix->direct[k] = policy_rule_direct(r, op, ix->keys[k]);
	}
	ix->rules[k] = (uint32_t)i;
}

/* Fills ix->rules, ix->keys (n slots or more) and ix->start from each enabled rule's exact op
 * set. of: one zeroed entry per rule. */
static void index_fill(const struct policy *p, const struct opset *sets, struct op_free *of,
		       struct pol_index *ix)
{
	uint32_t k = 0;

	for (int op = 0; op < POL_INDEX_OPS; op++) {
		ix->start[op] = k;
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i]->enabled && ops_has(&sets[i], op))
				index_entry(p, i, op, &of[i], ix, k++);
	}
	ix->start[POL_INDEX_OPS] = k;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i]->enabled)
			index_entry(p, i, -1, &of[i], ix, k++);
	ix->start[POL_INDEX_OPS + 1] = k;
}

int policy_index_build(struct policy *p)
{
	struct opset *sets = calloc(p->n_rules ? p->n_rules : 1, sizeof(*sets));
	struct op_free *of = calloc(p->n_rules ? p->n_rules : 1, sizeof(*of));
	size_t total = 0;
	uint32_t *rules = NULL;
	uint64_t *keys = NULL, *skips = NULL;
	const struct field_test **direct = NULL;

	if (!sets || !of) {
		free(sets);
		free(of);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		if (!p->rules[i]->enabled)
			continue;
		cond_ops(p->rules[i]->cond, &sets[i], true, 0);
		total++; /* the list for ops outside the index */
		for (int w = 0; w < OPS_WORDS; w++)
			total += (size_t)__builtin_popcountll(sets[i].w[w]);
	}
	if (total <= UINT32_MAX) {
		rules = calloc(total ? total : 1, sizeof(*rules));
		keys = calloc(total ? total : 1, sizeof(*keys));
		skips = calloc(total ? total : 1, sizeof(*skips));
		direct = calloc(total ? total : 1, sizeof(*direct));
	}
	if (!rules || !keys || !skips || !direct) {
		free(rules);
		free(keys);
		free(skips);
		free(direct);
		free(sets);
		free(of);
		return -ENOMEM;
	}
	free(p->index.rules);
	free(p->index.keys);
	free(p->index.skips);
	free(p->index.direct);
	p->index.rules = rules;
	p->index.keys = keys;
	p->index.skips = skips;
	p->index.direct = direct;
	index_fill(p, sets, of, &p->index);
	p->index.reads_calls = false;
	for (size_t i = 0; i < p->n_rules; i++)
		p->index.reads_calls |= p->rules[i]->enabled && rule_reads_calls(p->rules[i]);
	free(sets);
	free(of);
	return 0;
}

const uint32_t *policy_rules_for_op(const struct policy *p, int op, size_t *n)
{
	const struct pol_index *ix = &p->index;
	int slot = op >= 0 && op < POL_INDEX_OPS ? op : POL_INDEX_OPS;

	*n = ix->start[slot + 1] - ix->start[slot];
	return ix->rules + ix->start[slot];
}

const uint64_t *policy_keys_for_op(const struct policy *p, int op)
{
	const struct pol_index *ix = &p->index;
	int slot = op >= 0 && op < POL_INDEX_OPS ? op : POL_INDEX_OPS;

	return ix->keys + ix->start[slot];
}

bool policy_reads_calls(const struct policy *p)
{
	return !p->index.rules || p->index.reads_calls;
}

const uint64_t *policy_skips_for_op(const struct policy *p, int op)
{
	const struct pol_index *ix = &p->index;
	int slot = op >= 0 && op < POL_INDEX_OPS ? op : POL_INDEX_OPS;

	return ix->skips + ix->start[slot];
}

const struct field_test *const *policy_direct_for_op(const struct policy *p, int op)
{
	const struct pol_index *ix = &p->index;
	int slot = op >= 0 && op < POL_INDEX_OPS ? op : POL_INDEX_OPS;

	return ix->direct + ix->start[slot];
}
