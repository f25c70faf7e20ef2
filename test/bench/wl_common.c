/*
 * wl_common.c - the timed loop of the benchmark workloads (see wl_common.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "wl_common.h"

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

long wl_iterations(int argc, char **argv, const char *usage)
{
	char *end;
	long n;

	if (argc < 2) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		exit(2);
	}
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno || *end || n <= 0) {
		fprintf(stderr, "%s: bad iteration count %s\n", argv[0], argv[1]);
		exit(2);
	}
	return n;
}

/* CPU time of this process and of its waited-for children: it counts the kernel's (and BPF's)
 * work on the workload's behalf but not the time spent waiting for a CPU on a busy machine. */
static uint64_t cpu_ns(void)
{
	struct rusage self, kids;
	uint64_t us;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	us = (uint64_t)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			kids.ru_stime.tv_sec) * 1000000ull +
	     (uint64_t)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			kids.ru_stime.tv_usec);
	return us * 1000;
}

int wl_run(const char *name, long iterations, wl_iter_fn fn, void *ctx)
{
	long warm = iterations / 10 + 1, i;
	uint64_t t0, t1, c0, c1;
	int err;

	for (i = 0; i < warm; i++) {
		err = fn(ctx);
		if (err)
			goto fail;
	}
	c0 = cpu_ns();
	t0 = wl_now_ns();
	for (i = 0; i < iterations; i++) {
		err = fn(ctx);
		if (err)
			goto fail;
	}
	t1 = wl_now_ns();
	c1 = cpu_ns();
	fprintf(stderr, "RESULT %s %.1f %ld %.1f\n", name, (double)(t1 - t0) / (double)iterations,
		iterations, (double)(c1 - c0) / (double)iterations);
	return 0;
fail:
	fprintf(stderr, "%s: iteration %ld failed: %s\n", name, i, strerror(-err));
	return 1;
}
