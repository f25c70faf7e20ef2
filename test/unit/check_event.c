/*
 * check_event.c - decoding of Event records into the normalized view: every operation known
 * today, an operation from a newer collector, results (success, failure with errno name,
 * pending), open flags and write intent, argv with and without its last NUL, connect
 * addresses, and records that lack the arguments they should carry.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "events.h"
#include "strbuf.h"

static ProtobufCBinaryData bin(const char *s, size_t n)
{
	return (ProtobufCBinaryData){.len = n, .data = (uint8_t *)s};
}

START_TEST(op_table_mirrors_events_h)
{
	ck_assert_int_eq(MCPT__OP__OP_FORK, MW_OP_FORK);
	ck_assert_int_eq(MCPT__OP__OP_EXEC, MW_OP_EXEC);
	ck_assert_int_eq(MCPT__OP__OP_EXIT, MW_OP_EXIT);
	ck_assert_int_eq(MCPT__OP__OP_OPENAT, MW_OP_OPENAT);
	ck_assert_int_eq(MCPT__OP__OP_CONNECT, MW_OP_CONNECT);
	ck_assert_int_eq(event_op_by_name("openat"), MCPT__OP__OP_OPENAT);
	ck_assert_int_eq(event_op_by_name("open"), MW_OP_OPEN);
	ck_assert_int_eq(event_op_by_name("opne"), -1);
	/* every name of the table, in number order, round-trips */
	for (size_t i = 0; event_op_name_at(i); i++) {
		int op = event_op_by_name(event_op_name_at(i));

		ck_assert_int_gt(op, 0);
		ck_assert_uint_lt(strlen(event_op_name_at(i)), EV_OP_NAME_MAX);
		ck_assert_str_eq(event_op_name(op), event_op_name_at(i));
		if (i)
			ck_assert_int_gt(op, event_op_by_name(event_op_name_at(i - 1)));
	}
	ck_assert_int_eq(MCPT__OP__OP_IO_URING_SUBMIT, MW_OP_IO_URING_SUBMIT);
	ck_assert_int_eq(MCPT__OP__OP_IO_URING_OPENED, MW_OP_IO_URING_OPENED);
	ck_assert_int_eq(event_op_family(MW_OP_IO_URING_OPENED), FAM_EVASION);
	ck_assert_int_eq(MCPT__OP__OP_IO_URING_CONNECTED, MW_OP_IO_URING_CONNECTED);
	ck_assert_int_eq(MCPT__OP__OP_SETGROUPS, MW_OP_SETGROUPS);
	ck_assert_int_eq(MCPT__OP__OP_SENDMMSG, MW_OP_SENDMMSG);
	ck_assert_int_eq(MCPT__OP__OP_PIDFD_GETFD, MW_OP_PIDFD_GETFD);
	ck_assert_int_eq(MCPT__OP__OP_OPEN_TREE_ATTR, MW_OP_OPEN_TREE_ATTR);
	ck_assert_int_eq(event_op_by_name("rt_tgsigqueueinfo"), MW_OP_RT_TGSIGQUEUEINFO);
	ck_assert_int_eq(event_op_family(MW_OP_MOVE_MOUNT), FAM_PRIVILEGE);
	ck_assert_str_eq(event_family_name(event_op_family(MW_OP_CONNECT)), "network");
	ck_assert_int_eq(event_op_family(130), FAM_PRIVILEGE);
	ck_assert_int_eq(MCPT__OP__OP_FOREIGN_ABI, MW_OP_FOREIGN_ABI);
	ck_assert_int_eq(event_op_family(MW_OP_FOREIGN_ABI), FAM_EVASION);
	ck_assert_int_eq(event_op_family(176), FAM_EVASION);
	ck_assert_int_eq(event_op_family(1000), FAM_NONE);
}
END_TEST

