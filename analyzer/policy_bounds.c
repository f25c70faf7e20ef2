/*
 * policy_bounds.c - the size a loaded policy's conditions may reach once macros are expanded,
 * checked once per load so that every pass that walks a condition through its macros
 * (policy_reach.c, policy_pre.c) is exact and bounded.
 *
 * Those passes visit the expanded tree: a macro used twice by the next one, forty times over,
 * is 2^40 nodes, and a pass cut at a depth limit answers wrongly (a rule that names channel
 * messages only below the cut would never be evaluated on them). So each rule's condition and
 * each exception's, expanded through its macros, must be at most POL_DEPTH_MAX levels deep
 * and hold at most POL_EXPANDED_MAX nodes, and all of them together POL_EXPANDED_TOTAL; a
 * policy beyond is refused, naming the rule.
 * The measure itself is memoized per macro: linear in the policy's text.
 */
#include <errno.h>
#include <stdlib.h>

#include "policy.h"

enum { M_UNSEEN = 0, M_OPEN, M_DONE };

struct measure {
	uint32_t depth;
	uint32_t nodes; /* saturates at POL_EXPANDED_MAX + 1 */
};

struct bounds {
	struct measure *memo; /* by pol_macro.index */
	uint8_t *state;
};

static uint32_t nodes_add(uint32_t a, uint32_t b)
{
	uint64_t s = (uint64_t)a + b;

	return s > POL_EXPANDED_MAX ? POL_EXPANDED_MAX + 1 : (uint32_t)s;
}

/* The expanded depth and size of c, reached at `level` levels below the rule's root (the
 * recursion's depth too). 0, or -E2BIG as soon as the expansion goes deeper than POL_DEPTH_MAX
 * (the rule is refused, so nothing below is measured: a long chain of macros cannot make this
 * recurse deeply), or -ELOOP for a macro that uses itself (the loader refuses those; a guard). */
static int measure(struct bounds *b, const struct cond *c, uint32_t level, struct measure *out)
{
	struct measure k;
	int err;

	if (level > POL_DEPTH_MAX)
		return -E2BIG;
	out->depth = 0;
	out->nodes = 1;
	switch (c->kind) {
	case COND_FIELD:
		return 0;
	case COND_MACRO: {
		size_t i = c->macro->index;

		if (b->state[i] == M_OPEN)
			return -ELOOP;
		if (b->state[i] == M_UNSEEN) {
			b->state[i] = M_OPEN;
			/* its own depth and size hold for every use; only whether the rule
			 * goes too deep depends on the level it is used at */
			err = measure(b, c->macro->cond, level + 1, &b->memo[i]);
			b->state[i] = err ? M_UNSEEN : M_DONE;
			if (err)
				return err;
		}
		k = b->memo[i];
		break;
	}
	case COND_ALL:
	case COND_ANY:
	case COND_NOT:
		k.depth = 0;
		k.nodes = 0;
		for (size_t i = 0; i < c->n; i++) {
			struct measure m;

			err = measure(b, c->kids[i], level + 1, &m);
			if (err)
				return err;
			if (m.depth > k.depth)
				k.depth = m.depth;
			k.nodes = nodes_add(k.nodes, m.nodes);
		}
		break;
	default:
		return 0;
	}
	out->depth = k.depth + 1;
	out->nodes = nodes_add(k.nodes, 1);
	return out->depth + level > POL_DEPTH_MAX ? -E2BIG : 0;
}

/* Checks one condition of rule r (an exception's when what is not NULL) and adds its size to
 * *total. */
static int check_cond(struct bounds *b, const struct pol_rule *r, const struct cond *c,
		      const struct srcpos *pos, const char *what, struct diag *d, uint64_t *total)
{
	struct measure m;
	int err = measure(b, c, 0, &m);
	uint64_t before = *total;

	if (err == -E2BIG)
		diag_error(d, pos,
			   "rule \"%s\": %s%s%scondition nests more than %d levels deep through its "
			   "macros",
			   r->id, what ? "exception \"" : "its ", what ? what : "",
			   what ? "\": its " : "", POL_DEPTH_MAX);
	else if (err == -ELOOP)
		diag_error(d, pos, "rule \"%s\": a macro it uses uses itself", r->id);
	else if (m.nodes > POL_EXPANDED_MAX)
		diag_error(d, pos,
			   "rule \"%s\": %s%s%scondition expands to more than %d tests and "
			   "combinators through its macros",
			   r->id, what ? "exception \"" : "its ", what ? what : "",
			   what ? "\": its " : "", POL_EXPANDED_MAX);
	else if ((*total += m.nodes) > POL_EXPANDED_TOTAL && before <= POL_EXPANDED_TOTAL)
		diag_error(d, pos,
			   "rule \"%s\": with it the rules' conditions expand to more than %d tests "
			   "and combinators in all through their macros",
			   r->id, POL_EXPANDED_TOTAL);
	else
		return 0;
	return -EINVAL;
}

int policy_check_bounds(const struct policy *p, struct diag *d)
{
	struct bounds b = {.memo = calloc(p->n_macros + 1, sizeof(*b.memo)),
			   .state = calloc(p->n_macros + 1, 1)};
	uint64_t total = 0;
	int err = 0;

	if (!b.memo || !b.state) {
		free(b.memo);
		free(b.state);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct pol_rule *r = p->rules[i];

		if (check_cond(&b, r, r->cond, &r->pos, NULL, d, &total))
			err = -EINVAL;
		for (size_t j = 0; j < r->n_exceptions; j++)
			if (check_cond(&b, r, r->exceptions[j].cond, &r->exceptions[j].pos,
				       r->exceptions[j].name, d, &total))
				err = -EINVAL;
	}
	free(b.memo);
	free(b.state);
	return err;
}
