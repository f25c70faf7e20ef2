/*
 * trigger_priv.c - injection and privilege steps: ptrace and process_vm_* on a child of ours,
 * signals aimed outside and inside our own process, mount/umount2 (as root only inside a
 * private mount namespace of the step's own), module loads, bpf(), memfd_create and exec of a
 * memfd (by descriptor and through a symbolic link); TIOCSTI on a pseudo-terminal of the
 * step's own; the key retention service; userfaultfd; syscalls of the i386 and x32 ABIs.
 * io_uring: trigger_uring.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/sched.h>

#include "trigger.h"

static char *const no_env[] = { NULL };
static char secret[16] = "mw-secret";

static void step_ptrace(struct out *o)
{
	pid_t child = spawn_pauser();
	long word = 0;

	out_int(o, "child", child);
	out_ret(o, "attach", syscall(SYS_ptrace, PTRACE_ATTACH, child, 0, 0));
	must(waitpid(child, NULL, __WALL) == child, "waitpid traced");
	out_int(o, "addr", (long long)(uintptr_t)secret);
	out_int(o, "data", (long long)(uintptr_t)&word);
	out_ret(o, "peek", syscall(SYS_ptrace, PTRACE_PEEKDATA, child, secret, &word));
	out_ret(o, "detach", syscall(SYS_ptrace, PTRACE_DETACH, child, 0, 0));
	kill(child, SIGKILL);
	reap(child);
}

static void step_process_vm(struct out *o)
{
	pid_t child = spawn_pauser(); /* holds its copy of secret at the same address */
	char buf[16] = { 0 };
	struct iovec local = { buf, 9 }, remote = { secret, 9 };

	out_int(o, "child", child);
	out_ret(o, "readv", syscall(SYS_process_vm_readv, child, &local, 1, &remote, 1, 0));
	out_str(o, "read", buf);
	out_ret(o, "writev", syscall(SYS_process_vm_writev, child, &local, 1, &remote, 1, 0));
	kill(child, SIGKILL);
	reap(child);
}

/* Signals aimed at other processes: recorded. */
static void step_kill_out(struct out *o)
{
	pid_t a = spawn_pauser(), b = spawn_pauser(), c = spawn_pauser();

	out_int(o, "a", a);
	out_int(o, "b", b);
	out_int(o, "c", c);
	out_ret(o, "kill", syscall(SYS_kill, a, SIGTERM));
	out_ret(o, "tkill", syscall(SYS_tkill, b, SIGKILL));
	out_ret(o, "tgkill", syscall(SYS_tgkill, c, c, SIGKILL));
	reap(a);
	reap(b);
	reap(c);
}

struct kill_in {
	int go[2];
	pid_t main_tid, tid;
	long kill, tkill;
};

static void *kill_in_thread(void *arg)
{
	struct kill_in *k = arg;
	char c;

	k->tid = gettid_();
	if (read(k->go[0], &c, 1) != 1)
		return NULL;
	k->kill = kret(syscall(SYS_kill, getpid(), 0));
	k->tkill = kret(syscall(SYS_tkill, k->main_tid, 0));
	return NULL;
}

/* Signals that stay inside our own process, from the main thread and from another: none of
 * them may be recorded. */
static void step_kill_in(struct out *o)
{
	struct kill_in k = { .main_tid = gettid_() };
	pthread_t t;

	must(pipe(k.go) == 0, "pipe");
	must(pthread_create(&t, NULL, kill_in_thread, &k) == 0, "pthread_create");
	while (!__atomic_load_n(&k.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	out_int(o, "thread_tid", k.tid);
	out_ret(o, "kill_self", syscall(SYS_kill, getpid(), 0));
	out_ret(o, "tkill_self", syscall(SYS_tkill, gettid_(), 0));
	out_ret(o, "tkill_thread", syscall(SYS_tkill, k.tid, 0));
	out_ret(o, "tgkill_thread", syscall(SYS_tgkill, getpid(), k.tid, 0));
	must(write(k.go[1], "g", 1) == 1, "write");
	pthread_join(t, NULL);
	out_int(o, "thread_kill", k.kill);
	out_int(o, "thread_tkill_main", k.tkill);
}

/* As root: only ever inside a private mount namespace of this step's own (or not at all). */
static void step_mount(struct out *o)
{
	int root = geteuid() == 0;

	if (root) {
		must(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)");
		must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "make / private");
	}
	out_int(o, "private", root);
	must(mkdir("mnt", 0755) == 0, "mkdir mnt");
	out_ret(o, "mount", syscall(SYS_mount, "mwtrig-tmpfs", "mnt", "tmpfs", MS_NOSUID, "size=1m"));
	out_ret(o, "umount2", syscall(SYS_umount2, "mnt", MNT_DETACH));
}

static void step_init_module(struct out *o)
{
	static char image[16];

	out_ret(o, "ret", syscall(SYS_init_module, image, sizeof(image), "mw=1"));
}

static void step_finit_module(struct out *o)
{
	int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
	struct stat st;

	must(fd >= 0 && fstat(fd, &st) == 0, "open /etc/hostname");
	out_int(o, "fd", fd);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
	out_ret(o, "ret", syscall(SYS_finit_module, fd, "mw=2", 0));
}

static void step_bpf(struct out *o)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	out_int(o, "size", sizeof(attr));
	out_ret(o, "ret", syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
}

static void step_memfd(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_memfd_create, "mwtrig-memfd", MFD_CLOEXEC | MFD_ALLOW_SEALING));
}

