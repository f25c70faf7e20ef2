// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * net.bpf.c - the network family, at syscall exit with arguments from the saved registers.
 *
 * Each record holds the address as the process passed it (DATA) and the socket's address as
 * the kernel holds it after the call (DATA2: the peer for connect/accept/send, the local one for
 * bind/listen), so a rewritten argument or a surprising route shows. Socket type and family
 * come from the kernel socket. Plain sends on connected stream sockets are not recorded (the
 * connect was); a datagram is recorded when it names a destination or goes to port 53, and
 * then its first bytes are kept so the analyzer can read the DNS query name.
 *
 * connect and accept may block: their entry programs stash the call as in flight with what an
 * entry-time record holds (the socket's kind, the caller's ids, connect's address), and make no
 * record: the collector writes a call that stays blocked past a moment as an entry-time record
 * (collector/pending.c), so an attempt that never returns is evidence while recording goes on,
 * and one still pending when recording stops as unfinished. A connect that returns at once
 * (most do: a loopback or LAN handshake, a non-blocking socket) costs one record. A connect, and a
 * send that names its destination (sendto with an address, sendmsg with msg_name), is stashed
 * with the first bytes of that address, which its exit compares with DATA: another thread may
 * rewrite the address after the kernel copied it (TAMPERED). Sends without one are not stashed.
 * socket() is recorded only for sockets out of the ordinary (mw_socket_ordinary).
 */
#include "chan.bpf.h"
#include "sock.bpf.h"
#include <bpf/bpf_endian.h>

#define MW_SOCK_STREAM	  1
#define MW_SOCK_DGRAM	  2
#define MW_SOCK_TYPE_MASK 0xf /* socket()'s type without SOCK_NONBLOCK and SOCK_CLOEXEC */
#define MW_IPPROTO_TCP	  6
#define MW_IPPROTO_UDP	  17
#define MW_DNS_PORT	  53

/* arg[2] = socket type, arg[3] = family of fd's socket. */
static __always_inline struct sock *mw_sock_kind(struct mw_event *e, int fd)
{
	return mw_file_sock_kind(e->arg, mw_fd_file(fd));
}

/* Into a stash being written: the socket's kind (mw_file_sock_kind; none if f is no socket) and
 * the caller's real uid and gid. */
static __always_inline void mw_inflight_sock(struct mw_inflight *inf, struct file *f)
{
	__u64 uid_gid = bpf_get_current_uid_gid();

	mw_file_sock_kind(inf->arg, f);
	inf->uid = (__u32)uid_gid;
	inf->gid = uid_gid >> 32;
}

/* Destination port of the address in slot (0 if not inet), read back from the record. */
static __always_inline __u16 mw_slot_port(struct mw_rec *r, __u32 slot_off, int slot)
{
	__u8 *a = &r->s->event[slot_off & (MW_EVENT_MAX - 1)];
	__u16 family, port;

	if (r->e->slen[slot] < 4)
		return 0;
	family = a[0] | a[1] << 8;
	if (family != MW_AF_INET && family != MW_AF_INET6)
		return 0;
	port = a[2] << 8 | a[3];
	return port;
}

static __always_inline __u16 mw_sock_dport(struct sock *sk)
{
	return sk ? bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)) : 0;
}

/* ---- socket, connect, bind, listen ---------------------------------------------------------- */

/* An ordinary socket: unix, IPv4 or IPv6, stream or datagram, of the family's default protocol
 * (TCP, UDP). Making one does nothing visible; what it is used for is recorded (connect, bind,
 * listen, accept, addressed and DNS sends), each record with the socket's type and family. */
static __always_inline bool mw_socket_ordinary(int family, int type, int protocol)
{
	type &= MW_SOCK_TYPE_MASK;
	if (family != MW_AF_UNIX && family != MW_AF_INET && family != MW_AF_INET6)
		return false;
	if (type == MW_SOCK_STREAM)
		return protocol == 0 || (family != MW_AF_UNIX && protocol == MW_IPPROTO_TCP);
	if (type == MW_SOCK_DGRAM)
		return protocol == 0 || (family != MW_AF_UNIX && protocol == MW_IPPROTO_UDP);
	return false;
}

/* A socket is recorded when it is out of the ordinary (netlink, packet, raw, ICMP, SCTP...) or
 * could not be made (a refused raw socket is an attempt worth seeing). */
