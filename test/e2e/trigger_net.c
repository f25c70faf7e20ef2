/*
 * trigger_net.c - network steps, all on loopback: TCP over IPv4, IPv6 and an IPv4-mapped IPv6
 * address; UDP sendto/sendmsg/sendmmsg to several destinations; DNS datagrams to port 53
 * (addressed and on a connected socket); unix sockets by path, abstract, and datagram; which
 * sockets are recorded; connect and accept on non-blocking sockets, and ones that block for a
 * while.
 * Also the attach-mode target (mode_hold), which leaves an accept and a connect pending.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "trigger.h"

static struct sockaddr_in sin4(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static struct sockaddr_in6 sin6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	must(inet_pton(AF_INET6, ip, &a.sin6_addr) == 1, "inet_pton");
	return a;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	must(getsockname(fd, (struct sockaddr *)&ss, &len) == 0, "getsockname");
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* socket, bind to addr (port 0), listen, connect, accept, connect again, accept4: each call
 * printed with its fd or result. */
static void tcp_sequence(struct out *o, int family, const struct sockaddr *addr, socklen_t alen)
{
	struct sockaddr_storage peer, dst;
	socklen_t plen = sizeof(peer);
	long l, c, c2, a, a4;

	l = syscall(SYS_socket, family, SOCK_STREAM, 0);
	must(l >= 0, "socket");
	out_int(o, "listen_fd", l);
	out_ret(o, "bind", syscall(SYS_bind, l, addr, alen));
	out_int(o, "port", port_of((int)l));
	out_ret(o, "listen", syscall(SYS_listen, l, 7));
	memcpy(&dst, addr, alen);
	((struct sockaddr_in *)&dst)->sin_port = htons((uint16_t)port_of((int)l)); /* same offset */
	c = syscall(SYS_socket, family, SOCK_STREAM, 0);
	out_int(o, "client_fd", c);
	out_ret(o, "connect", syscall(SYS_connect, c, &dst, alen));
	out_int(o, "client_port", port_of((int)c));
	a = syscall(SYS_accept, l, &peer, &plen);
	out_ret(o, "accept", a);
	out_int(o, "accept_addrlen", plen);
	/* a plain send on a connected stream socket: not recorded (the connect was) */
	out_ret(o, "send", syscall(SYS_sendto, c, "x", 1, 0, NULL, 0));
	c2 = syscall(SYS_socket, family, SOCK_STREAM, 0);
	out_ret(o, "connect2", syscall(SYS_connect, c2, &dst, alen));
	out_int(o, "client2_port", port_of((int)c2));
	a4 = syscall(SYS_accept4, l, NULL, NULL, SOCK_CLOEXEC);
	out_ret(o, "accept4", a4);
}

static void step_tcp4(struct out *o)
{
	struct sockaddr_in a = sin4(0);

	tcp_sequence(o, AF_INET, (struct sockaddr *)&a, sizeof(a));
}

static void step_tcp6(struct out *o)
{
	struct sockaddr_in6 a = sin6("::1", 0);

	tcp_sequence(o, AF_INET6, (struct sockaddr *)&a, sizeof(a));
}

/* An IPv6 socket connecting to an IPv4 listener through ::ffff:127.0.0.1. */
static void step_mapped(struct out *o)
{
	struct sockaddr_in a = sin4(0);
	struct sockaddr_in6 m;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c;

	must(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 4) == 0,
	     "listen 127.0.0.1");
	m = sin6("::ffff:127.0.0.1", (uint16_t)port_of(l));
	c = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(c >= 0, "socket");
	out_int(o, "port", port_of(l));
	out_int(o, "fd", c);
	out_ret(o, "ret", syscall(SYS_connect, c, &m, sizeof(m)));
}

static int udp_receiver(void)
{
	struct sockaddr_in a = sin4(0);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "udp receiver");
	return fd;
}

/* One datagram each by sendto and sendmsg, then three by one sendmmsg, to three receivers. */
static void step_udp(struct out *o)
{
	int r[3] = { udp_receiver(), udp_receiver(), udp_receiver() };
	struct sockaddr_in dst[3];
	struct iovec iov = { .iov_base = "hello", .iov_len = 5 };
	struct mmsghdr mm[3];
	struct msghdr m;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(s >= 0, "socket");
	for (int i = 0; i < 3; i++) {
		dst[i] = sin4((uint16_t)port_of(r[i]));
		out_int(o, i == 0 ? "port0" : i == 1 ? "port1" : "port2", port_of(r[i]));
	}
	out_int(o, "fd", s);
	out_ret(o, "sendto", syscall(SYS_sendto, s, "hello", 5, 0, &dst[0], sizeof(dst[0])));
	memset(&m, 0, sizeof(m));
	m.msg_name = &dst[1];
	m.msg_namelen = sizeof(dst[1]);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	out_ret(o, "sendmsg", syscall(SYS_sendmsg, s, &m, 0));
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 3; i++) {
		mm[i].msg_hdr = m;
		mm[i].msg_hdr.msg_name = &dst[i];
	}
	out_ret(o, "sendmmsg", syscall(SYS_sendmmsg, s, mm, 3, 0));
}

