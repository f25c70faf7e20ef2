/*
 * check_policy.c - the policy loader: broken policies refused with a positioned message, good
 * ones loaded and merged. The evaluator: check_policy_eval.c.
 *
 * errors: a table of broken policies, each with the exact first "file:line:column: reason"
 * (YAML syntax, truncated files, wrong types, unknown keys, duplicates, unknown lists and
 * macros, bad globs, CIDRs, ports and enumerations, override misuse).
 * load: a policy using every form loads and compiles; files are digested; several files merge
 * with override: append and replace.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "policy.h"
#include "policy_testlib.h"

struct bad {
	const char *yaml;
	const char *msg;
};

static const struct bad bad_policies[] = {
	/* YAML itself */
	{"", "p.yaml:1:1: empty document"},
	{"version: 1\nrules: [\n", "p.yaml:3:1: did not find expected node content while parsing "
				   "a flow node (line 3 column 1)"},
	{"version: 1\n  x: 2\n", "p.yaml:2:4: mapping values are not allowed in this context"},
	{"version: 1\nlists: {a: [x, y}\n", "p.yaml:2:17: did not find expected ',' or ']' while "
					    "parsing a flow sequence (line 2 column 12)"},
	{"version: 1\nversion: 1\n", "p.yaml:2:1: duplicate key \"version\" (first at line 1)"},
	{"version: 1\n---\nversion: 1\n", "p.yaml:2:1: only one YAML document per file"},
	{"version: 1\nlists: {a: &x [1], b: *x}\n", "p.yaml:2:23: YAML aliases are not supported"},
	{"version: !!int 1\n", "p.yaml:1:10: YAML tags are not supported"},
	{"version: ! 1\n", "p.yaml:1:10: YAML tags are not supported"}, /* even the empty one */
	{"version: 1\n? [a]\n: b\n", "p.yaml:2:3: mapping keys must be scalars, not a sequence"},
	/* top level */
	{"- a\n", "p.yaml:1:1: a policy is a mapping (version, lists, macros, rules), not a "
		  "sequence"},
	{"rules: []\n", "p.yaml:1:1: missing \"version\" (this analyzer reads version 1)"},
	{"version: 2\n", "p.yaml:1:10: unsupported policy version 2 (this analyzer reads 1)"},
	{"version: one\n", "p.yaml:1:10: \"version\" takes an integer, not \"one\""},
	{"version: 1\nrulez: []\n", "p.yaml:2:1: unknown top-level key \"rulez\" (did you mean "
				    "\"rules\"?)"},
	{"version: 1\nrules: {a: 1}\n", "p.yaml:2:8: \"rules\" takes a sequence of rules, not a "
					"mapping"},
	{"version: 1\nlists: [a]\n", "p.yaml:2:8: \"lists\" takes a mapping of names, not a "
				     "sequence"},
	/* lists */
	{"version: 1\nlists: {a: x}\n", "p.yaml:2:12: list \"a\" takes a sequence of values, not a "
					"scalar"},
	{"version: 1\nlists: {a: [[x]]}\n", "p.yaml:2:13: expected a value (a scalar), not a "
					    "sequence"},
	{"version: 1\nlists: {a: [\"@b\"]}\n", "p.yaml:2:13: unknown list \"b\" (lists must be "
					       "defined before use)"},
	{"version: 1\nlists: {\"a b\": [x]}\n", "p.yaml:2:9: bad list name (letters, digits, '_', "
						"'-', '.', ':')"},
	{"version: 1\nlists: {a: {items: [x], mode: y}}\n", "p.yaml:2:25: unknown list definition "
							    "key \"mode\""},
	{"version: 1\nlists: {a: {override: append}}\n",
	 "p.yaml:2:12: list \"a\" has no \"items\""},
	{"version: 1\nlists: {a: {items: [x], override: append}}\n",
	 "p.yaml:2:35: override of list \"a\", which no earlier file defines"},
	{"version: 1\nlists: {a: {items: [x], override: merge}}\n",
	 "p.yaml:2:35: \"override\" is append or replace"},
	/* macros */
	{"version: 1\nmacros: {m: [x]}\n", "p.yaml:2:13: expected a condition (a mapping such as "
					   "{op: exec}), not a sequence"},
	{"version: 1\nmacros: {m: {macro: m}}\n", "p.yaml:2:21: unknown macro \"m\" (macros must "
						  "be defined before use)"},
	{"version: 1\nmacros: {m: {op: exec}, m2: {op: exec}, m: {op: exit}}\n",
	 "p.yaml:2:41: duplicate key \"m\" (first at line 2)"},
	/* rules */
	{HDR "rules: [x]\n", "p.yaml:2:9: a rule is a mapping, not a scalar"},
	{HDR "rules:\n- description: d\n", "p.yaml:3:3: rule has no \"id\""},
	{HDR "rules:\n- id: \"a b\"\n", "p.yaml:3:7: bad rule id (letters, digits, '_', '-', '.', "
					"':')"},
	{HDR "rules:\n- id: r\n  sevrity: high\n", "p.yaml:4:3: unknown rule key \"sevrity\" (did "
						   "you mean \"severity\"?)"},
	{HDR "rules:\n- id: r\n  severity: high\n",
	 "p.yaml:3:3: rule \"r\" has no \"description\""},
	{HDR "rules:\n- id: r\n  description: d\n  severity: severe\n  category: c\n  condition: "
	     "{op: exec}\n",
	 "p.yaml:5:13: \"severity\" is one of info, low, medium, high, critical"},
	{HDR "rules:\n- id: r\n  description: [d]\n  severity: high\n  category: c\n  condition: "
	     "{op: exec}\n",
	 "p.yaml:4:16: \"description\" takes a string, not a sequence"},
	{HDR "rules:\n- id: r\n  description: d\n  severity: high\n  category: Net-Connect\n  "
	     "condition: {op: exec}\n",
	 "p.yaml:6:13: \"category\" takes lower-case letters, digits and '_'"},
	{HDR "rules:\n- id: r\n  description: d\n  severity: high\n  category: c\n  tags: t\n  "
	     "condition: {op: exec}\n",
	 "p.yaml:7:9: \"tags\" takes a sequence of strings, not a scalar"},
	{HDR
	 "rules:\n- id: r\n  description: d\n  severity: high\n  category: c\n  enabled: yes\n  "
	 "condition: {op: exec}\n",
	 "p.yaml:7:12: \"enabled\" takes true or false"},
	{RULE("{op: exec}") "- id: r\n  description: d\n  severity: high\n  category: c\n  "
			    "condition: {op: exec}\n",
	 "p.yaml:8:7: rule \"r\" is already defined at p.yaml:3:7 (use override: append or "
	 "replace)"},
	{HDR "rules:\n- id: r\n  override: replace\n",
	 "p.yaml:4:13: override of rule \"r\", which no earlier file defines"},
	{RULE("{op: exec}") "- id: r\n  override: append\n  severity: low\n",
	 "p.yaml:10:13: override: append takes only tags, exceptions and enabled (use replace to "
	 "change the rest)"},
	/* exceptions */
	{RULE("{op: exec}") "  exceptions: {name: e}\n",
	 "p.yaml:8:15: \"exceptions\" takes a sequence, not a mapping"},
	{RULE("{op: exec}") "  exceptions:\n  - name: e\n",
	 "p.yaml:9:5: an exception needs \"condition\""},
	{RULE("{op: exec}") "  exceptions:\n  - name: e\n    condition: {op: exit}\n    when: x\n",
	 "p.yaml:11:5: unknown exception key \"when\""},
	{RULE("{op: exec}") "  exceptions:\n  - {name: e, condition: {op: exit}}\n"
			    "  - {name: e, condition: {op: fork}}\n",
	 "p.yaml:10:12: rule \"r\" already has an exception \"e\""},
	/* conditions */
	{RULE("x"), "p.yaml:7:14: expected a condition (a mapping such as {op: exec}), not a "
		    "scalar"},
	{RULE("{}"), "p.yaml:7:14: expected a condition (a mapping such as {op: exec}), not an "
		     "empty mapping"},
	{RULE("{pathh: /x}"), "p.yaml:7:15: unknown condition key \"pathh\" (did you mean "
			      "\"path\"?)"},
	{RULE("{all: {op: exec}}"), "p.yaml:7:20: \"all\" takes a non-empty sequence of "
				    "conditions, not a mapping"},
	{RULE("{any: []}"), "p.yaml:7:20: \"any\" takes a non-empty sequence of conditions, not an "
			    "empty one"},
	{RULE("{not: [op: exec]}"), "p.yaml:7:20: expected a condition (a mapping such as {op: "
				    "exec}), not a sequence"},
	{RULE("{path: }"), "p.yaml:7:21: \"path\" takes a value, \"@list\" or a sequence of them, "
			   "not null"},
	{RULE("{path: {glob: x}}"), "p.yaml:7:21: \"path\" takes a value, \"@list\" or a sequence "
				    "of them, not a mapping"},
	{RULE("{path: \"@nolist\"}"), "p.yaml:7:21: unknown list \"nolist\" (lists must be defined "
				      "before use)"},
	{RULE("{write: [true, false]}"), "p.yaml:7:22: \"write\" takes one value (true or false)"},
	{RULE("{write: maybe}"), "p.yaml:7:22: expected true or false: \"maybe\""},
	{RULE("{op: opne}"), "p.yaml:7:19: unknown op (did you mean \"open\"?): \"opne\""},
	{RULE("{op: sendfile}"), "p.yaml:7:19: unknown op (the operations are listed in "
				 "policies/README.md): \"sendfile\""},
	{RULE("{family: net}"), "p.yaml:7:23: unknown family (process, file, network, privilege, "
				"evasion, channel, health): \"net\""},
	{RULE("{result: ok}"), "p.yaml:7:23: unknown result (success, failure, pending): \"ok\""},
	{RULE("{af: ipv4}"), "p.yaml:7:19: unknown address family (inet, inet6, unix, unspec, "
			     "other): \"ipv4\""},
	{RULE("{errno: ENOPE}"), "p.yaml:7:22: unknown errno name: \"ENOPE\""},
	{RULE("{path: \"/a[b\"}"), "p.yaml:7:21: unterminated character class at offset 2: "
				   "\"/a[b\""},
	{RULE("{exe: \"${nope}/x\"}"), "p.yaml:7:20: unknown variable ${nope}: \"${nope}/x\""},
	{RULE("{addr: 10.0.0.1/8}"), "p.yaml:7:21: \"10.0.0.1/8\" has bits set beyond its /8 "
				     "prefix"},
	{RULE("{addr: [127.0.0.1, example.com]}"), "p.yaml:7:33: \"example.com\" is not an IPv4 "
						   "or IPv6 address or network"},
	{RULE("{port: 70000}"), "p.yaml:7:21: bad port or port range (0..65535, \"LO-HI\"): "
				"\"70000\""},
	{RULE("{port: 90-80}"), "p.yaml:7:21: bad port or port range (0..65535, \"LO-HI\"): "
				"\"90-80\""},
	{HDR "lists:\n  nets: [127.0.0.0/8, not-a-net]\n"
	     "rules:\n- id: r\n  description: d\n"
	     "  severity: high\n  category: c\n  condition: {addr: \"@nets\"}\n",
	 "p.yaml:3:23: \"not-a-net\" is not an IPv4 or IPv6 address or network (item of list "
	 "\"nets\" used by addr at p.yaml:9:15)"},
	{RULE("{path: \"a\\0b\"}"), "p.yaml:7:21: a value cannot hold a NUL byte"},
	{HDR "rules:\n- id: r\n  description: \"ran {exe} as {gid}\"\n  severity: high\n"
	     "  category: c\n  condition: {op: exec}\n",
	 "p.yaml:4:16: unknown placeholder {gid} in message (path, path_arg, opened_path, exe, "
	 "argv, addr, op, pid, uid, result, dns, detail, attempts)"},
	{RULE("{op: exec}") "  message: \"\"\n",
	 "p.yaml:8:12: \"message\" is empty (leave it out: it defaults to the description)"},
	{RULE("{op: exec}") "  message: \"ran {exe} as {gid}\"\n",
	 "p.yaml:8:12: unknown placeholder {gid} in message (path, path_arg, opened_path, exe, "
	 "argv, addr, op, pid, uid, result, dns, detail, attempts)"},
};

