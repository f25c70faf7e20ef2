/*
 * tracefloor.c - what a process the collector does not track pays once syscall tracing is on, by
 * attach kind (issue 8: "measure tracepoint vs raw tracepoint"; the out-of-tree target's floor).
 *
 * Loads tracefloor.bpf.c and, for each repetition, runs two loops in this (untracked) process under
 * every attach kind in turn, the order rotated each repetition so that a drift of the machine
 * spreads over all kinds:
 *   none          nothing attached
 *   btf-empty     tp_btf sys_enter + sys_exit programs that return at once: the kernel's
 *                 syscall-tracing slow path and the BPF run wrapper, nothing of ours
 *   btf-filter    tp_btf sys_enter + sys_exit running the collector's membership test (the
 *                 dispatchers of bpf/dispatch.bpf.c as an untracked task meets them)
 *   raw-filter    the same test as raw_tp programs
 *   tp-filter     the same test as classic per-syscall tracepoints on openat and close only
 *   hybrid        a classic tracepoint on openat's entry + the tp_btf sys_exit filter: entry
 *                 handlers per syscall, one exit dispatcher
 *   btf-ring      btf-empty whose exit program reserves a 96-byte ring slot and discards it:
 *                 against btf-empty, what one record's ring traffic costs a syscall
 * The loops: openat + close of one file (four syscall directions an iteration) and getppid
 * (two, and no tracepoint of its own). Each figure is the loop's CPU time per iteration
 * (CLOCK_THREAD_CPUTIME_ID: the kernel's and BPF's work on the loop's behalf); each ratio is
 * taken against the same repetition's "none" and summarised as median (min-max). A kind this
 * kernel cannot attach (e.g. no syscall trace events) is left out, with a line on stderr.
 *
 * usage: tracefloor [--reps N] [--iters N] [--json]   (root: loads BPF, may mount tracefs)
 *        tracefloor --hold KIND
 *   N repetitions (default 7); N openat+close iterations a loop (default 100 000; getppid runs
 *   ten times as many); --json prints one JSON object instead of the table. --hold attaches one
 *   kind, prints MWREADY on stdout and keeps it attached until its standard input ends or it
 *   gets SIGTERM or SIGINT: bench.py's overhead section runs the workloads outside it, so that
 *   each out-of-tree ratio has the mechanism's floor (btf-empty) beside it, same repetitions.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mw_tracefloor.skel.h"
#include "tracefs.h"

enum { N_KINDS = 7, N_LOOPS = 2, MAX_REPS = 101, MAX_PROGS = 4 };

struct kind {
	const char *name;
	const char *progs[MAX_PROGS]; /* program names, NULL-terminated when fewer */
	bool drained; /* fills the ring: only the loops, which drain it, can run it */
};

static const struct kind kinds[N_KINDS] = {
	{ "none", { NULL } },
	{ "btf-empty", { "floor_btf_empty_enter", "floor_btf_empty_exit" } },
	{ "btf-filter", { "floor_btf_enter", "floor_btf_exit" } },
	{ "raw-filter", { "floor_raw_enter", "floor_raw_exit" } },
	{ "tp-filter", { "floor_tp_enter_openat", "floor_tp_exit_openat", "floor_tp_enter_close",
			 "floor_tp_exit_close" } },
	{ "hybrid", { "floor_tp_enter_openat", "floor_btf_exit" } },
	{ "btf-ring", { "floor_btf_empty_enter", "floor_btf_ring_exit" }, true },
};

static const char *const loop_names[N_LOOPS] = { "openat+close", "getppid" };
static const int loop_dirs[N_LOOPS] = { 4, 2 }; /* syscall directions per iteration */

static char file_path[] = "/tmp/mw-floor-XXXXXX";

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The ring btf-ring reserves in: its slots are discarded, but they stay in the ring until a
 * consumer moves past them, so the loops drain it between chunks (untimed); otherwise the ring
 * would fill and btf-ring would time failed reservations. */
static struct ring_buffer *ring;
#define CHUNK 4096 /* iterations between drains: far fewer slots than the ring holds */