MW_SYS_EXIT(socket)
{
	struct mw_sys s;

	if (ret >= 0 && mw_socket_ordinary((int)mw_arg(mw_ctx_regs, 0), (int)mw_arg(mw_ctx_regs, 1),
					   (int)mw_arg(mw_ctx_regs, 2)))
		return 0;
	if (!mw_sys_begin(&s, MW_OP_SOCKET, ret, MW_INT(0), MW_INT(1), MW_INT(2), 0))
		return 0;
	return mw_sys_plain(&s);
}

/* Stashed as the kernel is about to copy the address: the exit checks the address against the
 * stash's head; a call that stays blocked is written from the stash (see the top). */
MW_SYS_ENTER(connect)
{
	struct mw_inflight *f;

	if (!mw_is_tracked())
		return 0;
	f = mw_inflight_start();
	if (!f)
		return 0;
	mw_inflight_args(f, mw_ctx_regs, MW_INT(0), MW_UINT(2), 0, 0);
	mw_inflight_sock(f, mw_fd_file((int)mw_arg(mw_ctx_regs, 0)));
	mw_inflight_head_bytes(f, (const void *)mw_arg(mw_ctx_regs, 1),
			       (__u32)mw_arg(mw_ctx_regs, 2));
	mw_inflight_commit(f, MW_OP_CONNECT);
	return 0;
}

MW_SYS_EXIT(connect)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_CONNECT, ret, MW_INT(0), MW_UINT(2), 0, 0);
	struct sock *sk;
	__u32 data_off;

	if (!e)
		return 0;
	sk = mw_sock_kind(e, mw_iarg(&s, 0));
	data_off = s.r.off;
	mw_slot_bytes(&s.r, MW_S_DATA, mw_uptr(&s, 1), (__u32)e->arg[1], MW_SOCKADDR_MAX, true);
	mw_head_check(&s.r, MW_S_DATA, data_off); /* ends the stash */
	if (sk)
		mw_slot_sockname(&s.r, MW_S_DATA2, sk, true);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(bind)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_BIND, ret, MW_INT(0), MW_UINT(2), 0, 0);
	struct sock *sk;

	if (!e)
		return 0;
	sk = mw_sock_kind(e, mw_iarg(&s, 0));
	mw_slot_bytes(&s.r, MW_S_DATA, mw_uptr(&s, 1), (__u32)e->arg[1], MW_SOCKADDR_MAX, true);
	if (sk)
		mw_slot_sockname(&s.r, MW_S_DATA2, sk, false);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(listen)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_LISTEN, ret, MW_INT(0), MW_INT(1), 0, 0);
	struct sock *sk;

	if (!e)
		return 0;
	sk = mw_sock_kind(e, mw_iarg(&s, 0));
	if (sk)
		mw_slot_sockname(&s.r, MW_S_DATA2, sk, false);
	return mw_sys_plain(&s);
}

/* ---- accept --------------------------------------------------------------------------------- */

/* Stashed (see the top); the exit ends the stash. */
static __always_inline int mw_accept_enter(struct pt_regs *mw_ctx_regs, __u16 op)
{
	struct mw_inflight *f;

	if (!mw_is_tracked())
		return 0;
	f = mw_inflight_path_begin(mw_ctx_regs, MW_INT(0), op == MW_OP_ACCEPT4 ? MW_INT(3) : 0, 0,
				   0, NULL);
	if (!f)
		return 0;
	mw_inflight_sock(f, mw_fd_file((int)mw_arg(mw_ctx_regs, 0)));
	mw_inflight_commit(f, op);
	return 0;
}

static __always_inline int mw_accept_exit(struct pt_regs *mw_ctx_regs, long ret, __u16 op)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, op, ret, MW_INT(0),
					  op == MW_OP_ACCEPT4 ? MW_INT(3) : 0, 0, 0);
	const void *uaddr;
	struct sock *sk;
	int len = 0;

	if (!e)
		return 0;
	mw_inflight_end();
	if (ret < 0) {
		mw_sock_kind(e, mw_iarg(&s, 0));
		return mw_sys_plain(&s);
	}
	sk = mw_sock_kind(e, (int)ret);
	uaddr = mw_uptr(&s, 1);
	if (uaddr && bpf_probe_read_user(&len, sizeof(len), mw_uptr(&s, 2)) == 0 && len > 0)
		mw_slot_bytes(&s.r, MW_S_DATA, uaddr, (__u32)len, MW_SOCKADDR_MAX, true);
	if (sk)
		mw_slot_sockname(&s.r, MW_S_DATA2, sk, true);
	return mw_sys_plain(&s);
}

