/*
 * check_proctree.c - the process table and the engine on synthetic events: fork inheritance,
 * exec, the server's launch exec, pid reuse told apart by pstart, records that arrive before
 * their fork, lineage (complete, unknown parent, forged cycle), table growth; the engine's
 * per-rule cap on kept findings and its stream and severity orders.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "policy_testlib.h"
#include "events.h"
#include "proctree.h"

static ProtobufCBinaryData bin(const char *s, size_t n)
{
	return (ProtobufCBinaryData){n, (uint8_t *)s};
}

static void apply(struct proctree *pt, Mcpt__Event *e, bool *launch)
{
	struct ev_view v;

	event_decode(&v, e);
	ck_assert_int_eq(proctree__apply(pt, &v, launch), 0);
}

static void fork_ev(struct proctree *pt, uint32_t pid, uint64_t ps, uint32_t child, uint64_t cps,
		    uint32_t flags)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {child, child, (int64_t)cps};
	bool launch;

	e.op = MCPT__OP__OP_FORK, e.pid = e.tid = pid, e.pstart = ps, e.flags = flags;
	e.args = args, e.n_args = 3;
	apply(pt, &e, &launch);
	ck_assert(!launch);
}

static bool exec_ev(struct proctree *pt, uint32_t pid, uint64_t ps, const char *path,
		    const char *argv, size_t n)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	bool launch;

	e.op = MCPT__OP__OP_EXEC, e.pid = e.tid = pid, e.pstart = ps;
	e.path = bin(path, strlen(path));
	e.data = bin(argv, n);
	apply(pt, &e, &launch);
	return launch;
}

static struct proctree *with_server(bool attached)
{
	struct proctree *pt = proctree__new();
	ProtobufCBinaryData exe = bin("/usr/bin/npx", 12), argv[2] = {bin("npx", 3), bin("srv", 3)};

	ck_assert_ptr_nonnull(pt);
	ck_assert_int_eq(proctree__set_target(pt, 100, 1000, &exe, argv, 2, attached), 0);
	return pt;
}

START_TEST(fork_exec_inherit)
{
	struct proctree *pt = with_server(false);
	struct proc *p;

	ck_assert(exec_ev(pt, 100, 1000, "/usr/bin/env", "env\0npx", 8));	      /* launch */
	ck_assert(exec_ev(pt, 100, 1000, "/usr/bin/node", "node\0/usr/bin/npx", 18)); /* still */
	fork_ev(pt, 100, 1000, 100, 1000, MW_F_THREAD); /* a thread: no new process */
	ck_assert_uint_eq(proctree__count(pt), 1);
	fork_ev(pt, 100, 1000, 101, 2000, 0);
	p = proctree__find(pt, 101, 2000);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->exe_len, 13);
	ck_assert(!memcmp(p->exe, "/usr/bin/node", 13));
	ck_assert_uint_eq(p->join_len, 17);
	ck_assert(!memcmp(p->argv_join, "node /usr/bin/npx", 17));
	ck_assert(!exec_ev(pt, 100, 1000, "/bin/sh", "sh", 3)); /* after a child: not launch */
	ck_assert(!exec_ev(pt, 101, 2000, "/bin/sh", "sh\0-c\0x", 8));
	ck_assert(!memcmp(p->argv_join, "sh -c x", 7));
	proctree__free(pt);

	pt = with_server(true); /* attached: there is no launch */
	ck_assert(!exec_ev(pt, 100, 1000, "/usr/bin/node", "node", 5));
	proctree__free(pt);
}
END_TEST

