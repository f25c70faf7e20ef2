/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * chan.bpf.h - capturing the MCP channel (see chan.bpf.c): the bytes a call moved on the
 * server's stdin or stdout object, as records of the stream, or a GAP record for what cannot be
 * captured. Shared by chan.bpf.c (read, write and their kin) and net.bpf.c (sendto, sendmsg,
 * sendmmsg, whose exits record the network side too); the bytes moved by Linux AIO and io_uring
 * are chan_async.bpf.h's.
 *
 * The bytes are read from the server's buffer after the call, and a write may block (a response
 * larger than the pipe): meanwhile another thread can rewrite bytes the kernel already copied,
 * so that the copy read at exit is not what the client got. So each write on the stdout object
 * is also read at entry, chunk by chunk as its exit will capture it, and kept as a keyed hash
 * per chunk (chan_sums); the exit compares each chunk it captures: TAMPERED when it differs,
 * UNCHECKED when the entry could not read it (the entry's side: chan_sums.bpf.h). As for the
 * path arguments (inflight.bpf.h), what stays open is the short gap between the entry's read and
 * the kernel's own copy.
 */
#ifndef MW_CHAN_BPF_H
#define MW_CHAN_BPF_H

#include "syscall.bpf.h"

/* A span of the stream to capture: len bytes at ubuf (stream offset offset), the call's
 * chunk0-th chunk onwards, call_done bytes of the call already taken, head the --stdio head
 * limit (0: none). The chunk loop's context points to it (struct mw_cap_ctx). No padding: the
 * verifier wants every byte of a global function's argument initialised. */
#define MW_IOV_WALK 64 /* iovecs of a call walked; the bytes of any more are a gap */

struct mw_span {
	__u64 ubuf; /* ubuf and len first, as in a struct iovec (mw_cap_iov reads one into them) */
	__u64 len;
	__u64 offset;
	__u64 call_done;
	__u64 head;
	__s64 ret;
	__u32 chunk0;
	__s32 fd;
	__u16 op;
	__u16 last_span;
	__u32 pad;
};

_Static_assert(sizeof(struct iovec) == 16 && __builtin_offsetof(struct mw_span, ubuf) == 0 &&
		       __builtin_offsetof(struct mw_span, len) == 8,
	       "a struct iovec read into a span fills ubuf and len");

static __always_inline struct mw_chan *mw_chan_match_file(struct file *f, __u32 dir)
{
	struct mw_chan *c = bpf_map_lookup_elem(&chan, &dir);

	if (!c || !(c->enabled & MW_CHAN_ON))
		return NULL;
	if (!f || BPF_CORE_READ(f, f_inode, i_ino) != c->ino ||
	    BPF_CORE_READ(f, f_inode, i_sb, s_dev) != c->dev)
		return NULL;
	return c;
}

static __always_inline struct mw_chan *mw_chan_match(int fd, __u32 dir)
{
	return mw_chan_match_file(mw_fd_file(fd), dir);
}

/* Whether the channel's object of direction dir is a socket (set by the collector from its
 * type): the recv and send calls test it before anything else, so the sends and receives of
 * every tracked process pay no fd walk when stdin and stdout are pipes, as they usually are. */
static __always_inline bool mw_chan_sock(__u32 dir)
{
	struct mw_chan *c = bpf_map_lookup_elem(&chan, &dir);

	return c && (c->enabled & (MW_CHAN_ON | MW_CHAN_SOCK)) == (MW_CHAN_ON | MW_CHAN_SOCK);
}

/* The bytes of a span that are captured: within the call's chunk budget and the head limit. */
static __always_inline __u64 mw_span_keep(const struct mw_span *sp)
{
	__u64 keep = sp->len, budget;

	if (sp->chunk0 >= MW_CHAN_CHUNKS) {
		keep = 0;
	} else {
		budget = (__u64)(MW_CHAN_CHUNKS - sp->chunk0) * MW_DATA_MAX;
		if (keep > budget)
			keep = budget;
	}
	if (sp->head && sp->call_done + keep > sp->head)
		keep = sp->call_done >= sp->head ? 0 : sp->head - sp->call_done;
	return keep;
}

#include "chan_sums.bpf.h"

/* Chunk idx of a write, n bytes at src starting at byte call_off of the call's, into the record
 * with the check against the entry's hash. Each chunk must start where the entry's did (the
 * iovecs are read again at exit, from memory the server controls) and be as long, but for the
 * call's final chunk (final), which a write that moved less than asked ends early: that one is
 * read whole (the bytes past n were not sent: read for the compare, not kept), so that it hashes
 * as the entry's did. */
static __always_inline void mw_cap_checked(struct mw_rec *r, __u32 idx, const void *src, __u32 n,
					   __u64 call_off, bool final)
{
	struct mw_chan_sums *sm = mw_sums_of();
	__u32 off = r->off, len;

	if (!sm || idx >= sm->chunks || idx >= MW_CHAN_CHUNKS) {
		/* no stash (recording began during the write, or the map was full), an iovec
		 * the entry could not read, or a chunk the entry never saw (the iovecs grew) */
		r->e->flags |= sm && !sm->partial ? MW_F_TAMPERED : MW_F_UNCHECKED;
		mw_slot_bytes(r, MW_S_DATA, src, n, MW_DATA_MAX, true);
		return;
	}
	len = sm->len[idx & (MW_CHAN_CHUNKS - 1)];
	if (len == MW_SUM_UNREAD || len < n || (len > n && !final) ||
	    sm->at[idx & (MW_CHAN_CHUNKS - 1)] != call_off) {
		r->e->flags |= len == MW_SUM_UNREAD ? MW_F_UNCHECKED : MW_F_TAMPERED;
		mw_slot_bytes(r, MW_S_DATA, src, n, MW_DATA_MAX, true);
		return;
	}
	mw_slot_bytes(r, MW_S_DATA, src, len, MW_DATA_MAX, true);
	if (r->e->slen[MW_S_DATA] != len) { /* the unsent rest is gone: keep what was sent */
		r->e->flags &= ~MW_F_FAULT;
		r->e->flags |= MW_F_UNCHECKED;
		r->e->slen[MW_S_DATA] = 0;
		r->off = off;
		mw_slot_bytes(r, MW_S_DATA, src, n, MW_DATA_MAX, true);
		return;
	}
	if (mw_hash(r->s, off, len) != sm->hash[idx & (MW_CHAN_CHUNKS - 1)])
		r->e->flags |= MW_F_TAMPERED;
	r->e->slen[MW_S_DATA] = n;
	r->off = off + n;
}

/* mw_cap_span's loop context: the span (in its caller's frame) and how much of it is kept. A
 * pointer rather than a copy of the span: every byte of the loop's stack context counts towards
 * the 512 bytes of the deepest call chain (writev: handler, iovec loop, span, chunk, mw_hash),
 * and kernels without private BPF stacks (before 6.13, or with them off) refuse a chain over it. */
struct mw_cap_ctx {
	const struct mw_span *sp;
	__u64 keep;
};

static long mw_cap_chunk(__u32 i, void *data)
{
	struct mw_cap_ctx *c = data;
	const struct mw_span *sp = c->sp;
	__u64 at = (__u64)i * MW_DATA_MAX;
	struct mw_rec r;
	struct mw_event *e;
	__u32 n;
	bool final;

	if (!sp || at >= c->keep)
		return 1;
	n = c->keep - at > MW_DATA_MAX ? MW_DATA_MAX : (__u32)(c->keep - at);
	e = mw_rec_begin(&r, sp->op, sp->ret);
	if (!e)
		return 1;
	e->arg[0] = sp->fd;
	e->arg[1] = sp->offset + at;
	e->arg[2] = sp->ret;
	e->arg[3] = sp->chunk0 + i;
	final = sp->last_span && at + n >= c->keep;
	if (final)
		e->flags |= MW_F_LAST;
	if (sp->op == MW_OP_STDIO_WRITE)
		mw_cap_checked(&r, sp->chunk0 + i, (const void *)(sp->ubuf + at), n,
			       sp->call_done + at, final);
	else
		mw_slot_bytes(&r, MW_S_DATA, (const void *)(sp->ubuf + at), n, MW_DATA_MAX, true);
	mw_rec_emit(&r);
	return 0;
}

/* A record for bytes of the stream that were not captured; arg[3] = the direction. */
static __always_inline void mw_chan_gap(__u16 op, int fd, long ret, __u64 offset, __u64 len,
					__u32 dir)
{
	struct mw_rec r;
	struct mw_event *e = mw_rec_begin(&r, op, ret);

	if (!e)
		return;
	e->flags |= MW_F_GAP | MW_F_TRUNC(MW_S_DATA);
	e->arg[0] = fd;
	e->arg[1] = offset;
	e->arg[2] = len;
	e->arg[3] = dir;
	mw_rec_emit(&r);
}

/* len bytes a call (result ret) moved through fd on the channel with no copy of them: their
 * place in the stream (taken now), a CHAN_CUT loss and a GAP record. */
static __always_inline void mw_chan_moved_gap(struct mw_chan *ch, int fd, long ret, __u64 len,
					      __u32 dir)
{
	__u64 offset = __sync_fetch_and_add(&ch->offset, len);

	mw_loss(MW_LOSS_CHAN_CUT);
	mw_chan_gap(MW_OP_STDIO_MOVED, fd, ret, offset, len, dir);
}

/* The bytes of a span past what mw_cap_span keeps, as a gap. A function of its own so that its
 * record is not in mw_cap_span's frame, which is on the deepest call chain (see mw_cap_ctx). */
static __noinline void mw_span_gap(const struct mw_span *sp, __u64 keep)
{
	if (!sp->head)
		mw_loss(MW_LOSS_CHAN_CUT);
	mw_chan_gap(sp->op, sp->fd, sp->ret, sp->offset + keep, sp->len - keep,
		    sp->op == MW_OP_STDIO_READ ? MW_CHAN_IN : MW_CHAN_OUT);
}

/* Captures a span within the call's chunk budget; returns the number of chunks used. Bytes over
 * the budget or the head limit become a gap. A global function, so the verifier checks it once,
 * alone: inlined into readv/writev's iovec loop, its own loop made the jump sequence between two
 * verifier checkpoints exceed the kernel's limit of 8 192 ("The sequence of 8193 jumps is too
 * complex", seen on 6.18.44 on an Intel host), and then no program loads at all. Weak: each
 * object including this header brings one, the linker keeps one (as mw_hash). */
__weak __noinline int mw_cap_span(const struct mw_span *sp)
{
	struct mw_cap_ctx c; /* on the stack, as bpf_loop wants its context */
	__u64 keep;
	__u32 chunks;

	if (!sp)
		return 0;
	keep = mw_span_keep(sp);
	c.sp = sp;
	c.keep = keep;
	chunks = (__u32)((keep + MW_DATA_MAX - 1) / MW_DATA_MAX);
	if (chunks)
		bpf_loop(chunks, mw_cap_chunk, &c, 0);
	if (keep < sp->len)
		mw_span_gap(sp, keep);
	return chunks;
}

/* A read of 0 bytes on the stdin object: the client closed the channel. Reported once, as an
 * empty LAST frame at the stream's end, so the analyzer knows when shutdown began. */
static __always_inline void mw_chan_eof(int fd)
{
	struct mw_chan *ch = mw_chan_match(fd, MW_CHAN_IN);
	struct mw_rec r;
	struct mw_event *e;

	if (!ch || (__sync_fetch_and_or(&ch->enabled, MW_CHAN_EOF) & MW_CHAN_EOF))
		return;
	e = mw_rec_begin(&r, MW_OP_STDIO_READ, 0);
	if (!e)
		return;
	e->flags |= MW_F_LAST;
	e->arg[0] = fd;
	e->arg[1] = ch->offset;
	mw_rec_emit(&r);
}

/* The channel's state when this call moved bytes of direction dir through fd: for a read, when
 * fd is the stdin object now; for a write, when the call's entry found fd to be the stdout
 * object (its stash is active: the kernel resolved fd then, and another thread may have closed
 * or dup2'ed it since), or, with no stash (recording began during the call), when fd is it now
 * (its chunks are then UNCHECKED). */
static __always_inline struct mw_chan *mw_chan_of(int fd, __u32 dir)
{
	__u32 out = MW_CHAN_OUT;
	struct mw_chan *c;

	if (dir == MW_CHAN_OUT && mw_sums_of()) {
		c = bpf_map_lookup_elem(&chan, &out);
		return c && (c->enabled & MW_CHAN_ON) ? c : NULL;
	}
	return mw_chan_match(fd, dir);
}

/* read/write and pread/pwrite: one contiguous buffer. */
static __always_inline int mw_chan_flat(struct pt_regs *regs, long ret, __u32 dir)
{
	struct mw_span sp = {};
	struct mw_chan *ch;
	int fd;

	if (!mw_is_tracked())
		return 0;
	fd = (int)mw_arg(regs, 0);
	if (ret <= 0) { /* 0: end of file, unless nothing was asked for (a read of 0 bytes) */
		if (ret == 0 && dir == MW_CHAN_IN && mw_arg(regs, 2))
			mw_chan_eof(fd);
		if (dir == MW_CHAN_OUT)
			mw_sums_end(); /* a failed write's stash must not serve a later call */
		return 0;
	}
	ch = mw_chan_of(fd, dir);
	if (!ch)
		return 0;
	sp.ubuf = mw_arg(regs, 1);
	sp.len = ret;
	sp.offset = __sync_fetch_and_add(&ch->offset, ret);
	sp.head = ch->head;
	sp.ret = ret;
	sp.fd = fd;
	sp.op = dir == MW_CHAN_IN ? MW_OP_STDIO_READ : MW_OP_STDIO_WRITE;
	sp.last_span = true;
	mw_cap_span(&sp);
	if (dir == MW_CHAN_OUT)
		mw_sums_end();
	return 0;
}

struct mw_iov_ctx {
	struct mw_chan *ch;
	const struct iovec *vec;
	__u64 left;   /* transferred bytes not yet assigned to an iovec */
	__u64 offset; /* stream offset of the next byte */
	__u64 done;
	long ret;
	__u32 chunks;
	int fd;
	__u16 op;
};

static long mw_cap_iov(__u32 i, void *data)
{
	struct mw_iov_ctx *c = data;
	struct mw_span sp = {};
	__u64 n;

	/* the iovec straight into the span's ubuf and len, which have its layout: no copy of it
	 * on a stack that is on the deepest call chain (see mw_cap_ctx) */
	if (!c->left || bpf_probe_read_user(&sp, sizeof(struct iovec), &c->vec[i]))
		return 1;
	n = sp.len < c->left ? sp.len : c->left;
	sp.len = n;
	sp.offset = c->offset;
	sp.call_done = c->done;
	sp.head = c->ch->head;
	sp.ret = c->ret;
	sp.chunk0 = c->chunks;
	sp.fd = c->fd;
	sp.op = c->op;
	sp.last_span = n == c->left;
	c->chunks += mw_cap_span(&sp);
	c->left -= n;
	c->offset += n;
	c->done += n;
	return 0;
}

/* The transferred bytes of a call on fd fill iovcnt iovecs at vec in order (readv/writev and
 * their positional forms, the iovecs of a msghdr). */
static __always_inline int mw_chan_iov(int fd, const struct iovec *vec, __u32 iovcnt, long ret,
				       __u32 dir)
{
	struct mw_iov_ctx c = {.ret = ret, .fd = fd, .vec = vec};

	if (ret == 0) { /* end of file, unless no buffer was given */
		if (dir == MW_CHAN_IN && iovcnt)
			mw_chan_eof(c.fd);
		if (dir == MW_CHAN_OUT)
			mw_sums_end();
		return 0;
	}
	c.ch = mw_chan_of(c.fd, dir);
	if (!c.ch)
		return 0;
	c.op = dir == MW_CHAN_IN ? MW_OP_STDIO_READ : MW_OP_STDIO_WRITE;
	c.left = ret;
	c.offset = __sync_fetch_and_add(&c.ch->offset, ret);
	bpf_loop(iovcnt > MW_IOV_WALK ? MW_IOV_WALK : iovcnt, mw_cap_iov, &c, 0);
	if (c.left) /* more iovecs than we walk: say so */
		mw_chan_gap(c.op, c.fd, ret, c.offset, c.left, dir);
	if (dir == MW_CHAN_OUT)
		mw_sums_end();
	return 0;
}

/* readv/writev, preadv/pwritev(2): fd, iovec array, count. */
static __always_inline int mw_chan_vec(struct pt_regs *regs, long ret, __u32 dir)
{
	if (!mw_is_tracked())
		return 0;
	if (ret < 0) {
		if (dir == MW_CHAN_OUT)
			mw_sums_end();
		return 0;
	}
	return mw_chan_iov((int)mw_arg(regs, 0), (const struct iovec *)mw_arg(regs, 1),
			   (__u32)mw_arg(regs, 2), ret, dir);
}

#define MW_MSG_PEEK 2

/* recvmsg/sendmsg: the iovecs of the msghdr. A peek (MSG_PEEK) takes nothing from the stream:
 * the read that follows does. */
static __always_inline int mw_chan_msg(struct pt_regs *regs, long ret, __u32 dir)
{
	struct {
		struct iovec *iov;
		__kernel_size_t iovlen;
	} m; /* the msghdr's msg_iov and the msg_iovlen that follows it: what of it is needed,
	      * so the rest takes no room on the stack */
	_Static_assert(__builtin_offsetof(struct user_msghdr, msg_iovlen) ==
			       __builtin_offsetof(struct user_msghdr, msg_iov) + sizeof(m.iov),
		       "msg_iovlen follows msg_iov");
	int fd = (int)mw_arg(regs, 0);
	__u64 at;

	if (!mw_is_tracked() || (dir == MW_CHAN_IN && ((__u32)mw_arg(regs, 2) & MW_MSG_PEEK)))
		return 0;
	if (ret <= 0 && dir == MW_CHAN_OUT)
		mw_sums_end();
	/* the channel object first: every other socket's send or receive stops here, before
	 * its msghdr is read (0 bytes: only the end of the stdin object matters) */
	if (ret < 0 || (ret == 0 ? dir != MW_CHAN_IN : !mw_chan_of(fd, dir)))
		return 0;
	at = mw_arg(regs, 1) + offsetof(struct user_msghdr, msg_iov);
	if (bpf_probe_read_user(&m, sizeof(m), (const void *)at))
		m.iovlen = 0; /* unreadable: what was moved becomes a gap */
	return mw_chan_iov(fd, m.iov, (__u32)m.iovlen, ret, dir);
}

/* Bytes that reach or leave the channel without passing through user memory: noted with their
 * offsets as a gap (out fd = the stdout object, or in fd = the stdin object; in_i < 0: only
 * the out fd counts). */
static __always_inline int mw_chan_moved(struct pt_regs *regs, long ret, int in_i, int out_i)
{
	__u32 dir = MW_CHAN_OUT;
	struct mw_chan *ch;
	int fd;

	if (ret <= 0 || !mw_is_tracked())
		return 0;

	fd = (int)mw_arg(regs, out_i);
	ch = mw_chan_match(fd, MW_CHAN_OUT);
	if (!ch && in_i >= 0) {
		dir = MW_CHAN_IN;
		fd = (int)mw_arg(regs, in_i);
		ch = mw_chan_match(fd, MW_CHAN_IN);
	}
	if (!ch)
		return 0;
	mw_chan_moved_gap(ch, fd, ret, ret, dir);
	return 0;
}

/* sendmmsg/recvmmsg: ret messages, msg_len bytes each; the channel's share of them becomes a
 * gap (their iovecs are not walked: a batch of up to 1024 messages). */
struct mw_mmsg_sum {
	const struct mmsghdr *vec;
	__u64 bytes;
};

static long mw_mmsg_len(__u32 i, void *data)
{
	struct mw_mmsg_sum *c = data;
	unsigned int n;

	if (bpf_probe_read_user(&n, sizeof(n), &c->vec[i].msg_len))
		return 1;
	c->bytes += n;
	return 0;
}

static __always_inline int mw_chan_mmsg(struct pt_regs *regs, long ret, __u32 dir)
{
	struct mw_mmsg_sum c = {.vec = (const struct mmsghdr *)mw_arg(regs, 1)};
	struct mw_chan *ch;
	int fd;

	if (ret <= 0 || !mw_is_tracked())
		return 0;
	fd = (int)mw_arg(regs, 0);
	ch = mw_chan_match(fd, dir);
	if (!ch)
		return 0;
	bpf_loop(ret > 1024 ? 1024 : (__u32)ret, mw_mmsg_len, &c, 0);
	if (!c.bytes)
		return 0;
	mw_chan_moved_gap(ch, fd, ret, c.bytes, dir);
	return 0;
}

#endif /* MW_CHAN_BPF_H */
