/*
 * session.c - the recording loop (see session.h).
 *
 * One thread, one epoll set: the record rings' fd (woken only when a batch is waiting; a short
 * poll timeout collects the rest) and a signalfd for INT/TERM/HUP (forwarded to the server)
 * and CHLD (the server or an orphaned descendant exited; we are their subreaper). How a
 * recording ends (the kill, the unfinished calls, the processes alive) is session_end.c.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "encode.h"
#include "session_int.h"
#include "loader.h"
#include "log.h"
#include "options.h"
#include "pending.h"
#include "session.h"
#include "wire.h"

#define POLL_MS	       50 /* longest wait before draining what is below the wake-up mark */
#define FORCED_STOP    3  /* the third INT/TERM/HUP stops recording without waiting */
/* Records drained per loop turn: a server flooding the ring must not starve signal forwarding,
 * the control channel, timed seals and loss accounting (the drain would otherwise run as
 * long as the flood does). */
#define DRAIN_BUDGET   4096
#define FINAL_SETTLE_MS 20 /* the last drain's wait for records still being written */

static const Mcpt__LossSource loss_source[MW_LOSS_REASONS] = {
	[MW_LOSS_RINGBUF_FULL] = MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL,
	[MW_LOSS_TOO_LARGE] = MCPT__LOSS_SOURCE__RECORD_TOO_LARGE,
	[MW_LOSS_STASH_FULL] = MCPT__LOSS_SOURCE__STASH_FULL,
	[MW_LOSS_READ_FAULT] = MCPT__LOSS_SOURCE__READ_FAULT,
	[MW_LOSS_TRACK_FULL] = MCPT__LOSS_SOURCE__TRACK_FULL,
	[MW_LOSS_CHAN_CUT] = MCPT__LOSS_SOURCE__CAPTURE_TRUNCATED,
};

uint64_t session_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void session_set_write_err(struct session *s, int err, const char *what)
{
	if (s->write_err)
		return;
	s->write_err = err;
	p_err("failed to write the trace (%s): %s", what, strerror(-err));
}

int session_append(struct session *s, enum mcpt_type type, const ProtobufCMessage *msg, uint64_t ts)
{
	int err;

	if (s->write_err)
		return s->write_err;
	err = mcpt_writer__append(s->writer, type, msg, ts);
	if (err)
		session_set_write_err(s, err, "record");
	return err;
}

/* A response (or any server write) just ended: seal once this turn's records are written, so
 * a call's evidence is proven as soon as it is complete. The writer holds back a MARK seal
 * that comes sooner than 10 ms after the last seal and makes it at that mark (at most 100 a
 * second, TRACE-FORMAT.md 4.7), so a flag is all a record costs here. */
static void seal_after_write(struct session *s)
{
	s->seal_pending = true;
}

/* Appends a record packed by wire.c (the hot path: one per kernel record). */
static int append_packed(struct session *s, enum mcpt_type type, size_t len, uint64_t ts)
{
	int err;

	if (s->write_err)
		return s->write_err;
	err = mcpt_writer__append_raw(s->writer, type, s->wire, len, ts);
	if (err)
		session_set_write_err(s, err, "record");
	return err;
}

/* A kernel record the collector cannot encode (its own lengths do not add up, or it would not
 * fit the packing buffer: never expected from our programs). It is not written, so it is
 * counted as lost in user space (USER_QUEUE): a Loss record with its sequence number and, from
 * the next seal on, the sealed totals, so the trace does not read as complete. 0, or -EIO when
 * the trace can no longer be written. */
static int drop_malformed(struct session *s, const struct mw_event *ev, size_t size,
			  const char *what)
{
	Mcpt__Loss loss = MCPT__LOSS__INIT;

	if (++s->dropped <= 3)
		p_warn("dropping a malformed %s record (%zu bytes): counted as lost%s", what, size,
		       s->dropped == 3 ? " (further ones are counted without a warning)" : "");
	loss.ts = session_now_ns(CLOCK_BOOTTIME);
	loss.src = MCPT__LOSS_SOURCE__USER_QUEUE;
	loss.delta = 1;
	loss.cumulative = s->dropped;
	if (size >= MW_EVENT_HDR_SIZE)
		loss.first_seq = loss.last_seq = ev->seq;
	if (session_append(s, MCPT_T_LOSS, &loss.base, 0))
		return -EIO;
	if (mcpt_writer__set_loss(s->writer, loss.src, s->dropped)) {
		session_set_write_err(s, -EIO, "loss totals");
		return -EIO;
	}
	return 0;
}

