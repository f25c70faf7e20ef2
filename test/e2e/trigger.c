/*
 * trigger.c - mw_trigger's main: runs each named step in a child of its own, and the modes that
 * are not steps (see trigger.h).
 *
 *   mw_trigger STEP...          each step in a forked child, one after the other
 *   mw_trigger flood P T N      P processes x T threads, N failing openat each (ring overflow)
 *   mw_trigger busy             an unrelated busy process: opens a file in a loop until killed
 *   mw_trigger hold             the attach-mode target (see trigger_net.c)
 *   mw_trigger swarm P C TOKEN [setsid]
 *                               P pausing children and C growing chains, with setsid each in
 *                               a session of its own (trigger_proc.c)
 *   mw_trigger exit0            exits 0 at once (an exec target)
 *
 * Exit status: 0 when every step ran, 1 for an unknown step, 3 when a step's setup failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trigger.h"

const char *trigger_self;

static void out_raw(struct out *o, const char *s, size_t n)
{
	if (o->n + n >= sizeof(o->buf))
		die("JSON line too long");
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

static void out_key(struct out *o, const char *key)
{
	if (!o->first)
		out_raw(o, ",", 1);
	o->first = 0;
	out_raw(o, "\"", 1);
	out_raw(o, key, strlen(key));
	out_raw(o, "\":", 2);
}

void out_begin(struct out *o, const char *step)
{
	o->n = 0;
	o->first = 1;
	out_raw(o, "{", 1);
	out_str(o, "step", step);
	out_int(o, "pid", getpid());
	out_int(o, "tid", gettid_());
}

void out_int(struct out *o, const char *key, long long v)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%lld", v);

	out_key(o, key);
	out_raw(o, num, (size_t)n);
}

void out_strn(struct out *o, const char *key, const char *s, size_t n)
{
	char esc[8];

	out_key(o, key);
	out_raw(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			out_raw(o, (const char *)&c, 1);
			continue;
		}
		snprintf(esc, sizeof(esc), "\\u%04x", c);
		out_raw(o, esc, 6);
	}
	out_raw(o, "\"", 1);
}

void out_str(struct out *o, const char *key, const char *s)
{
	out_strn(o, key, s, strlen(s));
}

long kret(long r)
{
	return r == -1 ? -errno : r;
}

void out_ret(struct out *o, const char *key, long r)
{
	out_int(o, key, kret(r));
}

void out_end(struct out *o)
{
	size_t off = 0;
	ssize_t w;

	out_raw(o, "}\n", 2);
	while (off < o->n) {
		w = write(1, o->buf + off, o->n - off);
		if (w <= 0)
			_exit(4);
		off += (size_t)w;
	}
}

void die(const char *what)
{
	fprintf(stderr, "mw_trigger: %s: %s\n", what, strerror(errno));
	_exit(3);
}

void must(int ok, const char *what)
{
	if (!ok)
		die(what);
}

pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pid_t spawn_pauser(void)
{
	pid_t pid = fork();

	must(pid >= 0, "fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

void reap(pid_t pid)
{
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	must(fd >= 0, path);
	close(fd);
}

static const struct step *find_step(const char *name)
{
	const struct step *tables[] = { proc_steps, file_steps, net_steps, priv_steps, uring_steps,
					 ns_steps };

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct step *s = tables[t]; s->name; s++)
			if (!strcmp(s->name, name))
				return s;
	return NULL;
}

/* Runs one step in a child and waits for it; returns the child's exit status. */
static int run_step(const struct step *s)
{
	struct out o;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		out_begin(&o, s->name);
		s->fn(&o);
		out_end(&o);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "mw_trigger: step %s failed (status %#x)\n", s->name, status);
		return 3;
	}
	return 0;
}

/* ---- flood: many tasks, each a tight loop of failing openat calls ------------------------ */

static long flood_iters;
static char flood_path[2049];

/* A relative path of 2 KiB that does not exist: each failing openat makes a ~4 KiB record (the
 * path as passed and its absolute form), so a 1 MiB ring holds a few hundred. */
static void *flood_thread(void *arg)
{
	(void)arg;
	for (long i = 0; i < flood_iters; i++)
		syscall(SYS_openat, AT_FDCWD, flood_path, O_RDONLY);
	return NULL;
}

static void flood_process(int threads)
{
	pthread_t t[64];
	int n = threads > 64 ? 64 : threads;

	for (int i = 1; i < n; i++)
		must(pthread_create(&t[i], NULL, flood_thread, NULL) == 0, "pthread_create");
	flood_thread(NULL);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
}

int mode_flood(int argc, char **argv)
{
	int procs, threads;
	pid_t pids[64];
	struct out o;

	if (argc != 3)
		return 1;
	procs = atoi(argv[0]);
	threads = atoi(argv[1]);
	flood_iters = atol(argv[2]);
	if (procs < 1 || procs > 64 || threads < 1)
		return 1;
	memset(flood_path, 'F', sizeof(flood_path) - 1);
	for (int i = 0; i < procs; i++) {
		pids[i] = fork();
		must(pids[i] >= 0, "fork");
		if (pids[i] == 0) {
			flood_process(threads);
			_exit(0);
		}
	}
	for (int i = 0; i < procs; i++)
		reap(pids[i]);
	out_begin(&o, "flood");
	out_int(&o, "calls", (long long)procs * threads * flood_iters);
	out_end(&o);
	return 0;
}

int mode_busy(void)
{
	struct out o;

	out_begin(&o, "busy");
	out_end(&o);
	for (;;) {
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc = 0;

	if (n <= 0)
		die("readlink /proc/self/exe");
	self[n] = 0;
	trigger_self = self;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: mw_trigger STEP... | flood P T N | busy | hold | "
				"swarm P C TOKEN [setsid] | exit0\n");
		return 1;
	}
	if (!strcmp(argv[1], "exit0"))
		return 0;
	if (!strcmp(argv[1], "flood"))
		return mode_flood(argc - 2, argv + 2);
	if (!strcmp(argv[1], "busy"))
		return mode_busy();
	if (!strcmp(argv[1], "hold"))
		return mode_hold();
	if (!strcmp(argv[1], "swarm"))
		return mode_swarm(argc - 2, argv + 2);
	for (int i = 1; i < argc; i++) {
		const struct step *s = find_step(argv[i]);

		if (!s) {
			fprintf(stderr, "mw_trigger: unknown step %s\n", argv[i]);
			return 1;
		}
		if (run_step(s))
			rc = 3;
	}
	return rc;
}
