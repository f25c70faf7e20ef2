/*
 * check_policy_fields.c - the fields and forms added to the rules language after the first
 * version: DNS names (and the hostile payloads the decoder refuses), differs, unchecked, dev and
 * inode, uid, parent and ancestor executables, channel messages, macro overrides, the subjects
 * a rule is evaluated on, and the warnings for exceptions that can never match.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "dns.h"
#include "events.h"
#include "policy_testlib.h"
#include "proctree.h"

struct bad {
	const char *yaml;
	const char *msg;
};

static const struct bad bad_policies[] = {
	{RULE("{dev: 8}"), "p.yaml:7:20: bad device (\"MAJOR:MINOR\"): \"8\""},
	{RULE("{ino: -1}"), "p.yaml:7:20: bad number or range (\"N\" or \"LO-HI\"): \"-1\""},
	{RULE("{uid: 1000-10}"), "p.yaml:7:20: bad number or range (\"N\" or \"LO-HI\"): "
				 "\"1000-10\""},
	{RULE("{direction: up}"), "p.yaml:7:26: unknown direction (in: client to server, out: "
				  "server to client): \"up\""},
	{RULE("{kind: reply}"), "p.yaml:7:21: unknown message kind (request, response, "
				"notification, other): \"reply\""},
	{RULE("{differs: [true]}"), "p.yaml:7:24: \"differs\" takes one value (true or false)"},
	{RULE("{exit_signal: SIGNOPE}"), "p.yaml:7:28: unknown signal (a name such as SIGSYS, or "
					 "1..64): \"SIGNOPE\""},
	{RULE("{exit_signal: 65}"), "p.yaml:7:28: unknown signal (a name such as SIGSYS, or "
				    "1..64): \"65\""},
	{RULE("{exit_code: x}"), "p.yaml:7:26: bad number or range (\"N\" or \"LO-HI\"): \"x\""},
	{HDR "macros:\n  m: {condition: {op: exec}, override: append}\n",
	 "p.yaml:3:40: override of macro \"m\", which no earlier file defines"},
	{HDR "macros:\n  m: {op: exec}\n  m: {op: exit}\n",
	 "p.yaml:4:3: duplicate key \"m\" (first at line 3)"},
	{HDR "macros:\n  m: {override: append}\n", "p.yaml:3:6: macro \"m\" has no \"condition\""},
	{HDR "macros:\n  m: {condition: {op: exec}, when: x}\n",
	 "p.yaml:3:30: unknown macro definition key \"when\""},
};

START_TEST(errors)
{
	const struct bad *b = &bad_policies[_i];
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(load(b->yaml, &d, NULL), -EINVAL);
	ck_assert_msg(strcmp(diag_first(&d), b->msg) == 0, "case %d:\n got: %s\nwant: %s", _i,
		      diag_first(&d), b->msg);
	diag_fini(&d);
}
END_TEST

/* A macro defined in one file, appended to and replaced by later ones; one that would use
 * itself through another macro is refused. */
