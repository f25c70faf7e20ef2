/*
 * trigger_uring.c - io_uring steps through raw syscalls (no liburing): setup, two submissions,
 * enter and register; the path and address operations a ring can perform for a process
 * (opens, renames, links, connects, ...) without a syscall of their own; a write the ring
 * hides from the syscall tracepoints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>

#include "trigger.h"

static void step_uring(struct out *o)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned char *sq;
	unsigned *tail, *array, mask;
	char buf[16];
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, 4, &p);
	out_ret(o, "setup", fd);
	must(fd >= 0 && null >= 0, "io_uring_setup");
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, (int)fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, (int)fd, IORING_OFF_SQES);
	must(sq != MAP_FAILED && sqes != MAP_FAILED, "mmap ring");
	tail = (unsigned *)(sq + p.sq_off.tail);
	array = (unsigned *)(sq + p.sq_off.array);
	mask = *(unsigned *)(sq + p.sq_off.ring_mask);
	memset(sqes, 0, 2 * sizeof(*sqes));
	sqes[0].opcode = IORING_OP_NOP;
	sqes[0].fd = -1;
	sqes[0].user_data = 0x1111;
	sqes[1].opcode = IORING_OP_READ;
	sqes[1].fd = null;
	sqes[1].addr = (uintptr_t)buf;
	sqes[1].len = sizeof(buf);
	sqes[1].user_data = 0x2222;
	array[*tail & mask] = 0;
	array[(*tail + 1) & mask] = 1;
	__atomic_store_n(tail, *tail + 2, __ATOMIC_RELEASE);
	out_int(o, "null_fd", null);
	out_int(o, "ring_fd", fd);
	out_ret(o, "enter", syscall(SYS_io_uring_enter, (int)fd, 2, 2, IORING_ENTER_GETEVENTS, NULL, 0));
	out_ret(o, "register", syscall(SYS_io_uring_register, (int)fd, IORING_REGISTER_FILES, &null, 1));
}

/* A ring of one submission at a time, mapped by the single-mmap layout (5.4+). */
struct ring {
	int fd;
	struct io_uring_sqe *sqes;
	unsigned char *sq, *cq;
	struct io_uring_params p;
};

static void ring_open(struct ring *r)
{
	size_t sq_len, cq_len;

	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &r->p);
	must(r->fd >= 0 && (r->p.features & IORING_FEAT_SINGLE_MMAP), "io_uring_setup");
	sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(unsigned);
	cq_len = r->p.cq_off.cqes + r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq = mmap(NULL, sq_len > cq_len ? sq_len : cq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->sqes = mmap(NULL, r->p.sq_entries * sizeof(*r->sqes), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	must(r->sq != MAP_FAILED && r->sqes != MAP_FAILED, "mmap ring");
	r->cq = r->sq;
}

/* Queues sqe and enters the ring for it, waiting for wait completions. */
static void ring_enter(struct ring *r, const struct io_uring_sqe *sqe, unsigned wait)
{
	unsigned *tail = (unsigned *)(r->sq + r->p.sq_off.tail);
	unsigned *array = (unsigned *)(r->sq + r->p.sq_off.array);
	unsigned mask = *(unsigned *)(r->sq + r->p.sq_off.ring_mask);
	unsigned t = *tail;

	r->sqes[t & mask] = *sqe;
	array[t & mask] = t & mask;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	must(syscall(SYS_io_uring_enter, r->fd, 1, wait, wait ? IORING_ENTER_GETEVENTS : 0, NULL,
		     0) == 1,
	     "io_uring_enter");
}

/* Submits sqe without waiting for a completion (one skipped on success never comes). */
static void ring_submit(struct ring *r, const struct io_uring_sqe *sqe)
{
	ring_enter(r, sqe, 0);
}

/* Submits sqe, waits for its completion and returns its result. */
static int ring_run(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned *chead = (unsigned *)(r->cq + r->p.cq_off.head);
	unsigned cmask = *(unsigned *)(r->cq + r->p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(r->cq + r->p.cq_off.cqes);
	int res;

	ring_enter(r, sqe, 1);
	res = cqes[*chead & cmask].res;
	__atomic_store_n(chead, *chead + 1, __ATOMIC_RELEASE);
	return res;
}

static struct io_uring_sqe path_sqe(__u8 op, int dfd, const char *path, int flags)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = op;
	sqe.fd = dfd;
	sqe.addr = (uintptr_t)path;
	sqe.open_flags = (__u32)flags; /* the same word as unlink_flags, rename_flags... */
	return sqe;
}

static struct io_uring_sqe two_path_sqe(__u8 op, const char *from, const char *to)
{
	struct io_uring_sqe sqe = path_sqe(op, AT_FDCWD, from, 0);

	sqe.len = (__u32)AT_FDCWD; /* the new name's directory */
	sqe.addr2 = (uintptr_t)to;
	return sqe;
}

/* A socket of type bound to 127.0.0.1 (a port of the kernel's choosing, written to o as key), a
 * listener for a stream; a holds its address. */
static int loopback_socket(struct out *o, int type, struct sockaddr_in *a, const char *key)
{
	socklen_t alen = sizeof(*a);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	*a = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	must(fd >= 0 && bind(fd, (struct sockaddr *)a, sizeof(*a)) == 0 &&
		     (type != SOCK_STREAM || listen(fd, 1) == 0) &&
		     getsockname(fd, (struct sockaddr *)a, &alen) == 0,
	     key);
	out_int(o, key, ntohs(a->sin_port));
	return fd;
}

/* A new socket of type, its fd written to o as key. */
static int new_socket(struct out *o, int type, const char *key)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	must(fd >= 0, "socket");
	out_int(o, key, fd);
	return fd;
}

