// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring.bpf.c - the evasion signals. io_uring: work submitted through a ring does not pass
 * through the syscalls the other families watch, so its setup and use are recorded, and each
 * submission's opcode and fd from the io_uring_submit_req tracepoint (which runs in the
 * submitting task, so the membership test applies as everywhere else), with the paths and the
 * address the request names (an open, stat, unlink, mkdir, rename, link or symlink; a connect or
 * a send to an address: what the syscalls of the same names would have recorded), and where a
 * request on the channel's objects is also found (chan_async.bpf.h). At each completion
 * (io_uring_complete): the file an open opened, the peer a connect reached, and the channel
 * bytes a request moved.
 * userfaultfd: it lets a process stop the kernel on a page of its own memory, the usual way to
 * win a race against a check of an argument (see the tamper check of inflight.bpf.h).
 */
#include "chan_async.bpf.h"
#include "sock.bpf.h"

MW_SYS_EXIT(io_uring_setup)
{
	struct io_uring_params p = {};
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_IO_URING_SETUP, ret, MW_UINT(0), 0, 0, 0);

	if (!e)
		return 0;
	if (bpf_probe_read_user(&p, sizeof(p), mw_uptr(&s, 1)) == 0)
		e->arg[1] = p.flags;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(io_uring_enter)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_IO_URING_ENTER, ret, MW_INT(0), MW_UINT(1), MW_UINT(2),
			  MW_UINT(3)))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(io_uring_register)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_IO_URING_REGISTER, ret, MW_INT(0), MW_UINT(1), MW_UINT(3),
			  0))
		return 0;
	return mw_sys_plain(&s);
}

#define MW_IORING_CONNECT   16
#define MW_IORING_OPENAT    18
#define MW_IORING_STATX	    21
#define MW_IORING_OPENAT2   28
#define MW_IORING_RENAMEAT  35
#define MW_IORING_UNLINKAT  36
#define MW_IORING_MKDIRAT   37
#define MW_IORING_SYMLINKAT 38
#define MW_IORING_LINKAT    39

/* The path a request of a one-path opcode names (the kernel's copy, made when the request was
 * prepared, before this tracepoint) and its directory fd; NULL for other opcodes, or a kernel
 * without these structures. The request's command data starts the request (io_kiocb_to_cmd).
 * Each read is guarded by its field's existence, which CO-RE also denies to a field of another
 * kind (a pointer become a struct), so a kernel that changed them loads with the branch dead. */
static __always_inline const char *mw_uring_path(struct io_kiocb *req, __u8 op, int *dfd,
						 __u64 *open_flags)
{
	switch (op) {
	case MW_IORING_OPENAT:
	case MW_IORING_OPENAT2:
		if (!bpf_core_field_exists(struct io_open, filename))
			return NULL;
		*dfd = BPF_CORE_READ((struct io_open *)req, dfd);
		*open_flags = BPF_CORE_READ((struct io_open *)req, how.flags);
		return BPF_CORE_READ((struct io_open *)req, filename, name);
	case MW_IORING_STATX:
		if (!bpf_core_field_exists(struct io_statx, filename))
			return NULL;
		*dfd = BPF_CORE_READ((struct io_statx *)req, dfd);
		return BPF_CORE_READ((struct io_statx *)req, filename, name);
	case MW_IORING_UNLINKAT:
		if (!bpf_core_field_exists(struct io_unlink, filename))
			return NULL;
		*dfd = BPF_CORE_READ((struct io_unlink *)req, dfd);
		return BPF_CORE_READ((struct io_unlink *)req, filename, name);
	case MW_IORING_MKDIRAT:
		if (!bpf_core_field_exists(struct io_mkdir, filename))
			return NULL;
		*dfd = BPF_CORE_READ((struct io_mkdir *)req, dfd);
		return BPF_CORE_READ((struct io_mkdir *)req, filename, name);
	}
	return NULL;
}

/* The paths a request names, as the syscall of the same name records them: path (and its
 * absolute form) and, for a rename or link, the new name as path2; a symlink's new link is its
 * path and what it points to its path2, never resolved. The renames' and links' state has the
 * same shape (io_rename, io_link). */
