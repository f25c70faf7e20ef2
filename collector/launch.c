/*
 * launch.c - start the monitored server as the invoking user behind a gate (see launch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "launch.h"
#include "log.h"
#include "options.h"

static int parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out > (unsigned long)INT_MAX ? -EINVAL : 0;
}

static int fill_groups(struct launch_cred *c)
{
	int n = 64;

	if (!c->user) { /* no password entry: the primary group only */
		c->groups = malloc(sizeof(gid_t));
		if (!c->groups)
			return -ENOMEM;
		c->groups[0] = c->gid;
		c->ngroups = 1;
		return 0;
	}
	for (;;) {
		gid_t *g = realloc(c->groups, (size_t)n * sizeof(gid_t));

		if (!g)
			return -ENOMEM;
		c->groups = g;
		if (getgrouplist(c->user, c->gid, c->groups, &n) >= 0)
			break;
		if (n > 65536)
			return -E2BIG;
	}
	c->ngroups = n;
	return 0;
}

static int cred_from_passwd(struct launch_cred *c, const struct passwd *pw, bool gid_given)
{
	c->uid = pw->pw_uid;
	if (!gid_given)
		c->gid = pw->pw_gid;
	c->user = strdup(pw->pw_name);
	c->passwd_home = strdup(pw->pw_dir);
	return c->user && c->passwd_home ? 0 : -ENOMEM;
}

int launch_resolve_cred(const struct options *o, struct launch_cred *c)
{
	unsigned long id, gid;
	struct passwd *pw = NULL;
	bool gid_given = false;
	int err;

	memset(c, 0, sizeof(*c));
	c->uid = getuid();
	c->gid = getgid();
	if (o->user) {
		pw = getpwnam(o->user);
		if (!pw && parse_id(o->user, &id) == 0) {
			pw = getpwuid((uid_t)id);
			c->uid = (uid_t)id;
			if (!pw)
				c->gid = (gid_t)id;
		} else if (!pw) {
			p_err("--user %s: no such user", o->user);
			return -ENOENT;
		}
	} else if (getenv("SUDO_UID")) {
		if (parse_id(getenv("SUDO_UID"), &id)) {
			p_err("SUDO_UID is not a uid: '%s'", getenv("SUDO_UID"));
			return -EINVAL;
		}
		c->uid = (uid_t)id;
		if (parse_id(getenv("SUDO_GID"), &gid) == 0) {
			c->gid = (gid_t)gid;
			gid_given = true;
		}
		pw = getpwuid(c->uid);
	} else {
		pw = getpwuid(c->uid);
	}
	if (pw) {
		err = cred_from_passwd(c, pw, gid_given);
		if (err)
			return err;
	}
	if (c->uid == 0 && !o->allow_root) {
		p_err("refusing to run COMMAND as root: run through sudo as a normal user, give "
		      "--user USER, or --allow-root");
		return -EPERM;
	}
	return fill_groups(c);
}

/* Sets name to value when it is set to what (the collector's own user's). */
static int repoint(const char *name, const char *what, const char *value)
{
	const char *now = getenv(name);

	if (!now || !what || !value || strcmp(now, what) != 0)
		return 0;
	if (setenv(name, value, 1)) {
		int err = errno;

		p_err("failed to set %s for COMMAND's user: %s", name, strerror(err));
		return -err;
	}
	return 0;
}

int launch_user_env(const struct launch_cred *c)
{
	struct passwd *self;
	char *home, *name;
	int err;

	if (c->uid == getuid() || !c->user)
		return 0;
	self = getpwuid(getuid());
	if (!self)
		return 0; /* no entry of our own: nothing of ours to recognise */
	home = strdup(self->pw_dir);
	name = strdup(self->pw_name);
	if (!home || !name) {
		free(home);
		free(name);
		p_err("failed to set up COMMAND's environment: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = repoint("HOME", home, c->passwd_home);
	err = err ?: repoint("USER", name, c->user);
	err = err ?: repoint("LOGNAME", name, c->user);
	free(home);
	free(name);
	return err;
}

void launch_cred_fini(struct launch_cred *c)
{
	free(c->groups);
	free(c->user);
	free(c->passwd_home);
	memset(c, 0, sizeof(*c));
}

/* Status pipe protocol, child to parent: 'A' len path = about to execve path; 'E' errno = the
 * launch failed. EOF after an 'A' (the pipe is close-on-exec) means that path now runs. */
static void report(int status, char kind, const void *p, size_t n)
{
	char msg[1 + sizeof(uint16_t) + PATH_MAX];
	uint16_t len = (uint16_t)n;

	if (n > PATH_MAX)
		return;
	msg[0] = kind;
	memcpy(msg + 1, &len, sizeof(len));
	memcpy(msg + 1 + sizeof(len), p, n);
	if (write(status, msg, 1 + sizeof(len) + n) < 0)
		_exit(127);
}

/* What execvp does with a file the kernel will not execute (ENOEXEC: a script without "#!"):
 * runs it with /bin/sh, announced as what runs. No allocation (the child of a fork): the
 * arguments are copied into a bounded array on the stack. Returns the errno to report. */
static int exec_with_shell(int status, const char *file, char **command)
{
	char *argv[1024];
	size_t n = 1;

	while (command[n] && n < sizeof(argv) / sizeof(argv[0]) - 1)
		n++;
	if (command[n])
		return ENOEXEC; /* too many arguments for the copy: as the kernel said */
	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)file;
	for (size_t i = 1; i <= n; i++)
		argv[i + 1] = command[i]; /* the NULL included */
	report(status, 'A', "/bin/sh", 7);
	execve("/bin/sh", argv, environ);
	return ENOEXEC;
}

/* execvp's search, done here as the user (so PATH entries the user cannot reach are skipped as
 * they would be) and announcing each candidate, so the collector learns what really ran. */
static int exec_search(int status, char **command)
{
	const char *name = command[0], *path = getenv("PATH"), *p, *end;
	extern char **environ;
	char buf[PATH_MAX];
	int err = ENOENT, n;

	if (strchr(name, '/')) {
		report(status, 'A', name, strlen(name));
		execve(name, command, environ);
		return errno == ENOEXEC ? exec_with_shell(status, name, command) : errno;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), end == p ? "." : p, name);
		if (n < 0 || n >= (int)sizeof(buf))
			continue;
		report(status, 'A', buf, (size_t)n);
		execve(buf, command, environ);
		if (errno == ENOEXEC)
			return exec_with_shell(status, buf, command);
		if (errno != ENOENT && errno != ENOTDIR)
			err = errno; /* like execvp: a permission error is remembered */
		if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
			return errno;
	}
	return err;
}

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#define FOREIGN_NR_MIN	  0x40000000u /* __X32_SYSCALL_BIT: x32 calls share the arch */
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* COMMAND's syscalls of another ABI than the native one (i386 through int $0x80, x32) would be
 * read by the dispatchers as native numbers (other calls' handlers, or none at all: an escape
 * from the trace). The filter kills the process at the first such call, which the trace then
 * shows as its exit by SIGSYS. A hand-built filter: no allocation between fork and exec. */
