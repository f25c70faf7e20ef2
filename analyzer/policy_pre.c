/*
 * policy_pre.c - the rule prefilter: which rules can hold for a subject, told from a few cheap
 * facts of it before any condition is evaluated.
 *
 * The facts are the subject's op, its result, its open's write intent, its exec bits and its
 * tampered flag: the fields of most rules' top-level tests ({op: ..., result: success,
 * write: true}), read exactly as policy_eval.c reads them. All but the op make a key of
 * POL_KEYS values (policy_subject_key); for each entry of the rule index (an op and a rule),
 * the compiled policy holds the set of keys for which the rule's condition can hold, found by
 * evaluating the condition in three-valued logic (true, false, unknown) with those facts known
 * and every other field unknown. A key outside the set makes the condition false whatever the
 * other fields say, so skipping the rule changes nothing: no finding, no exception evaluated
 * (exceptions are only evaluated when the condition holds). Kleene's all/any/not are sound:
 * a definite verdict of the abstract evaluation is the verdict of every concrete subject with
 * those facts. The same evaluation tells which kids of a rule's top-level "all" hold for every
 * key the rule can hold on (policy_rule_skips: {op: openat, write: false, result: success}
 * and the macros made of such tests): the engine does not evaluate those again.
 */
#include "events.h"
#include "policy.h"
#include "policy_field.h"

enum tv { TV_FALSE, TV_TRUE, TV_UNKNOWN };

/* The facts a key stands for; op < 0 when unknown (an op outside the index). */
struct facts {
	int op;
	int result; /* enum ev_result */
	int write;  /* 0 not an open, 1 an open without write intent, 2 with */
	int exec;   /* 0 no mode, 1 a mode without an execute bit, 2 with one */
	int tampered;
};

#define KEY_WRITES 3
#define KEY_EXECS  3

static unsigned key_of(int result, int write, int exec, int tampered)
{
	return (((unsigned)result * KEY_WRITES + (unsigned)write) * KEY_EXECS + (unsigned)exec) *
		       2 +
	       (unsigned)tampered;
}

_Static_assert(RES_COUNT * KEY_WRITES * KEY_EXECS * 2 <= POL_KEY_UNKNOWN,
	       "the keys and the unknown key fit in a 64-bit set");

unsigned policy_subject_key(const struct eval_subject *s)
{
	const struct ev_view *ev = s->ev;
	int write = ev->has_write ? 1 + (ev->write_intent != 0) : 0;
	int exec = ev->has_mode ? 1 + ((ev->mode & 0111) != 0) : 0;

	if ((unsigned)ev->result >= RES_COUNT)
		return POL_KEY_UNKNOWN;
	return key_of(ev->result, write, exec, (ev->flags & MW_F_TAMPERED) != 0);
}

static enum tv tv_int(const struct field_test *t, int64_t x)
{
	return field_match_int(t, x) ? TV_TRUE : TV_FALSE;
}

/* A field test with the facts known: the expressions of field_test_eval (policy_eval.c). The op
 * is read by the op, family and result tests only (policy_reach.c's cond_reads_op relies on
 * it): `result` by the family of the op, as field_test_eval checks the field table. The write
 * and exec facts are only ever set on the families that carry those fields. */
static enum tv field_tv(const struct field_test *t, const struct facts *f)
{
	switch (t->f->id) {
	case F_OP:
		return f->op < 0 ? TV_UNKNOWN : tv_int(t, f->op);
	case F_FAMILY:
		return f->op < 0 ? TV_UNKNOWN : tv_int(t, event_op_family(f->op));
	case F_RESULT: /* events only: a message or a Loss has a result but no `result` */
		if (f->op < 0)
			return TV_UNKNOWN;
		if (!(t->f->fams & FAM_BIT(event_op_family(f->op))))
			return TV_FALSE;
		return tv_int(t, f->result);
	case F_WRITE:
		return f->write ? tv_int(t, f->write == 2) : TV_FALSE;
	case F_EXEC_BITS:
		return f->exec ? tv_int(t, f->exec == 2) : TV_FALSE;
	case F_TAMPERED:
		return tv_int(t, f->tampered);
	default:
		return TV_UNKNOWN;
	}
}

static enum tv cond_tv(const struct cond *c, const struct facts *f, int depth)
{
	enum tv r, k;