/* An IPv4 address (port 80) in a page of a memfd's shared mapping that this process has not
 * touched: the kernel's copy faults it in, a BPF program's read of it fails. */
static const void *unmapped_sockaddr(uint32_t ip)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(80)};
	int fd = (int)syscall(SYS_memfd_create, "mwtrig-addr", MFD_CLOEXEC);
	void *p;

	to.sin_addr.s_addr = htonl(ip);
	must(fd >= 0 && write(fd, &to, sizeof(to)) == (ssize_t)sizeof(to), "memfd address");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	must(p != MAP_FAILED, "mmap address");
	close(fd);
	return p;
}

static struct io_uring_sqe connect_sqe(int fd, const struct sockaddr_in *to)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)to;
	sqe.addr2 = sizeof(*to); /* the address's length */
	sqe.user_data = 0x10000u + (unsigned)fd;
	return sqe;
}

/* openat (a relative name, a key under .ssh, and the key through /proc/self/fd of its
 * directory and relative to a descriptor of it), openat2, statx, mkdirat, renameat, symlinkat,
 * linkat, unlinkat; an open whose completion is skipped, the key opened into a registered file
 * slot; a mkdirat and a renameat aimed outside the workspace, refused. */
static void uring_paths(struct out *o, struct ring *r)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	struct io_uring_sqe sqe;
	struct statx stx;
	char hidden[64];
	int dir;

	touch("uring.f");
	must(mkdir(".ssh", 0700) == 0 || errno == EEXIST, "mkdir .ssh");
	touch(".ssh/id_uring");
	sqe = path_sqe(IORING_OP_OPENAT, AT_FDCWD, "uring.f", O_RDONLY | O_CLOEXEC);
	out_ret(o, "openat", ring_run(r, &sqe));
	sqe = path_sqe(IORING_OP_OPENAT2, AT_FDCWD, ".ssh/id_uring", 0);
	sqe.len = sizeof(how);
	sqe.addr2 = (uintptr_t)&how;
	out_ret(o, "openat2", ring_run(r, &sqe));
	/* the key by a name that hides it: through a descriptor of its directory */
	dir = open(".ssh", O_PATH | O_DIRECTORY | O_CLOEXEC);
	must(dir >= 0, "open .ssh");
	snprintf(hidden, sizeof(hidden), "/proc/self/fd/%d/id_uring", dir);
	out_str(o, "hidden", hidden);
	sqe = path_sqe(IORING_OP_OPENAT, AT_FDCWD, hidden, O_RDONLY | O_CLOEXEC);
	out_ret(o, "openat_hidden", ring_run(r, &sqe));
	out_int(o, "dir_fd", dir); /* and by a name relative to that descriptor */
	sqe = path_sqe(IORING_OP_OPENAT, dir, "id_uring", O_RDONLY | O_CLOEXEC);
	out_ret(o, "openat_dirfd", ring_run(r, &sqe));
	close(dir);
	sqe = path_sqe(IORING_OP_STATX, AT_FDCWD, "uring.f", 0);
	sqe.len = STATX_BASIC_STATS;
	sqe.off = (uintptr_t)&stx;
	out_ret(o, "statx", ring_run(r, &sqe));
	sqe = path_sqe(IORING_OP_MKDIRAT, AT_FDCWD, "uring.d", 0);
	sqe.len = 0700;
	out_ret(o, "mkdirat", ring_run(r, &sqe));
	sqe = two_path_sqe(IORING_OP_RENAMEAT, "uring.d", "uring.d2");
	out_ret(o, "renameat", ring_run(r, &sqe));
	sqe = two_path_sqe(IORING_OP_SYMLINKAT, "/etc/passwd", "uring.l");
	sqe.len = 0; /* symlinkat: fd is the link's directory, addr what it points to */
	out_ret(o, "symlinkat", ring_run(r, &sqe));
	sqe = two_path_sqe(IORING_OP_LINKAT, "uring.f", "uring.h");
	out_ret(o, "linkat", ring_run(r, &sqe));
	sqe = path_sqe(IORING_OP_UNLINKAT, AT_FDCWD, "uring.l", 0);
	out_ret(o, "unlinkat", ring_run(r, &sqe));
	unlink("uring.h");
	rmdir("uring.d2");
	/* an open whose completion is skipped on success: no io_uring_opened record follows */
	sqe = path_sqe(IORING_OP_OPENAT, AT_FDCWD, "uring.f", O_RDONLY | O_CLOEXEC);
	sqe.flags = IOSQE_CQE_SKIP_SUCCESS;
	ring_submit(r, &sqe);
	/* the key opened into a registered file slot (a sparse table of one): no descriptor
	 * names it, so its completion's file is unresolved */
	must(syscall(SYS_io_uring_register, r->fd, IORING_REGISTER_FILES, &(int){-1}, 1) == 0,
	     "register a sparse file table");
	/* into slot 0 (file_index is the slot plus one); O_CLOEXEC is refused with a slot */
	sqe = path_sqe(IORING_OP_OPENAT, AT_FDCWD, ".ssh/id_uring", O_RDONLY);
	sqe.file_index = 1;
	out_ret(o, "openat_slot", ring_run(r, &sqe));
	/* changes outside the workspace, refused to everyone (procfs) */
	sqe = path_sqe(IORING_OP_MKDIRAT, AT_FDCWD, "/proc/mw-uring-denied", 0);
	sqe.len = 0700;
	out_ret(o, "mkdirat_out", ring_run(r, &sqe));
	sqe = two_path_sqe(IORING_OP_RENAMEAT, "uring.f", "/proc/mw-uring-denied");
	out_ret(o, "renameat_out", ring_run(r, &sqe));
}