START_TEST(openat)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 0101 | 02000000, 0644};
	struct ev_view v;
	struct strbuf sb = STRBUF_INIT;

	e.op = MCPT__OP__OP_OPENAT;
	e.pid = 10, e.tid = 11, e.seq = 5, e.ret = 3;
	e.n_args = 3, e.args = args;
	e.path = bin("x.txt", 5);
	e.abs_path = bin("/w/x.txt", 8);
	event_decode(&v, &e);
	ck_assert_str_eq(v.op_name, "openat");
	ck_assert_int_eq(v.family, FAM_FILE);
	ck_assert_int_eq(v.result, RES_SUCCESS);
	ck_assert(v.has_open);
	ck_assert(v.write_intent);
	ck_assert_int_eq(v.dirfd, -100);
	ck_assert_uint_eq(v.subject.n, 8); /* the absolute path is what conditions see */
	event_format_open_flags(&sb, v.open_flags);
	ck_assert_str_eq(strbuf_str(&sb), "O_WRONLY|O_CREAT|O_CLOEXEC");
	strbuf_fini(&sb);

	e.abs_path = bin(NULL, 0); /* unresolved: fall back to the path as passed */
	e.ret = -13;
	args[1] = 0;
	event_decode(&v, &e);
	ck_assert_uint_eq(v.subject.n, 5);
	ck_assert_int_eq(v.result, RES_FAILURE);
	ck_assert_int_eq(v.err, 13);
	ck_assert(!v.write_intent);
	{
		char buf[16];

		ck_assert_str_eq(event_errno_name(v.err, buf, sizeof(buf)), "EACCES");
		ck_assert_str_eq(event_errno_name(9999, buf, sizeof(buf)), "E9999");
		ck_assert_int_eq(event_errno_by_name("ENOENT"), 2);
		ck_assert_int_eq(event_errno_by_name("EWHATEVER"), -1);
	}
}
END_TEST

START_TEST(open_flags)
{
	struct strbuf sb = STRBUF_INIT;

	ck_assert(!event_open_writes(0));
	ck_assert(event_open_writes(01));
	ck_assert(event_open_writes(02));
	ck_assert(event_open_writes(0100));		/* O_CREAT */
	ck_assert(event_open_writes(01000));		/* O_TRUNC */
	ck_assert(!event_open_writes(02000 | 0200000)); /* O_APPEND|O_DIRECTORY read-only */
	event_format_open_flags(&sb, 02 | 0200000 | (1ull << 40));
	ck_assert_str_eq(strbuf_str(&sb), "O_RDWR|O_DIRECTORY|0x10000000000");
	strbuf_fini(&sb);
}
END_TEST

START_TEST(exec_argv)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	struct ev_view v;
	struct ev_bytes a;
	struct strbuf sb = STRBUF_INIT;
	size_t pos = 0;
	int n = 0;

	e.op = MCPT__OP__OP_EXEC;
	e.path = bin("/bin/sh", 7);
	e.data = bin("sh\0-c\0echo \"hi\"", 15); /* last entry cut short: no NUL */
	event_decode(&v, &e);
	ck_assert_int_eq(v.family, FAM_PROCESS);
	while (event_argv_next(&v.argv, &pos, &a))
		n++;
	ck_assert_int_eq(n, 3);
	event_format_argv(&sb, &v.argv, true);
	ck_assert_str_eq(strbuf_str(&sb), "\"sh\" \"-c\" \"echo \\\"hi\\\"\"");
	strbuf_reset(&sb);

	e.data = bin("a\0\0b\0", 5); /* an empty entry is still an entry */
	event_decode(&v, &e);
	event_format_argv(&sb, &v.argv, false);
	ck_assert_str_eq(strbuf_str(&sb), "a  b");
	strbuf_reset(&sb);

	e.data = bin(NULL, 0);
	event_decode(&v, &e);
	pos = 0;
	ck_assert(!event_argv_next(&v.argv, &pos, &a));
	event_format_argv(&sb, &v.argv, true);
	ck_assert_str_eq(strbuf_str(&sb), "");
	strbuf_fini(&sb);
}
END_TEST

START_TEST(fork_exit_connect)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {200, 201, 123456};
	const char sa[16] = {2, 0, 0, 80, 10, 0, 0, 1};
	struct ev_view v;

	e.op = MCPT__OP__OP_FORK;
	e.n_args = 3, e.args = args;
	e.flags = MW_F_THREAD;
	event_decode(&v, &e);
	ck_assert_uint_eq(v.child_pid, 200);
	ck_assert_uint_eq(v.child_pstart, 123456);
	ck_assert(v.thread);

	e.op = MCPT__OP__OP_EXIT;
	e.flags = 0;
	e.ret = -1;   /* meaningless for exit: still a success */
	e.n_args = 0; /* arguments trimmed: read as 0 */
	event_decode(&v, &e);
	ck_assert_int_eq(v.result, RES_SUCCESS);
	ck_assert_int_eq(v.exit_status, 0);

	e.op = MCPT__OP__OP_CONNECT;
	e.ret = -115;
	e.flags = MW_F_ENTRY;
	e.data = bin(sa, sizeof(sa));
	event_decode(&v, &e);
	ck_assert(v.has_addr);
	ck_assert_int_eq(event_addr(&v)->kind, SA_INET);
	ck_assert_int_eq(event_addr(&v)->port, 80);
	ck_assert_int_eq(v.result, RES_PENDING);
}
END_TEST