START_TEST(pid_reuse_and_order)
{
	struct proctree *pt = with_server(false);
	struct lineage_ent ents[LINEAGE_MAX];
	struct proc *early;
	bool trunc;

	/* a record of 102 arrives before the fork that created it */
	early = proctree__get(pt, 102, 3000);
	ck_assert_ptr_nonnull(early);
	ck_assert_uint_eq(proctree__lineage(pt, early, ents, LINEAGE_MAX, &trunc), 1);
	ck_assert(trunc);
	fork_ev(pt, 100, 1000, 101, 2000, 0);
	fork_ev(pt, 101, 2000, 102, 3000, 0);
	ck_assert_uint_eq(proctree__lineage(pt, early, ents, LINEAGE_MAX, &trunc), 3);
	ck_assert(!trunc);
	ck_assert_uint_eq(ents[2].pid, 100);
	/* the same pid, another process */
	fork_ev(pt, 100, 1000, 102, 9000, 0);
	ck_assert_ptr_ne(proctree__find(pt, 102, 9000), early);
	ck_assert_uint_eq(proctree__count(pt), 4);
	proctree__free(pt);
}
END_TEST

START_TEST(forged_cycle_and_depth)
{
	struct proctree *pt = with_server(false);
	struct lineage_ent ents[LINEAGE_MAX];
	struct proc *a, *b;
	bool trunc;

	a = proctree__get(pt, 1, 1);
	b = proctree__get(pt, 2, 2);
	a->has_parent = true, a->ppid = 2, a->ppstart = 2;
	b->has_parent = true, b->ppid = 1, b->ppstart = 1;
	ck_assert_uint_eq(proctree__lineage(pt, a, ents, LINEAGE_MAX, &trunc), 2);
	/* a chain deeper than LINEAGE_MAX, and enough processes to grow the table */
	for (uint32_t i = 0; i < 1000; i++)
		fork_ev(pt, i ? 1000 + i - 1 : 100, i ? 1000 + i - 1 : 1000, 1000 + i, 1000 + i, 0);
	ck_assert_uint_eq(proctree__count(pt), 1003);
	a = proctree__find(pt, 1999, 1999);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(proctree__lineage(pt, a, ents, LINEAGE_MAX, &trunc), LINEAGE_MAX);
	ck_assert(trunc);
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_ptr_nonnull(proctree__find(pt, 1000 + i, 1000 + i));
	proctree__free(pt);
}
END_TEST

START_TEST(engine_cap_and_order)
{
	struct policy *p = policy_from_text(
		"version: 1\nrules:\n"
		"- {id: b.any-open, description: d, severity: low, category: c, condition: "
		"{op: openat}}\n"
		"- {id: a.etc, description: d, severity: high, category: c, condition: "
		"{path: /etc/**}}\n");
	struct engine *e = engine__new(p, 2);
	struct findings *fs;

	ck_assert_ptr_nonnull(e);
	for (int i = 0; i < 5; i++) {
		Mcpt__Event ev = MCPT__EVENT__INIT;

		ev.op = MCPT__OP__OP_OPENAT, ev.pid = ev.tid = 100, ev.seq = (uint64_t)(10 - i);
		ev.path = bin("/etc/x", 6);
		ck_assert_int_eq(engine__event(e, &ev, (uint64_t)i + 1), 0);
	}
	ck_assert_int_eq(engine__finish(e), 0);
	fs = engine__findings(e);
	ck_assert_uint_eq(fs->total, 10);
	ck_assert_uint_eq(fs->n, 4); /* two kept per rule */
	ck_assert_uint_eq(fs->dropped, 6);
	ck_assert_uint_eq(fs->by_sev[SEV_HIGH], 5);
	findings_sort(fs, ORDER_SEQUENCE);
	ck_assert_uint_eq(fs->v[0].seq, 9);
	ck_assert_str_eq(fs->v[0].rule->id, "a.etc"); /* same event: by rule id */
	ck_assert_str_eq(fs->v[1].rule->id, "b.any-open");
	ck_assert_uint_eq(fs->v[2].seq, 10);
	findings_sort(fs, ORDER_SEVERITY);
	ck_assert_str_eq(fs->v[0].rule->id, "a.etc");
	ck_assert_str_eq(fs->v[1].rule->id, "a.etc");
	ck_assert_uint_eq(fs->v[0].seq, 9);
	ck_assert_str_eq(fs->v[2].rule->id, "b.any-open");
	ck_assert_str_eq(fs->v[0].message, "d");
	engine__free(e);
	policy__free(p);
}
END_TEST

