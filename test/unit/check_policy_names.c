/*
 * check_policy_names.c - lookups by name (policy_names.c): every list, macro and rule of a
 * policy large enough to grow the tables several times is found, a missing name is not, a
 * duplicate is still caught, and a replaced rule is found in its old place.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_testlib.h"

#define N 3000

START_TEST(many_names)
{
	size_t cap = (size_t)N * 200, n = 0;
	char *text = malloc(cap), name[32];
	struct policy *p = NULL;
	struct diag d = {0};

	ck_assert_ptr_nonnull(text);
	n += (size_t)snprintf(text + n, cap - n, HDR "lists:\n  l0: [/a]\n");
	for (int i = 1; i < N; i++)
		n += (size_t)snprintf(text + n, cap - n, "  l%d: [\"@l%d\", /b%d]\n", i, i - 1, i);
	n += (size_t)snprintf(text + n, cap - n, "macros:\n");
	for (int i = 0; i < N; i++)
		n += (size_t)snprintf(text + n, cap - n, "  m%d: {op: exec}\n", i);
	n += (size_t)snprintf(text + n, cap - n, "rules:\n");
	for (int i = 0; i < N; i++)
		n += (size_t)snprintf(text + n, cap - n,
				      "- {id: r%d, description: d, severity: low, category: c, "
				      "condition: {macro: m%d}}\n",
				      i, N - 1 - i);
	ck_assert_uint_lt(n, cap);
	in_tmpdir();
	ck_assert_int_eq(load(text, &d, &p), 0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		ck_assert_ptr_eq(policy_find_list(p, name), p->lists[i]);
		snprintf(name, sizeof(name), "m%d", i);
		ck_assert_ptr_eq(policy_find_macro(p, name), p->macros[i]);
		snprintf(name, sizeof(name), "r%d", i);
		ck_assert_ptr_eq(policy_find_rule(p, name), p->rules[i]);
		ck_assert_ptr_eq(p->rules[i]->cond->macro, p->macros[N - 1 - i]);
	}
	ck_assert_ptr_null(policy_find_list(p, "l3000"));
	ck_assert_ptr_null(policy_find_macro(p, "m"));
	ck_assert_ptr_null(policy_find_rule(p, "r-1"));
	policy__free(p);

	/* the same with a rule defined twice at the end: found through the table */
	n += (size_t)snprintf(text + n, cap - n,
			      "- {id: r7, description: d, severity: low, category: c, "
			      "condition: {op: exec}}\n");
	ck_assert_int_eq(load(text, &d, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(diag_first(&d), "rule \"r7\" is already defined at p.yaml:"));
	diag_fini(&d);
	free(text);
}
END_TEST

START_TEST(replaced_rule_found)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	char text[100 * 128];
	size_t n = 0;

	in_tmpdir();
	n += (size_t)snprintf(text + n, sizeof(text) - n, HDR "rules:\n");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "- {id: r%d, description: d, severity: low, category: c, "
				      "condition: {op: exec}}\n",
				      i);
	ck_assert_uint_lt(n, sizeof(text));
	write_file("a.yaml", text);
	write_file("b.yaml", HDR "rules:\n- {id: r42, override: replace, description: new, "
				 "severity: high, category: c, condition: {op: fork}}\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_int_eq(policy__load_file(p, "b.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_ptr_eq(policy_find_rule(p, "r42"), p->rules[42]);
	ck_assert_str_eq(p->rules[42]->description, "new");
	ck_assert_uint_eq(p->n_rules, 100);
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

Suite *policy_names_suite(void);

Suite *policy_names_suite(void)
{
	Suite *s = suite_create("policy_names");
	TCase *tc = tcase_create("lookups");

	tcase_add_checked_fixture(tc, NULL, leave_tmpdir);
	tcase_add_test(tc, many_names);
	tcase_add_test(tc, replaced_rule_found);
	suite_add_tcase(s, tc);
	return s;
}