START_TEST(open_variants_and_sockets)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4] = {01 | 02000000, 0600, 0, 0};
	const char in4[16] = {2, 0, 0, 53, 8, 8, 8, 8}, un[8] = {1, 0, '/', 'x', 0};
	struct ev_view v;

	e.op = MCPT__OP__OP_OPEN; /* open(path, flags, mode): flags first */
	e.args = args, e.n_args = 2;
	event_decode(&v, &e);
	ck_assert(v.has_open && v.write_intent);
	ck_assert_int_eq(v.mode, 0600);
	ck_assert_int_eq(v.dirfd, -100);
	e.op = MCPT__OP__OP_CREAT; /* creat(path, mode): implicit O_CREAT|O_WRONLY|O_TRUNC */
	args[0] = 0644;
	event_decode(&v, &e);
	ck_assert(v.write_intent);
	ck_assert_uint_eq(v.open_flags, 01 | 0100 | 01000);
	ck_assert_int_eq(v.mode, 0644);
	e.op = MCPT__OP__OP_OPENAT2; /* dirfd, how.flags, how.mode */
	args[0] = 5, args[1] = 0, args[2] = 0;
	e.n_args = 3;
	event_decode(&v, &e);
	ck_assert(v.has_open && !v.write_intent);
	ck_assert_int_eq(v.dirfd, 5);

	e.op = MCPT__OP__OP_SENDTO; /* a DNS datagram: address given, payload kept */
	args[0] = 7, args[1] = 33, args[2] = 2, args[3] = 2;
	e.n_args = 4;
	e.data = bin(in4, sizeof(in4));
	e.payload = bin("4", 2);
	event_decode(&v, &e);
	ck_assert(v.has_addr && !v.has_peer);
	ck_assert_int_eq(event_addr(&v)->port, 53);
	ck_assert_int_eq(v.sock_type, 2);
	ck_assert_uint_eq(v.payload.n, 2);
	e.op = MCPT__OP__OP_SENDMSG; /* on a connected socket: only the kernel's peer */
	e.data = bin(NULL, 0);
	e.data2 = bin(in4, sizeof(in4));
	event_decode(&v, &e);
	ck_assert(!v.has_addr && v.has_peer);
	e.op = MCPT__OP__OP_ACCEPT4;
	e.data = bin(un, sizeof(un));
	event_decode(&v, &e);
	ck_assert(v.has_addr);
	ck_assert_int_eq(event_addr(&v)->kind, SA_UNIX);
	ck_assert_int_eq(v.family, FAM_NETWORK);
	e.op = MCPT__OP__OP_SETUID;
	event_decode(&v, &e);
	ck_assert_str_eq(v.op_name, "setuid");
	ck_assert_int_eq(v.family, FAM_PROCESS);
	ck_assert(!v.has_open && !v.has_addr);
}
END_TEST

START_TEST(unknown_op)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	struct ev_view v;

	e.op = (Mcpt__Op)169;
	event_decode(&v, &e);
	ck_assert_str_eq(v.op_name, "op169");
	ck_assert_int_eq(v.family, FAM_PRIVILEGE);
	ck_assert(!v.has_open && !v.has_addr);
}
END_TEST

/* Lexical normalisation: a table, then every path of up to 8 bytes over "/.a". */
static size_t norm(const char *p, size_t n, char *out, size_t cap)
{
	return event_normalize_path((const uint8_t *)p, n, out, cap);
}

/* The {detail} of records aimed at another process or at new namespaces, and the subject of a
 * move_mount of a tree held by an fd. */
static const char *detail_of(int op, uint32_t flags, const int64_t *args, size_t n)
{
	static Mcpt__Event e;
	static struct ev_view v;

	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = (Mcpt__Op)op;
	e.flags = flags;
	e.n_args = n;
	e.args = (int64_t *)args;
	event_decode(&v, &e);
	return v.describe ? v.describe(v.describe_ctx) : NULL;
}