static int skip_slot(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

/* One loop, warmed up by a tenth of its iterations: CPU ns per iteration, or < 0 on error. */
static double run_loop(int loop, long iters)
{
	long warm = iters / 10 + 1, i;
	double t0 = 0, spent = 0;

	for (i = -warm; i < iters; i++) {
		if (i >= 0 && i % CHUNK == 0) {
			if (i > 0)
				spent += thread_cpu_ns() - t0;
			if (ring_buffer__consume(ring) < 0) {
				fprintf(stderr, "tracefloor: cannot drain the ring\n");
				return -1;
			}
			t0 = thread_cpu_ns();
		}
		if (loop == 0) {
			int fd = openat(AT_FDCWD, file_path, O_RDONLY | O_CLOEXEC);

			if (fd < 0) {
				fprintf(stderr, "tracefloor: open %s: %s\n", file_path, strerror(errno));
				return -1;
			}
			close(fd);
		} else {
			(void)getppid();
		}
	}
	spent += thread_cpu_ns() - t0;
	return spent / (double)iters;
}

static int attach_kind(struct mw_tracefloor *skel, const struct kind *k, struct bpf_link **links)
{
	for (int i = 0; i < MAX_PROGS && k->progs[i]; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(skel->obj, k->progs[i]);

		links[i] = p ? bpf_program__attach(p) : NULL;
		if (!links[i]) {
			fprintf(stderr, "tracefloor: cannot attach %s for %s: %s\n", k->progs[i], k->name,
				p ? strerror(errno) : "no such program");
			return -1;
		}
	}
	return 0;
}

static void detach_all(struct bpf_link **links)
{
	for (int i = 0; i < MAX_PROGS; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct summary {
	double med, min, max;
};

static struct summary summarise(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (struct summary){ n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1] };
}

static volatile sig_atomic_t hold_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/* --hold: the kind attached until stdin ends or SIGTERM/SIGINT; 0 once detached cleanly. */
static int hold_kind(struct mw_tracefloor *skel, const struct kind *k, struct bpf_link **links)
{
	struct sigaction sa = {.sa_handler = on_stop_signal}; /* no SA_RESTART: read() returns */
	char buf[256];
	ssize_t n;

	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL)) {
		fprintf(stderr, "tracefloor: sigaction: %s\n", strerror(errno));
		return -1;
	}
	if (attach_kind(skel, k, links))
		return -1;
	if (printf("MWREADY %s\n", k->name) < 0 || fflush(stdout)) {
		fprintf(stderr, "tracefloor: cannot write to stdout: %s\n", strerror(errno));
		return -1;
	}
	while (!hold_stop) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "tracefloor: read stdin: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A kind --hold can keep: one with programs (not none) and no ring to drain. */
static const struct kind *kind_by_name(const char *name)
{
	for (int k = 1; k < N_KINDS; k++)
		if (!strcmp(kinds[k].name, name) && !kinds[k].drained)
			return &kinds[k];
	fprintf(stderr, "tracefloor: --hold wants one of");
	for (int k = 1; k < N_KINDS; k++)
		if (!kinds[k].drained)
			fprintf(stderr, " %s", kinds[k].name);
	fprintf(stderr, ", not '%s'\n", name);
	exit(2);
}

static long parse_count(const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > max) {
		fprintf(stderr, "tracefloor: %s wants a count from 1 to %ld, not '%s'\n", opt, max, s);
		exit(2);
	}
	return v;
}

static bool bpf_stats_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v != 0;
}

