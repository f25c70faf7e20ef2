/*
 * trigger_proc.c - process steps: fork/vfork/clone/clone3 and threads, exit codes, exec (argv
 * limits, failures, execveat of an fd), cwd and root, credentials, capabilities, namespaces,
 * the task name, double-forked setsid daemons, and a tree that keeps growing (mode_swarm).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include "trigger.h"

static char *const no_env[] = { NULL };

static void out_child(struct out *o, pid_t child)
{
	must(child >= 0, "fork");
	out_int(o, "child", child);
}

static void step_fork(struct out *o)
{
	long child = syscall(SYS_fork);

	if (child == 0)
		_exit(0);
	out_child(o, (pid_t)child);
	reap((pid_t)child);
}

static void step_vfork(struct out *o)
{
	pid_t child = vfork();

	if (child == 0)
		_exit(0);
	out_child(o, child);
	reap(child);
}

/* clone without CLONE_VM: the child runs on a copy of our stack, like fork. */
static void step_clone(struct out *o)
{
	long flags = CLONE_FS | SIGCHLD;
	long child = syscall(SYS_clone, flags, 0, NULL, NULL, 0);

	if (child == 0)
		_exit(0);
	out_child(o, (pid_t)child);
	out_int(o, "flags", flags);
	reap((pid_t)child);
}

static void step_clone3(struct out *o)
{
	struct clone_args a = { .flags = CLONE_FILES, .exit_signal = SIGCHLD };
	long child = syscall(SYS_clone3, &a, sizeof(a));

	if (child == 0)
		_exit(0);
	out_child(o, (pid_t)child);
	out_int(o, "flags", (long long)a.flags);
	reap((pid_t)child);
}

static void *thread_tid(void *arg)
{
	*(pid_t *)arg = gettid_();
	return NULL;
}

static void step_thread(struct out *o)
{
	pthread_t t;
	pid_t tid = 0;

	must(pthread_create(&t, NULL, thread_tid, &tid) == 0, "pthread_create");
	pthread_join(t, NULL);
	out_int(o, "thread_tid", tid);
}

static void step_exit_code(struct out *o)
{
	pid_t child = fork();

	if (child == 0)
		_exit(42);
	out_child(o, child);
	reap(child);
}

static void step_exit_signal(struct out *o)
{
	pid_t child = fork();

	if (child == 0) {
		raise(SIGKILL);
		_exit(1);
	}
	out_child(o, child);
	reap(child);
}

/* Forks a child that execs path with argv; prints the child's pid. */
static void exec_child(struct out *o, const char *path, char *const argv[])
{
	pid_t child = fork();
	struct stat st;
	char real[PATH_MAX];

	if (child == 0) {
		execve(path, argv, no_env);
		_exit(127);
	}
	out_child(o, child);
	reap(child);
	must(stat(path, &st) == 0 && realpath(path, real) != NULL, "stat exec target");
	out_str(o, "opened", real);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
}

static void step_exec(struct out *o)
{
	char *const argv[] = { "true", "arg with space", "", "x\"y", NULL };

	exec_child(o, "/bin/true", argv);
}

/* 100 short arguments: more than MW_ARGV_ENTRIES, fewer than MW_ARGV_MAX bytes. */
static void step_exec_many(struct out *o)
{
	static char args[100][8];
	char *argv[101];

	for (int i = 0; i < 100; i++) {
		snprintf(args[i], sizeof(args[i]), "a%d", i);
		argv[i] = args[i];
	}
	argv[100] = NULL;
	exec_child(o, "/bin/true", argv);
}

/* 8 arguments of 1000 bytes: more than MW_ARGV_MAX bytes. */
static void step_exec_long(struct out *o)
{
	static char args[8][1001];
	char *argv[9];

	for (int i = 0; i < 8; i++) {
		memset(args[i], 'A' + i, 1000);
		args[i][1000] = 0;
		argv[i] = args[i];
	}
	argv[8] = NULL;
	exec_child(o, "/bin/true", argv);
}

static void step_exec_failed(struct out *o)
{
	char *const argv[] = { "nonexistent-prog", NULL };

	out_ret(o, "ret", execve("nonexistent-prog", argv, no_env));
}

static void step_execveat_fd(struct out *o)
{
	char *const argv[] = { "true-by-fd", NULL };
	int fd = open("/bin/true", O_PATH | O_CLOEXEC);
	pid_t child;
	struct stat st;

	must(fd >= 0 && fstat(fd, &st) == 0, "open /bin/true");
	child = fork();
	if (child == 0) {
		syscall(SYS_execveat, fd, "", argv, no_env, AT_EMPTY_PATH);
		_exit(127);
	}
	out_child(o, child);
	out_int(o, "fd", fd);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
	reap(child);
}

