/*
 * check_policy_bounds.c - the bounds on a policy's expanded size (policy_bounds.c, the list
 * count in policy_field.c, the override cycle check in policy.c): policies whose macros or
 * lists multiply are refused at once with the rule or test named, the passes over conditions
 * are exact within the bounds, and a deep macro that is no cycle is not called one.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_testlib.h"

#define RULE_HEAD "- id: %s\n  description: d\n  severity: high\n  category: c\n"
#define RULE_R	  "- id: r\n  description: d\n  severity: high\n  category: c\n"

/* A growing text buffer for generated policies. */
struct text {
	char *s;
	size_t n, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(k, 0);
		if (t->n + (size_t)k < t->cap)
			break;
		t->cap = (t->cap + (size_t)k) * 2;
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	t->n += (size_t)k;
}

/* Macros m0 (a channel test) .. m<k-1>, each using the one before: m<k-1> is k levels deep. */
static void chain(struct text *t, int k)
{
	add(t, HDR "macros:\n  m0: {family: channel, message: \"*KEY*\"}\n");
	for (int i = 1; i < k; i++)
		add(t, "  m%d: {macro: m%d}\n", i, i - 1);
}

/* Macros d0 .. d<k-1>, each using the one before twice: d<k-1> expands to 2^(k+1) - 3 nodes
 * (d0: 1; di: an "any", two macro uses and two copies of d(i-1)). */
static void diamond(struct text *t, int k)
{
	add(t, HDR "macros:\n  d0: {path: \"/etc/shadow\"}\n");
	for (int i = 1; i < k; i++)
		add(t, "  d%d: {any: [{macro: d%d}, {macro: d%d}]}\n", i, i - 1, i - 1);
}

static int load_text(struct text *t, struct diag *d, struct policy **out)
{
	int err = load(t->s, d, out);

	free(t->s);
	memset(t, 0, sizeof(*t));
	return err;
}

/* The deepest chain a rule may use is accepted and its channel test is seen (the rule is
 * evaluated on messages); one level more is refused, not cut and silently wrong. */
START_TEST(depth_limit_exact)
{
	struct text t = {0};
	struct policy *p = NULL;
	struct diag d = {0};

	in_tmpdir();
	chain(&t, POL_DEPTH_MAX - 1);
	add(&t, "rules:\n" RULE_HEAD "  condition: {macro: m%d}\n", "deep", POL_DEPTH_MAX - 2);
	ck_assert_int_eq(load_text(&t, &d, &p), 0);
	ck_assert(p->rules[0]->subjects & POL_SUBJ_MESSAGES);
	policy__free(p);

	chain(&t, POL_DEPTH_MAX);
	add(&t, "rules:\n" RULE_HEAD "  condition: {macro: m%d}\n", "deeper", POL_DEPTH_MAX - 1);
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "p.yaml:68:7: rule \"deeper\": its condition nests more "
					  "than 64 levels deep through its macros");
	diag_fini(&d);
}
END_TEST

/* An exception is bounded like its rule, and named. */
START_TEST(depth_limit_exception)
{
	struct text t = {0};
	struct diag d = {0};

	in_tmpdir();
	chain(&t, POL_DEPTH_MAX + 6);
	add(&t, "rules:\n" RULE_HEAD "  condition: {op: exec}\n"
		"  exceptions:\n  - {name: e, condition: {macro: m%d}}\n",
	    "r", POL_DEPTH_MAX + 5);
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(diag_first(&d), "rule \"r\": exception \"e\": its condition "
						     "nests more than 64 levels"));
	diag_fini(&d);
}
END_TEST

/* Macros each using the previous twice: 2^26 nodes expanded from 25 lines, refused at once (the
 * passes over it would not end; the suite's timeout catches a hang). */
START_TEST(diamond_refused_at_once)
{
	struct text t = {0};
	struct diag d = {0};

	in_tmpdir();
	diamond(&t, 25);
	add(&t, "rules:\n" RULE_HEAD "  condition: {macro: d24}\n", "wide");
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "p.yaml:29:7: rule \"wide\": its condition expands to "
					  "more than 4096 tests and combinators through its macros");
	diag_fini(&d);

	diamond(&t, 40); /* deeper than the limit too: refused for its depth first */
	add(&t, "rules:\n" RULE_HEAD "  condition: {macro: d39}\n", "wider");
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(diag_first(&d), "rule \"wider\": its condition nests"));
	diag_fini(&d);
}
END_TEST

/* A rule within the per-rule bound, repeated: refused at the rule that takes the sum over. */
START_TEST(total_limit)
{
	struct text t = {0};
	struct diag d = {0};
	const int per_rule = (1 << 11) - 3 + 1; /* d9 expanded, and the rule's macro use */
	const int fit = POL_EXPANDED_TOTAL / per_rule;
	char msg[200];

	in_tmpdir();
	diamond(&t, 10);
	add(&t, "rules:\n");
	for (int i = 0; i < fit; i++)
		add(&t, "- id: ok%d\n  description: d\n  severity: high\n  category: c\n"
			"  condition: {macro: d9}\n",
		    i);
	add(&t, RULE_HEAD "  condition: {macro: d9}\n", "over");
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	snprintf(msg, sizeof(msg),
		 "rule \"over\": with it the rules' conditions expand to more than %d tests",
		 POL_EXPANDED_TOTAL);
	ck_assert_msg(strstr(diag_first(&d), msg), "%s", diag_first(&d));
	ck_assert_uint_eq(d.errors, 1);
	diag_fini(&d);
}
END_TEST

