/*
 * check_policy.c - the policy loader and evaluator.
 *
 * errors: a table of broken policies, each with the exact first "file:line:column: reason"
 * (YAML syntax, truncated files, wrong types, unknown keys, duplicates, unknown lists and
 * macros, bad globs, CIDRs, ports and enumerations, override misuse).
 * load: a policy using every form loads and compiles; files are digested; several files merge
 * with override: append and replace.
 * eval: conditions on synthetic events (family, op, path as passed / resolved / opened, exe,
 * argv, addr, port, af, result, errno, write, launch, flags, all/any/not, macros, lists of
 * lists, exceptions), variables from the header and from --set; the index of rules by op.
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

START_TEST(field_names_complete)
{
	const char *const *k = field_key_names();
	size_t n = 0;

	for (; k[n]; n++)
		if (n >= 4)
			ck_assert_msg(field_find(k[n]), "%s", k[n]);
	ck_assert_uint_eq(n, 45);
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

/* --- evaluation ----------------------------------------------------------------------------- */

START_TEST(eval_paths)
{
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{path: \"${home}/.ssh/**\"}");
	ev_open(&x, ".ssh/id_rsa", "/home/u/.ssh/id_rsa", 0, 3);
	ck_assert(holds(p, &x));
	ev_open(&x, "/home/u/.ssh/id_rsa", NULL, 0, 3); /* no absolute path: as passed */
	ck_assert(holds(p, &x));
	ev_open(&x, ".ssh/id_rsa", NULL, 0, 3); /* relative and unresolved: no match */
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{path_arg: \".ssh/*\"}");
	ev_open(&x, ".ssh/id_rsa", "/home/u/.ssh/id_rsa", 0, 3);
	ck_assert(holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{opened_path: \"**/.ssh/**\"}"); /* symlink escape */
	ev_open(&x, "/tmp/innocent", "/tmp/innocent", 0, 3);
	x.e.opened_path = (ProtobufCBinaryData){19, (uint8_t *)"/home/u/.ssh/id_rsa"};
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{path: \"${extra}/**\"}");
	ev_open(&x, "/opt/x", NULL, 0, 3);
	ck_assert(holds(p, &x));
	policy__free(p);
}
END_TEST

START_TEST(eval_open_fields)
{
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{family: file, op: openat, write: true, result: success}");
	ev_open(&x, "/w/x", NULL, 01 | 0100, 3);
	ck_assert(holds(p, &x));
	ev_open(&x, "/w/x", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	ev_open(&x, "/w/x", NULL, 01, -13);
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{result: failure, errno: [EACCES, EPERM]}");
	ev_open(&x, "/w/x", NULL, 0, -13);
	ck_assert(holds(p, &x));
	ev_open(&x, "/w/x", NULL, 0, -2);
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{truncated: true}");
	ev_open(&x, "/w/x", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	x.e.flags = MW_F_TRUNC(MW_S_ABS);
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{exe: /usr/bin/*, argv: \"node *\"}");
	ev_open(&x, "/w/x", NULL, 0, 3);
	ck_assert(holds(p, &x));
	x.s.argv = (struct ev_bytes){(const uint8_t *)"python x", 8};
	ck_assert(!holds(p, &x));
	policy__free(p);
}
END_TEST

START_TEST(eval_network)
{
	static const uint8_t lo[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
	static const uint8_t md[16] = {2, 0, 0, 80, 169, 254, 169, 254};
	static const uint8_t v6[28] = {10, 0, 1, 187, 0, 0, 0, 0, 0, 0, 0, 0,
				       0,  0, 0, 0,   0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t un[12] = {1, 0, '/', 'r', 'u', 'n', '/', 'x', 0};
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond(
		"lists:\n  local: [127.0.0.0/8, \"::1\"]\n  more: [\"@local\", 10.0.0.0/8]",
		"{op: connect, af: [inet, inet6], not: {addr: \"@more\"}}");
	ev_connect(&x, lo, sizeof(lo), 0);
	ck_assert(!holds(p, &x));
	ev_connect(&x, v6, sizeof(v6), 0);
	ck_assert(!holds(p, &x));
	ev_connect(&x, md, sizeof(md), -111);
	ck_assert(holds(p, &x));
	ev_connect(&x, un, sizeof(un), 0);
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{any: [{port: 80}, {port: 8000-8999}], not: {af: unix}}");
	ev_connect(&x, md, sizeof(md), 0);
	ck_assert(holds(p, &x));
	ev_connect(&x, lo, sizeof(lo), 0);
	ck_assert(holds(p, &x));
	ev_connect(&x, v6, sizeof(v6), 0);
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{addr: 0.0.0.0/0}"); /* an address test on an open: false */
	ev_open(&x, "/x", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	policy__free(p);
}
END_TEST

START_TEST(eval_macros_exceptions)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	struct evx x;
	int exc;

	in_tmpdir();
	write_file("p.yaml",
		   HDR "macros:\n  open_read: {op: openat, write: false}\n"
		       "  secret: {all: [{macro: open_read}, {path: \"**/.env\"}]}\n"
		       "rules:\n- id: r\n  description: d\n  severity: high\n  category: c\n"
		       "  condition: {macro: secret}\n  exceptions:\n"
		       "  - {name: tests, condition: {path: /srv/test/**}}\n"
		       "  - {name: never, condition: {not: {op: openat}}}\n");
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ev_open(&x, "/srv/app/.env", NULL, 0, 3);
	ck_assert(policy_rule_match(p->rules[0], &x.s, 0, &exc));
	ck_assert_int_eq(exc, -1);
	ev_open(&x, "/srv/test/.env", NULL, 0, 3);
	ck_assert(!policy_rule_match(p->rules[0], &x.s, 0, &exc));
	ck_assert_int_eq(exc, 0);
	ev_open(&x, "/srv/app/.env", NULL, 02, 3);
	ck_assert(!policy_rule_match(p->rules[0], &x.s, 0, &exc));
	ck_assert_int_eq(exc, -1);
	p->rules[0]->enabled = false;
	ev_open(&x, "/srv/app/.env", NULL, 0, 3);
	ck_assert(!policy_rule_match(p->rules[0], &x.s, 0, &exc));
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

START_TEST(unset_variable_never_matches)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new(); /* no header: home has no value */
	struct diag d = {0};
	struct evx x;

	in_tmpdir();
	write_file("p.yaml", RULE("{path: [\"${home}/.ssh/**\", \"**/.aws/credentials\"]}"));
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_uint_eq(d.warnings, 1);
	ck_assert_str_eq(diag_first(&d), "p.yaml:7:22: warning: variable ${home} has no value in "
					 "this trace: patterns using it match nothing (1 use, the "
					 "first here)");
	ev_open(&x, "/.ssh/id", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	ev_open(&x, "/r/.aws/credentials", NULL, 0, 3);
	ck_assert(holds(p, &x));
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* Compiled again with the trace's variables (analyze does it once the header is read): the
 * tests that read a variable see its value, the others keep what the first compilation made,
 * and a file loaded since makes the next compilation a whole one. */
START_TEST(compile_again_with_variables)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	const struct fvalue *kept;
	const struct cond *c;
	char err[128];
	struct evx x;

	in_tmpdir();
	write_file("p.yaml", RULE("{any: [{path: \"${home}/.ssh/**\"}, {path: \"**/.aws/c\"}]}"));
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	c = p->rules[0]->cond;
	ck_assert_int_eq(c->kind, COND_ANY);
	ck_assert(c->kids[0]->test->reads_vars);
	ck_assert(!c->kids[1]->test->reads_vars);
	kept = c->kids[1]->test->v;
	ev_open(&x, "/home/u/.ssh/id", NULL, 0, 3);
	ck_assert(!holds(p, &x));

	ck_assert_int_eq(vars__set_arg(vs, "home=/home/u", err, sizeof(err)), 0);
	ck_assert_int_eq(vars__from_header(vs, NULL), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_msg(d.n == 0, "%s", diag_first(&d));
	ck_assert_ptr_eq(c->kids[1]->test->v, kept);
	ck_assert(holds(p, &x));
	ev_open(&x, "/.ssh/id", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	ev_open(&x, "/r/.aws/c", NULL, 0, 3);
	ck_assert(holds(p, &x));
	ck_assert_uint_eq(c->kids[0]->test->memo_bit, 0);
	ck_assert_uint_eq(c->kids[1]->test->memo_bit, 1);

	write_file("q.yaml", HDR "rules:\n- id: q\n  description: d\n  severity: low\n"
				 "  category: c\n  condition: {op: openat}\n");
	ck_assert_int_eq(policy__load_file(p, "q.yaml", &d), 0);
	ck_assert(!p->compiled);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert(p->compiled);
	ck_assert_uint_eq(policy__enabled_rules(p), 2);
	ck_assert(holds(p, &x));
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* A trace whose home is longer than a pattern may be: a warning, never a failed analysis. */
START_TEST(huge_variable_value)
{
	static char arg[6000];
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	char err[128];

	in_tmpdir();
	memcpy(arg, "home=/", 6);
	memset(arg + 6, 'h', sizeof(arg) - 7);
	ck_assert_int_eq(vars__set_arg(vs, arg, err, sizeof(err)), 0);
	write_file("p.yaml", RULE("{path: [\"${home}/.ssh/**\", /x]}"));
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	ck_assert_uint_eq(d.warnings, 1);
	ck_assert_str_eq(diag_first(&d),
			 "p.yaml:7:22: warning: pattern longer than the limit (4096 "
			 "tokens) with this trace's variables; the pattern matches "
			 "nothing");
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

START_TEST(vars_set)
{
	struct vars *vs = vars__new();
	char err[160];
	const char *v;
	size_t n;

	ck_assert_int_eq(vars__get(vs, "home", &v, &n), -ENODATA);
	ck_assert_int_eq(vars__get(vs, "nope", &v, &n), -ENOENT);
	ck_assert_int_eq(vars__set_arg(vs, "home=/h", err, sizeof(err)), 0);
	ck_assert_int_eq(vars__from_header(vs, NULL), 0); /* --set wins, tmp defaults */
	ck_assert_int_eq(vars__get(vs, "home", &v, &n), 0);
	ck_assert_str_eq(v, "/h");
	ck_assert_int_eq(vars__get(vs, "tmp", &v, &n), 0);
	ck_assert_str_eq(v, "/tmp");
	ck_assert_int_eq(vars__set_arg(vs, "x", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "bad --set \"x\": expected NAME=VALUE, NAME of letters, digits and "
			      "'_'");
	ck_assert_int_eq(vars__set_arg(vs, "a-b=1", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(vars__set_arg(vs, "=1", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(vars__set_arg(vs, "empty=", err, sizeof(err)), 0);
	ck_assert_int_eq(vars__get(vs, "empty", &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(vars__name(vs, 0), "empty");
	vars__free(vs);
}
END_TEST

#define IX_RULE(id, cond)                                                                          \
	"- id: " id "\n  description: d\n  severity: high\n  category: c\n  condition: " cond "\n"

/* The index lists for an op exactly the enabled rules whose op and family tests admit it. */
static void check_ops(const struct policy *p, int op, const char *want)
{
	char got[64] = "";
	const uint32_t *ix;
	size_t n;

	ix = policy_rules_for_op(p, op, &n);
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%u", i ? "," : "",
			 (unsigned)ix[i]);
	ck_assert_msg(strcmp(got, want) == 0, "op %d: rules %s, expected %s", op, got, want);
}

START_TEST(rule_index)
{
	struct policy *p = NULL;
	struct diag d = {0};

	static const char text[] =
		HDR "macros:\n  del: {op: [unlink, rmdir], path: /x}\nrules:\n"
		IX_RULE("r0", "{op: openat}")
		IX_RULE("r1", "{family: network}")
		IX_RULE("r2", "{not: {op: openat}}")
		IX_RULE("r3", "{any: [{op: exec}, {macro: del}]}")
		IX_RULE("r4", "{op: openat}\n  enabled: false")
		IX_RULE("r5", "{tampered: true}")
		IX_RULE("r6", "{op: openat, family: network}")
		IX_RULE("r7", "{family: channel}")
		IX_RULE("r8", "{op: loss}");

	in_tmpdir();
	ck_assert_int_eq(load(text, &d, &p), 0);
	check_ops(p, MCPT__OP__OP_OPENAT, "0,2,5"); /* not r6: its tests exclude each other */
	check_ops(p, MCPT__OP__OP_CONNECT, "1,2,5");
	check_ops(p, MCPT__OP__OP_EXEC, "2,3,5");
	check_ops(p, MCPT__OP__OP_UNLINK, "2,3,5");
	check_ops(p, MCPT__OP__OP_RMDIR, "2,3,5");
	check_ops(p, EV_OP_MESSAGE, "2,5,7");
	check_ops(p, EV_OP_LOSS, "2,5,8");
	check_ops(p, 0, "2,5");
	check_ops(p, POL_INDEX_OPS - 1, "2,5");
	/* ops the index has no slot for: every enabled rule */
	check_ops(p, POL_INDEX_OPS, "0,1,2,3,5,6,7,8");
	check_ops(p, -1, "0,1,2,3,5,6,7,8");
	diag_fini(&d);
	policy__free(p);
}
END_TEST

Suite *policy_suite(void);

Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *errs = tcase_create("errors"), *ld = tcase_create("load"),
	      *ev = tcase_create("eval");

	tcase_add_checked_fixture(errs, NULL, leave_tmpdir);
	tcase_add_checked_fixture(ld, NULL, leave_tmpdir);
	tcase_add_checked_fixture(ev, NULL, leave_tmpdir);
	tcase_add_loop_test(errs, errors, 0, sizeof(bad_policies) / sizeof(bad_policies[0]));
	tcase_add_test(errs, every_error_reported);
	tcase_add_test(errs, unreadable);
	tcase_add_test(errs, truncated_everywhere);
	tcase_add_test(errs, field_names_complete);
	tcase_add_test(ld, load_fixture);
	tcase_add_test(ld, load_default_policy);
	tcase_add_test(ld, override_files);
	tcase_add_test(ev, eval_paths);
	tcase_add_test(ev, eval_open_fields);
	tcase_add_test(ev, eval_network);
	tcase_add_test(ev, eval_macros_exceptions);
	tcase_add_test(ev, unset_variable_never_matches);
	tcase_add_test(ev, compile_again_with_variables);
	tcase_add_test(ev, vars_set);
	tcase_add_test(ev, huge_variable_value);
	tcase_add_test(ev, rule_index);
	suite_add_tcase(s, errs);
	suite_add_tcase(s, ld);
	suite_add_tcase(s, ev);
	return s;
}