/* A key agent's socket (where ssh-agent puts one) connected by a relative name: the submission
 * names "agent.1", the completion the socket the kernel reached. */
static void uring_agent(struct out *o, struct ring *r)
{
	struct sockaddr_un at = {.sun_family = AF_UNIX}, rel = {.sun_family = AF_UNIX};
	char dir[64], back[4096];
	struct io_uring_sqe sqe;
	int lst, fd;

	snprintf(dir, sizeof(dir), "/tmp/ssh-mwuring%d", (int)getpid());
	snprintf(at.sun_path, sizeof(at.sun_path), "%s/agent.1", dir);
	strcpy(rel.sun_path, "agent.1");
	must(getcwd(back, sizeof(back)) != NULL && mkdir(dir, 0700) == 0, "agent directory");
	lst = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(lst >= 0 && bind(lst, (struct sockaddr *)&at, sizeof(at)) == 0 && listen(lst, 1) == 0,
	     "agent socket");
	out_str(o, "agent", at.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(fd >= 0 && chdir(dir) == 0, "agent client");
	out_int(o, "agent_fd", fd);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)&rel;
	sqe.addr2 = offsetof(struct sockaddr_un, sun_path) + sizeof("agent.1");
	sqe.user_data = 0x10000u + (unsigned)fd;
	out_ret(o, "connect_agent", ring_run(r, &sqe));
	must(chdir(back) == 0, "chdir back");
	close(fd);
	close(lst);
	unlink(at.sun_path);
	rmdir(dir);
}

