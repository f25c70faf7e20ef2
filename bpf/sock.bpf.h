/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sock.bpf.h - a file's socket and the addresses the kernel holds for it: its kind (type and
 * family) and its peer or local address as a struct sockaddr, for the network family's records
 * (net.bpf.c) and an io_uring connect's completion (uring.bpf.c).
 */
#ifndef MW_SOCK_BPF_H
#define MW_SOCK_BPF_H

#include "common.bpf.h"
#include <bpf/bpf_endian.h>

#define MW_AF_UNIX  1
#define MW_AF_INET  2
#define MW_AF_INET6 10
#define MW_S_IFMT   00170000
#define MW_S_IFSOCK 0140000

/* The struct sock behind file f, or NULL if f is NULL or not a socket. */
static __always_inline struct sock *mw_file_sock(struct file *f, struct socket **sockp)
{
	struct socket *sock;

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & MW_S_IFMT) != MW_S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(f, private_data);
	if (sockp)
		*sockp = sock;
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

/* arg[2] = socket type, arg[3] = family of file f's socket (f may be NULL), into a record's
 * arguments or an in-flight stash's. */
static __always_inline struct sock *mw_file_sock_kind(__u64 *arg, struct file *f)
{
	struct socket *sock = NULL;
	struct sock *sk = mw_file_sock(f, &sock);

	if (!sk)
		return NULL;
	arg[2] = BPF_CORE_READ(sock, type);
	arg[3] = BPF_CORE_READ(sk, __sk_common.skc_family);
	return sk;
}

/* Writes the socket's peer (or local) address into slot as a struct sockaddr. */
static __always_inline void mw_slot_sockname(struct mw_rec *r, int slot, struct sock *sk, bool peer)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u32 off = r->off;
	__u8 *dst;
	__u32 n = 0;

	if (!sk || off >= MW_EVENT_MAX)
		return;
	dst = &r->s->event[off & (MW_EVENT_MAX - 1)];
	if (family == MW_AF_INET) {
		struct sockaddr_in *in = (void *)dst;

		__builtin_memset(in, 0, sizeof(*in));
		in->sin_family = MW_AF_INET;
		if (peer) {
			in->sin_port = BPF_CORE_READ(sk, __sk_common.skc_dport);
			in->sin_addr.s_addr = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		} else {
			in->sin_port = bpf_htons(BPF_CORE_READ(sk, __sk_common.skc_num));
			in->sin_addr.s_addr = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		}
		n = sizeof(*in);
	} else if (family == MW_AF_INET6) {
		struct sockaddr_in6 *in6 = (void *)dst;

		__builtin_memset(in6, 0, sizeof(*in6));
		in6->sin6_family = MW_AF_INET6;
		if (peer) {
			in6->sin6_port = BPF_CORE_READ(sk, __sk_common.skc_dport);
			BPF_CORE_READ_INTO(&in6->sin6_addr, sk, __sk_common.skc_v6_daddr);
		} else {
			in6->sin6_port = bpf_htons(BPF_CORE_READ(sk, __sk_common.skc_num));
			BPF_CORE_READ_INTO(&in6->sin6_addr, sk, __sk_common.skc_v6_rcv_saddr);
		}
		n = sizeof(*in6);
	} else if (family == MW_AF_UNIX) {
		struct unix_sock *u = (struct unix_sock *)sk;
		struct unix_address *addr;
		int len;

		if (peer)
			u = (struct unix_sock *)BPF_CORE_READ(u, peer);
		addr = u ? BPF_CORE_READ(u, addr) : NULL;
		if (!addr)
			return;
		len = BPF_CORE_READ(addr, len);
		if (len <= 0 || len > (int)sizeof(struct sockaddr_un))
			return;
		if (bpf_probe_read_kernel(dst, len & 0x7f,
					  __builtin_preserve_access_index(&addr->name)))
			return;
		n = len & 0x7f;
	}
	if (!n)
		return;
	r->e->slen[slot] = n;
	r->off = off + n;
}

#endif /* MW_SOCK_BPF_H */