START_TEST(errors)
{
	const struct bad *b = &bad_policies[_i];
	struct diag d = {0};
	int err;

	in_tmpdir();
	err = load(b->yaml, &d, NULL);
	ck_assert_msg(err == -EINVAL, "case %d: expected -EINVAL, got %d", _i, err);
	ck_assert_msg(d.errors >= 1, "case %d: no error recorded", _i);
	ck_assert_msg(strcmp(diag_first(&d), b->msg) == 0, "case %d:\n got: %s\nwant: %s", _i,
		      diag_first(&d), b->msg);
	diag_fini(&d);
}
END_TEST

START_TEST(every_error_reported)
{
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(load(HDR "rules:\n- {id: a, description: d, severity: bad, category: c, "
				  "condition: {op: exec}}\n"
				  "- {id: b, description: d, severity: high, category: c, "
				  "condition: {op: nopez}}\n",
			      &d, NULL),
			 -EINVAL);
	ck_assert_uint_eq(d.errors, 2);
	ck_assert_uint_eq(d.n, 2);
	diag_fini(&d);
}
END_TEST

START_TEST(unreadable)
{
	struct policy *p = policy__new();
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(policy__load_file(p, "missing.yaml", &d), -ENOENT);
	ck_assert_str_eq(diag_first(&d), "missing.yaml: failed to read policy: No such file or "
					 "directory");
	diag_fini(&d);
	ck_assert_int_eq(policy__load_file(p, ".", &d), -EISDIR);
	ck_assert_str_eq(diag_first(&d), ".: failed to read policy: Is a directory");
	diag_fini(&d);
	policy__free(p);
}
END_TEST

