/*
 * synth_trace.c - synthetic signed traces for tests (see synth_trace.h).
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth_trace.h"

static uint64_t fake_monotonic(void *ctx)
{
	(void)ctx;
	return 4000000000ull;
}

static void fake_sample(void *ctx, Mcpt__ClockSample *out)
{
	(void)ctx;
	out->realtime_ns = 1700000000000000000ull; /* 2023-11-14T22:13:20Z */
	out->boottime_before_ns = 5000000000ull;
	out->boottime_after_ns = 5000000000ull;
	out->monotonic_ns = 4000000000ull;
	out->ntp_synced = 1;
	out->esterror_us = 0;
}

static const struct mcpt_clock fake_clock = {fake_monotonic, fake_sample, NULL};
static const uint8_t trace_id[16] = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
				     0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0};

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
}

static void make_keys(struct synth *s)
{
	char keyid[17], err[256];

	snprintf(s->dir, sizeof(s->dir), "/tmp/mw-synth-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(s->dir));
	ck_assert_msg(mcpt_key_generate(s->dir, keyid, err, sizeof(err)) == 0, "%s", err);
	snprintf(s->key, sizeof(s->key), "%s/signing.key", s->dir);
	snprintf(s->pub, sizeof(s->pub), "%s/signing.pub", s->dir);
	s->signer = mcpt_signer_load(s->key, err, sizeof(err));
	ck_assert_msg(s->signer, "%s", err);
}

void synth_begin(struct synth *s, const char *name)
{
	static ProtobufCBinaryData argv[2];
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	Mcpt__Kernel k = MCPT__KERNEL__INIT;
	Mcpt__ClockSample c = MCPT__CLOCK_SAMPLE__INIT;
	struct mcpt_writer_opts o = {.clock = &fake_clock, .trace_id = trace_id};

	if (!s->signer)
		make_keys(s);
	snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, name);
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(s->fd, 0);
	argv[0] = bin("node");
	argv[1] = bin("server.js");
	t.argv = argv;
	t.n_argv = 2;
	t.exe = bin("/usr/bin/node");
	t.pid = SYNTH_PID;
	t.pstart = SYNTH_PSTART;
	t.cwd = bin("/work");
	t.uid = t.gid = 1000;
	t.user = bin("u");
	t.home = bin("/home/u");
	t.tmp = bin("/tmp");
	k.sysname = bin("Linux");
	k.release = bin("6.1.0-test");
	k.machine = bin("x86_64");
	fake_sample(NULL, &c);
	h.kernel = &k;
	h.target = &t;
	h.clock = &c;
	h.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	s->w = mcpt_writer__new(s->fd, &h, s->signer, &o);
	ck_assert_ptr_nonnull(s->w);
	s->seq = 0;
	s->ts = 5000001000ull;
}

void synth_event(struct synth *s, Mcpt__Event *e)
{
	if (!e->seq)
		e->seq = ++s->seq;
	if (!e->ts)
		e->ts = s->ts += 1000;
	if (!e->uid)
		e->uid = e->gid = 1000;
	if (s->bend) {
		size_t len = mcpt__event__get_packed_size(e);
		uint8_t *body = malloc(len);

		ck_assert_ptr_nonnull(body);
		mcpt__event__pack(e, body);
		s->bend(body, len);
		s->bend = NULL;
		ck_assert_int_eq(mcpt_writer__append_raw(s->w, MCPT_T_EVENT, body, len, e->ts), 0);
		free(body);
		return;
	}
	ck_assert_int_eq(mcpt_writer__append(s->w, MCPT_T_EVENT, &e->base, e->ts), 0);
}

void synth_exec(struct synth *s, uint32_t pid, uint64_t pstart, const char *path, const char *argv,
		size_t argv_len)
{
	Mcpt__Event e = MCPT__EVENT__INIT;

	e.op = MCPT__OP__OP_EXEC;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.path = bin(path);
	e.data = (ProtobufCBinaryData){argv_len, (uint8_t *)argv};
	synth_event(s, &e);
}

void synth_fork(struct synth *s, uint32_t pid, uint64_t pstart, uint32_t child, uint64_t cpstart)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {child, child, (int64_t)cpstart};

	e.op = MCPT__OP__OP_FORK;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.args = args;
	e.n_args = 3;
	synth_event(s, &e);
}

void synth_open(struct synth *s, uint32_t pid, uint64_t pstart, const char *path, const char *abs,
		int64_t flags, int64_t ret)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, flags, 0644};

	e.op = MCPT__OP__OP_OPENAT;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.ret = ret;
	e.path = bin(path);
	if (abs)
		e.abs_path = bin(abs);
	if (ret >= 0)
		e.opened_path = bin(abs ? abs : path);
	e.args = args;
	e.n_args = 3;
	synth_event(s, &e);
}

void synth_connect(struct synth *s, uint32_t pid, uint64_t pstart, const uint8_t *sa, size_t len,
		   int64_t ret, uint32_t flags)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {5, (int64_t)len};

	e.op = MCPT__OP__OP_CONNECT;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.ret = ret;
	e.flags = flags;
	e.data = (ProtobufCBinaryData){len, (uint8_t *)sa};
	e.args = args;
	e.n_args = 2;
	synth_event(s, &e);
}

void synth_exit(struct synth *s, uint32_t pid, uint64_t pstart, int64_t status)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {status, 1};

	e.op = MCPT__OP__OP_EXIT;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.args = args;
	e.n_args = 2;
	synth_event(s, &e);
}

void synth_stdio(struct synth *s, int read, uint64_t offset, const char *data, uint64_t ts)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;

	f.ts = ts ? ts : (s->ts += 1000);
	f.pid = f.tid = SYNTH_PID;
	f.fd = read ? 0 : 1;
	f.dir = read ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.stream_offset = offset;
	f.data = bin(data);
	f.orig_len = (uint32_t)strlen(data);
	f.last = 1;
	f.seq = ++s->seq;
	ck_assert_int_eq(mcpt_writer__append(s->w, MCPT_T_STDIO, &f.base, f.ts), 0);
}

void synth_mark(struct synth *s, const char *raw, uint64_t ts)
{
	Mcpt__Mark m = MCPT__MARK__INIT;

	m.ts = ts ? ts : (s->ts += 1000);
	m.source = MCPT__MARK__SOURCE__CONTROL;
	m.raw = bin(raw);
	ck_assert_int_eq(mcpt_writer__append(s->w, MCPT_T_MARK, &m.base, m.ts), 0);
}

void synth_at(struct synth *s, uint64_t ts)
{
	s->ts = ts;
}

void synth_finish(struct synth *s)
{
	ck_assert_int_eq(mcpt_writer__finish(s->w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(s->w);
	s->w = NULL;
	close(s->fd);
	s->fd = -1;
}

void synth_cleanup(struct synth *s)
{
	char cmd[160];

	mcpt_signer_free(s->signer);
	s->signer = NULL;
	if (s->dir[0] && strncmp(s->dir, "/tmp/mw-synth-", 14) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
		ck_assert_int_eq(system(cmd), 0);
	}
}

char *synth_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

void synth_spew(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}