START_TEST(target_details)
{
	const int64_t kill_pid[] = {1234, 9}, kill_grp[] = {-77, 15}, kill_all[] = {-1, 9};
	const int64_t kill_own[] = {0, 1}, tg[] = {5, 6, 9}, pidfd[] = {4, 0, 0, 321};
	const int64_t pidfd_none[] = {4, 2}, getfd[] = {4, 7, 0, 321};
	const int64_t fork_ns[] = {10, 10, 1, 0x10000000 | 0x20000 | 17}, fork_none[] = {10, 10, 1, 17};
	const int64_t x32[] = {39, MW_ABI_X32}, i386[] = {11, MW_ABI_I386};
	const int64_t x32_own[] = {512, MW_ABI_X32}, x32_gap[] = {13, MW_ABI_X32};
	const int64_t i386_none[] = {1000, MW_ABI_I386}, abi_odd[] = {11, 0x100000001ll};
	Mcpt__Event e = MCPT__EVENT__INIT;
	struct ev_view v;

	ck_assert_str_eq(detail_of(MW_OP_KILL, MW_F_FOREIGN, kill_pid, 2), "signal 9 to pid 1234");
	ck_assert_str_eq(detail_of(MW_OP_KILL, 0, kill_grp, 2), "signal 15 to process group 77");
	ck_assert_str_eq(detail_of(MW_OP_KILL, 0, kill_all, 2),
			 "signal 9 to every process it may signal");
	ck_assert_str_eq(detail_of(MW_OP_KILL, 0, kill_own, 2),
			 "signal 1 to its own process group");
	ck_assert_str_eq(detail_of(MW_OP_TGKILL, 0, tg, 3), "signal 9 to thread 6 of pid 5");
	ck_assert_str_eq(detail_of(MW_OP_RT_TGSIGQUEUEINFO, 0, tg, 3),
			 "signal 9 to thread 6 of pid 5");
	ck_assert_str_eq(detail_of(MW_OP_PIDFD_SEND_SIGNAL, 0, pidfd, 4),
			 "signal 0 to pid 321 (pidfd 4)");
	ck_assert_str_eq(detail_of(MW_OP_PIDFD_SEND_SIGNAL, 0, pidfd_none, 2),
			 "signal 2 through pidfd 4");
	ck_assert_str_eq(detail_of(MW_OP_PIDFD_GETFD, 0, getfd, 4), "fd 7 of pid 321");
	ck_assert_str_eq(detail_of(MW_OP_FORK, MW_F_NEWNS, fork_ns, 4), "user, mount");
	ck_assert_str_eq(detail_of(MW_OP_FORK, MW_F_NEWNS, fork_none, 4),
			 "namespaces prepared by an earlier unshare");
	ck_assert_ptr_null(detail_of(MW_OP_FORK, 0, fork_ns, 4)); /* the kernel's view decides */
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, x32, 2),
			 "syscall 39 (getpid) of the x32 ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, i386, 2),
			 "syscall 11 (execve) of the i386 ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, x32_own, 2),
			 "syscall 512 (rt_sigaction) of the x32 ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, x32_gap, 2), /* 64-bit only: no x32 call */
			 "syscall 13 of the x32 ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, i386_none, 2),
			 "syscall 1000 of the i386 ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, abi_odd, 2),
			 "syscall 11 of the unknown ABI, not recorded");
	ck_assert_str_eq(detail_of(MW_OP_FOREIGN_ABI, 0, x32, 1), /* a record without its ABI */
			 "syscall 39 of the unknown ABI, not recorded");
	ck_assert_ptr_null(detail_of(MW_OP_PTRACE, 0, kill_pid, 2));

	e.op = MCPT__OP__OP_FOREIGN_ABI; /* made at entry: its result is not known */
	e.n_args = 2;
	e.args = (int64_t *)x32;
	event_decode(&v, &e);
	ck_assert_int_eq(v.result, RES_PENDING);
	ck_assert_int_eq(v.family, FAM_EVASION);

	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_MOVE_MOUNT;
	e.opened_path = bin("/w/mnt", 6);
	e.abs_path2 = bin("/w/mnt", 6);
	event_decode(&v, &e);
	ck_assert_int_eq((int)v.subject.n, 6);
	ck_assert_mem_eq(v.subject.p, "/w/mnt", 6);
}
END_TEST

/* How a process ended, from the wait status an exit record carries. */
static const char *exit_text(int64_t status)
{
	static char out[64];
	struct strbuf sb = STRBUF_INIT;

	event_format_exit(&sb, status);
	ck_assert_ptr_nonnull(strbuf_str(&sb));
	snprintf(out, sizeof(out), "%s", strbuf_str(&sb));
	strbuf_fini(&sb);
	return out;
}

