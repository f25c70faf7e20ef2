/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * chan_async.bpf.h - the channel's bytes moved with no read or write program seeing them: a
 * Linux AIO iocb (io_submit) or an io_uring request on the server's stdin or stdout object.
 * Their bytes are not captured: each becomes a GAP record of the length it moved or asked for,
 * or a loss when that length cannot be known (see chan.bpf.h for the stream and its records).
 * Shared by chan.bpf.c (io_submit's entry, the completion queue's overflow) and uring.bpf.c
 * (a request's submission and completion).
 */
#ifndef MW_CHAN_ASYNC_BPF_H
#define MW_CHAN_ASYNC_BPF_H

#include "chan.bpf.h"

/* Linux AIO: an iocb submitted by io_submit reads or writes its fd with no read or write
 * program seeing it (on a pipe the kernel moves the bytes inside io_submit, from the iocb's
 * buffer). Each iocb on the stdout (or stdin) object becomes a gap of the length it asks for,
 * read at io_submit's entry, as the kernel is about to read the iocbs (at the exit, a thread
 * could have rewritten them while a write blocked): a submission that fails, or a short read,
 * makes the stream's offsets count more than came. */
#define MW_IOCB_CMD_PREAD   0
#define MW_IOCB_CMD_PWRITE  1
#define MW_IOCB_CMD_PREADV  7
#define MW_IOCB_CMD_PWRITEV 8
#define MW_AIO_WALK	    1024 /* iocbs of one io_submit looked at; past them, a loss */

struct mw_iov_sum {
	const struct iovec *vec;
	__u64 bytes;
};

static long mw_iov_add(__u32 i, void *data)
{
	struct mw_iov_sum *c = data;
	__u64 n;

	if (bpf_probe_read_user(&n, sizeof(n), &c->vec[i].iov_len))
		return 1;
	c->bytes += n;
	return 0;
}

struct mw_aio_ctx {
	struct iocb *const *vec;
	long nr;
};

static long mw_aio_one(__u32 i, void *data)
{
	struct mw_aio_ctx *c = data;
	struct mw_iov_sum v = {};
	struct iocb *p;
	struct iocb cb;
	struct mw_chan *ch;
	__u32 dir;

	if (bpf_probe_read_user(&p, sizeof(p), &c->vec[i]) ||
	    bpf_probe_read_user(&cb, sizeof(cb), p)) {
		mw_loss(MW_LOSS_READ_FAULT); /* not present yet: what it moves is not known */
		return 0;
	}
	if (cb.aio_lio_opcode == MW_IOCB_CMD_PWRITE || cb.aio_lio_opcode == MW_IOCB_CMD_PWRITEV)
		dir = MW_CHAN_OUT;
	else if (cb.aio_lio_opcode == MW_IOCB_CMD_PREAD || cb.aio_lio_opcode == MW_IOCB_CMD_PREADV)
		dir = MW_CHAN_IN;
	else
		return 0;
	ch = mw_chan_match((int)cb.aio_fildes, dir);
	if (!ch)
		return 0;
	v.bytes = cb.aio_nbytes;
	if (cb.aio_lio_opcode == MW_IOCB_CMD_PWRITEV || cb.aio_lio_opcode == MW_IOCB_CMD_PREADV) {
		v.vec = (const struct iovec *)cb.aio_buf;
		v.bytes = 0;
		bpf_loop(cb.aio_nbytes > MW_IOV_WALK ? MW_IOV_WALK : (__u32)cb.aio_nbytes,
			 mw_iov_add, &v, 0);
	}
	if (!v.bytes)
		return 0;
	mw_chan_moved_gap(ch, (int)cb.aio_fildes, c->nr, v.bytes, dir);
	return 0;
}

/* io_submit's entry: its nr iocbs (the record's ret is nr, the result not yet known). */
static __always_inline int mw_chan_aio(struct pt_regs *regs)
{
	struct mw_aio_ctx c = {.vec = (struct iocb *const *)mw_arg(regs, 2),
			       .nr = (long)mw_arg(regs, 1)};

	if (c.nr <= 0 || !mw_is_tracked())
		return 0;
	bpf_loop(c.nr > MW_AIO_WALK ? MW_AIO_WALK : (__u32)c.nr, mw_aio_one, &c, 0);
	if (c.nr > MW_AIO_WALK)
		mw_loss(MW_LOSS_CHAN_CUT); /* iocbs not looked at may move channel bytes */
	return 0;
}

/* io_uring: a request reads or writes its file with no read or write program seeing it (the
 * ring's worker or the kernel's task work moves the bytes). A request on the stdin or stdout
 * object is found at its submission, in the submitting thread, whose fd table names its file
 * (uring_reqs keeps it until its completion; a registered file is found at the completion, by
 * then resolved), and each completion that moved bytes becomes a gap of its result's length.
 * What a completion would not show is a loss at the submission: a request whose success posts
 * no completion (CQE skip), a multishot or bundle request (its extra completions are posted
 * without the request), and such a request on a registered file, whose object is not known
 * before it runs. A completion that overflows the ring (posted later, with no tracepoint) in a
 * tracked process, once the channel has had an io_uring request, is a loss too. The completion
 * runs in the submitting task or in one of its io_uring threads (the same thread group: the
 * membership test holds). A recv with MSG_PEEK takes nothing from the stream. The opcodes and
 * flags are the io_uring ABI's; the first bits of a request's flags are its sqe's. */
#define MW_IORING_READV		1
#define MW_IORING_WRITEV	2
#define MW_IORING_READ_FIXED	4
#define MW_IORING_WRITE_FIXED	5
#define MW_IORING_SENDMSG	9
#define MW_IORING_RECVMSG	10
#define MW_IORING_READ		22
#define MW_IORING_WRITE		23
#define MW_IORING_SEND		26
#define MW_IORING_RECV		27
#define MW_IORING_SPLICE	30
#define MW_IORING_TEE		33
#define MW_IORING_SEND_ZC	47
#define MW_IORING_SENDMSG_ZC	48
#define MW_IORING_READ_MULTI	49
#define MW_IORING_RECV_ZC	58
#define MW_IORING_READV_FIXED	60
#define MW_IORING_WRITEV_FIXED	61
#define MW_SPLICE_F_FD_IN_FIXED (1u << 31)
#define MW_REQ_F_FIXED_FILE	(1ull << 0) /* IOSQE_FIXED_FILE */
#define MW_REQ_F_CQE_SKIP	(1ull << 6) /* IOSQE_CQE_SKIP_SUCCESS */
#define MW_RECV_MULTISHOT	(1u << 1)   /* sqe->ioprio of a send or recv */
#define MW_RECVSEND_BUNDLE	(1u << 4)
#define MW_URING_NO_DIR		MW_CHAN_DIRS

/* The direction a request of this opcode moves bytes through its own file (req->file):
 * MW_CHAN_IN, MW_CHAN_OUT, or -1 for an opcode that moves no stream bytes there. */
static __always_inline int mw_uring_dir(__u8 op)
{
	switch (op) {
	case MW_IORING_READV:
	case MW_IORING_READ_FIXED:
	case MW_IORING_RECVMSG:
	case MW_IORING_READ:
	case MW_IORING_RECV:
	case MW_IORING_READ_MULTI:
	case MW_IORING_RECV_ZC:
	case MW_IORING_READV_FIXED:
		return MW_CHAN_IN;
	case MW_IORING_WRITEV:
	case MW_IORING_WRITE_FIXED:
	case MW_IORING_SENDMSG:
	case MW_IORING_WRITE:
	case MW_IORING_SEND:
	case MW_IORING_SPLICE: /* req->file is the output */
	case MW_IORING_TEE:
	case MW_IORING_SEND_ZC:
	case MW_IORING_SENDMSG_ZC:
	case MW_IORING_WRITEV_FIXED:
		return MW_CHAN_OUT;
	}
	return -1;
}

/* The send or recv state of a request (its data at the start of the request, as the splice's),
 * or NULL for another opcode, or a kernel without it. */
static __always_inline struct io_sr_msg *mw_uring_sr(struct io_kiocb *req, __u8 op)
{
	if (!bpf_core_field_exists(struct io_sr_msg, msg_flags))
		return NULL;
	switch (op) {
	case MW_IORING_SENDMSG:
	case MW_IORING_RECVMSG:
	case MW_IORING_SEND:
	case MW_IORING_RECV:
	case MW_IORING_SEND_ZC:
	case MW_IORING_SENDMSG_ZC:
		return (struct io_sr_msg *)req;
	}
	return NULL;
}

/* Whether the request's completions may not show all it moved: no completion on success, or
 * extra completions without the request. */
static __always_inline bool mw_uring_unseen(struct io_kiocb *req, __u8 op, __u64 flags)
{
	struct io_sr_msg *sr = mw_uring_sr(req, op);

	if ((flags & MW_REQ_F_CQE_SKIP) || op == MW_IORING_READ_MULTI)
		return true;
	return sr && (BPF_CORE_READ(sr, flags) & (MW_RECV_MULTISHOT | MW_RECVSEND_BUNDLE));
}

/* Whether a receive only peeks (MSG_PEEK): the bytes stay in the stream for the next read. */
static __always_inline bool mw_uring_peek(struct io_kiocb *req, __u8 op)
{
	struct io_sr_msg *sr = mw_uring_sr(req, op);

	return sr && mw_uring_dir(op) == MW_CHAN_IN && (BPF_CORE_READ(sr, msg_flags) & MW_MSG_PEEK);
}

static __always_inline void mw_chan_uring_mark(struct mw_chan *ch)
{
	if (ch && !(ch->enabled & MW_CHAN_URING))
		__sync_fetch_and_or(&ch->enabled, MW_CHAN_URING);
}

/* At a tracked task's submission of req (io_uring_submit_req). */
static __always_inline void mw_chan_uring_submit(struct io_kiocb *req)
{
	struct mw_uring_req u = {.fd = -1, .dir = MW_URING_NO_DIR, .in_fd = -1};
	__u64 key = (__u64)req, flags;
	struct mw_chan *ch = NULL, *in = NULL;
	bool unknown = false;
	__u32 hit;
	__u8 op;
	int d;

	op = BPF_CORE_READ(req, opcode);
	d = mw_uring_dir(op);
	if (d < 0) {
		/* a recycled request's stale entry must not count this one's completion */
		bpf_map_delete_elem(&uring_reqs, &key);
		return;
	}
	flags = BPF_CORE_READ(req, flags);
	u.fd = BPF_CORE_READ(req, cqe.fd);
	if (flags & MW_REQ_F_FIXED_FILE)
		unknown = true;
	else if (!mw_uring_peek(req, op))
		ch = mw_chan_match(u.fd, (__u32)d);
	if (op == MW_IORING_SPLICE && bpf_core_field_exists(struct io_splice, splice_fd_in)) {
		struct io_splice *sp = (struct io_splice *)req;

		if (BPF_CORE_READ(sp, flags) & MW_SPLICE_F_FD_IN_FIXED) {
			unknown = true;
		} else {
			u.in_fd = BPF_CORE_READ(sp, splice_fd_in);
			in = mw_chan_match(u.in_fd, MW_CHAN_IN);
		}
	}
	hit = (ch ? 1 : 0) | (in ? 2 : 0);
	barrier_var(hit); /* not (ch | in): the verifier refuses OR on pointers */
	if (!hit) {
		bpf_map_delete_elem(&uring_reqs, &key); /* as above */
		if (unknown && mw_uring_unseen(req, op, flags))
			mw_loss(MW_LOSS_CHAN_CUT); /* it may be a channel object, never shown */
		return;
	}
	mw_chan_uring_mark(ch);
	mw_chan_uring_mark(in);
	if (mw_uring_unseen(req, op, flags))
		mw_loss(MW_LOSS_CHAN_CUT);
	if (ch)
		u.dir = (__u32)d;
	u.in = in != NULL;
	if (bpf_map_update_elem(&uring_reqs, &key, &u, BPF_ANY))
		mw_loss(MW_LOSS_CHAN_CUT); /* its completion will not be known for the channel's */
}

static __always_inline void mw_chan_uring_gap(__u32 dir, int fd, __s32 res)
{
	__u32 d = dir;
	struct mw_chan *ch = bpf_map_lookup_elem(&chan, &d);

	if (ch)
		mw_chan_moved_gap(ch, fd, res, (__u64)res, dir);
}

/* At the completion of a tracked task's req of opcode op (io_uring_complete), with result
 * res. */
static __always_inline int mw_chan_uring(struct io_kiocb *req, __u8 op, __s32 res)
{
	struct mw_uring_req u = {.fd = -1, .dir = MW_URING_NO_DIR, .in_fd = -1};
	__u64 key = (__u64)req;
	struct mw_uring_req *p;
	int d;

	p = bpf_map_lookup_elem(&uring_reqs, &key);
	if (p) {
		u = *p;
		bpf_map_delete_elem(&uring_reqs, &key);
	} else {
		/* not found at submission: a registered file (resolved by now), or a request
		 * submitted before recording began */
		d = mw_uring_dir(op);
		if (d < 0 || mw_uring_peek(req, op) ||
		    !mw_chan_match_file(BPF_CORE_READ(req, file), (__u32)d))
			return 0;
		u.dir = (__u32)d;
	}
	if (res <= 0)
		return 0;
	if (u.dir < MW_CHAN_DIRS)
		mw_chan_uring_gap(u.dir, u.fd, res);
	if (u.in)
		mw_chan_uring_gap(MW_CHAN_IN, u.in_fd, res);
	return 0;
}

/* A completion of a tracked process that found the ring full (posted later, with no tracepoint):
 * once the channel has had an io_uring request, it may be one of them. */
static __always_inline int mw_chan_uring_overflow(void)
{
	__u32 in = MW_CHAN_IN, out = MW_CHAN_OUT;
	struct mw_chan *a, *b;

	if (!mw_is_tracked())
		return 0;
	a = bpf_map_lookup_elem(&chan, &in);
	b = bpf_map_lookup_elem(&chan, &out);
	if ((a && (a->enabled & MW_CHAN_URING)) || (b && (b->enabled & MW_CHAN_URING)))
		mw_loss(MW_LOSS_CHAN_CUT);
	return 0;
}

#endif /* MW_CHAN_ASYNC_BPF_H */