MW_SYS_ENTER(accept)
{
	return mw_accept_enter(mw_ctx_regs, MW_OP_ACCEPT);
}

MW_SYS_EXIT(accept)
{
	return mw_accept_exit(mw_ctx_regs, ret, MW_OP_ACCEPT);
}

MW_SYS_ENTER(accept4)
{
	return mw_accept_enter(mw_ctx_regs, MW_OP_ACCEPT4);
}

MW_SYS_EXIT(accept4)
{
	return mw_accept_exit(mw_ctx_regs, ret, MW_OP_ACCEPT4);
}

/* ---- sends ---------------------------------------------------------------------------------- */

/* Finishes a send record: DATA (the destination as passed, if any) is already appended at
 * data_off. Keeps DATA2 (the connected peer) and, for port 53, the first bytes of buf. Returns
 * 0 without emitting when the send is neither addressed nor DNS. */
static __always_inline int mw_send_finish(struct mw_sys *s, struct sock *sk, __u32 data_off,
					  const void *buf, __u64 len, bool addressed)
{
	__u16 port = addressed ? mw_slot_port(&s->r, data_off, MW_S_DATA) : mw_sock_dport(sk);

	if (!addressed && !(port == MW_DNS_PORT && s->r.e->arg[2] == MW_SOCK_DGRAM))
		return 0;
	if (sk && !addressed)
		mw_slot_sockname(&s->r, MW_S_DATA2, sk, true);
	if (port == MW_DNS_PORT && buf)
		mw_slot_bytes(&s->r, MW_S_PAYLOAD, buf, len > MW_PAYLOAD_MAX ? MW_PAYLOAD_MAX : len,
			      MW_PAYLOAD_MAX, true);
	mw_rec_emit(&s->r);
	return 0;
}

/* sendto with an address: the address's head, as the kernel is about to copy it (addrlen
 * bytes; the pointer and the length are registers, the same at exit). A send on a stdout that
 * is a socket: its bytes, as a write's (chan.bpf.h). */
MW_SYS_ENTER(sendto)
{
	const void *addr = (const void *)mw_arg(mw_ctx_regs, 4);

	if (mw_chan_sock(MW_CHAN_OUT))
		mw_chan_sum_flat(mw_ctx_regs);
	if (!addr || !mw_is_tracked())
		return 0;
	mw_inflight_bytes(MW_OP_SENDTO, mw_ctx_regs, MW_INT(0), MW_LONG(2), 0, 0, addr,
			  (__u32)mw_arg(mw_ctx_regs, 5));
	return 0;
}

MW_SYS_EXIT(sendto)
{
	struct mw_sys s;
	struct mw_event *e;
	const void *addr;
	struct sock *sk;
	__u32 data_off;

	if (mw_chan_sock(MW_CHAN_OUT))
		mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_OUT); /* a stdout that is a socket */
	e = mw_sys_begin(&s, MW_OP_SENDTO, ret, MW_INT(0), MW_LONG(2), 0, 0);
	if (!e)
		return 0;
	sk = mw_sock_kind(e, mw_iarg(&s, 0));
	addr = mw_uptr(&s, 4);
	data_off = s.r.off;
	if (addr) {
		mw_slot_bytes(&s.r, MW_S_DATA, addr, (__u32)mw_arg(s.regs, 5), MW_SOCKADDR_MAX, true);
		mw_head_check(&s.r, MW_S_DATA, data_off);
	}
	return mw_send_finish(&s, sk, data_off, mw_uptr(&s, 1), e->arg[1], addr != NULL);
}

/* Appends msg_name of a user msghdr to DATA; returns the first iovec in *iov. */
static __always_inline bool mw_msghdr(struct mw_sys *s, const struct user_msghdr *umsg,
				      struct iovec *iov)
{
	struct user_msghdr m = {};

	iov->iov_base = NULL;
	iov->iov_len = 0;
	if (bpf_probe_read_user(&m, sizeof(m), umsg))
		return false;
	if (m.msg_iov && m.msg_iovlen > 0)
		bpf_probe_read_user(iov, sizeof(*iov), m.msg_iov);
	if (!m.msg_name)
		return false;
	mw_slot_bytes(&s->r, MW_S_DATA, m.msg_name, (__u32)m.msg_namelen, MW_SOCKADDR_MAX, true);
	return true;
}

