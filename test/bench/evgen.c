/*
 * evgen.c - a paced event source for the collector's throughput benchmark: THREADS threads
 * each make RATE / THREADS cheap recorded syscalls per second for SECONDS seconds, then print
 * `RESULT evgen <achieved events per second> <events>` on stderr. Pacing is by batches of 32
 * against the monotonic clock, so a slow traced syscall lowers the achieved rate rather
 * than bunching events.
 *
 * KIND says which syscall: `open` (default), an openat of a missing absolute path (one file
 * record with its path, no directory walk); `bpf`, a bpf(-1, NULL, 0) refused at once (one
 * privilege-family record of integers: the cheapest recorded call, so the generator can offer
 * more than the open records allow on few cores).
 *
 * usage: evgen RATE SECONDS [THREADS [KIND]]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wl_common.h"

#define BATCH 32

struct gen {
	double rate; /* events per second for this thread */
	int bpf;     /* KIND bpf rather than open */
	uint64_t end_ns;
	uint64_t done;
	pthread_t th;
};

static void *gen_run(void *arg)
{
	struct gen *g = arg;
	uint64_t t0 = wl_now_ns(), now = t0;
	double ns_per_event = 1e9 / g->rate;

	while (now < g->end_ns) {
		uint64_t due = t0 + (uint64_t)((double)(g->done + BATCH) * ns_per_event);
		int i;

		for (i = 0; i < BATCH; i++) {
			if (g->bpf)
				syscall(SYS_bpf, -1, NULL, 0); /* EINVAL or EPERM */
			else
				openat(AT_FDCWD, "/nonexistent/mcpwitness-bench", O_RDONLY);
		}
		g->done += BATCH;
		now = wl_now_ns();
		if (due > now + 50000) {
			struct timespec ts = { 0, (long)(due - now) };

			nanosleep(&ts, NULL);
			now = wl_now_ns();
		} else {
			while (now < due)
				now = wl_now_ns();
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct gen g[16];
	double rate, secs;
	int threads, i, use_bpf;
	uint64_t t0, total = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: evgen RATE SECONDS [THREADS [open|bpf]]\n");
		return 2;
	}
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	threads = argc > 3 ? atoi(argv[3]) : 1;
	use_bpf = argc > 4 && strcmp(argv[4], "bpf") == 0;
	if (rate <= 0 || secs <= 0 || threads < 1 || threads > 16 ||
	    (argc > 4 && !use_bpf && strcmp(argv[4], "open") != 0)) {
		fprintf(stderr, "evgen: bad RATE, SECONDS, THREADS (1-16) or KIND (open, bpf)\n");
		return 2;
	}
	fprintf(stderr, "MWSTART\n"); /* bench.py samples the collector's CPU time from here */
	t0 = wl_now_ns();
	for (i = 0; i < threads; i++) {
		g[i] = (struct gen){ .rate = rate / threads, .bpf = use_bpf, .end_ns = t0 + (uint64_t)(secs * 1e9) };
		if (pthread_create(&g[i].th, NULL, gen_run, &g[i]))
			return 1;
	}
	for (i = 0; i < threads; i++) {
		pthread_join(g[i].th, NULL);
		total += g[i].done;
	}
	fprintf(stderr, "RESULT evgen %.0f %llu\n", (double)total * 1e9 / (double)(wl_now_ns() - t0),
		(unsigned long long)total);
	return 0;
}