static int on_stdio(struct session *s, const struct mw_event *ev, size_t size)
{
	Mcpt__StdioFrame frame;

	if (encode_stdio(ev, size, &frame) || wire_stdio_max(&frame) > sizeof(s->wire))
		return drop_malformed(s, ev, size, "channel");
	if (append_packed(s, MCPT_T_STDIO, wire_stdio_pack(&frame, s->wire), ev->ts))
		return -EIO;
	s->records++;
	if (frame.dir == MCPT__STDIO_FRAME__DIR__WRITE && frame.last)
		seal_after_write(s);
	return 0;
}

/* One control line: a raw Mark record (the analyzer parses it, never the collector). */
static int on_control_line(void *ctx, const uint8_t *line, size_t len, bool cut, uint64_t ts)
{
	struct session *s = ctx;
	Mcpt__Mark mark = MCPT__MARK__INIT;

	mark.ts = ts;
	mark.source = MCPT__MARK__SOURCE__CONTROL;
	mark.raw.data = (uint8_t *)line;
	mark.raw.len = len;
	mark.flags = cut ? 1 : 0;
	if (session_append(s, MCPT_T_MARK, &mark.base, ts))
		return -1;
	seal_after_write(s);
	return 0;
}

int session_add_control(struct session *s, struct control *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = control__fd(c) };

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	s->control = c;
	return 0;
}

/* Reads the control channel when it has something (bounded per turn). At its end (a
 * --control-fd closed by its writer) or on a read error, it is no longer watched: marks are
 * the client's supplement to the observed channel, so losing them ends neither the recording
 * nor the server (one warning says so), and a descriptor that keeps failing must not keep the
 * loop spinning. */
static void read_control(struct session *s)
{
	int r;

	if (!s->control || s->write_err)
		return;
	r = control__read(s->control, on_control_line, s);
	if (r == 0 || s->write_err)
		return;
	if (r < 0)
		p_warn("failed to read the control channel: %s; no more marks are read",
		       strerror(-r));
	control__flush(s->control, on_control_line, s);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, control__fd(s->control), NULL);
	s->control = NULL;
}

/* Stops the drain (a negative return does) once this turn's budget is spent. */
static int budget_spent(struct session *s)
{
	return ++s->drained_this_turn >= DRAIN_BUDGET ? -EAGAIN : 0;
}

int session_on_record(void *ctx, const struct mw_event *ev, size_t size)
{
	struct session *s = ctx;
	struct encoded_event enc;
	int err;

	if (size >= MW_EVENT_HDR_SIZE && encode_is_stdio(ev)) {
		err = on_stdio(s, ev, size);
		return err ? err : budget_spent(s);
	}
	if (encode_event(ev, size, &enc) || wire_event_max(&enc.msg) > sizeof(s->wire))
		return drop_malformed(s, ev, size, "kernel") ?: budget_spent(s);
	s->records++;
	if (!s->write_err) { /* repeated values and tasks by reference, timestamps as deltas */
		err = mcpt_writer__event_refs(s->writer, &enc.msg);
		if (err) {
			session_set_write_err(s, err, "value definition");
			return -EIO;
		}
	}
	return append_packed(s, MCPT_T_EVENT, wire_event_pack(&enc.msg, s->wire), ev->ts) ?
		       -EIO :
		       budget_spent(s);
}

/* Writes a Loss record for every reason whose kernel counter grew since the last call, with the
 * range of sequence numbers the lost records had. The range comes from the kernel's sequence
 * counter, not from the records drained: a record is numbered before it is reserved, so one
 * lost after the last drain can carry a number above every record received. The counter is
 * read before the loss counters (start of the next range: a record counted lost later was
 * numbered after it, unless its program was preempted between the two) and after them (every
 * record counted lost now was numbered before). */
