/*
 * fuzz_analyze.c - libFuzzer target of the whole analyzer on what a hostile server controls:
 * the contents of a valid, signed trace. An input becomes a trace written by the real writer
 * (signed with a key made once per process), then `analyze` with the default policy (a report
 * format chosen by the input), `calls` and `dump` (text or JSON) run on it through the same
 * do_<verb> functions the binary calls; `policy learn` and `diff` too, where a failure is a
 * finding of its own (a baseline that does not compile, a trace that differs from itself).
 * The harness for the framing and the signatures is fuzz_verify; for the channel's
 * reassembly, fuzz_chan. Nothing may crash, leak or read out of bounds.
 *
 * Input: one byte of options (bits 0-1 the report format, bit 2 calls --json, bit 3 dump
 * --json, bit 4 `policy learn`, which compiles the baseline it wrote, bit 5 `diff` of the
 * trace against itself: each must exit 0), then records of one byte of kind, one of length
 * and that many bytes; each record moves the clock by 1 + (kind >> 5) microseconds:
 *   kind & 3 == 0   an Event: op (an index into the schema's ops), task (pid 100..103, and its
 *                   second thread when bit 2), ret (signed), flags, three args of two bytes
 *                   (signed), then NUL-separated path, opened path, data, path2, data2
 *   kind & 3 == 1   a StdioFrame, read when kind & 4 else written, at the direction's offset
 *   kind & 3 == 2   a control line (a Mark)
 *   kind & 3 == 3   by (kind >> 2) & 3: a fork of the server (child pid 104 + first byte % 4),
 *                   an exec (path, then NUL-separated argv), an exit (status: two bytes), or
 *                   a fork of the child's own child
 * The policy is the default one; other policies are fuzz_policy's. Seeds (seeds-analyze/): a
 * call that shells out, a call with events of every third op, marks around an open and a
 * cancellation, a read by a process whose program the trace never names (learn and diff). About
 * 20 inputs a second: compiling the default policy takes most of each (several times with bits
 * 4 and 5).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "mcpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"
#define PARTS  5

static char dir[] = "/tmp/mw-fuzz-analyze-XXXXXX";
static char key[64], pub[64], trace[64], baseline[64];
static struct mcpt_signer *signer;

static ProtobufCBinaryData bin(const void *p, size_t n)
{
	return (ProtobufCBinaryData){n, (uint8_t *)p};
}

static uint64_t fake_monotonic(void *ctx)
{
	(void)ctx;
	return 4000000000ull;
}

static void fake_sample(void *ctx, Mcpt__ClockSample *out)
{
	(void)ctx;
	out->realtime_ns = 1700000000000000000ull;
	out->boottime_before_ns = out->boottime_after_ns = 5000000000ull;
	out->monotonic_ns = 4000000000ull;
	out->ntp_synced = 1;
}

static const struct mcpt_clock fake_clock = {fake_monotonic, fake_sample, NULL};

static void cleanup(void)
{
	mcpt_signer_free(signer);
	unlink(key);
	unlink(pub);
	unlink(trace);
	unlink(baseline);
	rmdir(dir);
}

/* The key pair, once; the reports go to /dev/null (the sanitizers' to stderr). */
static void setup(void)
{
	char keyid[17], err[256];
	int null = open("/dev/null", O_WRONLY);

	if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || !mkdtemp(dir))
		abort();
	close(null);
	if (mcpt_key_generate(dir, keyid, err, sizeof(err)) != 0)
		abort();
	snprintf(key, sizeof(key), "%s/signing.key", dir);
	snprintf(pub, sizeof(pub), "%s/signing.pub", dir);
	snprintf(trace, sizeof(trace), "%s/t.mcpt", dir);
	snprintf(baseline, sizeof(baseline), "%s/baseline.yaml", dir);
	if (!(signer = mcpt_signer_load(key, err, sizeof(err))))
		abort();
	atexit(cleanup);
	log_set_level(LOG_QUIET);
}

struct gen {
	struct mcpt_writer *w;
	uint64_t ts, seq, off[2];
};

