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
 * more than the open records allow on few cores); `files`, an openat (and close) of DIR/f00
 * to DIR/f63 in turn (bench.py makes them): a record with the path as passed and the file
 * opened, walked from the new fd, whose value the trace defines once a chunk of 64 records,
 * so a definition per event (the MCP-like mix of gentrace.c has 0.85); `uring`, batches of
 * BATCH - 1 no-op io_uring requests, each batch submitted and reaped by one io_uring_enter: a
 * record per request (io_uring_submit, evasion family) and one for the enter, so BATCH records
 * a syscall. On two cores the syscalls themselves cap the other kinds below a million records a
 * second (each pays the kernel's entry and exit, the syscall-tracing path and two dispatcher
 * runs); this one measures the collector, not the syscall path, at rates the others cannot
 * offer. Each thread has a ring of its own.
 *
 * usage: evgen RATE SECONDS [THREADS [open | bpf | uring | files DIR]]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wl_common.h"

#define BATCH 32
#define FILES 64

enum kind { K_OPEN, K_BPF, K_URING, K_FILES };

static char files[FILES][4096];

/* K_URING: a thread's ring, mapped from the io_uring fd (no liburing: the bench builds with
 * the packages the project already installs). */
struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail;
	struct io_uring_sqe *sqes;
};

struct gen {
	double rate; /* events per second for this thread */
	enum kind kind;
	unsigned next; /* K_FILES: the next of files[] */
	uint64_t end_ns;
	uint64_t done;
	struct uring ring; /* K_URING */
	pthread_t th;
};

/* Sets up a ring of BATCH entries. 0, or -1 with a message. */
static int uring_open(struct uring *u)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	unsigned char *sq, *cq;

	memset(&p, 0, sizeof(p));
	u->fd = (int)syscall(SYS_io_uring_setup, BATCH, &p);
	if (u->fd < 0) {
		fprintf(stderr, "evgen: io_uring_setup: %s\n", strerror(errno));
		return -1;
	}
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		fprintf(stderr, "evgen: io_uring without IORING_FEAT_SINGLE_MMAP (Linux < 5.4)\n");
		return -1;
	}
	sq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_SQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || u->sqes == MAP_FAILED) {
		fprintf(stderr, "evgen: mmap of the io_uring: %s\n", strerror(errno));
		return -1;
	}
	cq = sq;
	u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned *)(sq + p.sq_off.array);
	u->cq_head = (unsigned *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	return 0;
}

/* Submits n no-op requests and waits for their completions, which it consumes: one
 * io_uring_enter. */
static void uring_nops(struct uring *u, unsigned n)
{
	unsigned tail = *u->sq_tail, i;

	for (i = 0; i < n; i++, tail++) {
		unsigned idx = tail & *u->sq_mask;

		memset(&u->sqes[idx], 0, sizeof(u->sqes[idx]));
		u->sqes[idx].opcode = IORING_OP_NOP;
		u->sqes[idx].user_data = i;
		u->sq_array[idx] = idx;
	}
	__atomic_store_n(u->sq_tail, tail, __ATOMIC_RELEASE);
	syscall(SYS_io_uring_enter, u->fd, n, n, IORING_ENTER_GETEVENTS, NULL, 0);
	__atomic_store_n(u->cq_head, __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void *gen_run(void *arg)
{
	struct gen *g = arg;
	uint64_t t0 = wl_now_ns(), now = t0;
	double ns_per_event = 1e9 / g->rate;

	while (now < g->end_ns) {
		uint64_t due = t0 + (uint64_t)((double)(g->done + BATCH) * ns_per_event);
		int i;

		for (i = 0; i < BATCH; i++) {
			if (g->kind == K_URING) {
				uring_nops(&g->ring, BATCH - 1); /* BATCH records */
				break;
			} else if (g->kind == K_BPF) {
				syscall(SYS_bpf, -1, NULL, 0); /* EINVAL or EPERM */
			} else if (g->kind == K_OPEN) {
				openat(AT_FDCWD, "/nonexistent/mcpwitness-bench", O_RDONLY);
			} else {
				int fd = openat(AT_FDCWD, files[g->next++ % FILES], O_RDONLY);

				if (fd >= 0)
					close(fd);
			}
		}
		g->done += BATCH;
		now = wl_now_ns();
		if (due > now + 50000) {
			struct timespec ts = {0, (long)(due - now)};

			nanosleep(&ts, NULL);
			now = wl_now_ns();
		} else {
			while (now < due)
				now = wl_now_ns();
		}
	}
	return NULL;
}

/* K_FILES: the names of the files to open. 0, or -1 with a message. */
static int name_files(const char *dir)
{
	for (int i = 0; i < FILES; i++) {
		if (snprintf(files[i], sizeof(files[i]), "%s/f%02d", dir, i) >=
		    (int)sizeof(files[i])) {
			fprintf(stderr, "evgen: DIR too long\n");
			return -1;
		}
		if (access(files[i], R_OK)) {
			fprintf(stderr, "evgen: %s: %s\n", files[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = {
		[K_OPEN] = "open", [K_BPF] = "bpf", [K_URING] = "uring", [K_FILES] = "files"};
	struct gen g[16];
	double rate, secs;
	int threads, i, kind = K_OPEN;
	uint64_t t0, total = 0;

	if (argc < 3) {
		fprintf(stderr,
			"usage: evgen RATE SECONDS [THREADS [open | bpf | uring | files DIR]]\n");
		return 2;
	}
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	threads = argc > 3 ? atoi(argv[3]) : 1;
	for (kind = argc > 4 ? K_FILES : K_OPEN; argc > 4 && kind >= K_OPEN; kind--)
		if (strcmp(argv[4], kinds[kind]) == 0)
			break; /* kind < K_OPEN: none of them */
	if (rate <= 0 || secs <= 0 || threads < 1 || threads > 16 || kind < K_OPEN ||
	    (kind == K_FILES) != (argc == 6) || argc > 6) {
		fprintf(stderr, "evgen: bad RATE, SECONDS, THREADS (1-16) or KIND (open, bpf, "
				"uring, files DIR)\n");
		return 2;
	}
	if (kind == K_FILES && name_files(argv[5]))
		return 2;
	memset(g, 0, sizeof(g));
	for (i = 0; i < threads; i++) /* rings set up before the clock starts */
		if (kind == K_URING && uring_open(&g[i].ring))
			return 2;
	fprintf(stderr, "MWSTART\n"); /* bench.py samples the collector's CPU time from here */
	t0 = wl_now_ns();
	for (i = 0; i < threads; i++) {
		struct uring ring = g[i].ring;

		g[i] = (struct gen){.rate = rate / threads,
				    .kind = (enum kind)kind,
				    .next = (unsigned)i * FILES / (unsigned)threads,
				    .end_ns = t0 + (uint64_t)(secs * 1e9),
				    .ring = ring};
		if (pthread_create(&g[i].th, NULL, gen_run, &g[i]))
			return 1;
	}
	for (i = 0; i < threads; i++) {
		pthread_join(g[i].th, NULL);
		total += g[i].done;
	}
	fprintf(stderr, "RESULT evgen %.0f %llu\n",
		(double)total * 1e9 / (double)(wl_now_ns() - t0), (unsigned long long)total);
	return 0;
}
