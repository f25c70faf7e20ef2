/*
 * sandbox.c - what the collector gives up once the BPF programs are attached, the trace is
 * open and the server runs (DESIGN.md section 10). The monitored server may be hostile; the
 * collector holds the signing key. So the collector
 *   - becomes an unprivileged uid/gid that is not the monitored user's (the `mcpwitness` system
 *     user when present, else a fixed unused id), so that user can neither ptrace it, read its
 *     memory nor signal it;
 *   - keeps one capability, CAP_KILL (to forward signals to a server of another uid and to stop
 *     the tree if recording fails), in its effective, permitted and bounding sets; none inherited
 *     or ambient;
 *   - sets no_new_privs and non-dumpable (no core dump, no /proc/PID/mem for anyone);
 *   - installs a seccomp allow-list of exactly the syscalls the drain loop and the teardown use;
 *     any other syscall kills the process.
 * Everything after this point works on descriptors opened before it: BPF maps through their
 * fds (no capability needed), the ring buffer through its mapping, the trace through its fd.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>

#include "log.h"
#include "sandbox.h"

#define SANDBOX_USER	 "mcpwitness"
#define SANDBOX_FALLBACK 2147483646u /* a fixed id no distribution allocates */

/* The syscalls of the drain loop (epoll, ring buffer via mmap, BPF map reads, control channel
 * reads, trace writes and seals, signal forwarding, reaping) and of the teardown (closing
 * descriptors, unmapping, freeing the key's guarded pages). */
static const char *const allowed[] = {
	"read", "write", "writev", "pwritev2", "close", "epoll_wait", "epoll_pwait", "epoll_ctl", "poll",
	"ppoll", "fdatasync", "fsync", "clock_gettime", "clock_getres", "gettimeofday",
	"adjtimex", "clock_adjtime", "wait4", "waitid", "kill", "pidfd_send_signal", "brk",
	"mmap", "munmap", "mremap", "madvise", "mprotect", "munlock", "rt_sigprocmask",
	"rt_sigreturn", "restart_syscall", "futex", "getpid", "gettid", "tgkill", "exit",
	"exit_group", "newfstatat", "fstat", "lseek", "getpgid",
#ifdef MW_SANITIZE_BUILD
	/* AddressSanitizer's runtime, for the sanitizer builds CI runs */
	"sigaltstack", "sched_yield", "prlimit64", "getrlimit", "readlink", "openat",
	"rt_sigaction",
#endif
};

/* bpf() is allowed for reading maps only: no loads, no attaches, no new maps. */
static int allow_bpf_reads(scmp_filter_ctx ctx)
{
	int err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				   SCMP_A0(SCMP_CMP_EQ, BPF_MAP_LOOKUP_ELEM));

	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				       SCMP_A0(SCMP_CMP_EQ, BPF_MAP_GET_NEXT_KEY));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				       SCMP_A0(SCMP_CMP_EQ, BPF_MAP_LOOKUP_BATCH));
	return err;
}

static int install_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int err = 0;
	size_t i;

	if (!ctx)
		return -ENOMEM;
	for (i = 0; !err && i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* not a syscall on this architecture */
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	if (!err)
		err = allow_bpf_reads(ctx);
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

/* The uid/gid to become: the dedicated system user, unless it is the monitored user. */
static void pick_identity(uid_t monitored, uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(SANDBOX_USER);

	if (pw && pw->pw_uid != 0 && pw->pw_uid != monitored) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		return;
	}
	*uid = SANDBOX_FALLBACK;
	*gid = SANDBOX_FALLBACK;
}

static int drop_bounding_and_ambient(void)
{
	int cap;

	for (cap = 0; cap <= CAP_LAST_CAP; cap++) {
		if (cap == CAP_KILL)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno; /* EINVAL: a capability this kernel does not know */
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	return 0;
}

static int keep_only_kill(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = 1u << CAP_KILL;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

static int become(uid_t uid, gid_t gid)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
		return -errno;
	if (setuid(0) == 0 || getuid() != uid || geteuid() != uid || getegid() != gid)
		return -EPERM; /* the switch did not hold */
	return 0;
}

static bool sandboxed;

#ifdef MW_SANITIZE_BUILD
/* LeakSanitizer's exit-time check clones a tracer and ptraces this process: the seccomp filter
 * forbids both and a non-dumpable process cannot be traced anyway. Leaks are checked on every
 * path that ends before the sandbox; after it, this hook turns the check off. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return sandboxed;
}
#endif

int sandbox_enter(uid_t monitored)
{
	uid_t uid;
	gid_t gid;
	int err;

	pick_identity(monitored, &uid, &gid);
	err = drop_bounding_and_ambient();
	if (err) {
		p_err("failed to drop the capability bounding set: %s", strerror(-err));
		return err;
	}
	err = become(uid, gid);
	if (err) {
		p_err("failed to switch to uid %u: %s", (unsigned)uid, strerror(-err));
		return err;
	}
	err = keep_only_kill();
	if (!err && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)))
		err = -errno;
	if (err) {
		p_err("failed to drop capabilities: %s", strerror(-err));
		return err;
	}
	err = install_seccomp();
	if (err) {
		p_err("failed to install the seccomp filter: %s", strerror(-err));
		return err;
	}
	sandboxed = true;
	p_info("sandboxed: uid %u, CAP_KILL only, no_new_privs, seccomp", (unsigned)uid);
	return 0;
}