/* The NUL-separated parts of p[0..n), at most PARTS (the last takes the rest). */
static void split(const uint8_t *p, size_t n, ProtobufCBinaryData part[PARTS])
{
	int k = 0;

	memset(part, 0, PARTS * sizeof(*part));
	part[0].data = (uint8_t *)p;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == 0 && k < PARTS - 1) {
			part[++k].data = (uint8_t *)p + i + 1;
			continue;
		}
		part[k].len++;
	}
}

static uint32_t task_pid(uint8_t b)
{
	return 100 + (b & 3);
}

static uint64_t task_pstart(uint32_t pid)
{
	return 1000 + 10 * (uint64_t)pid;
}

static void event(struct gen *g, const uint8_t *p, size_t n)
{
	const ProtobufCEnumDescriptor *ops = &mcpt__op__descriptor;
	Mcpt__Event e = MCPT__EVENT__INIT;
	ProtobufCBinaryData part[PARTS];
	int64_t args[3];

	if (n < 10)
		return;
	e.op = ops->values[p[0] % ops->n_values].value;
	e.pid = task_pid(p[1]);
	e.tid = e.pid + (p[1] & 4 ? 1000 : 0);
	e.pstart = task_pstart(e.pid);
	e.ret = (int8_t)p[2];
	e.flags = p[3];
	for (int i = 0; i < 3; i++)
		args[i] = (int16_t)(p[4 + 2 * i] | p[5 + 2 * i] << 8);
	e.args = args;
	e.n_args = 3;
	split(p + 10, n - 10, part);
	e.path = part[0];
	e.abs_path = part[1];
	e.opened_path = part[1];
	e.data = part[2];
	e.path2 = part[3];
	e.data2 = part[4];
	e.seq = ++g->seq;
	e.ts = g->ts;
	e.uid = e.gid = 1000;
	mcpt_writer__append(g->w, MCPT_T_EVENT, &e.base, e.ts);
}

static void stdio(struct gen *g, int read, const uint8_t *p, size_t n)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;

	f.ts = g->ts;
	f.pid = f.tid = 100;
	f.fd = read ? 0 : 1;
	f.dir = read ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.stream_offset = g->off[read];
	g->off[read] += n;
	f.data = bin(p, n);
	f.orig_len = (uint32_t)n;
	f.last = 1;
	f.seq = ++g->seq;
	mcpt_writer__append(g->w, MCPT_T_STDIO, &f.base, f.ts);
}

static void mark(struct gen *g, const uint8_t *p, size_t n)
{
	Mcpt__Mark m = MCPT__MARK__INIT;

	m.ts = g->ts;
	m.source = MCPT__MARK__SOURCE__CONTROL;
	m.raw = bin(p, n);
	mcpt_writer__append(g->w, MCPT_T_MARK, &m.base, m.ts);
}

/* Forks, execs and exits, which build the process tree the rest is attributed through. */
static void lifecycle(struct gen *g, int what, const uint8_t *p, size_t n)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	uint32_t child = 104 + (n ? p[0] % 4 : 0);
	int64_t args[3];

	e.pid = e.tid = what == 3 ? child : 100;
	if (what == 0 || what == 3) { /* fork */
		child = what == 3 ? child + 4 : child;
		e.op = MCPT__OP__OP_FORK;
		args[0] = args[1] = child;
		args[2] = (int64_t)task_pstart(child);
		e.n_args = 3;
	} else if (what == 1) { /* exec in the child: the path, then its argv */
		const uint8_t *nul = n > 1 ? memchr(p + 1, 0, n - 1) : NULL;

		e.op = MCPT__OP__OP_EXEC;
		e.pid = e.tid = child;
		e.path = bin(n > 1 ? p + 1 : p, nul ? (size_t)(nul - p - 1) : n > 1 ? n - 1 : 0);
		if (nul)
			e.data = bin(nul + 1, (size_t)(p + n - nul - 1));
	} else { /* exit */
		e.op = MCPT__OP__OP_EXIT;
		e.pid = e.tid = child;
		args[0] = n > 2 ? (p[1] | p[2] << 8) : 0;
		args[1] = 1;
		e.n_args = 2;
	}
	e.pstart = task_pstart(e.pid);
	e.args = args;
	e.seq = ++g->seq;
	e.ts = g->ts;
	e.uid = e.gid = 1000;
	mcpt_writer__append(g->w, MCPT_T_EVENT, &e.base, e.ts);
}

