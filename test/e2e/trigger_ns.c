/*
 * trigger_ns.c - steps aimed at other processes and at the mount tree: signals and pidfd calls
 * to a child of ours (in the traced tree) and to the unrelated busy process the test runs
 * beside the recording (outside it; its pid in MW_FOREIGN_PID; signal 0 only, which checks
 * permission and delivers nothing); and a child in a new user and mount namespace using the
 * fd-based mount API. Everything that step mounts dies with its namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trigger.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif
#define MW_OPEN_TREE_CLONE	      1
#define MW_MOVE_MOUNT_F_EMPTY_PATH    0x04
#define MW_FSCONFIG_SET_STRING	      1
#define MW_FSCONFIG_CMD_CREATE	      6
#define MW_MOUNT_ATTR_RDONLY	      0x1
#define MW_AT_RECURSIVE		      0x8000

static pid_t foreign_pid(void)
{
	const char *s = getenv("MW_FOREIGN_PID");

	must(s && atoi(s) > 0, "MW_FOREIGN_PID");
	return (pid_t)atoi(s);
}

/* rt_sigqueueinfo needs a siginfo with a negative si_code to signal another process. */
static long sigqueue_raw(pid_t pid, int sig)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = -1; /* SI_QUEUE */
	si.si_pid = getpid();
	si.si_uid = getuid();
	return syscall(SYS_rt_sigqueueinfo, pid, sig, &si);
}

static long tgsigqueue_raw(pid_t tgid, pid_t tid, int sig)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = -1;
	si.si_pid = getpid();
	si.si_uid = getuid();
	return syscall(SYS_rt_tgsigqueueinfo, tgid, tid, sig, &si);
}

/* A child that has exited and is not reaped yet (a zombie, which the tracked set no longer
 * holds), signalled by kill and through its pidfd: a signal to it does nothing, and it is no
 * process outside the tree. */
static void step_zombie(struct out *o)
{
	pid_t z = fork();
	long zfd;
	siginfo_t si;

	must(z >= 0, "fork");
	if (z == 0)
		_exit(0);
	zfd = syscall(SYS_pidfd_open, z, 0);
	must(zfd >= 0, "pidfd_open zombie");
	memset(&si, 0, sizeof(si));
	must(waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT) == 0, "waitid zombie"); /* exited */
	out_int(o, "zombie", z);
	out_int(o, "zombie_pidfd", zfd);
	out_ret(o, "kill_zombie", syscall(SYS_kill, z, SIGTERM));
	out_ret(o, "pidfd_signal_zombie", syscall(SYS_pidfd_send_signal, (int)zfd, SIGTERM, NULL, 0));
	reap(z);
}

/* The same calls at a child of ours and at the foreign process; then at a zombie child. */
static void step_signal_targets(struct out *o)
{
	pid_t child = spawn_pauser(), far = foreign_pid();
	long cfd = syscall(SYS_pidfd_open, child, 0), ffd = syscall(SYS_pidfd_open, far, 0);

	must(cfd >= 0 && ffd >= 0, "pidfd_open");
	out_int(o, "child", child);
	out_int(o, "foreign", far);
	out_int(o, "child_pidfd", cfd);
	out_int(o, "foreign_pidfd", ffd);
	out_ret(o, "kill_foreign", syscall(SYS_kill, far, 0));
	out_ret(o, "sigqueue_foreign", sigqueue_raw(far, 0));
	out_ret(o, "tgsigqueue_foreign", tgsigqueue_raw(far, far, 0));
	out_ret(o, "pidfd_signal_foreign", syscall(SYS_pidfd_send_signal, (int)ffd, 0, NULL, 0));
	out_ret(o, "getfd_foreign", syscall(SYS_pidfd_getfd, (int)ffd, 0, 0));
	out_ret(o, "getfd_child", syscall(SYS_pidfd_getfd, (int)cfd, 0, 0));
	out_ret(o, "sigqueue_child", sigqueue_raw(child, 0));
	out_ret(o, "pidfd_signal_child", syscall(SYS_pidfd_send_signal, (int)cfd, SIGKILL, NULL, 0));
	reap(child);
	step_zombie(o);
}

static int ns_child(void *arg)
{
	struct out *o = arg;
	long t, fs, m;

	/* the step's "nstree" directory, bound onto "nsmnt" through a detached clone */
	t = syscall(SYS_open_tree, AT_FDCWD, "nstree", MW_OPEN_TREE_CLONE | O_CLOEXEC);
	out_ret(o, "open_tree", t);
	out_ret(o, "move_mount", t >= 0 ? syscall(SYS_move_mount, (int)t, "", AT_FDCWD, "nsmnt",
						  MW_MOVE_MOUNT_F_EMPTY_PATH)
					: -1);
	out_ret(o, "open_tree_attr", syscall(SYS_open_tree_attr, AT_FDCWD, "nsmnt", O_CLOEXEC, NULL, 0));
	fs = syscall(SYS_fsopen, "tmpfs", 0);
	out_ret(o, "fsopen", fs);
	out_ret(o, "fsconfig", syscall(SYS_fsconfig, (int)fs, MW_FSCONFIG_SET_STRING, "size", "1m", 0));
	out_ret(o, "fsconfig_create", syscall(SYS_fsconfig, (int)fs, MW_FSCONFIG_CMD_CREATE, NULL, NULL, 0));
	m = syscall(SYS_fsmount, (int)fs, 0, 0);
	out_ret(o, "fsmount", m);
	out_ret(o, "fspick", syscall(SYS_fspick, AT_FDCWD, "nsmnt", 0));
	{
		unsigned long long attr[4] = { MW_MOUNT_ATTR_RDONLY, 0, 0, 0 };

		out_ret(o, "mount_setattr", syscall(SYS_mount_setattr, AT_FDCWD, "nsmnt", 0, attr,
						    sizeof(attr)));
	}
	out_ret(o, "pivot_root", syscall(SYS_pivot_root, "no-such-root", "no-such-root/old"));
	out_int(o, "child_pid", getpid());
	out_end(o);
	return 0;
}

/* A child in a new user and mount namespace (clone, no unshare) using the mount API. The child
 * prints the step's line. */
static void step_ns_mount(struct out *o)
{
	static char stack[1 << 16];
	pid_t child;

	must(mkdir("nstree", 0755) == 0 && mkdir("nsmnt", 0755) == 0, "mkdir nstree nsmnt");
	touch("nstree/key");
	child = clone(ns_child, stack + sizeof(stack), CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, o);
	must(child > 0, "clone(CLONE_NEWUSER | CLONE_NEWNS)");
	reap(child);
	_exit(0); /* the child printed the line */
}

const struct step ns_steps[] = {
	{ "signal_targets", step_signal_targets },
	{ "ns_mount", step_ns_mount },
	{ NULL, NULL },
};
