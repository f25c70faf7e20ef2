/*
 * calls_testlib.c - in-memory records for the call model suites (see calls_testlib.h).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "calls_testlib.h"
#include "events.h"

static uint64_t offsets[CHAN_DIRS];
static uint64_t seq;

uint64_t t_offset(enum chan_dir dir)
{
	return offsets[dir];
}

void t_reset_offsets(void)
{
	offsets[0] = offsets[1] = 0;
	seq = 0;
}

static struct callmodel *model(uint64_t grace_ns, size_t line_max, bool captured,
			       uint64_t attach_ts)
{
	struct callmodel_opts o = {.cancel_grace_ns = grace_ns, .line_max = line_max};
	struct callmodel *cm = callmodel__new(&o);
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	Mcpt__Collector c = MCPT__COLLECTOR__INIT;
	Mcpt__ClockSample clock = MCPT__CLOCK_SAMPLE__INIT;

	ck_assert_ptr_nonnull(cm);
	t.pid = T_SERVER;
	t.pstart = T_PSTART;
	t.home = (ProtobufCBinaryData){7, (uint8_t *)"/home/u"};
	t.attached = attach_ts != 0;
	clock.boottime_before_ns = clock.boottime_after_ns = attach_ts;
	c.stdio_capture = captured ? "full" : "off";
	h.target = &t;
	h.collector = &c;
	h.clock = attach_ts ? &clock : NULL;
	ck_assert_int_eq(callmodel__header(cm, &h), 0);
	t_reset_offsets();
	return cm;
}

struct callmodel *t_model(uint64_t grace_ns, size_t line_max, bool captured)
{
	return model(grace_ns, line_max, captured, 0);
}

struct callmodel *t_model_attached(uint64_t attach_ts)
{
	return model(0, 0, true, attach_ts);
}

void t_frame(struct callmodel *cm, enum chan_dir dir, uint64_t off, const char *data, size_t len,
	     uint64_t ts, uint32_t chunk)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;

	f.ts = ts;
	f.pid = f.tid = T_SERVER;
	f.dir = dir == CHAN_IN ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.stream_offset = off;
	f.data = (ProtobufCBinaryData){len, (uint8_t *)data};
	f.orig_len = (uint32_t)len;
	f.chunk = chunk;
	f.last = 1;
	ck_assert_int_eq(callmodel__stdio(cm, &f, ts / 1000), 0);
}

void t_send(struct callmodel *cm, enum chan_dir dir, const char *s, uint64_t ts)
{
	size_t n = strlen(s);

	t_frame(cm, dir, offsets[dir], s, n, ts, 0);
	offsets[dir] += n;
}

void t_gap(struct callmodel *cm, enum chan_dir dir, uint64_t off, uint64_t len, uint64_t ts)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;

	f.ts = ts;
	f.dir = dir == CHAN_IN ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.stream_offset = off;
	f.flags = MW_F_GAP;
	f.gap_len = len;
	ck_assert_int_eq(callmodel__stdio(cm, &f, ts / 1000), 0);
	if (off + len > offsets[dir])
		offsets[dir] = off + len;
}

void t_mark(struct callmodel *cm, const char *raw, uint64_t ts)
{
	Mcpt__Mark m = MCPT__MARK__INIT;

	m.ts = ts;
	m.source = MCPT__MARK__SOURCE__CONTROL;
	m.raw = (ProtobufCBinaryData){strlen(raw), (uint8_t *)raw};
	ck_assert_int_eq(callmodel__mark(cm, &m, ts / 1000), 0);
}

uint64_t t_pstart(uint32_t pid)
{
	return pid == T_SERVER ? T_PSTART : (uint64_t)pid * 10;
}

static void feed(struct callmodel *cm, Mcpt__Event *e, struct attribution *a)
{
	struct ev_view v;

	e->seq = ++seq;
	e->pstart = t_pstart(e->pid);
	if (!e->tid)
		e->tid = e->pid;
	event_decode(&v, e);
	if (a)
		callmodel__attribute(cm, &v, a);
	else
		ck_assert_int_eq(callmodel__event(cm, &v), 0);
}

void t_fork(struct callmodel *cm, uint32_t pid, uint32_t child, uint64_t ts, bool thread)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {child, child, (int64_t)t_pstart(child)};

	e.op = MCPT__OP__OP_FORK;
	e.pid = pid;
	e.ts = ts;
	e.args = args;
	e.n_args = 3;
	e.flags = thread ? MW_F_THREAD : 0;
	if (thread)
		args[2] = (int64_t)t_pstart(pid);
	feed(cm, &e, NULL);
}

void t_exec(struct callmodel *cm, uint32_t pid, const char *path, const char *argv, size_t argv_len,
	    uint64_t ts)
{
	Mcpt__Event e = MCPT__EVENT__INIT;

	e.op = MCPT__OP__OP_EXEC;
	e.pid = pid;
	e.ts = ts;
	e.path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	e.data = (ProtobufCBinaryData){argv_len, (uint8_t *)argv};
	feed(cm, &e, NULL);
}

void t_exit(struct callmodel *cm, uint32_t pid, uint64_t ts)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {0, 1};

	e.op = MCPT__OP__OP_EXIT;
	e.pid = pid;
	e.ts = ts;
	e.args = args;
	e.n_args = 2;
	feed(cm, &e, NULL);
}

void t_open(struct callmodel *cm, uint32_t pid, uint32_t tid, const char *path, uint64_t ts,
	    struct attribution *a)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 0, 0};

	e.op = MCPT__OP__OP_OPENAT;
	e.pid = pid;
	e.tid = tid;
	e.ts = ts;
	e.ret = 3;
	e.path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	e.abs_path = e.path;
	e.args = args;
	e.n_args = 3;
	feed(cm, &e, a);
}

void t_connect(struct callmodel *cm, uint32_t pid, const uint8_t sa[16], uint64_t ts,
	       struct attribution *a)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {5, 16};

	e.op = MCPT__OP__OP_CONNECT;
	e.pid = pid;
	e.ts = ts;
	e.data = (ProtobufCBinaryData){16, (uint8_t *)sa};
	e.args = args;
	e.n_args = 2;
	feed(cm, &e, a);
}

bool t_has_note(struct callmodel *cm, const char *needle)
{
	const struct call_note *n;

	for (size_t i = 0; (n = callset__note_at(callmodel__calls(cm), i)); i++)
		if (strstr(n->text, needle))
			return true;
	return false;
}

const struct call *t_call(struct callmodel *cm, size_t i)
{
	const struct call *c = callset__get(callmodel__calls(cm), i);

	ck_assert_msg(c, "no call %zu", i);
	return c;
}

size_t t_ncalls(struct callmodel *cm)
{
	return callset__count(callmodel__calls(cm));
}

const char *t_note(struct callmodel *cm, const char *needle)
{
	const struct call_note *n;
	struct callset *cs = callmodel__calls(cm);

	for (size_t i = 0; (n = callset__note_at(cs, i)); i++)
		if (strstr(n->text, needle))
			return n->text;
	for (size_t i = 0; (n = callset__note_at(cs, i)); i++)
		fprintf(stderr, "note: %s\n", n->text);
	ck_abort_msg("no note with \"%s\"", needle);
	return NULL;
}
