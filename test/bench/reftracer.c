/*
 * reftracer.c - issue 8's yardstick, the "minimal libbpf tracer" (classic tracepoints, an
 * in-kernel tree filter, a 16 MiB ring buffer drained in batches), run on this machine so that
 * mcpwitness's overhead sits beside the design its targets were set against instead of beside
 * ratios measured elsewhere. The programs are reftracer.bpf.c; each record goes to the output
 * file as its header and the bytes it carries (no encoding, no signature).
 *
 * usage: reftracer [-o FILE] -- CMD [ARG...]   trace CMD and its descendants until CMD exits;
 *                                              exits with CMD's status
 *        reftracer [-o FILE] --pid PID         trace PID's tree (a process outside the loops
 *                                              measured) until SIGTERM or SIGINT; prints
 *                                              "MWREADY" on stdout once every program is attached
 * FILE defaults to /dev/null. At the end one line on stderr: "reftracer: N events, B bytes,
 * L lost, O opens" (O: the openat records among the N). Root: loads BPF and may mount tracefs.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mw_reftracer.skel.h"
#include "tracefs.h"

#define REF_DATA_MAX 256
#define REF_OPENAT   4 /* enum ref_kind in reftracer.bpf.c */

struct ref_event { /* as in reftracer.bpf.c */
	unsigned long long ts;
	unsigned int pid, tid, kind;
	int ret;
	unsigned int len, pad;
	char data[REF_DATA_MAX];
};

struct sink {
	FILE *out;
	unsigned long long events, bytes, opens;
	bool failed;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct sink *s = ctx;
	const struct ref_event *e = data;
	size_t n = offsetof(struct ref_event, data);

	if (size < n)
		return 0;
	n += e->len <= REF_DATA_MAX ? e->len : 0;
	if (fwrite(e, 1, n, s->out) != n)
		s->failed = true;
	s->events++;
	s->opens += e->kind == REF_OPENAT;
	s->bytes += n;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: reftracer [-o FILE] -- CMD [ARG...]\n"
			"       reftracer [-o FILE] --pid PID\n");
	return 2;
}

/* Starts CMD stopped at a pipe until its pid is in the tracked set. */
static pid_t spawn(char **cmd, int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		close(p[0]);
		execvp(cmd[0], cmd);
		fprintf(stderr, "reftracer: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

static unsigned long long lost_count(struct mw_reftracer *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long total = 0, *v;
	unsigned int zero = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (v && bpf_map__lookup_elem(skel->maps.ref_lost, &zero, sizeof(zero), v,
				      sizeof(*v) * (size_t)ncpu, 0) == 0)
		for (int i = 0; i < ncpu; i++)
			total += v[i];
	free(v);
	return total;
}

int main(int argc, char **argv)
{
	const char *out_path = "/dev/null";
	char **cmd = NULL;
	long seed = 0;
	struct mw_reftracer *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct sink sink = {0};
	bool mounted = false;
	pid_t child = -1;
	int go_fd = -1, status = 1, wstatus = 0, i;
	unsigned char one = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strcmp(argv[i], "--pid") && i + 1 < argc) {
			char *end;

			seed = strtol(argv[++i], &end, 10);
			if (*end || seed <= 0)
				return usage();
		} else if (!strcmp(argv[i], "--") && i + 1 < argc) {
			cmd = &argv[i + 1];
			break;
		} else {
			return usage();
		}
	}
	if (!cmd == !seed)
		return usage();
	sink.out = fopen(out_path, "w");
	if (!sink.out) {
		fprintf(stderr, "reftracer: cannot write %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	setvbuf(sink.out, NULL, _IOFBF, 1 << 20);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	log_set_level(getenv("REF_DEBUG") ? LOG_DEBUG : LOG_WARN);
	log_route_libbpf();
	if (tracefs_ensure(&mounted))
		goto out;
	skel = mw_reftracer__open_and_load();
	if (!skel) {
		fprintf(stderr, "reftracer: cannot load the BPF programs: %s\n", strerror(errno));
		goto out;
	}
	if (mw_reftracer__attach(skel)) {
		fprintf(stderr, "reftracer: cannot attach: %s\n", strerror(errno));
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.ref_events), on_event, &sink, NULL);
	if (!rb) {
		fprintf(stderr, "reftracer: cannot open the ring buffer: %s\n", strerror(errno));
		goto out;
	}
	if (cmd) {
		child = spawn(cmd, &go_fd);
		if (child < 0) {
			fprintf(stderr, "reftracer: cannot start %s: %s\n", cmd[0],
				strerror(errno));
			goto out;
		}
		seed = child;
	}
	{
		unsigned int key = (unsigned int)seed;

		if (bpf_map__update_elem(skel->maps.ref_tracked, &key, sizeof(key), &one,
					 sizeof(one), BPF_ANY)) {
			fprintf(stderr, "reftracer: cannot track %ld: %s\n", seed, strerror(errno));
			goto out;
		}
	}
	if (cmd) {
		if (write(go_fd, "g", 1) != 1) {
			fprintf(stderr, "reftracer: cannot start %s: %s\n", cmd[0],
				strerror(errno));
			goto out;
		}
		close(go_fd);
		go_fd = -1;
	} else {
		printf("MWREADY\n");
		fflush(stdout);
	}
	/* a batch every 50 ms, or sooner when the programs force a wake-up */
	while (!stop_requested) {
		int n = ring_buffer__poll(rb, 50);

		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "reftracer: ring buffer: %s\n", strerror(-n));
			goto out;
		}
		if (child > 0) {
			pid_t w = waitpid(child, &wstatus, WNOHANG);

			if (w == child) {
				child = -1;
				break;
			}
		}
	}
	ring_buffer__consume(rb);
	if (child > 0) {
		fprintf(stderr, "reftracer: stopped before %s ended\n", cmd[0]);
		goto out;
	}
	if (fflush(sink.out) || sink.failed) {
		fprintf(stderr, "reftracer: cannot write %s\n", out_path);
		goto out;
	}
	fprintf(stderr, "reftracer: %llu events, %llu bytes, %llu lost, %llu opens\n", sink.events,
		sink.bytes, lost_count(skel), sink.opens);
	status = cmd ? (WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus)) : 0;
out:
	if (go_fd >= 0)
		close(go_fd);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	ring_buffer__free(rb);
	mw_reftracer__destroy(skel);
	tracefs_release(mounted);
	fclose(sink.out);
	return status;
}
