/*
 * wl_mcp.c - an MCP client that times a burst of tools/call requests to a stdio server.
 *
 * Spawns COMMAND with its stdin and stdout on pipes (COMMAND may be the server itself, or
 * mcpwitness-collect / strace / bpftrace wrapping it), performs the initialize handshake
 * untimed, then sends CALLS `tools/call` requests of the tool `read_files` one after the
 * other, each waiting for its response, and prints `RESULT mcp <ns per call> <calls>` on
 * stderr. The server (mcp_server.py) opens and reads a few files per call.
 *
 * usage: wl_mcp CALLS -- COMMAND [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

struct peer {
	FILE *to, *from;
	pid_t pid;
	char *line;
	size_t cap;
};

static int spawn(struct peer *p, char **argv)
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = fdopen(in[1], "w");
	p->from = fdopen(out[0], "r");
	return p->to && p->from ? 0 : -errno;
}

/* Sends one request and reads lines until the response with the same id. */
static int call(struct peer *p, long id, const char *method, const char *params)
{
	char want[64];

	fprintf(p->to, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", id,
		method, params);
	if (fflush(p->to))
		return -errno;
	snprintf(want, sizeof(want), "\"id\":%ld,", id);
	while (getline(&p->line, &p->cap, p->from) > 0) {
		if (strstr(p->line, want))
			return strstr(p->line, "\"error\"") ? -EPROTO : 0;
	}
	return -EPIPE;
}

struct burst {
	struct peer *p;
	long id;
};

static int one_call(void *ctx)
{
	struct burst *b = ctx;

	return call(b->p, ++b->id, "tools/call",
		    "{\"name\":\"read_files\",\"arguments\":{\"count\":3}}");
}

int main(int argc, char **argv)
{
	long n = wl_iterations(argc, argv, "CALLS -- COMMAND [ARG...]");
	struct peer p = { 0 };
	struct burst b = { .p = &p, .id = 1 };
	int status, rc;

	if (argc < 4 || strcmp(argv[2], "--"))
		return 2;
	signal(SIGPIPE, SIG_IGN);
	alarm(900); /* a server that stops answering ends the run instead of hanging it */
	if (spawn(&p, argv + 3) ||
	    call(&p, 1, "initialize",
		 "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		 "\"clientInfo\":{\"name\":\"wl_mcp\",\"version\":\"1\"}}")) {
		fprintf(stderr, "wl_mcp: the server did not answer initialize\n");
		return 1;
	}
	fprintf(p.to, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	rc = wl_run("mcp", n, one_call, &b);
	fclose(p.to);
	fclose(p.from);
	free(p.line);
	if (waitpid(p.pid, &status, 0) != p.pid)
		return 1;
	return rc;
}