START_TEST(macro_override)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	struct evx x;
	int exc;

	in_tmpdir();
	write_file("a.yaml", HDR "macros:\n  m: {op: exit}\n  uses_m: {macro: m}\n"
				 "rules:\n- {id: r, description: d, severity: low, category: c, "
				 "condition: {macro: m}}\n");
	write_file("b.yaml", HDR "macros:\n  m: {condition: {op: openat}, override: append}\n");
	ck_assert_int_eq(policy__load_file(p, "a.yaml", &d), 0);
	ck_assert_int_eq(policy__load_file(p, "b.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	ev_open(&x, "/x", NULL, 0, 3);
	ck_assert(policy_rule_match(p->rules[0], &x.s, 0, &exc)); /* exit or openat */
	write_file("c.yaml", HDR "macros:\n  m: {condition: {op: fork}, override: replace}\n");
	ck_assert_int_eq(policy__load_file(p, "c.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	ck_assert(!policy_rule_match(p->rules[0], &x.s, 0, &exc));
	write_file("d.yaml", HDR "macros:\n  m: {condition: {macro: uses_m}, override: append}\n");
	ck_assert_int_eq(policy__load_file(p, "d.yaml", &d), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "d.yaml:3:18: macro \"m\" would use itself");
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
}
END_TEST

/* A query for Example.COM (A) in a datagram to 127.0.0.53:53. */
static const uint8_t QUERY[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7,
				'E',  'x',  'a',  'm',	'p', 'l', 'e', 3, 'C', 'O', 'M', 0,
				0,    1,    0,	  1};
static const uint8_t RESOLVER[16] = {2, 0, 0, 53, 127, 0, 0, 53};

static void ev_send(struct evx *x, const uint8_t *payload, size_t n)
{
	ev_connect(x, RESOLVER, sizeof(RESOLVER), (int64_t)n);
	x->e.op = MCPT__OP__OP_SENDTO;
	x->e.payload = (ProtobufCBinaryData){n, (uint8_t *)payload};
	event_decode(&x->v, &x->e);
}

START_TEST(eval_dns)
{
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{op: sendto, dns: \"*.com\"}");
	ev_send(&x, QUERY, sizeof(QUERY));
	ck_assert(x.v.has_dns);
	ck_assert_str_eq(event_dns(&x.v)->name, "example.com"); /* lower-cased */
	ck_assert_uint_eq(event_dns(&x.v)->qtype, 1);
	ck_assert(holds(p, &x));
	ev_open(&x, "/x", NULL, 0, 3);
	ck_assert(!holds(p, &x));
	policy__free(p);
}
END_TEST

/* Hostile payloads: no name is made up, nothing is read past the end. */
START_TEST(dns_hostile)
{
	struct dns_query q;
	uint8_t b[600];

	ck_assert(dns_decode_query(QUERY, sizeof(QUERY), false, &q));
	for (size_t n = 0; n < 25; n++) /* cut anywhere before the name ends: refused */
		ck_assert_msg(!dns_decode_query(QUERY, n, false, &q), "cut at %zu", n);
	memcpy(b, QUERY, sizeof(QUERY));
	b[2] |= 0x80; /* a response */
	ck_assert(!dns_decode_query(b, sizeof(QUERY), false, &q));
	memcpy(b, QUERY, sizeof(QUERY));
	b[12] = 0xc0; /* a compression pointer */
	ck_assert(!dns_decode_query(b, sizeof(QUERY), false, &q));
	memcpy(b, QUERY, sizeof(QUERY));
	b[12] = 64; /* a label longer than 63 */
	ck_assert(!dns_decode_query(b, sizeof(QUERY), false, &q));
	memcpy(b, QUERY, sizeof(QUERY));
	b[5] = 0; /* no question */
	ck_assert(!dns_decode_query(b, sizeof(QUERY), false, &q));
	memcpy(b, QUERY, 12); /* a name of 5 labels of 63: more than 253 bytes */
	for (int i = 0; i < 5; i++) {
		b[12 + i * 64] = 63;
		memset(b + 13 + i * 64, 'a', 63);
	}
	b[12 + 5 * 64] = 0;
	ck_assert(!dns_decode_query(b, 12 + 5 * 64 + 1, false, &q));
	b[0] = 0;
	b[1] = (uint8_t)sizeof(QUERY); /* DNS over TCP: a length prefix first */
	memcpy(b + 2, QUERY, sizeof(QUERY));
	ck_assert(dns_decode_query(b, sizeof(QUERY) + 2, true, &q));
	ck_assert_str_eq(q.name, "example.com");
	ck_assert_str_eq(dns_type_name(28), "AAAA");
	ck_assert_ptr_null(dns_type_name(9999));
}
END_TEST

/* x's record as operation op with flags, decoded again. */
static const struct evx *as_op(struct evx *x, int op, uint32_t flags)
{
	x->e.op = (Mcpt__Op)op;
	x->e.flags = flags;
	event_decode(&x->v, &x->e);
	return x;
}

START_TEST(eval_differs_and_flags)
{
	static const uint8_t v4[16] = {2, 0, 0x01, 0xbb, 10, 0, 0, 1};
	/* sockaddr_in6: family, port, flowinfo, then ::ffff:10.0.0.1 */
	static const uint8_t mapped[28] = {10, 0, 0x01, 0xbb, 0, 0, 0, 0, /* flowinfo */
					   0,  0, 0,	0,    0, 0, 0, 0, 0, 0, 0xff, 0xff,
					   10, 0, 0,	1};
	static const uint8_t other[16] = {2, 0, 0x01, 0xbb, 10, 0, 0, 2};
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{differs: true}");
	ev_open(&x, "lib/x.so", "/lib//x/../x.so", 0, 3);
	x.e.opened_path = (ProtobufCBinaryData){9, (uint8_t *)"/lib/x.so"};
	event_decode(&x.v, &x.e);
	ck_assert(!holds(p, &x)); /* the same file once normalised */
	x.e.opened_path = (ProtobufCBinaryData){13, (uint8_t *)"/usr/lib/x.so"};
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x)); /* a symlink: informational */
	ev_connect(&x, v4, sizeof(v4), 0);
	x.e.data2 = (ProtobufCBinaryData){sizeof(mapped), (uint8_t *)mapped};
	event_decode(&x.v, &x.e);
	ck_assert(!holds(p, &x)); /* IPv4-mapped is the same address */
	x.e.data2 = (ProtobufCBinaryData){sizeof(other), (uint8_t *)other};
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x));
	ck_assert(!(x.v.flags & MW_F_TAMPERED)); /* differs is not tampering */
	policy__free(p);

	p = compile_cond("", "{unchecked: true, uid: 1000-1999}");
	ev_open(&x, "/x", NULL, 0, 3);
	x.e.flags = MW_F_UNCHECKED;
	x.e.uid = 1000;
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x));
	x.e.uid = 0;
	event_decode(&x.v, &x.e);
	ck_assert(!holds(p, &x));
	policy__free(p);

	/* foreign: the kernel's FOREIGN flag; new_namespaces: NEWNS, on fork records only */
	p = compile_cond("", "{op: kill, foreign: true}");
	x.e = (Mcpt__Event)MCPT__EVENT__INIT;
	ck_assert(holds(p, as_op(&x, MCPT__OP__OP_KILL, MW_F_FOREIGN)));
	ck_assert(!holds(p, as_op(&x, MCPT__OP__OP_KILL, 0)));
	policy__free(p);
	/* socket_path: the unix socket the kernel connected (the listener's bound name), else the
	 * name given; abstract names as "@name"; nothing for other families */
	{
		static const uint8_t rel[] = {1, 0, 'd', 'o', 'c', 'k', 'e', 'r', '.', 's', 'o',
					      'c', 'k', 0};
		static const uint8_t bound[] = {1, 0, '/', 'r', 'u', 'n', '/', 'd', 'o', 'c', 'k',
						'e', 'r', '.', 's', 'o', 'c', 'k', 0};
		static const uint8_t abstract[] = {1, 0, 0, 'a', 'g', 'e', 'n', 't'};

		p = compile_cond("", "{socket_path: [/run/docker.sock, \"\\\\@agent\"]}");
		ev_connect(&x, rel, sizeof(rel), 0);
		ck_assert(!holds(p, &x)); /* a relative name alone */
		x.e.data2 = (ProtobufCBinaryData){sizeof(bound), (uint8_t *)bound};
		event_decode(&x.v, &x.e);
		ck_assert(holds(p, &x)); /* the peer the kernel holds decides */
		ev_connect(&x, abstract, sizeof(abstract), 0);
		ck_assert(holds(p, &x));
		ev_connect(&x, v4, sizeof(v4), 0);
		ck_assert(!holds(p, &x));
		policy__free(p);
	}

	/* truncated: a slot cut, argv entries dropped, or a sendmmsg beyond its records */
	p = compile_cond("", "{truncated: true}");
	ck_assert(holds(p, as_op(&x, MCPT__OP__OP_SENDMMSG, MW_F_MORE)));
	ck_assert(!holds(p, as_op(&x, MCPT__OP__OP_SENDMMSG, 0)));
	policy__free(p);
	p = compile_cond("", "{new_namespaces: true}");
	ck_assert(holds(p, as_op(&x, MCPT__OP__OP_FORK, MW_F_NEWNS)));
	ck_assert(!holds(p, as_op(&x, MCPT__OP__OP_FORK, MW_F_THREAD)));
	/* NEWNS counts on a fork record only */
	ck_assert(!holds(p, as_op(&x, MCPT__OP__OP_KILL, MW_F_NEWNS)));
	policy__free(p);

	/* exit_code, exit_signal: how a process ended, on its group's exit record only */
	{
		int64_t killed[2] = {31, 1}, code[2] = {3 << 8, 1}, thread[2] = {31, 0};

		p = compile_cond("", "{exit_signal: [SIGSYS, 9]}");
		x.e = (Mcpt__Event)MCPT__EVENT__INIT;
		x.e.op = MCPT__OP__OP_EXIT;
		x.e.args = killed;
		x.e.n_args = 2;
		event_decode(&x.v, &x.e);
		ck_assert(holds(p, &x));
		killed[0] = 9 | 0x80; /* SIGKILL, core flag set */
		event_decode(&x.v, &x.e);
		ck_assert(holds(p, &x));
		x.e.args = thread; /* a thread's end, not the process's */
		event_decode(&x.v, &x.e);
		ck_assert(!holds(p, &x));
		x.e.args = code;
		event_decode(&x.v, &x.e);
		ck_assert(!holds(p, &x));
		policy__free(p);
		p = compile_cond("", "{exit_code: 1-127}");
		ck_assert(holds(p, &x));
		code[0] = 0;
		event_decode(&x.v, &x.e);
		ck_assert(!holds(p, &x));
		x.e.args = killed; /* killed: no code */
		event_decode(&x.v, &x.e);
		ck_assert(!holds(p, &x));
		policy__free(p);
	}

	p = compile_cond("", "{dev: \"259:3\", ino: 4242}");
	ev_open(&x, "/x", NULL, 0, 3);
	x.e.dev = makedev(259, 3);
	x.e.ino = 4242;
	event_decode(&x.v, &x.e);
	ck_assert(holds(p, &x));
	x.e.ino = 4243;
	event_decode(&x.v, &x.e);
	ck_assert(!holds(p, &x));
	policy__free(p);
}
END_TEST