void session_flush_losses(struct session *s)
{
	uint64_t totals[MW_LOSS_REASONS], before, after;
	uint32_t r;

	if (s->write_err || loader__next_seq(s->bpf, &before) || loader__losses(s->bpf, totals) ||
	    loader__next_seq(s->bpf, &after))
		return;
	for (r = 0; r < MW_LOSS_REASONS; r++) {
		Mcpt__Loss loss = MCPT__LOSS__INIT;

		if (totals[r] <= s->loss_seen[r])
			continue;
		loss.ts = session_now_ns(CLOCK_BOOTTIME);
		loss.src = loss_source[r];
		loss.delta = totals[r] - s->loss_seen[r];
		loss.cumulative = totals[r];
		loss.first_seq = s->loss_seq;
		loss.last_seq = after ? after - 1 : 0;
		if (session_append(s, MCPT_T_LOSS, &loss.base, 0))
			return;
		if (mcpt_writer__set_loss(s->writer, loss.src, totals[r]))
			return;
		s->loss_seen[r] = totals[r];
		if (r == MW_LOSS_CHAN_CUT)
			p_warn("%llu call(s) moved channel bytes that were not captured (splice, "
			       "sendfile or over the capture limit)", (unsigned long long)loss.delta);
		else
			p_warn("%llu event(s) lost (%s)", (unsigned long long)loss.delta,
			       protobuf_c_enum_descriptor_get_value(&mcpt__loss_source__descriptor,
								    loss.src)->name);
	}
	s->loss_seq = before;
}

int session_init(struct session *s, const struct options *opts)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->sigfd = s->epfd = -1;
	s->server.pid = -1;
	s->server.pidfd = s->server.gate = s->server.status = -1;
	launch_note_ignored(&s->server); /* before we change any disposition */
	signal(SIGPIPE, SIG_IGN); /* a vanished reader is an EPIPE from write(), handled there */
	/* A server sharing our terminal must not stop us: a background group's read or write of
	 * the terminal (tcsetpgrp and TOSTOP) would, and its writes go on instead (or fail). */
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	/* The stops: forwarded to a launched server and counted (forward_signal). QUIT among them:
	 * a terminal raises it for anyone who can type into it (a server with TIOCSTI), and its
	 * default would end us without a seal. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0)
		return -errno;
	ev.data.fd = s->sigfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->sigfd, &ev))
		return -errno;
	/* orphaned descendants of the server are reparented to us, so we see them all exit */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return -errno;
	return 0;
}

int session_watch(struct session *s, pid_t pid, int pidfd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	s->attached = true;
	s->server.pid = pid;
	s->server.pidfd = pidfd;
	ev.data.fd = s->server.pidfd;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->server.pidfd, &ev))
		return -errno;
	return 0;
}

/* Attach mode: the pidfd turns readable when the target has exited, and stays so: it leaves
 * the epoll set then, or every wait of the linger would return at once. */
static void check_attached_target(struct session *s)
{
	struct pollfd p = { .fd = s->server.pidfd, .events = POLLIN };

	if (!s->attached || s->server_done)
		return;
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
		s->server_done = true;
		s->linger_until_ms = session_now_ns(CLOCK_MONOTONIC) / 1000000 + s->opts->linger_ms;
		if (epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->server.pidfd, NULL))
			p_warn("failed to stop watching the attached process: %s", strerror(errno));
	}
}

static void forward_signal(struct session *s, const struct signalfd_siginfo *si)
{
	if (s->attached) { /* not ours to signal: stop recording */
		s->stop_signals++;
		s->stop_now = true;
		return;
	}
	/* A signal the terminal raised (SI_KERNEL) went to the foreground process group: it
	 * already reached the server while the server is in ours (forwarding it would deliver it
	 * twice), not once it made a group of its own (setpgid, setsid). */
	if (!s->server_done &&
	    (si->ssi_code != SI_KERNEL || getpgid(s->server.pid) != getpgid(0)) &&
	    syscall(SYS_pidfd_send_signal, s->server.pidfd, (int)si->ssi_signo, NULL, 0))
		p_warn("failed to forward signal %u: %s", si->ssi_signo, strerror(errno));
	if (++s->stop_signals >= FORCED_STOP) {
		p_warn("third stop signal: ending the recording now");
		s->stop_now = true;
	}
}

/* Reaps every exited child: the server (its status is kept) and orphaned descendants. */
void session_reap(struct session *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != s->server.pid)
			continue;
		s->server_done = true;
		s->server_status = status;
		s->linger_until_ms = session_now_ns(CLOCK_MONOTONIC) / 1000000 + s->opts->linger_ms;
	}
}

static void handle_signals(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue; /* reaped below, whatever the number of SIGCHLDs merged */
		forward_signal(s, &si);
	}
	session_reap(s);
}

/* After the server exits: stop once no descendant is left (none tracked by the kernel side,
 * and, when we launched it, none left for us to reap) or linger has run out. */