START_TEST(engine_messages)
{
	struct policy *p = policy_from_text(
		"version: 1\nrules:\n"
		"- {id: r, description: d, severity: low, category: c, condition: {op: openat},\n"
		"   message: \"{op} {path} by {pid} ({result}) {exe} {argv} {addr} {1} {\"}\n");
	struct engine *e = engine__new(p, 0);
	Mcpt__Event ev = MCPT__EVENT__INIT;

	ev.op = MCPT__OP__OP_OPENAT, ev.pid = ev.tid = 7, ev.ret = -13;
	ev.path = bin("/a\nb", 4);
	ck_assert_int_eq(engine__event(e, &ev, 1), 0);
	ck_assert_uint_eq(engine__findings(e)->n, 1);
	ck_assert_str_eq(engine__findings(e)->v[0].message,
			 "openat /a\\nb by 7 (failure EACCES) ? ? ? {1} {");
	engine__free(e);
	policy__free(p);
}
END_TEST

START_TEST(header_without_pstart)
{
	struct proctree *pt = proctree__new();
	ProtobufCBinaryData exe = bin("/usr/bin/node", 13);
	struct lineage_ent ents[LINEAGE_MAX];
	bool trunc;

	ck_assert_int_eq(proctree__set_target(pt, 100, 0, &exe, NULL, 0, false), 0);
	ck_assert(exec_ev(pt, 100, 4242, "/usr/bin/node", "node", 5)); /* still its launch */
	fork_ev(pt, 100, 4242, 101, 5000, 0);
	ck_assert_uint_eq(
		proctree__lineage(pt, proctree__find(pt, 101, 5000), ents, LINEAGE_MAX, &trunc), 2);
	ck_assert(!trunc);
	ck_assert_uint_eq(proctree__count(pt), 2);
	proctree__free(pt);
}
END_TEST

/* Entry records of many threads that never complete: at most 256 are held, none is lost. */
START_TEST(engine_entry_bound)
{
	struct policy *p = policy_from_text("version: 1\nrules:\n"
				       "- {id: r, description: d, severity: low, category: c, "
				       "condition: {op: connect}}\n");
	struct engine *e = engine__new(p, 100000);
	const uint8_t sa[16] = {2, 0, 0, 80, 1, 2, 3, 4};

	for (uint32_t i = 0; i < 5000; i++) {
		Mcpt__Event ev = MCPT__EVENT__INIT;

		ev.op = MCPT__OP__OP_CONNECT, ev.pid = 100, ev.tid = 1000 + i, ev.seq = i;
		ev.flags = MW_F_ENTRY;
		ev.data = (ProtobufCBinaryData){16, (uint8_t *)sa};
		ck_assert_int_eq(engine__event(e, &ev, i + 1), 0);
	}
	ck_assert_uint_eq(engine__findings(e)->total, 5000 - 256);
	ck_assert_int_eq(engine__finish(e), 0);
	ck_assert_uint_eq(engine__findings(e)->total, 5000);
	ck_assert_uint_eq(engine__stats(e)->held_entries, 5000);
	engine__free(e);
	policy__free(p);
}
END_TEST

Suite *proctree_suite(void);

Suite *proctree_suite(void)
{
	Suite *s = suite_create("proctree");
	TCase *tc = tcase_create("core"), *eng = tcase_create("engine");

	tcase_add_test(tc, fork_exec_inherit);
	tcase_add_test(tc, pid_reuse_and_order);
	tcase_add_test(tc, forged_cycle_and_depth);
	tcase_add_test(tc, header_without_pstart);
	tcase_add_test(eng, engine_cap_and_order);
	tcase_add_test(eng, engine_messages);
	tcase_add_test(eng, engine_entry_bound);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, eng);
	return s;
}
