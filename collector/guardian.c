/*
 * guardian.c - the process that kills the recorded tree when the collector cannot: the
 * collector killed with SIGKILL or crashing. With --on-collector-exit kill (the default for a
 * launched COMMAND, which "must not go on unseen"), the recorded tree must not outlive the
 * recording; PR_SET_PDEATHSIG reaches a launched COMMAND alone, not the processes it started,
 * and an attached process not at all.
 *
 * Forked once the BPF programs are attached, before the server starts or is attached to. It keeps
 * the links' descriptors, so the programs stay attached and every fork of the tree is still tracked
 * while it works, and the tracked set's mapping; it closes every other descriptor (the trace, the
 * channel, the control FIFO), wipes its copy of the signing key and enters the same sandbox as
 * the collector. It says it is ready, then blocks on its socket. The collector writes one byte
 * before it exits on its own terms; end of file without that byte means the collector is gone, and
 * the guardian sends SIGKILL to every tracked process, pass after pass until none is left
 * (loader__kill_tracked, as the collector's own session_end_kill), and exits. The programs are
 * detached when it exits.
 *
 * Only SIGKILL (or a crash) ends it early. It leaves the collector's process group for one of
 * its own, so a signal to that group (a job's timeout, a terminal's quit key) reaches the
 * collector and the server but not the guardian, which then kills what the server left in other
 * groups; it ignores every signal another process could send to end it but SIGKILL; and it is
 * named mw-guardian, its name and its command line, so that pkill, pkill -f and killall of the
 * collector's name or command pass it by.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "guardian.h"
#include "loader.h"
#include "log.h"
#include "mcpt.h"
#include "sandbox.h"

#define GUARD_DONE  'd'
#define GUARD_READY 'r'
#define MAX_LINKS   64

/* Closes every descriptor but stderr and the sorted keep[n]; 0 and 1 become /dev/null. */
static int close_all_but(const int *keep, size_t n)
{
	unsigned int from = 3;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from &&
		    syscall(SYS_close_range, from, (unsigned int)keep[i] - 1, 0))
			return -errno;
		from = (unsigned int)keep[i] + 1;
	}
	return syscall(SYS_close_range, from, ~0U, 0) ? -errno : 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Ignores the signals another process may send to end or stop it (SIGKILL and SIGSTOP cannot
 * be); the faults of its own (SIGSEGV, SIGSYS, ...) keep their default. */
static int ignore_outside_signals(void)
{
	static const int sigs[] = {SIGHUP,  SIGINT,  SIGQUIT,	SIGTERM, SIGUSR1, SIGUSR2,
				   SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGTSTP, SIGTTIN,
				   SIGTTOU, SIGXCPU, SIGXFSZ,	SIGIO,	 SIGPWR,  SIGSTKFLT};
	struct sigaction ign = {.sa_handler = SIG_IGN};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &ign, NULL))
			return -errno;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sigaction(sig, &ign, NULL))
			return -errno;
	return 0;
}

/* The bounds of the process's command line (arg_start, arg_end of /proc/self/stat): 0 or
 * -errno. */
static int cmdline_bounds(unsigned long *start, unsigned long *end)
{
	char buf[1024], *p;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	/* after the name, which may hold spaces and parentheses, field 3 follows the first space:
	 * arg_start (field 48) and arg_end (49) follow the 46th */
	p = strrchr(buf, ')');
	for (int spaces = 0; p && spaces < 46; spaces++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lu %lu", start, end) != 2 || *end <= *start)
		return -EPROTO;
	return 0;
}

/* Names the process mw-guardian: its name (comm), and its command line, whose bytes (the
 * collector's argv) it overwrites, cut to their length. A command line it cannot find keeps
 * the collector's, with a warning: the guardian works the same. */
static int rename_process(void)
{
	static const char name[] = "mw-guardian";
	unsigned long start, end;
	size_t keep;
	int err;

	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		return -errno;
	err = cmdline_bounds(&start, &end);
	if (err) {
		p_warn("the guardian keeps the collector's command line: %s", strerror(-err));
		return 0;
	}
	/* the name and its NUL, or what fits before the area's last byte, left NUL */
	keep = end - start - 1 < sizeof(name) ? end - start - 1 : sizeof(name);
	memset((void *)start, 0, end - start);
	memcpy((void *)start, name, keep);
	return 0;
}

static void __attribute__((noreturn)) guard(struct loader *l, int sock)
{
	char b = GUARD_READY;
	size_t left;
	ssize_t n;

	if (write(sock, &b, 1) != 1)
		_exit(127);
	while ((n = read(sock, &b, 1)) < 0 && errno == EINTR)
		;
	if ((n == 1 && b == GUARD_DONE) || loader__tracked_empty(l))
		_exit(0); /* released, or nothing recorded to kill (a start abandoned early) */
	left = loader__kill_tracked(l, LOADER_KILL_WAIT_MS, NULL, NULL);
	if (left)
		p_warn("the collector is gone; %zu recorded process(es) still alive after SIGKILL",
		       left);
	else
		p_warn("the collector is gone: the recorded processes were killed");
	_exit(left ? 1 : 0);
}

int guardian_start(struct guardian *g, struct loader *l, struct mcpt_signer *signer,
		   uid_t monitored)
{
	int keep[MAX_LINKS + 1], sv[2], err;
	char b = 0;
	size_t n;
	pid_t pid;

	g->pid = -1;
	g->fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0) {
		mcpt_signer_free(signer);
		n = loader__link_fds(l, keep, MAX_LINKS);
		keep[n++] = sv[1];
		qsort(keep, n, sizeof(keep[0]), cmp_int);
		if (close_all_but(keep, n) || setpgid(0, 0) || ignore_outside_signals() ||
		    rename_process() || sandbox_enter(monitored))
			_exit(127); /* no ready byte: the collector does not start */
		guard(l, sv[1]);
	}
	err = pid < 0 ? -errno : 0;
	close(sv[1]);
	g->pid = pid;
	g->fd = sv[0];
	if (!err && read(sv[0], &b, 1) != 1) /* ready, once in its sandbox */
		err = -ECHILD;
	if (err)
		guardian_abandon(g);
	return err;
}

void guardian_abandon(struct guardian *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	if (g->pid > 0)
		waitpid(g->pid, NULL, 0);
	g->pid = -1;
}

void guardian_release(struct guardian *g)
{
	char b = GUARD_DONE;

	if (g->fd >= 0 && write(g->fd, &b, 1) != 1)
		p_warn("failed to release the guardian: %s", strerror(errno));
	guardian_abandon(g); /* it has the byte: it exits without a kill */
}
