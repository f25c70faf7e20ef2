/*
 * session_end.c - how a recording ends (session_run's last steps): the processes still recorded
 * killed when the options say so (leftovers.c), the calls still in flight written unfinished,
 * and the processes alive at the end listed, each with whether the kill ended it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loader.h"
#include "log.h"
#include "options.h"
#include "pending.h"
#include "session.h"
#include "session_int.h"

static int note_proc(struct session *s, Mcpt__ProcInfo__Kind kind, uint32_t pid, uint32_t ppid,
		     uint64_t pstart, uint32_t uid, bool killed)
{
	Mcpt__ProcInfo pi = MCPT__PROC_INFO__INIT;
	char link[64], exe[PATH_MAX];
	ssize_t len = 0;

	/* Only before the sandbox (attach seeding): afterwards /proc/PID of another uid is closed
	 * to us and readlink is not in the allow-list; exec records name every executable. */
	if (kind != MCPT__PROC_INFO__KIND__ALIVE_AT_END) {
		snprintf(link, sizeof(link), "/proc/%u/exe", pid);
		len = readlink(link, exe, sizeof(exe));
	}
	pi.ts = session_now_ns(CLOCK_BOOTTIME);
	pi.kind = kind;
	pi.pid = pid;
	pi.ppid = ppid;
	pi.pstart = pstart;
	pi.uid = uid;
	pi.killed = killed;
	if (len > 0) {
		pi.exe.data = (uint8_t *)exe;
		pi.exe.len = (size_t)len;
	}
	return session_append(s, MCPT_T_PROC, &pi.base, 0);
}

int session_note_proc(struct session *s, Mcpt__ProcInfo__Kind kind, uint32_t pid, uint32_t ppid,
		      uint64_t pstart, uint32_t uid)
{
	return note_proc(s, kind, pid, ppid, pstart, uid, false);
}

static int note_alive(void *ctx, uint32_t tgid, uint64_t pstart, bool killed)
{
	struct session *s = ctx;

	if (!killed)
		p_info("process %u is still running after the recording", tgid);
	return note_proc(s, MCPT__PROC_INFO__KIND__ALIVE_AT_END, tgid, 0, pstart,
			 0 /* not known here */, killed);
}

/* Records the processes still alive when recording stops, every one of them (those
 * session_end_kill ended, as killed). */
static void record_alive(struct session *s)
{
	int err = leftovers_record(&s->leftovers, note_alive, s);

	if (err && !s->write_err)
		session_set_write_err(s, err, "process list");
}

/* Between kill passes: reaps the killed orphans (ours: no zombie is left behind) and, while the
 * trace can be written, drains the ring, so that their exits are recorded however long the
 * kill takes. */
static void drain_between(void *ctx)
{
	struct session *s = ctx;

	session_reap(s);
	if (s->write_err)
		return;
	s->drained_this_turn = 0;
	loader__drain(s->bpf); /* the rest after the last pass */
	session_flush_losses(s);
}

/* Whether the processes still recorded are killed now (once): after a forced stop or a write
 * error with --on-collector-exit kill (nothing of the tree may go on unseen), or once the linger
 * after the server's exit ran out with --after-linger kill. */
static bool kill_at_end(const struct session *s)
{
	if (s->leftovers.killed)
		return false;
	if (s->stop_now || s->write_err)
		return !s->opts->keep_server;
	return s->server_done && !s->opts->keep_leftovers;
}

void session_end_kill(struct session *s)
{
	size_t killed, left;

	if (!kill_at_end(s))
		return;
	if (!s->server_done && s->server.pidfd >= 0) /* the server first, by pidfd */
		syscall(SYS_pidfd_send_signal, s->server.pidfd, SIGKILL, NULL, 0);
	if (loader__tracked_empty(s->bpf))
		return;
	left = leftovers_kill(&s->leftovers, drain_between, s);
	drain_between(s);
	killed = s->leftovers.n - (left < s->leftovers.n ? left : s->leftovers.n);
	if (!s->stop_now && !s->write_err)
		p_warn("killed %zu recorded process(es) still running %llu s after the server "
		       "exited (--after-linger keep leaves them running)",
		       killed, (unsigned long long)(s->opts->linger_ms / 1000));
	if (!s->leftovers.complete)
		p_warn("out of memory listing the processes killed at the end: the trace lists "
		       "%zu of them",
		       s->leftovers.n);
	if (left)
		p_warn("%zu recorded process(es) still alive %d ms after SIGKILL", left,
		       LOADER_KILL_WAIT_MS);
}

void session_end_list(struct session *s)
{
	int err = pending_write_unfinished(s);

	if (err < 0)
		p_err("failed to list the calls in flight: %s", strerror(-err));
	record_alive(s);
}