/* sendmsg with a msg_name: the address's head, as the kernel is about to copy it (the msghdr
 * is read here as the kernel reads it first). Not stashed when the msghdr cannot be read: the
 * exit then finds no stash. On a stdout that is a socket: the iovecs' bytes, as a writev's. */
MW_SYS_ENTER(sendmsg)
{
	struct user_msghdr m;

	if (!mw_is_tracked())
		return 0;
	if (bpf_probe_read_user(&m, sizeof(m), (const void *)mw_arg(mw_ctx_regs, 1))) {
		if (mw_chan_sock(MW_CHAN_OUT))
			mw_chan_sum_msg(mw_ctx_regs, NULL); /* a socket stdout: unchecked */
		return 0;
	}
	if (mw_chan_sock(MW_CHAN_OUT))
		mw_chan_sum_msg(mw_ctx_regs, &m); /* a stdout that is a socket */
	if (!m.msg_name)
		return 0;
	mw_inflight_bytes(MW_OP_SENDMSG, mw_ctx_regs, MW_INT(0), MW_UINT(2), 0, 0, m.msg_name,
			  (__u32)m.msg_namelen);
	return 0;
}

/* Unlike sendto's, sendmsg's address is found through user memory, so whether there is one can
 * change too: a send the entry saw addressed is recorded (and checked) even if the msghdr names
 * none at exit (TAMPERED), and one addressed only at exit, with no stash to check it against,
 * is UNCHECKED. Hence the stash lookup at every exit, addressed or not. */
MW_SYS_EXIT(sendmsg)
{
	struct mw_sys s;
	struct mw_event *e;
	struct iovec iov;
	struct sock *sk;
	__u32 data_off;
	bool addressed, stashed;

	if (mw_chan_sock(MW_CHAN_OUT))
		mw_chan_msg(mw_ctx_regs, ret, MW_CHAN_OUT); /* a stdout that is a socket */
	e = mw_sys_begin(&s, MW_OP_SENDMSG, ret, MW_INT(0), MW_UINT(2), 0, 0);
	if (!e)
		return 0;
	sk = mw_sock_kind(e, mw_iarg(&s, 0));
	data_off = s.r.off;
	addressed = mw_msghdr(&s, mw_uptr(&s, 1), &iov);
	stashed = mw_head_check(&s.r, MW_S_DATA, data_off);
	if (addressed && !stashed)
		e->flags |= MW_F_UNCHECKED;
	return mw_send_finish(&s, sk, data_off, iov.iov_base, iov.iov_len, addressed || stashed);
}

#define MW_MMSG_RECORDS 8 /* messages of one sendmmsg that get a record */

struct mw_mmsg_ctx {
	long ret;
	int fd;
	bool more; /* more messages were sent than get a record */
	const struct mmsghdr *vec;
};

/* One record per message of a sendmmsg, built in bpf_loop so the verifier sees it once. */
static long mw_mmsg_one(__u32 i, void *data)
{
	struct mw_mmsg_ctx *c = data;
	struct iovec iov;
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin_regs(&s, mw_regs(), MW_OP_SENDMMSG, c->ret, 0, 0, 0, 0);
	struct sock *sk;
	__u32 data_off;
	bool addressed;

	if (!e)
		return 1;
	e->arg[0] = c->fd;
	e->arg[1] = i;
	if (c->more)
		e->flags |= MW_F_MORE;
	sk = mw_sock_kind(e, c->fd);
	data_off = s.r.off;
	addressed = mw_msghdr(&s, &c->vec[i].msg_hdr, &iov);
	mw_send_finish(&s, sk, data_off, iov.iov_base, iov.iov_len, addressed);
	return 0;
}

MW_SYS_EXIT(sendmmsg)
{
	struct mw_mmsg_ctx c;
	struct pt_regs *regs;
	__u32 n;

	if (!mw_is_tracked())
		return 0;
	regs = mw_ctx_regs;
	if (mw_chan_sock(MW_CHAN_OUT))
		mw_chan_mmsg(regs, ret, MW_CHAN_OUT); /* a stdout that is a socket */
	c.ret = ret;
	c.fd = (int)mw_arg(regs, 0);
	c.vec = (const struct mmsghdr *)mw_arg(regs, 1);
	n = (__u32)mw_arg(regs, 2);
	if (ret > 0 && (__u32)ret < n)
		n = (__u32)ret; /* only the messages that were sent */
	c.more = n > MW_MMSG_RECORDS;
	bpf_loop(c.more ? MW_MMSG_RECORDS : n, mw_mmsg_one, &c, 0);
	return 0;
}
