/*
 * check_policy_pre.c - the rule prefilter (policy_pre.c): the keys of cheap facts for which a
 * rule can hold on an op.
 *
 * sound: on a grid of subjects (ops, results, write intent, modes with and without an execute
 * bit, the tampered flag, launch, paths inside and outside the lists), a rule whose condition
 * holds is never outside its keys: conditions with negations, any/not/all, macros, op and
 * family tests nested anywhere, fields the prefilter does not know, exceptions; and every rule
 * of the shipped policy with the trace's variables set.
 * narrows: subjects that contradict a top-level test are outside the keys, and a field the
 * prefilter does not know never narrows.
 * direct: where the engine decides a rule by one field test of its condition (the others
 * decided by the op and the key), that test gives the condition's verdict, with exceptions, on
 * every grid subject; which test it is for a few conditions, and that the shipped policy has
 * such rules (evasion.userfaultfd on an open: its path test).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "policy.h"
#include "policy_field.h"
#include "policy_testlib.h"

#define LX_O_WRONLY 01
#define LX_O_CREAT  0100

/* One synthetic subject: an op with a path, flags, mode and return value. */
struct subj {
	Mcpt__Event e;
	struct ev_view v;
	struct eval_subject s;
	int64_t args[3];
	uint8_t memo[64];
};

static void subj_make(struct subj *x, int op, const char *path, int64_t flags, int64_t mode,
		      int64_t ret, uint32_t evflags, bool launch)
{
	memset(x, 0, sizeof(*x));
	x->e = (Mcpt__Event)MCPT__EVENT__INIT;
	x->e.op = op;
	x->e.ret = ret;
	x->e.flags = evflags;
	x->e.path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	x->e.abs_path = x->e.path;
	x->e.path2 = x->e.path;
	x->args[0] = op == MCPT__OP__OP_CHMOD ? mode : -100;
	x->args[1] = op == MCPT__OP__OP_CHMOD ? 0 : flags;
	x->args[2] = mode;
	x->e.args = x->args;
	x->e.n_args = 3;
	event_decode(&x->v, &x->e);
	x->s.ev = &x->v;
	x->s.launch = launch;
	x->s.exe = (struct ev_bytes){(const uint8_t *)"/usr/bin/node", 13};
	x->s.argv = (struct ev_bytes){(const uint8_t *)"node server.js", 14};
	x->s.macro_memo = x->memo;
}

static const int grid_ops[] = {
	MCPT__OP__OP_OPENAT, MCPT__OP__OP_OPEN,	   MCPT__OP__OP_CREAT,	MCPT__OP__OP_CHMOD,
	MCPT__OP__OP_EXEC,   MCPT__OP__OP_CONNECT, MCPT__OP__OP_UNLINK, MCPT__OP__OP_LINKAT,
	MCPT__OP__OP_RENAME, MCPT__OP__OP_SETUID,  MCPT__OP__OP_SENDTO, EV_OP_LOSS,
};
static const char *const grid_paths[] = {"/home/u/.ssh/id_rsa", "/home/u/.bashrc", "/tmp/x",
					 "/etc/passwd", "/x"};
static const int64_t grid_flags[] = {0, LX_O_WRONLY, LX_O_WRONLY | LX_O_CREAT, LX_O_CREAT};
static const int64_t grid_modes[] = {0644, 0755};
static const int64_t grid_rets[] = {3, -13, -2};
static const uint32_t grid_evflags[] = {0, MW_F_TAMPERED, MW_F_ENTRY};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Whether rule i of p may be evaluated on s: in the index of its op, with its key set. */
static bool admitted(const struct policy *p, size_t i, const struct eval_subject *s)
{
	size_t n;
	const uint32_t *ix = policy_rules_for_op(p, s->ev->op, &n);
	const uint64_t *keys = policy_keys_for_op(p, s->ev->op);

	for (size_t k = 0; k < n; k++)
		if (ix[k] == i)
			return (keys[k] >> policy_subject_key(s)) & 1;
	return false;
}