START_TEST(exit_statuses)
{
	char buf[16];

	ck_assert_str_eq(exit_text(0), "code 0");
	ck_assert_str_eq(exit_text(256), "code 1");
	ck_assert_str_eq(exit_text(126 << 8), "code 126");
	ck_assert_str_eq(exit_text(15), "signal SIGTERM");
	ck_assert_str_eq(exit_text(31), "signal SIGSYS"); /* the collector's seccomp filter */
	ck_assert_str_eq(exit_text(11 | 0x80), "signal SIGSEGV, core dumped");
	ck_assert_str_eq(exit_text(34), "signal SIG34");
	ck_assert_str_eq(exit_text(0x137f), "status 0x137f"); /* stopped: never an exit's */
	ck_assert_str_eq(exit_text(0x10000), "status 0x10000");
	ck_assert_str_eq(exit_text(-1), "status 0xffffffffffffffff");
	ck_assert_int_eq(event_exit_code(3 << 8), 3);
	ck_assert_int_eq(event_exit_code(9), -1);
	ck_assert_ptr_null(event_exit_signal(3 << 8, buf, sizeof(buf)));
	ck_assert_str_eq(event_exit_signal(9, buf, sizeof(buf)), "SIGKILL");
}
END_TEST

START_TEST(normalize_path)
{
	static const char *const cases[][2] = {
		{"/", "/"},
		{"/a", "/a"},
		{"/a/", "/a"},
		{"//a", "/a"},
		{"/./a", "/a"},
		{"/a/.", "/a"},
		{"/a/..", "/"},
		{"/..", "/"},
		{"/../a", "/a"},
		{"/.a/..b/c..", "/.a/..b/c.."},
		{"/a/b/../c", "/a/c"},
		{"/a//b///", "/a/b"},
		{"/...", "/..."},
		{"a/b", ""},
		{"", ""},
	};
	char out[32], big[40];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = norm(cases[i][0], strlen(cases[i][0]), out, sizeof(out));

		ck_assert_msg(n == strlen(cases[i][1]) && (!n || !strcmp(out, cases[i][1])),
			      "%s: %zu \"%s\"", cases[i][0], n, n ? out : "");
	}
	/* a result needs its length + 1 bytes, normal or not */
	ck_assert_uint_eq(norm("/abc", 4, out, 5), 4);
	ck_assert_uint_eq(norm("/abc", 4, out, 4), 0);
	ck_assert_uint_eq(norm("/abc/", 5, out, 5), 4);
	ck_assert_uint_eq(norm("/abc/", 5, out, 4), 0);
	ck_assert_uint_eq(norm("/", 1, out, 2), 1);
	ck_assert_uint_eq(norm("/", 1, out, 1), 0);
	memset(big, 'x', sizeof(big));
	big[0] = '/';
	ck_assert_uint_eq(norm(big, sizeof(big), out, sizeof(out)), 0);
}
END_TEST

/* Every result is normal and its own normal form; a normal path is its own (the fast path). */
START_TEST(normalize_path_exhaustive)
{
	static const char alpha[] = "/.a";
	char p[8], out[16], again[16];

	for (size_t len = 1; len <= sizeof(p); len++) {
		size_t total = 1;

		for (size_t i = 0; i < len; i++)
			total *= 3;
		for (size_t k = 0; k < total; k++) {
			size_t q = k, n, m;

			for (size_t i = 0; i < len; i++, q /= 3)
				p[i] = alpha[q % 3];
			n = norm(p, len, out, sizeof(out));
			ck_assert_uint_eq(n > 0, p[0] == '/');
			if (!n)
				continue;
			ck_assert_ptr_null(strstr(out, "//"));
			ck_assert_ptr_null(strstr(out, "/./"));
			ck_assert_ptr_null(strstr(out, "/../"));
			ck_assert(n == 1 || out[n - 1] != '/');
			m = norm(out, n, again, sizeof(again));
			ck_assert_uint_eq(m, n);
			ck_assert_str_eq(again, out);
		}
	}
}
END_TEST

Suite *event_suite(void);

Suite *event_suite(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, op_table_mirrors_events_h);
	tcase_add_test(tc, openat);
	tcase_add_test(tc, open_flags);
	tcase_add_test(tc, exec_argv);
	tcase_add_test(tc, fork_exit_connect);
	tcase_add_test(tc, open_variants_and_sockets);
	tcase_add_test(tc, unknown_op);
	tcase_add_test(tc, target_details);
	tcase_add_test(tc, exit_statuses);
	tcase_add_test(tc, normalize_path);
	tcase_add_test(tc, normalize_path_exhaustive);
	suite_add_tcase(s, tc);
	return s;
}