static bool lingering_over(struct session *s)
{
	if (!s->server_done)
		return false;
	if (loader__tracked_empty(s->bpf))
		return true;
	if (!s->attached && waitpid(-1, NULL, WNOHANG | __WNOTHREAD) < 0 && errno == ECHILD)
		return true;
	return session_now_ns(CLOCK_MONOTONIC) / 1000000 >= s->linger_until_ms;
}

static int wait_step(struct session *s)
{
	struct epoll_event evs[4];
	int tick, timeout = POLL_MS, n, err;

	tick = mcpt_writer__tick(s->writer);
	if (tick < 0 && !s->write_err)
		session_set_write_err(s, tick, "seal");
	else if (tick >= 0 && tick < timeout)
		timeout = tick;
	if (s->ring_backlog)
		timeout = 0; /* the last drain stopped at its budget: more is waiting */
	n = epoll_wait(s->epfd, evs, 4, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	handle_signals(s);
	check_attached_target(s);
	read_control(s);
	s->drained_this_turn = 0;
	n = loader__drain(s->bpf);
	s->ring_backlog = n == -EAGAIN;
	if (n < 0 && n != -EAGAIN && !s->write_err)
		p_warn("failed to drain the record rings: %s", strerror(-n));
	session_flush_losses(s);
	pending_scan(s);
	if (s->seal_pending && !s->write_err) {
		s->seal_pending = false;
		err = mcpt_writer__seal(s->writer, MCPT_SEAL_MARK);
		if (err)
			session_set_write_err(s, err, "seal");
	}
	return 0;
}

/* Everything the kernel still holds, whatever the budget; a record still being written, or one
 * that waits for it in the other ring, gets up to FINAL_SETTLE_MS. */
static void drain_the_rest(struct session *s)
{
	int waited;

	for (waited = 0;; waited++) {
		do {
			s->drained_this_turn = 0;
		} while (loader__drain(s->bpf) == -EAGAIN && !s->write_err);
		if (s->write_err || waited >= FINAL_SETTLE_MS || !loader__ring_waiting(s->bpf))
			return;
		poll(NULL, 0, 1);
	}
}

static Mcpt__EndReason end_reason(const struct session *s)
{
	if (s->write_err == -ENOSPC || s->write_err == -EDQUOT)
		return MCPT__END_REASON__END_DISK_FULL;
	if (s->write_err)
		return MCPT__END_REASON__END_ERROR;
	if (s->stop_signals)
		return MCPT__END_REASON__END_SIGNAL;
	return MCPT__END_REASON__END_TARGET_EXITED;
}

static int exit_code(const struct session *s)
{
	if (s->attached)
		return 0;
	if (!s->server_done)
		return 2;
	if (WIFEXITED(s->server_status))
		return WEXITSTATUS(s->server_status);
	if (WIFSIGNALED(s->server_status))
		return 128 + WTERMSIG(s->server_status);
	return 2;
}

int session_run(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = loader__ring_fd(s->bpf) };
	int err = 0;

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return 2;
	s->leftovers.bpf = s->bpf;
	while (!s->write_err && !s->stop_now && !lingering_over(s)) {
		err = wait_step(s);
		if (err) {
			p_err("failed to wait for events: %s", strerror(-err));
			break;
		}
	}
	if (!err)
		session_end_kill(s);
	drain_the_rest(s);
	read_control(s);
	if (s->control && !s->write_err)
		control__flush(s->control, on_control_line, s);
	session_flush_losses(s);
	if (!s->write_err)
		session_end_list(s);
	if ((s->write_err || s->stop_now) && !s->opts->keep_server) {
		int status;

		session_end_kill(s); /* after a write error since the first call */
		if (!s->attached && !s->server_done &&
		    waitpid(s->server.pid, &status, 0) == s->server.pid) {
			s->server_done = true;
			s->server_status = status;
		}
	}
	if (!s->write_err) {
		err = mcpt_writer__finish(s->writer, end_reason(s));
		if (err)
			session_set_write_err(s, err, "final seal");
	}
	p_info("%llu events recorded; %llu ring records came through the spill ring",
	       (unsigned long long)s->records, (unsigned long long)loader__spilled(s->bpf));
	if (log_dropped())
		p_warn("%lu diagnostic line(s) were not written: standard error, shared with the "
		       "server, was full",
		       log_dropped());
	if (s->write_err)
		return 2;
	return exit_code(s);
}

void session_fini(struct session *s)
{
	leftovers_fini(&s->leftovers);
	launch_close(&s->server);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->epfd >= 0)
		close(s->epfd);
	s->sigfd = s->epfd = -1;
}