/* parent_exe: the first ancestor; ancestor_exe: any up to the server; server: the server. */
START_TEST(eval_ancestry)
{
	struct proctree *pt = proctree__new();
	ProtobufCBinaryData exe = {13, (uint8_t *)"/usr/bin/node"};
	struct ev_view fk, ex;
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {200, 200, 2000};
	struct policy *p;
	struct evx x;
	bool launch;

	in_tmpdir();
	ck_assert_int_eq(proctree__set_target(pt, 100, 1000, &exe, NULL, 0, true), 0);
	e.op = MCPT__OP__OP_FORK, e.pid = e.tid = 100, e.pstart = 1000;
	e.args = args, e.n_args = 3;
	event_decode(&fk, &e);
	ck_assert_int_eq(proctree__apply(pt, &fk, &launch), 0);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_EXEC, e.pid = e.tid = 200, e.pstart = 2000;
	e.path = (ProtobufCBinaryData){7, (uint8_t *)"/bin/sh"};
	event_decode(&ex, &e);
	ck_assert_int_eq(proctree__apply(pt, &ex, &launch), 0);

	ev_open(&x, "/x", NULL, 0, 3);
	x.s.pt = pt;
	x.s.proc = proctree__find(pt, 200, 2000);
	ck_assert_ptr_nonnull(x.s.proc);
	p = compile_cond("", "{parent_exe: /usr/bin/node, ancestor_exe: \"**/node\"}");
	ck_assert(holds(p, &x));
	policy__free(p);
	p = compile_cond("", "{server: true}");
	ck_assert(!holds(p, &x));
	x.s.proc = proctree__find(pt, 100, 1000);
	ck_assert(holds(p, &x));
	policy__free(p);
	p = compile_cond("", "{parent_exe: \"**\"}"); /* the server has no parent in the tree */
	ck_assert(!holds(p, &x));
	policy__free(p);
	proctree__free(pt);
}
END_TEST

