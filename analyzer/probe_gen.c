/*
 * probe_gen.c - one scope of the probe: the collector recording a process group, and the two
 * threads that bring its trace back (see probe.h).
 *
 * The collector gets two pipes as fds 3 and 4 (--output-fd 3, --control-fd 4): no path is
 * handed to the privileged process. It is run directly when the probe is root, else through
 * `sudo -n -C 5` (the sudoers rule must then allow it and closefrom_override, see the README).
 * Its stdout goes to stderr and it runs with -q: harnesses read our stdout as the protocol and
 * often never read our stderr.
 *
 *   tee thread     collector's trace pipe -> the trace file (a copy, the signed bytes as
 *                  written) and -> an internal pipe
 *   reader thread  internal pipe -> replay (the streaming verifier) -> probe_on_record
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "probe.h"
#include "replay.h"

#define STOP_WAIT_MS 5000 /* a collector gets this long to write its FINAL seal after TERM */

static void *tee_main(void *arg)
{
	struct probe_gen *g = arg;
	char buf[65536];
	bool file_ok = true;
	ssize_t n;

	for (;;) {
		n = read(g->out_r, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (file_ok && mcpt_write_all(g->file_fd, buf, (size_t)n)) {
			p_err("failed to write trace %s: %s", g->path, strerror(errno));
			file_ok =
				false; /* keep feeding the reader: the harness still gets events */
		}
		if (mcpt_write_all(g->pipe_w, buf, (size_t)n))
			break;
	}
	close(g->pipe_w);
	g->pipe_w = -1;
	return NULL;
}

static void *reader_main(void *arg)
{
	struct probe_gen *g = arg;
	struct replay_opts ro = {.key = g->key};
	struct replay *r = replay__new(&ro);
	const struct mcpt_report *rep;
	json_t *o;

	if (!r) {
		p_err("failed to read the trace back: %s", strerror(ENOMEM));
		return NULL;
	}
	replay__run(r, g->pipe_r, probe_on_record, g);
	rep = replay__report(r);
	pthread_mutex_lock(&g->probe->lock);
	probe_ack_ends(g, 0, true);
	if (!g->attached) {
		o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "type", "status", "message", "error",
			      "bucket", "ambient", "generation", (json_int_t)g->generation, "error",
			      "the collector did not record (see its message on stderr)");
		probe_emit(g->probe, o);
	}
	if (rep->bytes == 0)
		goto done; /* no trace: its empty file goes (probe_gen_stop) */
	o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I}", "type", "status", "message", "trace",
		      "bucket", "ambient", "generation", (json_int_t)g->generation, "trace",
		      g->path, "verdict", mcpt_report_verdict_name(rep), "records",
		      (json_int_t)rep->records);
	probe_emit(g->probe, o);
done:
	g->done = true;
	pthread_mutex_unlock(&g->probe->lock);
	replay__free(r);
	return NULL;
}

struct argv_buf {
	char pgid[32];
	const char *v[20];
};

/* The collector's command line, built before fork (the child only dups and execs). */
static void collector_argv(const struct probe_gen *g, struct argv_buf *a)
{
	const struct probe_opts *o = &g->probe->opts;
	int i = 0;

	snprintf(a->pgid, sizeof(a->pgid), "%lld", g->pgid);
	if (geteuid() != 0) {
		a->v[i++] = "sudo";
		a->v[i++] = "-n";
		a->v[i++] = "-C";
		a->v[i++] = "5";
	}
	a->v[i++] = o->collector;
	a->v[i++] = "-q";
	a->v[i++] = "--pgid";
	a->v[i++] = a->pgid;
	a->v[i++] = "--output-fd";
	a->v[i++] = "3";
	a->v[i++] = "--control-fd";
	a->v[i++] = "4";
	a->v[i++] = "-k";
	a->v[i++] = o->key;
	a->v[i] = NULL;
}

static void put_stderr(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		_exit(127);
}

/* In the child: fds 3 (trace) and 4 (control), stdout to stderr, then exec. Never returns. */
static void exec_collector(const struct argv_buf *a, int out_w, int ctl_r)
{
	static const char msg[] = "mcpwitness: failed to run the collector ";
	int x, y, devnull, err;

	prctl(PR_SET_PDEATHSIG, SIGTERM); /* a probe killed outright still stops its collector */
	x = fcntl(out_w, F_DUPFD, 10);
	y = fcntl(ctl_r, F_DUPFD, 10);
	devnull = open("/dev/null", O_RDONLY);
	if (x < 0 || y < 0 || devnull < 0 || dup2(devnull, 0) < 0 || dup2(2, 1) < 0 ||
	    dup2(x, 3) < 0 || dup2(y, 4) < 0)
		_exit(127);
	closefrom(5);
	signal(SIGPIPE, SIG_DFL);
	execvp(a->v[0], (char *const *)a->v);
	err = errno;
	/* one line naming it and why, with write(2) only (between fork and exec) */
	put_stderr(msg);
	put_stderr(a->v[0]);
	put_stderr(": ");
	put_stderr(strerrordesc_np(err));
	put_stderr("\n");
	_exit(127);
}

