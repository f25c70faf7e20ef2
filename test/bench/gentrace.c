/*
 * gentrace.c - writes a large synthetic signed trace for the analyzer benchmark, with the real
 * trace writer (proto/), the same code path as the collector's, so verify, dump and analyze
 * read exactly what a recording would give them.
 *
 * The mix imitates an MCP server handling calls: each call is a request read and a response
 * written on the channel (StdioFrame), and in between file opens (absolute and relative paths
 * from a working set of 512 names, about 1 in 8 failing), a connect now and then, and every
 * 64th call a child process (fork, exec with argv, opens, exit). PROCS bounds the processes
 * alive at once; the trace's length grows with EVENTS alone, so peak memory of the analyzer
 * can be compared across lengths.
 *
 * Events go through mcpt_writer__event_refs with the value and task tables and timestamp
 * deltas on, as the collector writes them (collector/session.c); --no-tables writes every
 * value inline with absolute timestamps, as traces of format features 0 do.
 *
 * usage: gentrace [--no-tables] OUT SIGNING_KEY EVENTS
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpt.h"

#define SERVER_PID 4242

struct gen {
	struct mcpt_writer *w;
	uint64_t seq, ts, events, target;
	uint64_t pstart;
	long calls;
	bool tables;
	char path[256], abs[256];
};

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

static void fail(const char *what)
{
	fprintf(stderr, "gentrace: failed to %s\n", what);
	exit(1);
}

static void event(struct gen *g, Mcpt__Event *e)
{
	e->seq = ++g->seq;
	g->ts += 1500;
	e->ts = g->ts;
	e->uid = e->gid = 1000;
	if (g->tables && mcpt_writer__event_refs(g->w, e))
		fail("reference repeated values");
	if (mcpt_writer__append(g->w, MCPT_T_EVENT, &e->base, g->ts))
		fail("append an event");
	g->events++;
}

static void stdio_frame(struct gen *g, bool read, const char *line)
{
	static uint64_t off[2];
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;

	f.seq = ++g->seq;
	f.ts = g->ts += 1500;
	f.pid = f.tid = SERVER_PID;
	f.fd = read ? 0 : 1;
	f.dir = read ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.data = bin(line);
	f.stream_offset = off[read];
	off[read] += f.data.len;
	f.orig_len = (uint32_t)f.data.len;
	f.last = true;
	if (mcpt_writer__append(g->w, MCPT_T_STDIO, &f.base, f.ts))
		fail("append a frame");
	g->events++;
}

static void open_one(struct gen *g, uint32_t pid, uint64_t pstart, uint64_t k)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = { -100, O_RDONLY | O_CLOEXEC, 0 };
	bool rel = k % 3 == 0, bad = k % 8 == 7;

	snprintf(g->abs, sizeof(g->abs), "/home/u/project/src/module%03u/file%02u.py",
		 (unsigned)(k % 64), (unsigned)(k % 8));
	snprintf(g->path, sizeof(g->path), "src/module%03u/file%02u.py", (unsigned)(k % 64),
		 (unsigned)(k % 8));
	e.op = MCPT__OP__OP_OPENAT;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.ret = bad ? -2 : 5;
	e.path = bin(rel ? g->path : g->abs);
	if (rel)
		e.abs_path = bin(g->abs);
	if (!bad) {
		e.opened_path = bin(g->abs);
		e.dev = 0x10301;
		e.ino = 100000 + k % 512;
	}
	e.args = args;
	e.n_args = 2;
	event(g, &e);
}

static void connect_one(struct gen *g)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(443) };
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4] = { 7, sizeof(sa), 1, AF_INET };

	sa.sin_addr.s_addr = htonl(0x7f000001);
	e.op = MCPT__OP__OP_CONNECT;
	e.pid = e.tid = SERVER_PID;
	e.pstart = g->pstart;
	e.data = (ProtobufCBinaryData){ sizeof(sa), (uint8_t *)&sa };
	e.data2 = e.data;
	e.args = args;
	e.n_args = 4;
	event(g, &e);
}

static void child(struct gen *g, uint32_t pid)
{
	static const char argv[] = "git\0status\0--porcelain";
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t fargs[3] = { pid, pid, (int64_t)g->ts + 1 };
	int64_t xargs[2] = { 0, 1 };
	uint64_t pstart = g->ts + 1, k;

	e.op = MCPT__OP__OP_FORK;
	e.pid = e.tid = SERVER_PID;
	e.pstart = g->pstart;
	e.ret = pid;
	e.args = fargs;
	e.n_args = 3;
	event(g, &e);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_EXEC;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.path = bin("/usr/bin/git");
	e.opened_path = e.path;
	e.data = (ProtobufCBinaryData){ sizeof(argv), (uint8_t *)argv };
	event(g, &e);
	for (k = 0; k < 8; k++)
		open_one(g, pid, pstart, k * 7);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_EXIT;
	e.pid = e.tid = pid;
	e.pstart = pstart;
	e.args = xargs;
	e.n_args = 2;
	event(g, &e);
}

static void one_call(struct gen *g)
{
	char line[256];
	long id = ++g->calls;
	uint64_t k;

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"read_files\",\"arguments\":{\"count\":12}}}\n", id);
	stdio_frame(g, true, line);
	for (k = 0; k < 12; k++)
		open_one(g, SERVER_PID, g->pstart, (uint64_t)id * 13 + k);
	if (id % 16 == 0)
		connect_one(g);
	if (id % 64 == 0)
		child(g, SERVER_PID + 1 + (uint32_t)(id / 64 % 30000));
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\","
		 "\"text\":\"4096 bytes\"}]}}\n", id);
	stdio_frame(g, false, line);
}

static void header(struct gen *g, int fd, struct mcpt_signer *signer)
{
	static ProtobufCBinaryData argv[2];
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	Mcpt__Kernel k = MCPT__KERNEL__INIT;
	struct mcpt_writer_opts o = { .fsync_seals = false, .value_table = g->tables,
				      .task_table = g->tables, .ts_delta = g->tables,
				      .fork_task = g->tables };

	argv[0] = bin("python3");
	argv[1] = bin("server.py");
	t.argv = argv;
	t.n_argv = 2;
	t.exe = bin("/usr/bin/python3.11");
	t.pid = SERVER_PID;
	t.pstart = g->pstart = 1000000000ull;
	t.cwd = bin("/home/u/project");
	t.uid = t.gid = 1000;
	t.user = bin("u");
	t.home = bin("/home/u");
	t.tmp = bin("/tmp");
	k.sysname = bin("Linux");
	k.release = bin("6.18.0-bench");
	k.machine = bin("x86_64");
	h.kernel = &k;
	h.target = &t;
	h.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	g->w = mcpt_writer__new(fd, &h, signer, &o);
	if (!g->w)
		fail("start the trace");
	g->ts = 2000000000ull;
}

int main(int argc, char **argv)
{
	struct gen g = { .tables = true };
	struct mcpt_signer *signer;
	char err[256];
	int fd;

	if (argc == 5 && !strcmp(argv[1], "--no-tables")) {
		g.tables = false;
		argv++;
		argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: gentrace [--no-tables] OUT SIGNING_KEY EVENTS\n");
		return 2;
	}
	g.target = strtoull(argv[3], NULL, 10);
	signer = mcpt_signer_load(argv[2], err, sizeof(err));
	if (!signer) {
		fprintf(stderr, "gentrace: %s\n", err);
		return 1;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("create the output");
	header(&g, fd, signer);
	while (g.events < g.target)
		one_call(&g);
	if (mcpt_writer__finish(g.w, MCPT__END_REASON__END_TARGET_EXITED))
		fail("finish the trace");
	mcpt_writer__free(g.w);
	mcpt_signer_free(signer);
	close(fd);
	printf("%llu events, %ld calls\n", (unsigned long long)g.events, g.calls);
	return 0;
}