static __always_inline void mw_uring_paths(struct mw_rec *r, struct io_kiocb *req, __u8 op)
{
	const char *path, *path2;
	__u64 open_flags = 0;
	int dfd = -100;

	path = mw_uring_path(req, op, &dfd, &open_flags);
	if (path) {
		r->e->arg[1] = (__u64)(__s64)dfd; /* the fd the request names is its directory's */
		r->e->arg[3] = open_flags;
		mw_path_arg_from(r, MW_S_PATH, MW_S_ABS, dfd, path, false);
		return;
	}
	if (op != MW_IORING_RENAMEAT && op != MW_IORING_LINKAT && op != MW_IORING_SYMLINKAT)
		return;
	if (!bpf_core_field_exists(struct io_link, oldpath) ||
	    !bpf_core_field_exists(struct io_link, newpath))
		return;
	path = BPF_CORE_READ((struct io_link *)req, oldpath, name);
	path2 = BPF_CORE_READ((struct io_link *)req, newpath, name);
	dfd = BPF_CORE_READ((struct io_link *)req, old_dfd);
	if (op == MW_IORING_SYMLINKAT) {
		dfd = BPF_CORE_READ((struct io_link *)req, new_dfd);
		r->e->arg[1] = (__u64)(__s64)dfd;
		mw_path_arg_from(r, MW_S_PATH, MW_S_ABS, dfd, path2, false);
		mw_slot_str(r, MW_S_PATH2, path, MW_PATH_MAX, false);
		return;
	}
	r->e->arg[1] = (__u64)(__s64)dfd;
	mw_path_arg_from(r, MW_S_PATH, MW_S_ABS, dfd, path, false);
	mw_path_arg_from(r, MW_S_PATH2, MW_S_ABS2, BPF_CORE_READ((struct io_link *)req, new_dfd),
			 path2, false);
}

/* Whether the n bytes at a (this CPU's scratch) equal those at kernel address k. */
static __always_inline bool mw_uring_same(const __u8 *a, const void *k, __u32 n)
{
	__u8 buf[MW_SOCKADDR_MAX] = {};

	if (n == 0 || n > MW_SOCKADDR_MAX)
		return false;
	barrier_var(n);
	if (bpf_probe_read_kernel(buf, n, k))
		return false;
	for (__u32 i = 0; i < MW_SOCKADDR_MAX && i < n; i++)
		if (buf[i] != a[i])
			return false;
	return true;
}

/* A connect's address. The kernel copied it when it prepared the request, but where it keeps
 * that copy moved between kernels (an async message header's addr, or a bare sockaddr_storage
 * as the request's async data: 2026 stable kernels) and nothing in BTF tells them apart, so the
 * address the process gave is read from its memory and confirmed against the copy at either
 * place; a read that fails, or matches neither (the process rewrote it since, a kernel that
 * copies it only when the request runs, before 6.10, or a layout unknown here), is flagged
 * unchecked. Not closed: on a kernel that keeps the copy in the header's addr, the header's
 * first bytes (a recycled send's iovec) could be made to equal a rewritten address. */
static __always_inline void mw_uring_connect_addr(struct mw_rec *r, struct io_kiocb *req)
{
	struct io_connect *c = (struct io_connect *)req;
	__u32 off = r->off, n;
	const __u8 *got;
	void *ad;
	int len;

	if (!bpf_core_field_exists(struct io_connect, addr) ||
	    !bpf_core_field_exists(struct io_connect, addr_len))
		return;
	len = BPF_CORE_READ(c, addr_len);
	if (len <= 0)
		return;
	mw_slot_bytes(r, MW_S_DATA, BPF_CORE_READ(c, addr), (__u32)len, MW_SOCKADDR_MAX, true);
	n = r->e->slen[MW_S_DATA];
	ad = BPF_CORE_READ(req, async_data);
	if (!n || n > MW_SOCKADDR_MAX || off >= MW_EVENT_MAX - MW_SOCKADDR_MAX) {
		/* not readable now (a page not faulted in yet), though the kernel may read it */
		r->e->flags |= MW_F_UNCHECKED;
		return;
	}
	got = &r->s->event[off & (MW_EVENT_MAX - 1)];
	if (ad &&
	    (mw_uring_same(got, ad, n) ||
	     (bpf_core_field_exists(struct io_async_msghdr, addr) &&
	      mw_uring_same(got, ad + bpf_core_field_offset(struct io_async_msghdr, addr), n))))
		return;
	r->e->flags |= MW_F_UNCHECKED;
}

/* The address a send names: the kernel's copy, where the request's message header points
 * (prepared with the request since 6.10; before, a send's address is copied when it is issued
 * and none is recorded here). */