/* The kids of rule i's top-level "all" the engine skips on s (0 when it skips none). */
static uint64_t skipped(const struct policy *p, size_t i, const struct eval_subject *s)
{
	size_t n;
	const uint32_t *ix = policy_rules_for_op(p, s->ev->op, &n);
	const uint64_t *skips = policy_skips_for_op(p, s->ev->op);

	if (policy_subject_key(s) == POL_KEY_UNKNOWN)
		return 0;
	for (size_t k = 0; k < n; k++)
		if (ix[k] == i)
			return skips[k];
	return 0;
}

/* The test that decides rule i on s (NULL when none, or the key is unknown). */
static const struct field_test *direct_of(const struct policy *p, size_t i,
					  const struct eval_subject *s)
{
	size_t n;
	const uint32_t *ix = policy_rules_for_op(p, s->ev->op, &n);
	const struct field_test *const *direct = policy_direct_for_op(p, s->ev->op);

	if (policy_subject_key(s) == POL_KEY_UNKNOWN)
		return NULL;
	for (size_t k = 0; k < n; k++)
		if (ix[k] == i)
			return direct[k];
	return NULL;
}

static size_t skips_seen;  /* admitted (rule, subject) pairs with kids skipped */
static size_t directs_seen; /* admitted (rule, subject) pairs decided by a direct test */

#define GRID                                                                                       \
	(N(grid_ops) * N(grid_paths) * N(grid_flags) * N(grid_modes) * N(grid_rets) *              \
	 N(grid_evflags) * 2)

/* Where rule i has a direct test on x, its verdict (exceptions included) is the full one. */
static void check_direct(const struct policy *p, size_t i, struct subj *x, bool verdict,
			 bool exc_held)
{
	const struct field_test *t = direct_of(p, i, &x->s);
	bool got;
	int exc;

	if (!t)
		return;
	memset(x->memo, 0, sizeof(x->memo));
	got = policy_rule_match_direct(p->rules[i], &x->s, t, &exc);
	ck_assert_msg(got == verdict && exc_held == (exc >= 0),
		      "rule %s on op %d path %.*s flags %x: its direct test (%s) says %d, the "
		      "condition %d",
		      p->rules[i]->id, x->v.op, (int)x->v.path.n, x->v.path.p, x->v.flags,
		      t->f->name, got, verdict);
	directs_seen++;
}

/* Every rule of p whose condition holds on x is admitted; returns how many were not. */
static size_t check_rules(const struct policy *p, struct subj *x)
{
	size_t rejected = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		bool held, in;

		if (!p->rules[i]->enabled)
			continue;
		memset(x->memo, 0, sizeof(x->memo));
		held = cond_eval(p->rules[i]->cond, &x->s);
		in = admitted(p, i, &x->s);
		ck_assert_msg(!held || in,
			      "rule %s holds on op %d path %.*s flags %llo mode %o ret %lld "
			      "flags %x launch %d but the prefilter skips it",
			      p->rules[i]->id, x->v.op, (int)x->v.path.n, x->v.path.p,
			      (unsigned long long)x->v.open_flags, x->v.mode, (long long)x->v.ret,
			      x->v.flags, x->s.launch);
		rejected += !in;
		if (in) { /* the kids it skips change nothing: the same verdict, exceptions aside */
			uint64_t skip = skipped(p, i, &x->s);
			bool exc_held, with_skip;
			int exc;

			memset(x->memo, 0, sizeof(x->memo));
			with_skip = policy_rule_match(p->rules[i], &x->s, skip, &exc);
			exc_held = exc >= 0;
			memset(x->memo, 0, sizeof(x->memo));
			ck_assert_msg(with_skip == policy_rule_match(p->rules[i], &x->s, 0, &exc) &&
					      exc_held == (exc >= 0),
				      "rule %s on op %d path %.*s: skipping kids %llx changes the "
				      "verdict",
				      p->rules[i]->id, x->v.op, (int)x->v.path.n, x->v.path.p,
				      (unsigned long long)skip);
			ck_assert(!held || with_skip || exc_held);
			skips_seen += skip != 0;
			check_direct(p, i, x, with_skip, exc_held);
		}
	}
	return rejected;
}