/* Ten datagrams by one sendmmsg to one receiver: more than the 8 that get a record. */
static void step_udp_many(struct out *o)
{
	int r = udp_receiver(), s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in dst = sin4((uint16_t)port_of(r));
	struct iovec iov = { .iov_base = "hello", .iov_len = 5 };
	struct mmsghdr mm[10];

	must(s >= 0, "socket");
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 10; i++) {
		mm[i].msg_hdr.msg_name = &dst;
		mm[i].msg_hdr.msg_namelen = sizeof(dst);
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	out_int(o, "fd", s);
	out_int(o, "port", port_of(r));
	out_ret(o, "sendmmsg", syscall(SYS_sendmmsg, s, mm, 10, 0));
}

/* A DNS query for witness.mcpwitness.invalid, type A; returns its length. */
static size_t dns_query(unsigned char *q)
{
	static const unsigned char head[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
	static const char name[] = "\7witness\12mcpwitness\7invalid";
	size_t n = 0;

	memcpy(q, head, sizeof(head));
	n += sizeof(head);
	memcpy(q + n, name, sizeof(name)); /* with the root label's 0 */
	n += sizeof(name);
	memcpy(q + n, "\0\1\0\1", 4);
	return n + 4;
}

static void dns_out(struct out *o, const unsigned char *q, size_t n)
{
	char hex[1024];

	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", q[i]);
	out_str(o, "query_hex", hex);
}

static void step_dns(struct out *o)
{
	unsigned char q[512];
	size_t n = dns_query(q);
	struct sockaddr_in a = sin4(53);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(s >= 0, "socket");
	dns_out(o, q, n);
	out_int(o, "fd", s);
	out_ret(o, "ret", syscall(SYS_sendto, s, q, n, 0, &a, sizeof(a)));
}

static void step_dns6(struct out *o)
{
	unsigned char q[512];
	size_t n = dns_query(q);
	struct sockaddr_in6 a = sin6("::1", 53);
	int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(s >= 0, "socket");
	dns_out(o, q, n);
	out_int(o, "fd", s);
	out_ret(o, "ret", syscall(SYS_sendto, s, q, n, 0, &a, sizeof(a)));
}

/* connect a datagram socket to port 53, then send() without an address. */
static void step_dns_connected(struct out *o)
{
	unsigned char q[512];
	size_t n = dns_query(q);
	struct sockaddr_in a = sin4(53);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(s >= 0, "socket");
	dns_out(o, q, n);
	out_int(o, "fd", s);
	out_ret(o, "connect", syscall(SYS_connect, s, &a, sizeof(a)));
	out_ret(o, "ret", syscall(SYS_sendto, s, q, n, 0, NULL, 0));
}

static socklen_t sun_path(struct sockaddr_un *a, const char *path, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path, path, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
}

static void unix_pair(struct out *o, const char *path, size_t len)
{
	struct sockaddr_un a;
	socklen_t alen = sun_path(&a, path, len);
	long l = syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0), c;

	must(l >= 0, "socket");
	out_int(o, "listen_fd", l);
	out_ret(o, "bind", syscall(SYS_bind, l, &a, alen));
	out_ret(o, "listen", syscall(SYS_listen, l, 3));
	c = syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
	out_int(o, "client_fd", c);
	out_int(o, "addrlen", alen);
	out_ret(o, "connect", syscall(SYS_connect, c, &a, alen));
	out_ret(o, "accept", syscall(SYS_accept, l, NULL, NULL));
}

static void step_unix_path(struct out *o)
{
	unix_pair(o, "unix.sock", strlen("unix.sock"));
}

static void step_unix_abstract(struct out *o)
{
	char name[64];
	int n = snprintf(name, sizeof(name), "%cmwtrig-abstract-%d", 0, (int)getpid());

	out_strn(o, "name", name + 1, (size_t)n - 1);
	unix_pair(o, name, (size_t)n);
}

static void step_unix_dgram(struct out *o)
{
	struct sockaddr_un a;
	socklen_t alen = sun_path(&a, "unix.dgram", strlen("unix.dgram"));
	int r = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	must(r >= 0 && s >= 0 && bind(r, (struct sockaddr *)&a, alen) == 0, "unix dgram");
	out_int(o, "fd", s);
	out_ret(o, "ret", syscall(SYS_sendto, s, "ping", 4, 0, &a, alen));
}