START_TEST(truncated_everywhere)
{
	/* every prefix of a valid policy either loads or fails with a positioned message */
	static const char full[] =
		RULE("{all: [{op: openat}, {path: \"${home}/.ssh/**\"}]}") "  tags: [a, b]\n";
	char buf[sizeof(full)];

	in_tmpdir();
	for (size_t n = 0; n < sizeof(full) - 1; n++) {
		struct diag d = {0};
		int err;

		memcpy(buf, full, n);
		buf[n] = '\0';
		err = load(buf, &d, NULL);
		ck_assert_msg(err == 0 || err == -EINVAL, "prefix %zu: %d", n, err);
		if (err)
			ck_assert_msg(strncmp(diag_first(&d), "p.yaml:", 7) == 0, "prefix %zu: %s",
				      n, diag_first(&d));
		diag_fini(&d);
	}
}
END_TEST

/* A value quoted in an error is cut to its first 64 bytes, escaped, and its length: one short
 * line whatever the value holds (a 5 MB op name was quoted whole). */
START_TEST(long_values_cut_in_errors)
{
	static const char *const around[][2] = {
		{RULE("{op: \""), "\"}\n"},
		{RULE("{addr: \""), "\"}\n"},
		{RULE("{path: \"["), "\"}\n"},
		{HDR "? \"", "\"\n: 1\n"}, /* a long key: the explicit form */
	};
	size_t n = 100000;
	char *big = malloc(n + 1), *text = malloc(n + 256);
	struct diag d = {0};

	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(text);
	memset(big, 'x', n);
	memcpy(big, "a\\nb", 4); /* YAML's "\n": a newline in the value */
	big[n] = '\0';
	in_tmpdir();
	for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		strcpy(text, around[i][0]);
		strcat(text, big);
		strcat(text, around[i][1]);
		ck_assert_int_eq(load(text, &d, NULL), -EINVAL);
		ck_assert_msg(strlen(diag_first(&d)) < 220, "%zu: %s", i, diag_first(&d));
		ck_assert_msg(!strchr(diag_first(&d), '\n'), "%zu: %s", i, diag_first(&d));
		ck_assert_msg(strstr(diag_first(&d), "a\\nbxxx") &&
				      strstr(diag_first(&d), "xxx... (") &&
				      strstr(diag_first(&d), " bytes)\""),
			      "%zu: %s", i, diag_first(&d));
		diag_fini(&d);
	}
	free(big);
	free(text);
}
END_TEST