static void step_execveat_failed(struct out *o)
{
	char *const argv[] = { "missing", NULL };
	int dirfd;

	must(mkdir("execveat.d", 0755) == 0, "mkdir execveat.d");
	dirfd = open("execveat.d", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	must(dirfd >= 0, "open execveat.d");
	out_int(o, "dirfd", dirfd);
	out_ret(o, "ret", syscall(SYS_execveat, dirfd, "missing", argv, no_env, 0));
}

/* ---- cwd and root --------------------------------------------------------------------------- */

static void step_chdir(struct out *o)
{
	must(mkdir("chdir.d", 0755) == 0, "mkdir chdir.d");
	out_ret(o, "ret", syscall(SYS_chdir, "chdir.d"));
}

static void step_fchdir(struct out *o)
{
	int fd;
	struct stat st;

	must(mkdir("fchdir.d", 0755) == 0, "mkdir fchdir.d");
	fd = open("fchdir.d", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	must(fd >= 0 && fstat(fd, &st) == 0, "open fchdir.d");
	out_int(o, "fd", fd);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
	out_ret(o, "ret", syscall(SYS_fchdir, fd));
}

static void step_chroot(struct out *o)
{
	must(mkdir("chroot.d", 0755) == 0, "mkdir chroot.d");
	out_ret(o, "ret", syscall(SYS_chroot, "chroot.d"));
}

/* A key opened inside a chroot by its name there, absolute and relative: the chroot is the key's
 * directory, so inside it the name says nothing of a key (needs root; as nobody the chroot
 * fails and so does the step). */
static void step_chroot_open(struct out *o)
{
	must(mkdir("chroot_open.d", 0755) == 0, "mkdir chroot_open.d");
	must(mkdir("chroot_open.d/.ssh", 0700) == 0, "mkdir chroot_open.d/.ssh");
	touch("chroot_open.d/.ssh/id_rsa");
	must(syscall(SYS_chroot, "chroot_open.d/.ssh") == 0, "chroot chroot_open.d/.ssh");
	must(chdir("/") == 0, "chdir /");
	out_ret(o, "abs", syscall(SYS_openat, AT_FDCWD, "/id_rsa", O_RDONLY | O_CLOEXEC));
	out_ret(o, "rel", syscall(SYS_openat, AT_FDCWD, "id_rsa", O_RDONLY | O_CLOEXEC));
}

/* ---- credentials ---------------------------------------------------------------------------- */

/* Each to the ids we already have, so it succeeds unprivileged and changes nothing. */
static void step_ids(struct out *o)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	out_int(o, "uid", uid);
	out_int(o, "gid", gid);
	out_ret(o, "setuid", syscall(SYS_setuid, uid));
	out_ret(o, "setgid", syscall(SYS_setgid, gid));
	out_ret(o, "setreuid", syscall(SYS_setreuid, -1, -1));
	out_ret(o, "setregid", syscall(SYS_setregid, -1, -1));
	out_ret(o, "setresuid", syscall(SYS_setresuid, -1, uid, -1));
	out_ret(o, "setresgid", syscall(SYS_setresgid, -1, gid, -1));
	out_int(o, "setfsuid", syscall(SYS_setfsuid, uid)); /* returns the previous fsuid */
	out_int(o, "setfsgid", syscall(SYS_setfsgid, gid));
}

static void step_setgroups(struct out *o)
{
	gid_t groups[2] = { getgid(), 4242 };

	out_int(o, "g0", groups[0]);
	out_ret(o, "ret", syscall(SYS_setgroups, 2, groups));
}

static void step_capset(struct out *o)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	must(syscall(SYS_capget, &hdr, data) == 0, "capget");
	out_int(o, "effective0", data[0].effective);
	out_ret(o, "ret", syscall(SYS_capset, &hdr, data));
}

static void step_unshare(struct out *o)
{
	out_ret(o, "ret_ns", syscall(SYS_unshare, CLONE_NEWNS));
	out_ret(o, "ret_user", syscall(SYS_unshare, CLONE_NEWUSER));
}

static void step_setns(struct out *o)
{
	int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	struct stat st;

	must(fd >= 0 && fstat(fd, &st) == 0, "open /proc/self/ns/uts");
	out_int(o, "fd", fd);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
	out_ret(o, "ret", syscall(SYS_setns, fd, CLONE_NEWUTS));
}