static int deny_foreign_abi(void)
{
#ifdef NATIVE_AUDIT_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#ifdef FOREIGN_NR_MIN
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, FOREIGN_NR_MIN, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#else
	return 0;
#endif
}

/* In the child: become the user, lose every privilege and inherited fd, wait at the gate,
 * exec. Only async-signal-safe calls; failures go back through the status pipe. */
void launch_note_ignored(struct launch *l)
{
	struct sigaction old;
	int sig;

	sigemptyset(&l->ignored);
	for (sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			sigaddset(&l->ignored, sig);
}

static void __attribute__((noreturn))
child_main(int gate, int status, char **command, const struct launch_cred *c, bool pdeath,
	   const sigset_t *ignored)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };
	sigset_t none;
	char go;
	int err, sig;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (sig = 1; sig < NSIG; sig++) /* fails harmlessly for KILL, STOP, RT internals */
		sigaction(sig, sigismember(ignored, sig) == 1 ? &ign : &dfl, NULL);
	if (read(gate, &go, 1) != 1)
		_exit(127); /* the collector went away before releasing us */
	close(gate);
	if (setgroups((size_t)c->ngroups, c->groups) || setresgid(c->gid, c->gid, c->gid) ||
	    setresuid(c->uid, c->uid, c->uid))
		goto fail;
	if (c->uid != 0 && (setuid(0) == 0 || geteuid() != c->uid)) {
		errno = EPERM; /* the drop did not hold */
		goto fail;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || deny_foreign_abi())
		goto fail;
	if (pdeath && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		goto fail;
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC))
		goto fail; /* the status pipe is already close-on-exec; so is everything else now */
	errno = exec_search(status, command);
fail:
	err = errno;
	report(status, 'E', &err, sizeof(err));
	_exit(err == ENOENT ? 127 : 126);
}

int launch_fork(struct launch *l, char **command, const struct launch_cred *c, bool pdeath)
{
	int gate[2] = { -1, -1 }, status[2] = { -1, -1 };
	pid_t pid;
	int err;

	l->pid = -1;
	l->pidfd = l->gate = l->status = -1;
	if (pipe2(gate, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0) {
		close(gate[1]);
		close(status[0]);
		child_main(gate[0], status[1], command, c, pdeath, &l->ignored);
	}
	close(gate[0]);
	close(status[1]);
	l->pid = pid;
	l->gate = gate[1];
	l->status = status[0];
	l->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (l->pidfd < 0) {
		err = -errno;
		kill(pid, SIGKILL);
		launch_close(l);
		return err;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (gate[i] >= 0)
			close(gate[i]);
		if (status[i] >= 0)
			close(status[i]);
	}
	return err;
}

/* Reads exactly n bytes, or fails. */
static int read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		got += (size_t)r;
	}
	return 0;
}

int launch_release(struct launch *l, char **exe)
{
	char go = 'g', kind, path[PATH_MAX + 1];
	uint16_t len;
	int child_err, err = -EIO;
	ssize_t n;

	*exe = NULL;
	if (write(l->gate, &go, 1) != 1)
		return -errno;
	close(l->gate);
	l->gate = -1;
	for (;;) {
		do
			n = read(l->status, &kind, 1);
		while (n < 0 && errno == EINTR);
		if (n == 0) { /* closed by exec: the last announced path runs */
			err = *exe ? 0 : -EIO;
			break;
		}
		if (n < 0 || read_full(l->status, &len, sizeof(len)) || len > PATH_MAX)
			break;
		if (kind == 'E') {
			if (len == sizeof(child_err) && read_full(l->status, &child_err, len) == 0)
				err = -child_err;
			break;
		}
		if (kind != 'A' || read_full(l->status, path, len))
			break;
		path[len] = 0;
		free(*exe);
		*exe = strdup(path);
	}
	close(l->status);
	l->status = -1;
	if (err) {
		free(*exe);
		*exe = NULL;
	}
	return err;
}

void launch_close(struct launch *l)
{
	if (l->gate >= 0)
		close(l->gate);
	if (l->status >= 0)
		close(l->status);
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->gate = l->status = l->pidfd = -1;
}
