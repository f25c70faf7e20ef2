/*
 * wl_connect.c - socket, connect to a 127.0.0.1 listener (bench_listener), close, in a loop:
 * the network family (address as passed and the socket's peer read back at exit). The close
 * resets the connection (SO_LINGER 0) instead of leaving it in TIME_WAIT: with thousands of
 * TIME_WAIT sockets the kernel's ephemeral port search (__inet_hash_connect, tcp_twsk_unique)
 * is most of the loop, and its cost moved by 55-90 us per iteration from one run to the next
 * with the state of the port space, tracing or not, which no ratio survives.
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
	const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset))) {
		err = -errno;
		close(fd);
		return err;
	}
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
