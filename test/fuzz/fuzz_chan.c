/*
 * fuzz_chan.c - libFuzzer target of the call model: an input is a sequence of records, each
 * one byte of kind, two bytes of length (little endian) and that many bytes:
 *   kind & 3 == 0, 1   a StdioFrame read / written, at the direction's running offset moved by
 *                      (kind >> 3) & 3: 0 in place, 1 back (overlap), 2 forward (a hole), 3 far
 *                      back (a duplicate); kind & 4: the first chunk of a write
 *   kind & 3 == 2      a gap record of len bytes (no data follows)
 *   kind & 3 == 3      a control line (a Mark) when the bytes start with '{', else a fork and an
 *                      exec of a child whose argv are the bytes
 * Then the model is resolved and an open, a connect and the exec are attributed at several
 * moments. Nothing may crash, leak or read out of bounds.
 */
#include <stdint.h>
#include <string.h>

#include "attribute.h"
#include "events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	struct callmodel *cm;
	uint64_t off[2], ts, seq;
	uint32_t next_pid;
};

static void frame(struct fz *z, int dir, uint8_t kind, const uint8_t *p, size_t n)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;
	uint64_t off = z->off[dir];

	switch ((kind >> 3) & 3) {
	case 1:
		off = off > n / 2 ? off - n / 2 : 0;
		break;
	case 2:
		off += 1 + (kind >> 5);
		break;
	case 3:
		off = off > 4 * n ? off - 4 * n : 0;
		break;
	default:
		break;
	}
	f.ts = z->ts;
	f.dir = dir ? MCPT__STDIO_FRAME__DIR__WRITE : MCPT__STDIO_FRAME__DIR__READ;
	f.stream_offset = off;
	f.data = (ProtobufCBinaryData){n, (uint8_t *)p};
	f.chunk = kind & 4 ? 0 : 1;
	callmodel__stdio(z->cm, &f, z->seq);
	if (off + n > z->off[dir])
		z->off[dir] = off + n;
}

static void gap(struct fz *z, uint8_t kind, uint64_t len)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;
	int dir = (kind >> 2) & 1;

	f.ts = z->ts;
	f.dir = dir ? MCPT__STDIO_FRAME__DIR__WRITE : MCPT__STDIO_FRAME__DIR__READ;
	f.stream_offset = z->off[dir];
	f.flags = MW_F_GAP;
	f.gap_len = len;
	callmodel__stdio(z->cm, &f, z->seq);
	z->off[dir] += len;
}

static void event(struct fz *z, Mcpt__Event *e, struct attribution *a)
{
	struct ev_view v;

	e->seq = ++z->seq;
	e->ts = e->ts ? e->ts : z->ts;
	if (!e->tid)
		e->tid = e->pid;
	event_decode(&v, e);
	if (a)
		callmodel__attribute(z->cm, &v, a);
	else
		callmodel__event(z->cm, &v);
}

static void spawn(struct fz *z, const uint8_t *p, size_t n)
{
	Mcpt__Event f = MCPT__EVENT__INIT, x = MCPT__EVENT__INIT;
	uint32_t child = z->next_pid++;
	int64_t args[3] = {child, child, (int64_t)child * 10};

	f.op = MCPT__OP__OP_FORK;
	f.pid = n && p[0] & 1 ? 100 + (p[0] >> 1) % 4 : 100;
	f.pstart = f.pid == 100 ? 1000 : (uint64_t)f.pid * 10;
	f.args = args;
	f.n_args = 3;
	event(z, &f, NULL);
	x.op = MCPT__OP__OP_EXEC;
	x.pid = child;
	x.pstart = (uint64_t)child * 10;
	x.path = (ProtobufCBinaryData){7, (uint8_t *)"/bin/sh"};
	x.data = (ProtobufCBinaryData){n, (uint8_t *)p};
	event(z, &x, NULL);
}

static void control(struct fz *z, const uint8_t *p, size_t n)
{
	Mcpt__Mark m = MCPT__MARK__INIT;

	m.ts = z->ts;
	m.source = MCPT__MARK__SOURCE__CONTROL;
	m.raw = (ProtobufCBinaryData){n, (uint8_t *)p};
	callmodel__mark(z->cm, &m, z->seq);
}

static void probe(struct fz *z, uint64_t ts, uint32_t pid, const uint8_t *p, size_t n)
{
	static const uint8_t sa[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
	Mcpt__Event o = MCPT__EVENT__INIT, c = MCPT__EVENT__INIT;
	struct attribution a;

	o.op = MCPT__OP__OP_OPENAT;
	o.pid = pid;
	o.pstart = pid == 100 ? 1000 : (uint64_t)pid * 10;
	o.ts = ts;
	o.path = o.abs_path = (ProtobufCBinaryData){n, (uint8_t *)p};
	event(z, &o, &a);
	c.op = MCPT__OP__OP_CONNECT;
	c.pid = pid;
	c.pstart = o.pstart;
	c.ts = ts;
	c.data = (ProtobufCBinaryData){16, (uint8_t *)sa};
	event(z, &c, &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct callmodel_opts o = {.cancel_grace_ns = 1000, .line_max = 4096};
	struct fz z = {.ts = 1, .next_pid = 200};
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	size_t i = 0, n;

	z.cm = callmodel__new(&o);
	if (!z.cm)
		return 0;
	t.pid = 100;
	t.pstart = 1000;
	t.home = (ProtobufCBinaryData){7, (uint8_t *)"/home/u"};
	h.target = &t;
	callmodel__header(z.cm, &h);
	while (i + 3 <= size) {
		uint8_t kind = data[i];

		n = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;
		i += 3;
		z.ts += 1000;
		if ((kind & 3) == 2) {
			gap(&z, kind, n);
			continue;
		}
		if (n > size - i)
			n = size - i;
		if ((kind & 3) < 2)
			frame(&z, kind & 1, kind, data + i, n);
		else if (n && data[i] == '{')
			control(&z, data + i, n);
		else
			spawn(&z, data + i, n);
		i += n;
	}
	if (callmodel__resolve(z.cm) == 0) {
		for (uint64_t ts = 0; ts <= z.ts + 2000; ts += 1 + z.ts / 8)
			for (uint32_t pid = 100; pid < z.next_pid && pid < 104; pid += 100)
				probe(&z, ts, pid, data, size < 64 ? size : 64);
		for (uint32_t pid = 200; pid < z.next_pid && pid < 208; pid++)
			probe(&z, z.ts, pid, data, size < 16 ? size : 16);
		callmodel__finish(z.cm);
	}
	callmodel__free(z.cm);
	return 0;
}