static void ev_message(struct evx *x, const char *text, int dir, enum ev_msg_kind kind)
{
	memset(x, 0, sizeof(*x));
	x->v.op = EV_OP_MESSAGE;
	x->v.op_name = "message";
	x->v.family = FAM_CHANNEL;
	x->v.msg_dir = dir;
	x->v.msg_kind = kind;
	x->v.message = (struct ev_bytes){(const uint8_t *)text, strlen(text)};
	x->s.ev = &x->v;
}

START_TEST(eval_messages)
{
	struct policy *p;
	struct evx x;

	in_tmpdir();
	p = compile_cond("", "{family: channel, direction: out, kind: response, "
			     "message: \"*-----BEGIN * PRIVATE KEY-----*\"}");
	ck_assert(p->rules[0]->subjects & POL_SUBJ_MESSAGES);
	ev_message(&x, "{\"id\":1,\"result\":{\"text\":\"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3\"}}",
		   1, MSG_RESPONSE);
	ck_assert(holds(p, &x));
	x.v.msg_dir = 0;
	ck_assert(!holds(p, &x));
	ev_open(&x, "/x", NULL, 0, 3); /* an event carries no message */
	ck_assert(!holds(p, &x));
	policy__free(p);
	/* a rule that names no channel field is never evaluated on messages */
	p = compile_cond("", "{bucket: ambient}");
	ck_assert_uint_eq(p->rules[0]->subjects, POL_SUBJ_EVENTS);
	policy__free(p);
	p = compile_cond("", "{op: loss}");
	ck_assert_uint_eq(p->rules[0]->subjects, POL_SUBJ_EVENTS | POL_SUBJ_LOSSES);
	policy__free(p);
}
END_TEST