/* DIR/mcpwitness-probe-PID-gG.mcpt, or .1.mcpt, .2.mcpt... when the same generation is
 * scoped again after its collector ended (the server exited). Never overwrites. */
static int open_trace_file(struct probe_gen *g)
{
	for (int i = 0; i < 100; i++) {
		char suffix[16] = "";

		if (i)
			snprintf(suffix, sizeof(suffix), ".%d", i);
		snprintf(g->path, sizeof(g->path), "%s/mcpwitness-probe-%d-g%lld%s.mcpt",
			 g->probe->opts.dir, (int)getpid(), g->generation, suffix);
		g->file_fd =
			open(g->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (g->file_fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	p_err("failed to create trace %s: %s", g->path, strerror(errno));
	return -errno;
}

static int spawn(struct probe_gen *g)
{
	int out[2], ctl[2], in[2];
	struct argv_buf a;

	collector_argv(g, &a);
	if (pipe2(out, O_CLOEXEC) || pipe2(ctl, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) {
		p_err("failed to make pipes for the collector: %s", strerror(errno));
		return -errno;
	}
	g->collector = fork();
	if (g->collector < 0) {
		p_err("failed to start the collector: %s", strerror(errno));
		return -errno;
	}
	if (g->collector == 0)
		exec_collector(&a, out[1], ctl[0]);
	close(out[1]);
	close(ctl[0]);
	g->out_r = out[0];
	g->ctl_w = ctl[1];
	g->pipe_r = in[0];
	g->pipe_w = in[1];
	return 0;
}

static struct probe_gen *gen_new(struct probe *p, long long pgid, long long generation)
{
	struct probe_gen *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->probe = p;
	g->pgid = pgid;
	g->generation = generation;
	g->collector = -1;
	g->ctl_w = g->out_r = g->file_fd = g->pipe_r = g->pipe_w = -1;
	g->key = p->have_key ? &p->key : NULL;
	return g;
}

static void gen_free(struct probe_gen *g)
{
	int *fds[] = {&g->ctl_w, &g->out_r, &g->file_fd, &g->pipe_r, &g->pipe_w};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	probe_gen_forget(g);
	free(g);
}

struct probe_gen *probe_gen_start(struct probe *p, long long pgid, long long generation)
{
	struct probe_gen *g = gen_new(p, pgid, generation);
	int err;

	if (!g) {
		p_err("failed to start recording: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	err = open_trace_file(g);
	if (!err)
		err = spawn(g);
	if (!err && pthread_create(&g->tee, NULL, tee_main, g) == 0) {
		if (pthread_create(&g->reader, NULL, reader_main, g) == 0) {
			g->threads = true;
			return g;
		}
		close(g->out_r); /* ends the tee thread */
		g->out_r = -1;
		pthread_join(g->tee, NULL);
	}
	if (g->collector > 0) {
		kill(g->collector, SIGTERM);
		waitpid(g->collector, NULL, 0);
	}
	if (g->file_fd >= 0)
		unlink(g->path);
	gen_free(g);
	errno = err ? -err : EAGAIN;
	return NULL;
}

int probe_gen_send(struct probe_gen *g, const char *line, size_t len)
{
	if (g->ctl_w < 0)
		return -EPIPE;
	return mcpt_write_all(g->ctl_w, line, len);
}

/* Waits for the collector to exit, at most ms; true when it did. */
static bool reap(pid_t pid, int ms, int *status)
{
	struct timespec ts = {0, 20 * 1000000};

	for (int waited = 0; waited <= ms; waited += 20) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void probe_gen_stop(struct probe_gen *g)
{
	struct stat st;
	int status = 0;

	if (!g)
		return;
	if (g->collector > 0) {
		kill(g->collector, SIGTERM); /* attach mode: stop recording, FINAL seal */
		if (!reap(g->collector, STOP_WAIT_MS, &status)) {
			p_err("the collector did not stop in time: killing it (no FINAL seal)");
			kill(g->collector, SIGKILL);
			waitpid(g->collector, &status, 0);
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			p_err("the collector for process group %lld exited with status %d", g->pgid,
			      WEXITSTATUS(status));
	}
	if (g->ctl_w >= 0) {
		close(g->ctl_w);
		g->ctl_w = -1;
	}
	if (g->threads) { /* the collector's end closed the trace pipe: both threads finish */
		pthread_join(g->tee, NULL);
		pthread_join(g->reader, NULL);
	}
	if (g->file_fd >= 0 && fstat(g->file_fd, &st) == 0 && st.st_size == 0)
		unlink(g->path); /* the collector wrote nothing: no trace to leave behind */
	gen_free(g);
}