/* The input as a signed trace in `trace`; false when the writer refused to start. */
static int write_trace(const uint8_t *data, size_t size)
{
	static const uint8_t trace_id[16] = {0x0f, 0x1e, 0x2d, 0x3c};
	static ProtobufCBinaryData argv[2];
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	Mcpt__Kernel k = MCPT__KERNEL__INIT;
	Mcpt__ClockSample c = MCPT__CLOCK_SAMPLE__INIT;
	struct mcpt_writer_opts o = {.clock = &fake_clock, .trace_id = trace_id};
	struct gen g = {.ts = 5000001000ull};
	int fd = open(trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	argv[0] = bin("node", 4);
	argv[1] = bin("server.js", 9);
	t.argv = argv;
	t.n_argv = 2;
	t.exe = bin("/usr/bin/node", 13);
	t.pid = 100;
	t.pstart = task_pstart(100);
	t.cwd = bin("/work", 5);
	t.uid = t.gid = 1000;
	t.user = bin("u", 1);
	t.home = bin("/home/u", 7);
	t.tmp = bin("/tmp", 4);
	k.sysname = bin("Linux", 5);
	k.release = bin("6.1.0-fuzz", 10);
	k.machine = bin("x86_64", 6);
	fake_sample(NULL, &c);
	h.kernel = &k;
	h.target = &t;
	h.clock = &c;
	h.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	if (!(g.w = mcpt_writer__new(fd, &h, signer, &o))) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i + 2 <= size;) {
		uint8_t kind = data[i];
		size_t n = data[i + 1];
		const uint8_t *p = data + i + 2;

		if (n > size - i - 2)
			n = size - i - 2;
		i += 2 + n;
		g.ts += 1000 * (1 + (kind >> 5));
		switch (kind & 3) {
		case 0:
			event(&g, p, n);
			break;
		case 1:
			stdio(&g, (kind & 4) != 0, p, n);
			break;
		case 2:
			mark(&g, p, n);
			break;
		default:
			lifecycle(&g, (kind >> 2) & 3, p, n);
		}
	}
	mcpt_writer__finish(g.w, MCPT__END_REASON__END_CLEAN);
	mcpt_writer__free(g.w);
	close(fd);
	return 1;
}

static int run(int (*verb)(int, char **), char **argv)
{
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	optind = 0; /* as cmd_select does */
	rc = verb(argc, argv);
	fflush(stdout);
	clearerr(stdout);
	return rc;
}

/* A baseline learned from the trace compiles after the default policy, whatever the trace
 * held (learn compiles what it wrote and fails otherwise); and a trace never differs from
 * itself. Either failing is a bug: abort, so the fuzzer keeps the input. */
static void learn_and_diff(bool learn, bool diff)
{
	if (learn) {
		if (run(do_policy, (char *[]){"policy", "learn", trace, "-o", baseline, "-p",
					      POLICY, "--pubkey", pub, NULL}) != 0)
			abort();
		unlink(baseline);
	}
	if (diff && run(do_diff, (char *[]){"diff", "--pubkey", pub, "-p", POLICY, trace, "--",
					    trace, NULL}) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = {"text", "json", "sarif", "html"};

	if (!signer)
		setup();
	if (size < 1 || !write_trace(data + 1, size - 1))
		return 0;
	run(do_analyze, (char *[]){"analyze", trace, "--pubkey", pub, "-p", POLICY, "-f",
				   (char *)formats[data[0] & 3], NULL});
	run(do_calls,
	    (char *[]){"calls", trace, "--pubkey", pub, data[0] & 4 ? "--json" : NULL, NULL});
	run(do_dump, (char *[]){"dump", trace, data[0] & 8 ? "--json" : NULL, NULL});
	learn_and_diff(data[0] & 16, data[0] & 32);
	return 0;
}
