/*
 * fuzz_seeds.c - writes the seed corpus of the trace fuzzers into DIR: small real traces made
 * by the library's writer with a fake clock and the test key (seed 0x01 x 32), so the corpus
 * is deterministic and needs no committed binaries: a complete trace with every record type,
 * a multi-segment one with small chunks, one without FINAL, an unsigned one, a minimal one,
 * three written with the value and/or task table (PathDef and TaskDef records, Event
 * references);
 * and excerpts (export --record) of records of three of them, for fuzz_excerpt.
 * Usage: fuzz_seeds DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct fake {
	uint64_t now;
};

static uint64_t mono(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static void sample(void *ctx, Mcpt__ClockSample *cs)
{
	uint64_t now = ((struct fake *)ctx)->now;

	cs->realtime_ns = 1700000000000000000ull + now;
	cs->boottime_before_ns = now + 1000;
	cs->boottime_after_ns = now + 2000;
	cs->monotonic_ns = now;
	cs->ntp_synced = 1;
}

static int records(struct mcpt_writer *w, struct fake *clk, int n, int all_types)
{
	Mcpt__Event ev = MCPT__EVENT__INIT;
	Mcpt__StdioFrame sf = MCPT__STDIO_FRAME__INIT;
	Mcpt__Mark mk = MCPT__MARK__INIT;
	Mcpt__ProcInfo pi = MCPT__PROC_INFO__INIT;
	int64_t args[2] = {-1, 42}, fork_args[4] = {4243, 4243, 71234567890124, 17};
	int err = 0;

	ev.op = MCPT__OP__OP_OPENAT;
	ev.n_args = 2;
	ev.args = args;
	for (int i = 0; i < n && !err; i++) {
		clk->now += 1000000;
		ev.seq = (uint64_t)i;
		ev.ts = clk->now;
		/* repeated paths: a writer with the value table defines and references them */
		ev.path = (ProtobufCBinaryData){11,
						(uint8_t *)(i % 3 ? "/etc/passwd" : "/etc/shadow")};
		ev.opened_path = i % 2 ? ev.path : (ProtobufCBinaryData){0, NULL};
		ev.path_ref = ev.opened_path_ref = 0; /* set by event_refs for the previous one */
		/* two tasks in turn: a writer with the task table defines and references them */
		ev.pid = ev.tid = 4242 + (uint32_t)(i % 2);
		ev.pstart = 71234567890123ull + (uint64_t)(i % 2);
		ev.uid = ev.gid = 1000;
		ev.task_ref = 0;
		ev.ts_delta = 0; /* a writer with ts_delta writes the chunk's later events so */
		ev.child_task = false;
		/* every fifth a fork of the second task: with fork tasks, it defines it */
		ev.op = i % 5 == 4 ? MCPT__OP__OP_FORK : MCPT__OP__OP_OPENAT;
		ev.args = ev.op == MCPT__OP__OP_FORK ? fork_args : args;
		ev.n_args = ev.op == MCPT__OP__OP_FORK ? 4 : 2;
		ev.ret = ev.op == MCPT__OP__OP_FORK ? 4243 : 0;
		err = mcpt_writer__event_refs(w, &ev);
		if (!err)
			err = mcpt_writer__append(w, MCPT_T_EVENT, &ev.base, clk->now);
	}
	if (!all_types || err)
		return err;
	sf.data = (ProtobufCBinaryData){3, (uint8_t *)"{}\n"};
	sf.dir = MCPT__STDIO_FRAME__DIR__WRITE;
	mk.phase = MCPT__MARK__PHASE__END;
	mk.tool = (ProtobufCBinaryData){4, (uint8_t *)"exec"};
	pi.kind = MCPT__PROC_INFO__KIND__TARGET;
	if ((err = mcpt_writer__append(w, MCPT_T_STDIO, &sf.base, 0)) ||
	    (err = mcpt_writer__append(w, MCPT_T_MARK, &mk.base, 0)) ||
	    (err = mcpt_writer__append(w, MCPT_T_PROC, &pi.base, 0)) ||
	    (err = mcpt_writer__append_raw(w, 1500, (const uint8_t *)"\x08\x01", 2, 0)) ||
	    (err = mcpt_writer__set_loss(w, MCPT__LOSS_SOURCE__PERF_LOST, 2)))
		return err;
	clk->now += 20000000;
	return mcpt_writer__seal(w, MCPT_SEAL_MARK);
}