/* ---- which sockets are recorded, and when an entry-time record is made -------------------- */

/* An ordinary TCP socket (not recorded), a netlink socket (recorded), a TCP socket asked for with
 * UDP's protocol (refused: recorded) and an ICMP datagram socket (recorded, made or refused by
 * net.ipv4.ping_group_range). */
static void step_sockets(struct out *o)
{
	out_ret(o, "tcp", syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	out_ret(o, "netlink", syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0));
	out_ret(o, "tcp_udp", syscall(SYS_socket, AF_INET, SOCK_STREAM, IPPROTO_UDP));
	out_ret(o, "ping", syscall(SYS_socket, AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
}

/* connect and accept4 on non-blocking sockets: a listener made SOCK_NONBLOCK whose accept4 finds
 * nothing (EAGAIN), a client made SOCK_NONBLOCK and one switched by fcntl, each connecting
 * (0 or EINPROGRESS); then a blocking client, whose connect returns at once too. */
static void step_nonblock(struct out *o)
{
	struct sockaddr_in a = sin4(0);
	long l = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), c, c2, c3;

	must(l >= 0 && bind((int)l, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		     listen((int)l, 8) == 0,
	     "listen 127.0.0.1");
	a.sin_port = htons((uint16_t)port_of((int)l));
	out_int(o, "port", port_of((int)l));
	out_int(o, "listen_fd", l);
	out_ret(o, "accept4", syscall(SYS_accept4, l, NULL, NULL, SOCK_CLOEXEC));
	c = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	must(c >= 0, "socket");
	out_int(o, "fd", c);
	out_ret(o, "connect", syscall(SYS_connect, c, &a, sizeof(a)));
	c2 = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	must(c2 >= 0 && fcntl((int)c2, F_SETFL, O_NONBLOCK) == 0, "socket made non-blocking");
	out_int(o, "fd2", c2);
	out_ret(o, "connect2", syscall(SYS_connect, c2, &a, sizeof(a)));
	c3 = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	must(c3 >= 0, "socket");
	out_int(o, "fd3", c3);
	out_ret(o, "connect3", syscall(SYS_connect, c3, &a, sizeof(a)));
}

/* ---- calls that block for a while, then return ------------------------------------------- */

#define BLOCKED_MS 400 /* long past the collector's 50 ms before it writes an entry-time record */

struct later {
	int fd;
	struct sockaddr_in to; /* connect_later's destination */
	long ret;
};

static void *accept_later(void *arg)
{
	struct later *l = arg;

	usleep(BLOCKED_MS * 1000);
	l->ret = syscall(SYS_accept4, l->fd, NULL, NULL, SOCK_CLOEXEC);
	return NULL;
}

static void *connect_later(void *arg)
{
	struct later *l = arg;

	usleep(BLOCKED_MS * 1000);
	l->ret = syscall(SYS_connect, l->fd, &l->to, sizeof(l->to));
	return NULL;
}

/* A unix stream connect that waits on a listener whose backlog is full until another thread
 * accepts the connection filling it, then an accept that waits until another thread connects:
 * each blocks for BLOCKED_MS. */
static void step_blocked(struct out *o)
{
	struct sockaddr_un u;
	socklen_t ulen = sun_path(&u, "blocked.sock", strlen("blocked.sock"));
	struct sockaddr_in a = sin4(0);
	struct later l;
	pthread_t t;
	int ul = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	long c, tl;

	must(ul >= 0 && filler >= 0 && bind(ul, (struct sockaddr *)&u, ulen) == 0 &&
		     listen(ul, 0) == 0 && connect(filler, (struct sockaddr *)&u, ulen) == 0,
	     "fill a unix listener's backlog");
	l.fd = ul;
	must(pthread_create(&t, NULL, accept_later, &l) == 0, "pthread_create");
	c = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	out_int(o, "fd", c);
	out_int(o, "addrlen", ulen);
	out_ret(o, "connect", syscall(SYS_connect, c, &u, ulen));
	must(pthread_join(t, NULL) == 0 && l.ret >= 0, "the accept that let it in");

	tl = syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(tl >= 0 && bind((int)tl, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		     listen((int)tl, 4) == 0,
	     "listen 127.0.0.1");
	out_int(o, "listen_fd", tl);
	out_int(o, "port", port_of((int)tl));
	l.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	l.to = sin4((uint16_t)port_of((int)tl));
	must(l.fd >= 0 && pthread_create(&t, NULL, connect_later, &l) == 0, "pthread_create");
	out_ret(o, "accept", syscall(SYS_accept, tl, NULL, NULL));
	must(pthread_join(t, NULL) == 0 && l.ret == 0, "the connect it waited for");
}

/* ---- the attach-mode target ---------------------------------------------------------------- */

struct pending {
	int accept_fd;
	int connect_fd;
	struct sockaddr_in full;
};

static void *block_in_accept(void *arg)
{
	struct pending *p = arg;
	struct out o;

	out_begin(&o, "hold.accept");
	out_end(&o);
	syscall(SYS_accept, p->accept_fd, NULL, NULL);
	return NULL;
}

static void *block_in_fifo_open(void *arg)
{
	struct out o;

	(void)arg;
	out_begin(&o, "hold.fifo");
	out_end(&o);
	syscall(SYS_openat, AT_FDCWD, "hold.fifo", O_RDONLY | O_CLOEXEC); /* no writer: waits */
	return NULL;
}

/* The existing child: fills a listener's backlog, then waits for the go; then opens a file,
 * blocks one thread in accept, one in the open of a FIFO nobody writes, and itself in a
 * connect that cannot complete. */
static void hold_existing(int go)
{
	struct sockaddr_in a = sin4(0);
	struct pending p;
	struct out o;
	pthread_t t;
	char c;
	int full = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	p.accept_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	p.connect_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(bind(full, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(full, 0) == 0, "full");
	must(bind(p.accept_fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(p.accept_fd, 4) == 0,
	     "accept listener");
	p.full = sin4((uint16_t)port_of(full));
	/* the one connection a backlog of 0 admits; the next SYN is dropped, so connect waits */
	must(connect(filler, (struct sockaddr *)&p.full, sizeof(p.full)) == 0, "fill backlog");
	out_begin(&o, "hold.existing");
	out_int(&o, "full_port", port_of(full));
	out_int(&o, "accept_port", port_of(p.accept_fd));
	out_int(&o, "accept_fd", p.accept_fd);
	out_int(&o, "connect_fd", p.connect_fd);
	out_end(&o);
	if (read(go, &c, 1) != 1)
		_exit(3);
	out_begin(&o, "hold.existing.go");
	out_ret(&o, "ret", syscall(SYS_openat, AT_FDCWD, "attach.existing.f",
				   O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	out_end(&o);
	must(pthread_create(&t, NULL, block_in_accept, &p) == 0, "pthread_create");
	must(pthread_create(&t, NULL, block_in_fifo_open, NULL) == 0, "pthread_create");
	out_begin(&o, "hold.connect");
	out_end(&o);
	syscall(SYS_connect, p.connect_fd, &p.full, sizeof(p.full));
	_exit(0);
}

/* mode_hold: prints its pid, starts the existing child, waits for a line on stdin, releases
 * the child and starts a new one, then waits to be killed. */
int mode_hold(void)
{
	int go[2];
	char line[16];
	struct out o;
	pid_t existing, fresh;

	must(pipe2(go, O_CLOEXEC) == 0, "pipe");
	must(mkfifo("hold.fifo", 0600) == 0, "mkfifo hold.fifo");
	existing = fork();
	must(existing >= 0, "fork");
	if (existing == 0) {
		close(go[1]);
		hold_existing(go[0]);
	}
	out_begin(&o, "hold");
	out_int(&o, "existing", existing);
	out_end(&o);
	if (read(0, line, sizeof(line)) <= 0)
		return 3;
	must(write(go[1], "g", 1) == 1, "write go");
	fresh = fork();
	must(fresh >= 0, "fork");
	if (fresh == 0) {
		out_begin(&o, "hold.new");
		out_ret(&o, "ret", syscall(SYS_openat, AT_FDCWD, "attach.new.f",
					   O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		out_end(&o);
		_exit(0);
	}
	reap(fresh);
	out_begin(&o, "hold.go");
	out_int(&o, "new", fresh);
	out_end(&o);
	for (;;)
		pause();
}

const struct step net_steps[] = {
	{ "tcp4", step_tcp4 },
	{ "tcp6", step_tcp6 },
	{ "mapped", step_mapped },
	{ "udp", step_udp },
	{ "udp_many", step_udp_many },
	{ "dns", step_dns },
	{ "dns6", step_dns6 },
	{ "dns_connected", step_dns_connected },
	{ "unix_path", step_unix_path },
	{ "unix_abstract", step_unix_abstract },
	{ "unix_dgram", step_unix_dgram },
	{ "sockets", step_sockets },
	{ "nonblock", step_nonblock },
	{ "blocked", step_blocked },
	{ NULL, NULL },
};