/* policy check warns of an exception whose operations the rule excludes (and of a rule whose
 * own tests exclude each other), at the exception. */
START_TEST(unreachable_exceptions)
{
	struct diag d = {0};

	in_tmpdir();
	ck_assert_int_eq(load(RULE("{op: exec}") "  exceptions:\n"
						 "  - {name: ok, condition: {exe: /bin/*}}\n"
						 "  - {name: never, condition: {op: connect}}\n"
						 "  - {name: never2, condition: {addr: 10.0.0.0/8}}\n",
			      &d, NULL),
			 0);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_str_eq(diag_first(&d),
			 "p.yaml:10:5: warning: exception \"never\" of rule \"r\" can never match: "
			 "it holds only for operations the rule's condition excludes");
	diag_fini(&d);
	ck_assert_int_eq(load(RULE("{op: openat, port: 80}"), &d, NULL), 0);
	ck_assert_str_eq(diag_first(&d), "p.yaml:3:7: warning: rule \"r\" can never match: its "
					 "tests exclude each other");
	diag_fini(&d);
}
END_TEST

Suite *policy_fields_suite(void);

Suite *policy_fields_suite(void)
{
	Suite *s = suite_create("policy_fields");
	TCase *errs = tcase_create("errors"), *ev = tcase_create("eval"),
	      *dns = tcase_create("dns");

	tcase_add_checked_fixture(errs, NULL, leave_tmpdir);
	tcase_add_checked_fixture(ev, NULL, leave_tmpdir);
	tcase_add_loop_test(errs, errors, 0, sizeof(bad_policies) / sizeof(bad_policies[0]));
	tcase_add_test(errs, unreachable_exceptions);
	tcase_add_test(errs, macro_override);
	tcase_add_test(ev, eval_dns);
	tcase_add_test(ev, eval_differs_and_flags);
	tcase_add_test(ev, eval_ancestry);
	tcase_add_test(ev, eval_messages);
	tcase_add_test(dns, dns_hostile);
	suite_add_tcase(s, errs);
	suite_add_tcase(s, ev);
	suite_add_tcase(s, dns);
	return s;
}