static void print_results(double ns[N_KINDS][N_LOOPS][MAX_REPS], const bool *skipped, int reps,
			  long iters[N_LOOPS], bool json)
{
	struct summary s[N_KINDS][N_LOOPS], r[N_KINDS][N_LOOPS];
	double tmp[MAX_REPS];

	for (int k = 0; k < N_KINDS; k++)
		for (int l = 0; l < N_LOOPS && !skipped[k]; l++) {
			for (int i = 0; i < reps; i++)
				tmp[i] = ns[k][l][i] / ns[0][l][i];
			r[k][l] = summarise(tmp, reps);
			memcpy(tmp, ns[k][l], sizeof(double) * (size_t)reps);
			s[k][l] = summarise(tmp, reps);
		}
	if (json) {
		printf("{\"reps\": %d, \"iterations\": {\"openat+close\": %ld, \"getppid\": %ld}, "
		       "\"kinds\": [",
		       reps, iters[0], iters[1]);
		for (int k = 0; k < N_KINDS; k++) {
			printf("%s{\"kind\": \"%s\"", k ? ", " : "", kinds[k].name);
			if (skipped[k])
				printf(", \"skipped\": true");
			for (int l = 0; l < N_LOOPS && !skipped[k]; l++)
				printf(", \"%s\": {\"ns\": %.1f, \"ratio\": %.4f, \"min\": %.4f, "
				       "\"max\": %.4f, \"ns_per_direction\": %.1f}",
				       loop_names[l], s[k][l].med, r[k][l].med, r[k][l].min,
				       r[k][l].max, (s[k][l].med - s[0][l].med) / loop_dirs[l]);
			printf("}");
		}
		printf("]}\n");
		return;
	}
	printf("tracefloor: %d repetitions, openat+close x %ld, getppid x %ld; CPU ns per iteration "
	       "(median), ratio to none (median, min-max), added ns per syscall direction\n",
	       reps, iters[0], iters[1]);
	for (int k = 0; k < N_KINDS; k++) {
		printf("%-10s%s", kinds[k].name, skipped[k] ? "  left out: cannot attach here" : "");
		for (int l = 0; l < N_LOOPS && !skipped[k]; l++)
			printf("  %s %7.1f ns %.3fx (%.3f-%.3f) %+6.1f ns/dir", loop_names[l],
			       s[k][l].med, r[k][l].med, r[k][l].min, r[k][l].max,
			       (s[k][l].med - s[0][l].med) / loop_dirs[l]);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static double ns[N_KINDS][N_LOOPS][MAX_REPS];
	struct bpf_link *links[MAX_PROGS] = { NULL };
	long iters[N_LOOPS] = { 100000, 1000000 };
	struct mw_tracefloor *skel = NULL;
	const struct kind *hold = NULL;
	bool json = false, mounted = false, skipped[N_KINDS] = { false };
	int reps = 7, fd, status = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = (int)parse_count("--reps", argv[++i], MAX_REPS);
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters[0] = parse_count("--iters", argv[++i], 100000000);
			iters[1] = 10 * iters[0];
		} else if (!strcmp(argv[i], "--hold") && i + 1 < argc) {
			hold = kind_by_name(argv[++i]);
		} else {
			fprintf(stderr, "usage: tracefloor [--reps N] [--iters N] [--json]\n"
					"       tracefloor --hold KIND\n");
			return 2;
		}
	}
	if (bpf_stats_on())
		fprintf(stderr, "tracefloor: warning: kernel.bpf_stats_enabled=1 adds clock reads to "
				"every program run\n");
	if (!hold) { /* the openat loop's file; --hold runs no loop */
		fd = mkstemp(file_path);
		if (fd < 0) {
			fprintf(stderr, "tracefloor: cannot create %s: %s\n", file_path,
				strerror(errno));
			return 1;
		}
		close(fd);
	}
	log_set_level(LOG_WARN);
	log_route_libbpf();
	if (tracefs_ensure(&mounted))
		goto out;
	skel = mw_tracefloor__open_and_load();
	if (!skel) {
		fprintf(stderr, "tracefloor: cannot load the BPF programs: %s\n", strerror(errno));
		goto out;
	}
	ring = ring_buffer__new(bpf_map__fd(skel->maps.events), skip_slot, NULL, NULL);
	if (!ring) {
		fprintf(stderr, "tracefloor: cannot map the ring: %s\n", strerror(errno));
		goto out;
	}
	if (hold) {
		status = hold_kind(skel, hold, links) ? 1 : 0;
		goto out;
	}
	for (int rep = 0; rep < reps; rep++)
		for (int j = 0; j < N_KINDS; j++) {
			int k = (j + rep) % N_KINDS;

			if (skipped[k])
				continue;
			if (attach_kind(skel, &kinds[k], links)) {
				/* a kind this kernel lacks is left out; one that stops attaching is
				 * an error */
				if (rep > 0)
					goto out;
				fprintf(stderr, "tracefloor: leaving out %s\n", kinds[k].name);
				skipped[k] = true;
				detach_all(links);
				continue;
			}
			for (int l = 0; l < N_LOOPS; l++) {
				ns[k][l][rep] = run_loop(l, iters[l]);
				if (ns[k][l][rep] < 0)
					goto out;
			}
			detach_all(links);
		}
	print_results(ns, skipped, reps, iters, json);
	status = 0;
out:
	detach_all(links);
	ring_buffer__free(ring);
	mw_tracefloor__destroy(skel);
	tracefs_release(mounted);
	if (!hold)
		unlink(file_path);
	return status;
}