/* Every rule of p whose condition holds on a grid subject is admitted; returns how many
 * (rule, subject) pairs were not admitted. */
static size_t check_grid(const struct policy *p)
{
	struct subj *x = malloc(sizeof(*x));
	size_t rejected = 0;

	ck_assert_ptr_nonnull(x);
	for (size_t g = 0; g < GRID; g++) {
		size_t q = g, o, pa, f, m, r, ef, l;

		o = q % N(grid_ops), q /= N(grid_ops);
		pa = q % N(grid_paths), q /= N(grid_paths);
		f = q % N(grid_flags), q /= N(grid_flags);
		m = q % N(grid_modes), q /= N(grid_modes);
		r = q % N(grid_rets), q /= N(grid_rets);
		ef = q % N(grid_evflags), q /= N(grid_evflags);
		l = q;
		subj_make(x, grid_ops[o], grid_paths[pa], grid_flags[f], grid_modes[m],
			  grid_rets[r], grid_evflags[ef], l);
		rejected += check_rules(p, x);
	}
	free(x);
	return rejected;
}

static const char *const sound_conds[] = {
	"{op: openat, write: true}",
	"{op: openat, write: false, result: success}",
	"{not: {result: success}}",
	"{any: [{result: failure}, {path: /etc/**}]}",
	"{not: {any: [{write: true}, {tampered: true}]}}",
	"{macro: w, result: success}",
	"{not: {macro: w}}",
	"{not: {all: [{macro: w}, {path: /tmp/**}]}}",
	"{exec_bits: true}",
	"{not: {exec_bits: false}}",
	"{not: {write: false}}",
	"{family: file, not: {write: true}}",
	"{all: [{op: connect}, {not: {result: pending}}]}",
	"{any: [{all: [{op: [link, linkat]}, {result: success}]}, {tampered: true}]}",
	"{tampered: false, not: {path: /x}}",
	"{launch: true}",
	"{not: {launch: true}, op: exec}",
	"{errno: EACCES}",
	"{any: [{op: exec}, {not: {family: file}}], result: [failure, pending]}",
	"{any: [{not: {op: openat}}, {write: true}], not: {tampered: true}}",
	"{not: {not: {result: failure}}}",
	"{all: [{any: [{result: success}, {exec_bits: true}]}, {not: {path: /x}}]}",
};

#define MACROS "macros:\n  w: {op: [openat, open, creat], write: true}\n"

START_TEST(sound_conditions)
{
	struct policy *p;

	in_tmpdir();
	p = compile_cond(MACROS, sound_conds[_i]);
	check_grid(p);
	policy__free(p);
}
END_TEST

/* A rule whose exception always holds: the condition holds, so the rule is evaluated (the
 * exception is counted), never skipped. */
START_TEST(sound_exceptions)
{
	static const char text[] =
		HDR "rules:\n- id: r\n  description: d\n  severity: high\n  category: c\n"
		    "  condition: {op: openat, result: failure}\n"
		    "  exceptions:\n  - name: all\n    condition: {not: {result: success}}\n";
	struct policy *p = NULL;
	struct diag d = {0};
	struct subj x;
	int exc;

	in_tmpdir();
	ck_assert_int_eq(load(text, &d, &p), 0);
	check_grid(p);
	subj_make(&x, MCPT__OP__OP_OPENAT, "/x", 0, 0, -13, 0, false);
	ck_assert(!policy_rule_match(p->rules[0], &x.s, 0, &exc));
	ck_assert_int_eq(exc, 0);
	ck_assert(admitted(p, 0, &x.s));
	diag_fini(&d);
	policy__free(p);
}
END_TEST

/* evasion.userfaultfd ({any: [{op: userfaultfd}, {all: [{op: @open_ops}, {path: ...}]}]}) is
 * its path test on a successful openat, its op test on a userfaultfd. */