/* A connect to a 127.0.0.1 listener and a sendmsg to a 127.0.0.1 datagram socket; connects to a
 * metadata service's address, TEST-NET-1, a container daemon's socket and an address in a page
 * not yet mapped on a descriptor that is no socket: the request is
 * prepared (its address copied) and fails when issued (ENOTSOCK), so no packet can leave. */
static void uring_addresses(struct out *o, struct ring *r)
{
	struct sockaddr_in a, far = {.sin_family = AF_INET, .sin_port = htons(80)};
	struct sockaddr_un docker = {.sun_family = AF_UNIX, .sun_path = "/run/docker.sock"};
	struct iovec iov = {"mw", 2};
	struct io_uring_sqe sqe;
	struct msghdr mh;
	int lst = loopback_socket(o, SOCK_STREAM, &a, "tcp_port");
	int tcp = new_socket(o, SOCK_STREAM, "tcp_fd");
	int dst, udp, nul;

	sqe = connect_sqe(tcp, &a);
	out_ret(o, "connect", ring_run(r, &sqe));
	dst = loopback_socket(o, SOCK_DGRAM, &a, "udp_port");
	udp = new_socket(o, SOCK_DGRAM, "udp_fd");
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = &a;
	mh.msg_namelen = sizeof(a);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_SENDMSG;
	sqe.fd = udp;
	sqe.addr = (uintptr_t)&mh;
	sqe.len = 1;
	out_ret(o, "sendmsg", ring_run(r, &sqe));
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	must(nul >= 0, "/dev/null");
	out_int(o, "null_fd", nul);
	sqe = connect_sqe(nul, &far);
	far.sin_addr.s_addr = htonl(0xa9fea9fe); /* 169.254.169.254: a metadata service */
	out_ret(o, "connect_metadata", ring_run(r, &sqe));
	far.sin_addr.s_addr = htonl(0xc0000201); /* 192.0.2.1: TEST-NET-1 */
	out_ret(o, "connect_far", ring_run(r, &sqe));
	sqe.addr = (uintptr_t)&docker;
	sqe.addr2 = offsetof(struct sockaddr_un, sun_path) + sizeof("/run/docker.sock");
	out_ret(o, "connect_docker", ring_run(r, &sqe));
	sqe.addr = (uintptr_t)unmapped_sockaddr(0xc0000202); /* 192.0.2.2 */
	sqe.addr2 = sizeof(far);
	out_ret(o, "connect_unmapped", ring_run(r, &sqe));
	close(nul);
	close(udp);
	close(dst);
	close(tcp);
	close(lst);
	uring_agent(o, r);
}

/* As root: a file created outside the workspace through io_uring by a name inside the
 * writable places (/proc/self/root/...): only the file it opened says where it landed. */
static void step_uring_write_hidden(struct out *o)
{
	struct io_uring_sqe sqe;
	char name[96];
	struct ring r;

	ring_open(&r);
	snprintf(name, sizeof(name), "/proc/self/root/var/lib/mw-uring-%d", (int)getpid());
	out_str(o, "name", name);
	out_str(o, "file", name + strlen("/proc/self/root"));
	sqe = path_sqe(IORING_OP_OPENAT, AT_FDCWD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
	sqe.len = 0600;
	out_ret(o, "fd", ring_run(&r, &sqe));
	unlink(name + strlen("/proc/self/root"));
	close(r.fd);
}

/* The paths and addresses io_uring requests name, each as the syscall of the same name would
 * have given it. */
static void step_uring_names(struct out *o)
{
	struct ring r;

	ring_open(&r);
	out_int(o, "ring_fd", r.fd);
	uring_paths(o, &r);
	uring_addresses(o, &r);
	close(r.fd);
}

const struct step uring_steps[] = {
	{ "uring", step_uring },
	{ "uring_names", step_uring_names },
	{ "uring_write_hidden", step_uring_write_hidden },
	{ NULL, NULL },
};