	if (depth > POL_DEPTH_MAX)
		return TV_UNKNOWN;
	switch (c->kind) {
	case COND_FIELD:
		return field_tv(c->test, f);
	case COND_MACRO:
		return cond_tv(c->macro->cond, f, depth + 1);
	case COND_NOT:
		r = cond_tv(c->kids[0], f, depth + 1);
		return r == TV_UNKNOWN ? r : r == TV_TRUE ? TV_FALSE : TV_TRUE;
	case COND_ALL:
		r = TV_TRUE;
		for (size_t i = 0; i < c->n && r != TV_FALSE; i++)
			if ((k = cond_tv(c->kids[i], f, depth + 1)) != TV_TRUE)
				r = k;
		return r;
	case COND_ANY:
		r = TV_FALSE;
		for (size_t i = 0; i < c->n && r != TV_TRUE; i++)
			if ((k = cond_tv(c->kids[i], f, depth + 1)) != TV_FALSE)
				r = k;
		return r;
	}
	return TV_UNKNOWN;
}

uint64_t policy_rule_keys(const struct pol_rule *r, int op)
{
	uint64_t set = 1ull << POL_KEY_UNKNOWN;
	struct facts f = {.op = op >= 0 && op < POL_INDEX_OPS ? op : -1};

	for (f.result = 0; f.result < RES_COUNT; f.result++)
		for (f.write = 0; f.write < KEY_WRITES; f.write++)
			for (f.exec = 0; f.exec < KEY_EXECS; f.exec++)
				for (f.tampered = 0; f.tampered < 2; f.tampered++)
					if (cond_tv(r->cond, &f, 0) != TV_FALSE)
						set |= 1ull << key_of(f.result, f.write, f.exec,
								      f.tampered);
	return set;
}

/* The kids of top (an "all") that hold with the facts f, as bits. */
static uint64_t kids_held(const struct cond *top, const struct facts *f)
{
	uint64_t held = 0;

	for (size_t i = 0; i < top->n && i < 64; i++)
		if (cond_tv(top->kids[i], f, 0) == TV_TRUE)
			held |= 1ull << i;
	return held;
}

/* Whether c's verdict is d on every subject of op whose key is one of keys (the unknown key
 * aside); false when keys holds no other key. */
static bool decided(const struct cond *c, int op, uint64_t keys, enum tv d)
{
	struct facts f = {.op = op >= 0 && op < POL_INDEX_OPS ? op : -1};
	bool any = false;

	for (f.result = 0; f.result < RES_COUNT; f.result++)
		for (f.write = 0; f.write < KEY_WRITES; f.write++)
			for (f.exec = 0; f.exec < KEY_EXECS; f.exec++)
				for (f.tampered = 0; f.tampered < 2; f.tampered++) {
					if (!((keys >> key_of(f.result, f.write, f.exec,
							      f.tampered)) & 1))
						continue;
					if (cond_tv(c, &f, 0) != d)
						return false;
					any = true;
				}
	return any;
}

/* Down the condition: an "all" whose kids but one always hold is that kid, an "any" whose kids
 * but one never hold is that kid, a macro is its condition; a field test is the answer. */
const struct field_test *policy_rule_direct(const struct pol_rule *r, int op, uint64_t keys)
{
	const struct cond *c = r->cond;

	for (int depth = 0; depth <= POL_DEPTH_MAX; depth++) {
		const struct cond *open = NULL;
		size_t n_open = 0;

		switch (c->kind) {
		case COND_FIELD:
			return c->test;
		case COND_MACRO:
			c = c->macro->cond;
			continue;
		case COND_NOT:
			return NULL;
		case COND_ALL:
		case COND_ANY:
			for (size_t i = 0; i < c->n && n_open < 2; i++)
				if (!decided(c->kids[i], op, keys,
					     c->kind == COND_ALL ? TV_TRUE : TV_FALSE)) {
					open = c->kids[i];
					n_open++;
				}
			if (n_open != 1)
				return NULL;
			c = open;
			continue;
		}
		return NULL;
	}
	return NULL;
}

uint64_t policy_rule_skips(const struct pol_rule *r, int op, uint64_t keys)
{
	const struct cond *top = policy_cond_top(r->cond);
	struct facts f = {.op = op >= 0 && op < POL_INDEX_OPS ? op : -1};
	uint64_t skip = ~0ull;
	bool any = false;
	unsigned k;

	if (top->kind != COND_ALL)
		return 0;
	for (f.result = 0; f.result < RES_COUNT; f.result++)
		for (f.write = 0; f.write < KEY_WRITES; f.write++)
			for (f.exec = 0; f.exec < KEY_EXECS; f.exec++)
				for (f.tampered = 0; f.tampered < 2; f.tampered++) {
					k = key_of(f.result, f.write, f.exec, f.tampered);
					if ((keys >> k) & 1) {
						skip &= kids_held(top, &f);
						any = true;
					}
				}
	return any ? skip : 0;
}