static int seed(const char *dir, const char *name, int n, uint32_t seg_max, int sign, int final,
		int all_types, unsigned tables)
{
	static const uint8_t zero_seed[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	Mcpt__Header h = MCPT__HEADER__INIT;
	/* with ts_delta, a boot time of hours: deltas are shorter than such a ts */
	struct fake clk = {tables & 4 ? 71234567890123ull : 1000000};
	struct mcpt_clock c = {mono, sample, &clk};
	uint8_t tid[16] = {7};
	struct mcpt_writer_opts o = {.clock = &c,
				     .trace_id = tid,
				     .max_segment_records = seg_max,
				     .chunk_records = 4,
				     .chunk_bytes = 1024,
				     .value_table = tables & 1,
				     .task_table = tables & 2,
				     .ts_delta = tables & 4,
				     .fork_task = tables & 8};
	struct mcpt_signer *s = sign ? mcpt_signer_from_seed(zero_seed) : NULL;
	struct mcpt_writer *w = NULL;
	char path[4096];
	int fd, err;

	h.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (sign && !s))
		goto fail;
	w = mcpt_writer__new(fd, &h, s, &o);
	if (!w)
		goto fail;
	err = records(w, &clk, n, all_types);
	clk.now += 1000000;
	if (!err)
		err = final ? mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN)
			    : mcpt_writer__seal(w, 0);
	if (err) {
		errno = -err;
		goto fail;
	}
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	return close(fd);
fail:
	fprintf(stderr, "fuzz_seeds: %s: %s\n", path, strerror(errno));
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* An excerpt of record `index` of the seed trace DIR/trace, as DIR/name (for fuzz_excerpt). */
static int excerpt(const char *dir, const char *trace, uint64_t index, const char *name)
{
	static const uint8_t key_seed[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	struct mcpt_signer *s = mcpt_signer_from_seed(key_seed);
	struct mcpt_pubkey key;
	struct mcpt_verify_opts o = {.key = &key, .allow_unsigned = true};
	char path[4096], err[256] = "";
	uint8_t *x = NULL;
	size_t n = 0;
	int fd, out, rc = -1;

	if (!s)
		return -1;
	mcpt_signer_pubkey(s, &key);
	mcpt_signer_free(s);
	snprintf(path, sizeof(path), "%s/%s", dir, trace);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && mcpt_excerpt_export(fd, index, &o, &x, &n, err, sizeof(err)) == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		rc = out >= 0 && write(out, x, n) == (ssize_t)n ? 0 : -1;
		if (out >= 0 && close(out))
			rc = -1;
	}
	if (rc)
		fprintf(stderr, "fuzz_seeds: excerpt %s: %s\n", name,
			err[0] ? err : "write failed");
	free(x);
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds DIR\n");
		return 2;
	}
	/* tables: 1 values (PathDef), 2 tasks (TaskDef), 4 ts_delta, 8 fork tasks (child_task) */
	if (seed(argv[1], "complete", 6, 4096, 1, 1, 1, 0) ||
	    seed(argv[1], "multi", 60, 16, 1, 1, 0, 0) ||
	    seed(argv[1], "nofinal", 10, 4, 1, 0, 0, 0) ||
	    seed(argv[1], "unsigned", 5, 3, 0, 1, 1, 0) ||
	    seed(argv[1], "minimal", 0, 4096, 1, 1, 0, 0) ||
	    seed(argv[1], "valtab", 24, 4096, 1, 1, 1, 3) ||
	    seed(argv[1], "valtab-multi", 40, 8, 1, 1, 0, 1) ||
	    seed(argv[1], "tasktab", 24, 4096, 1, 1, 0, 2) ||
	    seed(argv[1], "tsdelta", 24, 4096, 1, 1, 1, 7) ||
	    seed(argv[1], "forktask", 24, 4096, 1, 1, 0, 15))
		return 1;
	if (excerpt(argv[1], "valtab", 3, "excerpt-valtab") ||
	    excerpt(argv[1], "tasktab", 4, "excerpt-tasktab") ||
	    excerpt(argv[1], "forktask", 7, "excerpt-forktask") ||
	    excerpt(argv[1], "complete", 3, "excerpt-complete") ||
	    excerpt(argv[1], "multi", 30, "excerpt-multi") ||
	    excerpt(argv[1], "unsigned", 2, "excerpt-unsigned"))
		return 1;
	return 0;
}