/* Appending to a macro a chain of macros deeper than a rule may use is no cycle: accepted until
 * a rule uses it. A real cycle is still one. */
START_TEST(deep_override_is_no_cycle)
{
	struct text t = {0};
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	in_tmpdir();
	chain(&t, 80);
	add(&t, "  zz: {op: exec}\n");
	write_file("a.yaml", t.s);
	free(t.s);
	write_file("b.yaml", HDR "macros:\n  zz: {condition: {macro: m79}, override: append}\n");
	write_file("c.yaml", HDR "macros:\n  m0: {condition: {macro: m5}, override: append}\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_msg(policy__load_file(p, "b.yaml", &d) == 0, "%s", diag_first(&d));
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_int_eq(policy__load_file(p, "c.yaml", &d), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "c.yaml:3:19: macro \"m0\" would use itself");
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* Seven lists of ten references to the one before: 10^7 values from a few hundred bytes,
 * refused before any is built. */
START_TEST(list_bomb_refused)
{
	struct text t = {0};
	struct diag d = {0};

	in_tmpdir();
	add(&t, HDR "lists:\n  l0: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
	for (int i = 1; i < 7; i++) {
		add(&t, "  l%d: [", i);
		for (int j = 0; j < 10; j++)
			add(&t, "\"@l%d\"%s", i - 1, j < 9 ? ", " : "]\n");
	}
	add(&t, "rules:\n" RULE_HEAD "  condition: {port: \"@l6\"}\n", "bomb");
	ck_assert_int_eq(load_text(&t, &d, NULL), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "p.yaml:15:15: this test's lists expand to more than "
					  "262144 values, the most a policy may hold");
	diag_fini(&d);
}
END_TEST

/* Within the bound, a list used many times by the next is counted once and expands fully. */
START_TEST(list_shared_expands)
{
	struct policy *p = NULL;
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(load(HDR "lists:\n  a: [1, 2, 3]\n  b: [\"@a\", \"@a\", 4]\n"
				  "  c: [\"@b\", \"@b\"]\n"
				  "rules:\n" RULE_R "  condition: {port: \"@c\"}\n",
			      &d, &p),
			 0);
	ck_assert_uint_eq(p->rules[0]->cond->test->n, 14);
	policy__free(p);
	diag_fini(&d);
}
END_TEST

/* A list changed by a file loaded after a compilation is counted again by the next one (the
 * counts are kept per compilation, not per load). */
START_TEST(list_recounted_after_an_override)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	in_tmpdir();
	write_file("a.yaml", HDR "lists:\n  a: [/x]\n  b: [\"@a\"]\n"
				 "rules:\n" RULE_R "  condition: {path: \"@b\"}\n");
	write_file("b.yaml", HDR "lists:\n  a: {items: [/y, /z], override: append}\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_uint_eq(p->rules[0]->cond->test->n, 1);
	ck_assert_uint_eq(policy_find_list(p, "b")->n_expanded, 1);
	ck_assert_int_eq(policy__load_file(p, "b.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_uint_eq(p->rules[0]->cond->test->n, 3);
	ck_assert_uint_eq(policy_find_list(p, "b")->n_expanded, 3);
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* Two lists that include each other through an override: named as a cycle. */
START_TEST(list_cycle_refused)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	in_tmpdir();
	write_file("a.yaml", HDR "lists:\n  a: [/x]\n  b: [\"@a\", /y]\n"
				 "rules:\n" RULE_R "  condition: {path: \"@b\"}\n");
	write_file("b.yaml", HDR "lists:\n  a: {items: [\"@b\"], override: append}\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_int_eq(policy__load_file(p, "b.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "a.yaml:10:21: list \"b\" includes itself through other "
					  "lists");
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

Suite *policy_bounds_suite(void);

Suite *policy_bounds_suite(void)
{
	Suite *s = suite_create("policy_bounds");
	TCase *tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, NULL, leave_tmpdir);
	tcase_add_test(tc, depth_limit_exact);
	tcase_add_test(tc, depth_limit_exception);
	tcase_add_test(tc, diamond_refused_at_once);
	tcase_add_test(tc, total_limit);
	tcase_add_test(tc, deep_override_is_no_cycle);
	tcase_add_test(tc, list_bomb_refused);
	tcase_add_test(tc, list_shared_expands);
	tcase_add_test(tc, list_recounted_after_an_override);
	tcase_add_test(tc, list_cycle_refused);
	suite_add_tcase(s, tc);
	return s;
}