/* An anchor is accepted and changes nothing (only an alias could use it, and those are
 * refused): policies/README.md and mcpwitness-policy(5) say so. */
START_TEST(anchor_changes_nothing)
{
	struct policy *p = NULL;
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(
		load("version: 1\nlists: {a: &x [1]}\nmacros: {m: &y {op: open}}\n", &d, &p), 0);
	ck_assert_uint_eq(p->n_lists, 1);
	policy__free(p);
	diag_fini(&d);
}
END_TEST

START_TEST(field_names_complete)
{
	const char *const *k = field_key_names();
	size_t n = 0;

	for (; k[n]; n++)
		if (n >= 4)
			ck_assert_msg(field_find(k[n]), "%s", k[n]);
	ck_assert_uint_eq(n, 46);
}
END_TEST

/* --- loading good policies -------------------------------------------------------------- */

START_TEST(load_fixture)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	ck_assert_int_eq(
		policy__load_file(p, MW_SOURCE_DIR "/test/fixtures/policies/all-forms.yaml", &d),
		0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	ck_assert_msg(d.n == 0, "%s", diag_first(&d));
	ck_assert_uint_eq(p->n_files, 1);
	ck_assert_uint_eq(p->files[0].size > 0, 1);
	ck_assert_uint_eq(p->n_rules, 4);
	ck_assert_uint_eq(policy__enabled_rules(p), 3);
	ck_assert_str_eq(p->rules[0]->message, "secret {path}");
	ck_assert_str_eq(p->rules[1]->message, p->rules[1]->description);
	ck_assert_uint_eq(p->rules[0]->n_tags, 2);
	ck_assert_uint_eq(p->rules[0]->n_exceptions, 1);
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

START_TEST(load_default_policy)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	ck_assert_int_eq(policy__load_file(p, MW_SOURCE_DIR "/policies/default.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	ck_assert_msg(d.n == 0, "%s", diag_first(&d));
	ck_assert_uint_ge(p->n_rules, 3);
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

START_TEST(override_files)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	struct pol_rule *r;

	in_tmpdir();
	write_file("a.yaml", RULE("{exe: \"@bins\"}") "lists:\n  bins: [/bin/a]\n"
						      "  other: [/x]\n");
	write_file("b.yaml",
		   HDR "lists:\n  bins: {items: [/bin/b], override: append}\n"
		       "  other: {items: [/y], override: replace}\n"
		       "rules:\n- id: r\n  override: append\n  tags: [t, t]\n  enabled: false\n"
		       "  exceptions: [{name: e, condition: {op: exit}}]\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_int_eq(policy__load_file(p, "b.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	ck_assert_uint_eq(policy_find_list(p, "bins")->n, 2);
	ck_assert_uint_eq(policy_find_list(p, "other")->n, 1);
	ck_assert_str_eq(policy_find_list(p, "other")->items[0].str, "/y");
	r = policy_find_rule(p, "r");
	ck_assert(!r->enabled);
	ck_assert_uint_eq(r->n_tags, 1); /* a tag once, however often given */
	ck_assert_uint_eq(r->n_exceptions, 1);
	ck_assert_uint_eq(r->cond->test->n, 2); /* compiled after every file: sees the append */

	write_file("c.yaml", HDR "rules:\n- id: r\n  override: replace\n  description: new\n"
				 "  severity: low\n  category: c\n  condition: {op: fork}\n");
	ck_assert_int_eq(policy__load_file(p, "c.yaml", &d), 0);
	r = policy_find_rule(p, "r");
	ck_assert_str_eq(r->description, "new");
	ck_assert(r->enabled);
	ck_assert_uint_eq(p->n_rules, 1);
	ck_assert_str_eq(p->files[2].path, "c.yaml");
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

Suite *policy_suite(void);

Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *errs = tcase_create("errors"), *ld = tcase_create("load");

	tcase_add_checked_fixture(errs, NULL, leave_tmpdir);
	tcase_add_checked_fixture(ld, NULL, leave_tmpdir);
	tcase_add_loop_test(errs, errors, 0, sizeof(bad_policies) / sizeof(bad_policies[0]));
	tcase_add_test(errs, every_error_reported);
	tcase_add_test(errs, unreadable);
	tcase_add_test(errs, truncated_everywhere);
	tcase_add_test(errs, field_names_complete);
	tcase_add_test(errs, long_values_cut_in_errors);
	tcase_add_test(errs, anchor_changes_nothing);
	tcase_add_test(ld, load_fixture);
	tcase_add_test(ld, load_default_policy);
	tcase_add_test(ld, override_files);
	suite_add_tcase(s, errs);
	suite_add_tcase(s, ld);
	return s;
}