/* A memfd holding a copy of /bin/true, its fd, dev and inode written to o. */
static int memfd_of_true(struct out *o, const char *name, unsigned int flags)
{
	char buf[65536];
	int in = open("/bin/true", O_RDONLY | O_CLOEXEC);
	long fd = syscall(SYS_memfd_create, name, flags);
	struct stat st;
	ssize_t n;

	must(in >= 0 && fd >= 0, "memfd");
	while ((n = read(in, buf, sizeof(buf))) > 0)
		must(write((int)fd, buf, (size_t)n) == n, "write memfd");
	must(fstat((int)fd, &st) == 0, "fstat memfd");
	close(in);
	out_int(o, "fd", fd);
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
	return (int)fd;
}

/* /bin/true copied into a memfd and executed from there: no path on any filesystem. */
static void step_exec_memfd(struct out *o)
{
	char *const argv[] = { "true-from-memfd", NULL };
	int fd = memfd_of_true(o, "mwtrig-exec", MFD_CLOEXEC);
	pid_t child = fork();

	if (child == 0) {
		syscall(SYS_execveat, fd, "", argv, no_env, AT_EMPTY_PATH);
		_exit(127);
	}
	out_int(o, "child", child);
	reap(child);
	close(fd);
}

/* The same memfd executed by an ordinary-looking name: a symbolic link in the working directory
 * to /proc/self/fd/N, so the name the kernel is given is neither /dev/fd/N nor /proc/... */
static void step_exec_memfd_link(struct out *o)
{
	char *const argv[] = { "true-from-link", NULL };
	int fd = memfd_of_true(o, "mwtrig-link", 0);
	char target[64], link[4096];
	int status = -1;
	pid_t child;

	must(getcwd(link, sizeof(link) - 32) != NULL, "getcwd");
	strcat(link, "/memfd-link");
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	unlink(link);
	must(symlink(target, link) == 0, "symlink");
	out_str(o, "link", link);
	child = fork();
	if (child == 0) {
		execve(link, argv, no_env);
		_exit(127);
	}
	out_int(o, "child", child);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	out_int(o, "status", status);
	unlink(link);
	close(fd);
}

/* A pseudo-terminal of our own (not our controlling terminal): TIOCSTI on it is refused
 * (EPERM) and still recorded, with the byte; TIOCGWINSZ, an ordinary request, is not. */
static void step_tiocsti(struct out *o)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), t;
	struct winsize ws;
	char c = 'x';

	must(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0, "posix_openpt");
	t = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	must(t >= 0, "open the pts");
	out_int(o, "fd", t);
	out_str(o, "pts", ptsname(m));
	out_ret(o, "winsz", syscall(SYS_ioctl, t, TIOCGWINSZ, &ws));
	out_ret(o, "sti", syscall(SYS_ioctl, t, TIOCSTI, &c));
}

/* The key retention service: a new anonymous session keyring of the step's own (so the key
 * dies with the step), the user keyring's id, then a key added to the session keyring and
 * looked up again. */
static void step_keyring(struct out *o)
{
	long k;

	out_ret(o, "join", syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, NULL));
	out_ret(o, "get_id", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */,
				     -4 /* KEY_SPEC_USER_KEYRING */, 0));
	k = syscall(SYS_add_key, "user", "mwtrig:key", "secret", 6, -3 /* KEY_SPEC_SESSION_KEYRING */);
	out_ret(o, "add", k);
	out_ret(o, "request", syscall(SYS_request_key, "user", "mwtrig:key", NULL, 0));
}

/* userfaultfd for the caller's own user-mode faults (allowed without privilege since 5.11). */
static void step_userfaultfd(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */));
}

/* getpid through the i386 entry (int $0x80, eax 20): another ABI's syscall, which the collector
 * does not let a launched server make (launch.c, deny_foreign_abi). */
static void step_int80(struct out *o)
{
#if defined(__x86_64__)
	long r = 20;

	out_int(o, "pid", getpid());
	__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
	out_ret(o, "ret", r);
#else
	out_ret(o, "ret", -ENOSYS);
#endif
}

/* getpid twice and an openat through x32 numbers (__X32_SYSCALL_BIT set): the x32 ABI's
 * syscalls, ENOSYS on a kernel built without it; a launched server is killed at the first. */
static void step_x32(struct out *o)
{
#if defined(__x86_64__)
	const long x32 = 0x40000000;

	out_ret(o, "getpid", syscall(x32 | SYS_getpid));
	out_ret(o, "getpid2", syscall(x32 | SYS_getpid));
	out_ret(o, "openat", syscall(x32 | SYS_openat, AT_FDCWD, "x32.f", O_RDONLY | O_CLOEXEC));
#else
	out_ret(o, "getpid", -ENOSYS);
#endif
}

const struct step priv_steps[] = {
	{ "ptrace", step_ptrace },
	{ "process_vm", step_process_vm },
	{ "kill_out", step_kill_out },
	{ "kill_in", step_kill_in },
	{ "mount", step_mount },
	{ "init_module", step_init_module },
	{ "finit_module", step_finit_module },
	{ "bpf", step_bpf },
	{ "memfd", step_memfd },
	{ "exec_memfd", step_exec_memfd },
	{ "exec_memfd_link", step_exec_memfd_link },
	{ "int80", step_int80 },
	{ "x32", step_x32 },
	{ "tiocsti", step_tiocsti },
	{ "keyring", step_keyring },
	{ "userfaultfd", step_userfaultfd },
	{ NULL, NULL },
};