static __always_inline void mw_uring_send_addr(struct mw_rec *r, struct io_kiocb *req, __u8 op)
{
	struct io_async_msghdr *m;
	void *name;
	int len;

	if (op != MW_IORING_SENDMSG && op != MW_IORING_SEND && op != MW_IORING_SEND_ZC &&
	    op != MW_IORING_SENDMSG_ZC)
		return;
	if (!bpf_core_type_exists(struct io_async_msghdr) ||
	    !bpf_core_field_exists(struct io_async_msghdr, msg))
		return;
	m = BPF_CORE_READ(req, async_data);
	if (!m)
		return;
	name = BPF_CORE_READ(m, msg.msg_name);
	len = BPF_CORE_READ(m, msg.msg_namelen);
	if (name && len > 0)
		mw_slot_bytes(r, MW_S_DATA, name, (__u32)len, MW_SOCKADDR_MAX, false);
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(handle_io_uring_submit_req, struct io_kiocb *req)
{
	struct mw_rec r;
	struct mw_event *e;
	__u8 op;

	if (!mw_is_tracked())
		return 0;
	e = mw_rec_begin(&r, MW_OP_IO_URING_SUBMIT, 0);
	if (!e)
		return 0;
	op = BPF_CORE_READ(req, opcode);
	e->arg[0] = op;
	e->arg[1] = BPF_CORE_READ(req, cqe.fd);
	e->arg[2] = BPF_CORE_READ(req, cqe.user_data);
	if ((op == MW_IORING_OPENAT || op == MW_IORING_OPENAT2 || op == MW_IORING_CONNECT) &&
	    (BPF_CORE_READ(req, flags) & MW_REQ_F_CQE_SKIP))
		e->flags |= MW_F_UNCHECKED; /* no completion: no opened or connected record */
	mw_uring_paths(&r, req, op);
	if (op == MW_IORING_CONNECT)
		mw_uring_connect_addr(&r, req);
	else
		mw_uring_send_addr(&r, req, op);
	mw_rec_emit(&r);
	mw_chan_uring_submit(req); /* a request on the channel's objects (chan_async.bpf.h) */
	return 0;
}

/* The file an io_uring open opened, named from its new descriptor when the request completes:
 * the kernel resolved the name when the request ran, not when it was submitted, so this is
 * what it acted on whatever the name hid (a symbolic link, /proc/self/fd/N/..., a chdir in
 * between), as a syscall's opened_path. The completion runs in the submitting task or in one
 * of its process's io_uring threads, which share its descriptor table. An open into a
 * registered file slot (file_slot) has no descriptor: its file is unresolved. */
static __always_inline void mw_uring_opened(struct io_kiocb *req, __u8 op, __s32 res)
{
	struct mw_rec r;
	struct mw_event *e;

	e = mw_rec_begin(&r, MW_OP_IO_URING_OPENED, res);
	if (!e)
		return;
	e->arg[0] = op;
	e->arg[1] = res;
	e->arg[2] = BPF_CORE_READ(req, cqe.user_data);
	if (bpf_core_field_exists(struct io_open, how))
		e->arg[3] = BPF_CORE_READ((struct io_open *)req, how.flags); /* write intent */
	if (res >= 0) {
		if (bpf_core_field_exists(struct io_open, file_slot) &&
		    BPF_CORE_READ((struct io_open *)req, file_slot))
			e->flags |= MW_F_UNRES(MW_S_OPENED);
		else
			mw_fd_path(&r, MW_S_OPENED, res);
	}
	mw_rec_emit(&r);
}

/* The peer an io_uring connect reached, as its socket holds it when the request completes
 * (connected, or under way: EINPROGRESS): the kernel's own view, whatever name or bytes the
 * request gave (a unix socket by a relative name, an address rewritten after it was copied).
 * A failed connect reached none; its submission names what it tried. */
static __always_inline void mw_uring_connected(struct io_kiocb *req, __s32 res)
{
	struct mw_rec r;
	struct mw_event *e;
	struct sock *sk;

	if (res != 0 && res != -115 /* EINPROGRESS */)
		return;
	e = mw_rec_begin(&r, MW_OP_IO_URING_CONNECTED, res);
	if (!e)
		return;
	e->arg[0] = MW_IORING_CONNECT;
	e->arg[1] = BPF_CORE_READ(req, cqe.user_data); /* the fd shares its place with res */
	sk = mw_file_sock_kind(e->arg, BPF_CORE_READ(req, file)); /* arg[2], arg[3] */
	if (sk)
		mw_slot_sockname(&r, MW_S_DATA, sk, true);
	mw_rec_emit(&r);
}

/* Every completion on the host comes here: the membership test first, then the request's
 * opcode and result, read once. */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(handle_io_uring_complete, struct io_ring_ctx *ring, void *req,
	     struct io_uring_cqe *cqe)
{
	struct io_kiocb *rq = req;
	__s32 res;
	__u8 op;

	if (!rq || !mw_is_tracked())
		return 0;
	res = BPF_CORE_READ(cqe, res);
	op = BPF_CORE_READ(rq, opcode);
	if (op == MW_IORING_OPENAT || op == MW_IORING_OPENAT2)
		mw_uring_opened(rq, op, res);
	else if (op == MW_IORING_CONNECT)
		mw_uring_connected(rq, res);
	return mw_chan_uring(rq, op, res); /* channel bytes it moved */
}

/* userfaultfd(flags) */
MW_SYS_EXIT(userfaultfd)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_USERFAULTFD, ret, MW_UINT(0), 0, 0, 0))
		return 0;
	return mw_sys_plain(&s);
}
