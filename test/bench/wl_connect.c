/*
 * wl_connect.c - socket, connect to a 127.0.0.1 listener (bench_listener), close, in a loop:
 * the network family (address as passed and the socket's peer read back at exit). Loopback
 * TIME_WAIT sockets are reused by the kernel (net.ipv4.tcp_tw_reuse = 2, the default).
 *
 * usage: wl_connect ITERATIONS PORT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wl_common.h"

static int one_connect(void *ctx)
{
	const struct sockaddr_in *sa = ctx;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		err = -errno;
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	long n = wl_iterations(argc, argv, "ITERATIONS PORT");
	struct sockaddr_in sa = { .sin_family = AF_INET };

	if (argc != 3)
		return 2;
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return wl_run("connect", n, one_connect, &sa);
}
