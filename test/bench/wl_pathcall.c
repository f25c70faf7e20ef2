/*
 * wl_pathcall.c - one checked call a loop, of the kinds whose argument the entry program keeps
 * (the tamper check) besides the opens: `chmod PATH` (a file call: path as passed and resolved,
 * its first bytes compared with the entry's) or `sendto` (a datagram to a 127.0.0.1 socket of
 * its own, never read, so the kernel drops what overflows its queue: the destination address
 * compared with the entry's).
 *
 * usage: wl_pathcall ITERATIONS chmod PATH | wl_pathcall ITERATIONS sendto
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wl_common.h"

struct udp {
	int fd;
	struct sockaddr_in to;
};

static int one_chmod(void *ctx)
{
	return chmod((const char *)ctx, 0644) ? -errno : 0;
}

static int one_sendto(void *ctx)
{
	const struct udp *u = ctx;

	if (sendto(u->fd, "x", 1, 0, (const struct sockaddr *)&u->to, sizeof(u->to)) < 0)
		return -errno;
	return 0;
}

/* A receiving socket on 127.0.0.1 (an ephemeral port) and a sending one aimed at it. */
static int udp_open(struct udp *u)
{
	socklen_t len = sizeof(u->to);
	int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&u->to, 0, sizeof(u->to));
	u->to.sin_family = AF_INET;
	u->to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || u->fd < 0 || bind(rx, (const struct sockaddr *)&u->to, sizeof(u->to)) ||
	    getsockname(rx, (struct sockaddr *)&u->to, &len))
		return -1;
	return 0; /* rx stays open, unread, until exit */
}

int main(int argc, char **argv)
{
	static const char usage[] = "ITERATIONS chmod PATH | ITERATIONS sendto";
	long n = wl_iterations(argc, argv, usage);
	struct udp u;

	if (argc == 4 && !strcmp(argv[2], "chmod"))
		return wl_run("chmod", n, one_chmod, argv[3]);
	if (argc == 3 && !strcmp(argv[2], "sendto")) {
		if (udp_open(&u)) {
			perror("wl_pathcall: a UDP socket pair on 127.0.0.1");
			return 1;
		}
		return wl_run("sendto", n, one_sendto, &u);
	}
	fprintf(stderr, "usage: %s %s\n", argv[0], usage);
	return 2;
}