static void direct_for_userfaultfd(const struct policy *p)
{
	struct subj x;
	size_t i;

	for (i = 0; i < p->n_rules && strcmp(p->rules[i]->id, "evasion.userfaultfd"); i++)
		;
	ck_assert_uint_lt(i, p->n_rules);
	subj_make(&x, MCPT__OP__OP_OPENAT, "/dev/userfaultfd", 0, 0, 3, 0, false);
	ck_assert_ptr_nonnull(direct_of(p, i, &x.s));
	ck_assert_str_eq(direct_of(p, i, &x.s)->f->name, "path");
	subj_make(&x, MCPT__OP__OP_USERFAULTFD, "", 0, 0, 3, 0, false);
	ck_assert_ptr_nonnull(direct_of(p, i, &x.s));
	ck_assert_str_eq(direct_of(p, i, &x.s)->f->name, "op");
}

START_TEST(sound_default_policy)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	struct diag d = {0};

	t.home = (ProtobufCBinaryData){7, (uint8_t *)"/home/u"};
	t.cwd = (ProtobufCBinaryData){5, (uint8_t *)"/work"};
	h.target = &t;
	ck_assert_int_eq(vars__from_header(vs, &h), 0);
	ck_assert_int_eq(policy__load_file(p, MW_SOURCE_DIR "/policies/default.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	skips_seen = directs_seen = 0;
	ck_assert_uint_gt(check_grid(p), 0);
	ck_assert_uint_gt(skips_seen, 0); /* the default policy's rules do get kids skipped */
	ck_assert_uint_gt(directs_seen, 0); /* and some are decided by one test */
	direct_for_userfaultfd(p);
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* Whether the prefilter admits rule 0 of a one-rule condition on a subject. */
static bool admits(const char *cond, int op, int64_t flags, int64_t mode, int64_t ret,
		   uint32_t evflags)
{
	struct policy *p = compile_cond(MACROS, cond);
	struct subj x;
	bool in;

	subj_make(&x, op, "/x", flags, mode, ret, evflags, false);
	in = admitted(p, 0, &x.s);
	policy__free(p);
	return in;
}

START_TEST(narrows)
{
	const int oa = MCPT__OP__OP_OPENAT;

	in_tmpdir();
	ck_assert(!admits("{op: openat, write: true}", oa, 0, 0, 3, 0));
	ck_assert(admits("{op: openat, write: true}", oa, LX_O_WRONLY, 0, 3, 0));
	ck_assert(!admits("{macro: w, result: success}", oa, LX_O_WRONLY, 0, -13, 0));
	ck_assert(!admits("{macro: w, result: success}", oa, 0, 0, 3, 0));
	ck_assert(admits("{macro: w, result: success}", oa, LX_O_CREAT, 0, 3, 0));
	ck_assert(!admits("{not: {result: success}}", oa, 0, 0, 3, 0));
	ck_assert(admits("{not: {result: success}}", oa, 0, 0, 3, MW_F_ENTRY));
	ck_assert(!admits("{exec_bits: true, result: success}", oa, LX_O_CREAT, 0644, 3, 0));
	ck_assert(!admits("{exec_bits: true}", oa, 0, 0755, 3, 0)); /* no O_CREAT: no mode */
	ck_assert(admits("{exec_bits: true}", oa, LX_O_CREAT, 0755, 3, 0));
	ck_assert(admits("{not: {exec_bits: false}}", oa, 0, 0644, 3, 0));
	ck_assert(!admits("{tampered: true}", MCPT__OP__OP_CONNECT, 0, 0, 0, 0));
	ck_assert(admits("{tampered: true}", MCPT__OP__OP_CONNECT, 0, 0, 0, MW_F_TAMPERED));
	ck_assert(!admits("{any: [{op: exec}, {result: failure}]}", oa, 0, 0, 3, 0));
	ck_assert(admits("{any: [{op: exec}, {result: failure}]}", MCPT__OP__OP_EXEC, 0, 0, 0, 0));
	/* unknown to the prefilter: never narrows */
	ck_assert(admits("{any: [{result: failure}, {path: /etc/**}]}", oa, 0, 0, 3, 0));
	ck_assert(admits("{launch: true}", oa, 0, 0, 3, 0));
	ck_assert(admits("{not: {path: /x}}", oa, 0, 0, 3, 0));
}
END_TEST

/* The kids of rule 0's top-level "all" the engine skips on a subject (the rule admitted). */
static uint64_t skips_of(const char *cond, int op, int64_t flags, int64_t ret)
{
	struct policy *p = compile_cond(MACROS, cond);
	struct subj x;
	uint64_t skip;

	subj_make(&x, op, "/x", flags, 0, ret, 0, false);
	ck_assert(admitted(p, 0, &x.s));
	skip = skipped(p, 0, &x.s);
	policy__free(p);
	return skip;
}

START_TEST(skips)
{
	const int oa = MCPT__OP__OP_OPENAT;

	in_tmpdir();
	/* kids in the mapping's order: op, write and result are told by the op and the key */
	ck_assert_uint_eq(
		skips_of("{op: openat, write: false, result: success, path: /x}", oa, 0, 3), 7);
	ck_assert_uint_eq(skips_of("{all: [{macro: w}, {path: /x}]}", oa, LX_O_WRONLY, 3), 1);
	ck_assert_uint_eq(skips_of("{not: {path: /x}, result: [success, failure]}", oa, 0, 3), 2);
	/* not an "all", or nothing told: none */
	ck_assert_uint_eq(skips_of("{any: [{result: success}, {path: /x}]}", oa, 0, 3), 0);
	ck_assert_uint_eq(skips_of("{path: /x, launch: false}", oa, 0, 3), 0);
	/* a kid that holds for only some of the rule's keys is evaluated */
	ck_assert_uint_eq(skips_of("{op: openat, any: [{result: success}, {path: /x}]}", oa, 0, 3),
			  1);
}
END_TEST

/* The name of the field whose test decides rule 0 of a one-rule condition on a subject the
 * prefilter admits, "" when none does. */
static const char *direct_name(const char *cond, int op, int64_t flags, int64_t ret)
{
	static char name[32];
	struct policy *p = compile_cond(MACROS, cond);
	const struct field_test *t;
	struct subj x;

	subj_make(&x, op, "/x", flags, 0, ret, 0, false);
	ck_assert(admitted(p, 0, &x.s));
	t = direct_of(p, 0, &x.s);
	snprintf(name, sizeof(name), "%s", t ? t->f->name : "");
	policy__free(p);
	return name;
}

START_TEST(direct)
{
	const int oa = MCPT__OP__OP_OPENAT;

	in_tmpdir();
	/* the branch the op rules out is dropped, the op test of the other is decided */
	ck_assert_str_eq(direct_name("{any: [{op: exec}, {all: [{op: openat}, {path: /x}]}]}", oa,
				     0, 3),
			 "path");
	ck_assert_str_eq(direct_name("{op: openat, write: false, result: success, path: /x}", oa, 0,
				     3),
			 "path");
	ck_assert_str_eq(direct_name("{macro: w, path: /x}", oa, LX_O_WRONLY, 3), "path");
	/* two parts left open, a negation, or a part decided only for some keys: none */
	ck_assert_str_eq(direct_name("{any: [{result: success}, {path: /x}]}", oa, 0, 3), "");
	ck_assert_str_eq(direct_name("{path: /x, launch: false}", oa, 0, 3), "");
	ck_assert_str_eq(direct_name("{not: {path: /x}}", oa, 0, 3), "");
	ck_assert_str_eq(direct_name("{op: openat, any: [{result: success}, {path: /x}]}", oa, 0, 3),
			 "");
}
END_TEST

Suite *policy_pre_suite(void);

Suite *policy_pre_suite(void)
{
	Suite *s = suite_create("policy_pre");
	TCase *sound = tcase_create("sound"), *narrow = tcase_create("narrows");

	tcase_add_checked_fixture(sound, NULL, leave_tmpdir);
	tcase_add_checked_fixture(narrow, NULL, leave_tmpdir);
	tcase_add_loop_test(sound, sound_conditions, 0, N(sound_conds));
	tcase_add_test(sound, sound_exceptions);
	tcase_add_test(sound, sound_default_policy);
	tcase_add_test(narrow, narrows);
	tcase_add_test(narrow, skips);
	tcase_add_test(narrow, direct);
	suite_add_tcase(s, sound);
	suite_add_tcase(s, narrow);
	return s;
}
