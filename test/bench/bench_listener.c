/*
 * bench_listener.c - the peer of wl_connect: a TCP listener on 127.0.0.1 that accepts and
 * closes every connection. Prints its port on stdout, then serves until stdin reaches EOF.
 * Run by bench.py outside every traced tree, so only the connecting side is measured.
 *
 * usage: bench_listener
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	struct pollfd p[2];
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4096) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len)) {
		perror("bench_listener");
		return 1;
	}
	printf("%u\n", ntohs(sa.sin_port));
	fflush(stdout);
	p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = 0, .events = POLLIN };
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		if (p[1].revents)
			return 0; /* stdin closed (or readable): done */
		for (;;) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				break;
			close(c);
		}
	}
}
