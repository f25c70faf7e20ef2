/*
 * check_policy_eval.c - the policy evaluator (the loader: check_policy.c): conditions on
 * synthetic events (family, op, path as passed / resolved / opened, exe, argv, addr, port, af,
 * result, errno, write, launch, flags, proc_self, all/any/not, macros, lists of lists,
 * exceptions), the default policy's secrets of /proc,
 * variables from the header and from --set; the index of rules by op.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "policy.h"
#include "policy_testlib.h"

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

/* An open of path as the process with pid and tid 42 made it, the file opened being opened. */
static void ev_proc(struct evx *x, const char *path, const char *opened)
{
	ev_open(x, path, path, 0, 3);
	x->e.pid = x->e.tid = 42;
	if (opened)
		x->e.opened_path = (ProtobufCBinaryData){strlen(opened), (uint8_t *)opened};
	event_decode(&x->v, &x->e);
}

START_TEST(eval_proc_self)
{
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{proc_self: true}");
	ev_proc(&x, "/proc/self/environ", "/proc/42/environ"); /* as the trace records it */
	ck_assert(holds(p, &x));
	ev_proc(&x, "/proc/thread-self/mem", NULL); /* failed: no file opened, the path */
	ck_assert(holds(p, &x));
	ev_proc(&x, "/proc/42/task/43/environ", "/proc/42/task/43/environ");
	ck_assert(holds(p, &x));
	ev_proc(&x, "/proc/7/environ", "/proc/7/environ");
	ck_assert(!holds(p, &x));
	ev_proc(&x, "/tmp/lnk", "/proc/7/environ"); /* a symlink to another's: the file opened */
	ck_assert(!holds(p, &x));
	ev_proc(&x, "/proc/selfish/environ", NULL);
	ck_assert(!holds(p, &x));
	ev_proc(&x, "/proc/420/environ", NULL);
	ck_assert(!holds(p, &x));
	policy__free(p);

	p = compile_cond("", "{proc_self: false}"); /* any other path */
	ev_proc(&x, "/etc/passwd", "/etc/passwd");
	ck_assert(holds(p, &x));
	policy__free(p);
}
END_TEST

/* The default policy's file.sensitive-read on environments and memory of /proc: another
 * process's (a thread's too) is a secret, the process's own is not (DESIGN 8). */
START_TEST(default_proc_secrets)
{
	static const struct {
		const char *path, *opened;
		bool found;
	} cases[] = {
		{"/proc/self/environ", "/proc/42/environ", false},
		{"/proc/42/environ", "/proc/42/environ", false},
		{"/proc/self/task/42/environ", "/proc/42/task/42/environ", false},
		{"/proc/1/environ", "/proc/1/environ", true},
		{"/proc/1/task/9/environ", "/proc/1/task/9/environ", true},
		{"/proc/1/mem", "/proc/1/mem", true},
		{"/proc/1/task/9/mem", "/proc/1/task/9/mem", true},
		{"/work/lnk", "/proc/1/environ", true},
	};
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	const struct pol_rule *r = NULL;
	struct diag d = {0};
	struct evx x;
	int exc;

	ck_assert_int_eq(policy__load_file(p, MW_SOURCE_DIR "/policies/default.yaml", &d), 0);
	ck_assert_msg(policy__compile(p, vs, true, &d) == 0, "%s", diag_first(&d));
	for (size_t i = 0; i < p->n_rules; i++)
		if (!strcmp(p->rules[i]->id, "file.sensitive-read"))
			r = p->rules[i];
	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ev_proc(&x, cases[i].path, cases[i].opened);
		ck_assert_msg(policy_rule_match(r, &x.s, 0, &exc) == cases[i].found, "%s -> %s",
			      cases[i].path, cases[i].opened);
	}
	diag_fini(&d);
	vars__free(vs);
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

Suite *policy_eval_suite(void);

Suite *policy_eval_suite(void)
{
	Suite *s = suite_create("policy_eval");
	TCase *ev = tcase_create("eval");

	tcase_add_checked_fixture(ev, NULL, leave_tmpdir);
	tcase_add_test(ev, eval_paths);
	tcase_add_test(ev, eval_proc_self);
	tcase_add_test(ev, default_proc_secrets);
	tcase_add_test(ev, eval_open_fields);
	tcase_add_test(ev, eval_network);
	tcase_add_test(ev, eval_macros_exceptions);
	tcase_add_test(ev, unset_variable_never_matches);
	tcase_add_test(ev, compile_again_with_variables);
	tcase_add_test(ev, vars_set);
	tcase_add_test(ev, huge_variable_value);
	tcase_add_test(ev, rule_index);
	suite_add_tcase(s, ev);
	return s;
}
