/*
 * wl_stdio.c - write-heavy stdio: one newline-terminated JSON-like line per write(2) to fd 1.
 * Launched by the collector, fd 1 is the MCP channel's stdout object, so every write is
 * captured (chan.bpf.c); elsewhere it measures what a write costs an untracked process.
 *
 * usage: wl_stdio ITERATIONS [LINE_BYTES]   (default 128)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wl_common.h"

struct line {
	char buf[65536];
	size_t len;
};

static int one_write(void *ctx)
{
	struct line *l = ctx;
	ssize_t n = write(1, l->buf, l->len);

	if (n < 0)
		return -errno;
	return (size_t)n == l->len ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	static struct line l;
	long n = wl_iterations(argc, argv, "ITERATIONS [LINE_BYTES]");
	size_t i;

	l.len = argc > 2 ? (size_t)atol(argv[2]) : 128;
	if (l.len > sizeof(l.buf))
		return 2;
	/* a valid notification, padded to LINE_BYTES: {"jsonrpc":"2.0","method":"x","params":"aaa"} */
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"";
	if (l.len < sizeof(head) + 3)
		return 2;
	memcpy(l.buf, head, sizeof(head) - 1);
	for (i = sizeof(head) - 1; i < l.len - 3; i++)
		l.buf[i] = (char)('a' + i % 26);
	memcpy(l.buf + l.len - 3, "\"}\n", 3);
	return wl_run("stdio", n, one_write, &l);
}