static void step_prctl_name(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_prctl, PR_SET_NAME, "mwtrig-named", 0, 0, 0));
}

/* ---- double-forked setsid daemons ---------------------------------------------------------- */

/* In the grandchild: wait until the middle process has exited and we were reparented (to the
 * collector, the subreaper), then act: create name and print one line. */
static void daemon_act(pid_t middle, const char *step, const char *name)
{
	struct out o;
	int fd;

	while (getppid() == middle)
		usleep(1000);
	fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	out_begin(&o, step);
	out_int(&o, "sid", getsid(0));
	out_int(&o, "ppid", getppid());
	out_int(&o, "middle", middle);
	out_ret(&o, "ret", fd);
	out_end(&o);
}

static void run_daemon(struct out *o, const char *step, const char *name, bool stay)
{
	pid_t middle = fork(), grandchild;

	must(middle >= 0, "fork");
	if (middle == 0) {
		pid_t me = getpid();

		setsid();
		grandchild = fork();
		if (grandchild != 0)
			_exit(grandchild < 0 ? 3 : 0);
		daemon_act(me, step, name);
		if (!stay)
			_exit(0);
		/* outlive the recording without holding the test's pipes open */
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		for (;;)
			pause();
	}
	out_int(o, "middle", middle);
	reap(middle);
}

static void step_daemon(struct out *o)
{
	run_daemon(o, "daemon.grandchild", "daemon.f", false);
}

static void step_daemon_alive(struct out *o)
{
	run_daemon(o, "daemon_alive.grandchild", "daemon_alive.f", true);
}

const struct step proc_steps[] = {
	{ "fork", step_fork },
	{ "vfork", step_vfork },
	{ "clone", step_clone },
	{ "clone3", step_clone3 },
	{ "thread", step_thread },
	{ "exit_code", step_exit_code },
	{ "exit_signal", step_exit_signal },
	{ "exec", step_exec },
	{ "exec_many", step_exec_many },
	{ "exec_long", step_exec_long },
	{ "exec_failed", step_exec_failed },
	{ "execveat_fd", step_execveat_fd },
	{ "execveat_failed", step_execveat_failed },
	{ "chdir", step_chdir },
	{ "fchdir", step_fchdir },
	{ "chroot", step_chroot },
	{ "chroot_open", step_chroot_open },
	{ "ids", step_ids },
	{ "setgroups", step_setgroups },
	{ "capset", step_capset },
	{ "unshare", step_unshare },
	{ "setns", step_setns },
	{ "prctl_name", step_prctl_name },
	{ "daemon", step_daemon },
	{ "daemon_alive", step_daemon_alive },
	{ NULL, NULL },
};

/* ---- swarm: a tree that grows while it is being killed ------------------------------------- */

#define SWARM_CHAIN_MAX 1000 /* links per chain: a chain that escaped a kill stops there */

/* A chain: each link forks the next after a millisecond, then pauses until killed; so the
 * chain's newest link is always about to fork. */
static void swarm_chain(void)
{
	const struct timespec ms = { 0, 1000000 };

	for (int depth = 0; depth < SWARM_CHAIN_MAX; depth++) {
		nanosleep(&ms, NULL);
		if (fork() != 0)
			break; /* the parent, or a failed fork: this link is done */
	}
	for (;;)
		pause();
}

/* mode_swarm PAUSERS CHAINS TOKEN [setsid]: PAUSERS children that pause, CHAINS growing chains,
 * then one line {"step":"swarm",...} on stdout, then pauses. With setsid each pauser and each
 * chain starts a session (and process group) of its own, as daemons do. TOKEN only marks every
 * process's argv, so that a test finds whatever is left of the tree in /proc. */
int mode_swarm(int argc, char **argv)
{
	bool own_sessions = argc == 4 && !strcmp(argv[3], "setsid");
	int pausers, chains;
	struct out o;

	if (argc != 3 && !own_sessions)
		return 1;
	pausers = atoi(argv[0]);
	chains = atoi(argv[1]);
	if (pausers < 0 || chains < 0)
		return 1;
	for (int i = 0; i < pausers + chains; i++) {
		pid_t pid = fork();

		must(pid >= 0, "fork");
		if (pid != 0)
			continue;
		must(!own_sessions || setsid() >= 0, "setsid");
		if (i >= pausers)
			swarm_chain();
		for (;;)
			pause();
	}
	out_begin(&o, "swarm");
	out_int(&o, "pausers", pausers);
	out_int(&o, "chains", chains);
	out_end(&o);
	for (;;)
		pause();
}
