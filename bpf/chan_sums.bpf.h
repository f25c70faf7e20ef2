/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * chan_sums.bpf.h - the entry's side of the channel's tamper check (see chan.bpf.h): a write
 * on the server's stdout object is read at entry, chunk by chunk as its exit will capture it,
 * and each chunk kept as a keyed hash in the thread's chan_sums stash, which the exit's
 * mw_cap_checked compares with what it captures. The stash's life (start, the write in
 * progress, end), the chunk hashing, and the entry handlers' bodies for flat, vectored and
 * msghdr writes. Included by chan.bpf.h only, after struct mw_span and mw_chan_match.
 */
#ifndef MW_CHAN_SUMS_BPF_H
#define MW_CHAN_SUMS_BPF_H

/* ---- a write's chunks at entry (chan_sums) ------------------------------------------------ */

/* The current thread's stash (made, zeroed, when create and it has none), or NULL. */
static __always_inline struct mw_chan_sums *mw_sums_slot(bool create)
{
	return bpf_task_storage_get(&chan_sums, bpf_get_current_task_btf(), NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* The current thread's stash of a write in progress, or NULL. */
static __always_inline struct mw_chan_sums *mw_sums_of(void)
{
	struct mw_chan_sums *sm = mw_sums_slot(false);

	return sm && sm->op == MW_OP_STDIO_WRITE ? sm : NULL;
}

/* The current thread's stash, emptied and idle for the entry to fill; NULL when it cannot be
 * had (no memory: the exit then finds none, and its chunks are UNCHECKED). */
static __always_inline struct mw_chan_sums *mw_sums_start(void)
{
	struct mw_chan_sums *sm = mw_sums_slot(true);

	if (!sm)
		return NULL;
	sm->op = MW_OP_UNSPEC;
	sm->chunks = 0;
	sm->partial = 0;
	return sm;
}

/* The exit of a write on the stdout object: its stash is spent. */
static __always_inline void mw_sums_end(void)
{
	struct mw_chan_sums *sm = mw_sums_of();

	if (sm)
		sm->op = MW_OP_UNSPEC;
}

struct mw_sum_ctx {
	struct mw_chan_sums *sm;
	struct mw_scratch *s;
	__u64 ubuf;
	__u64 len;
	__u64 call_done; /* the call's bytes before the span */
	__u32 chunk0;
	__u32 pad;
};

/* Chunk i of a span at entry: read into the record area and hashed (mw_hash), as the exit will
 * hash what it captures. */
static long mw_sum_chunk(__u32 i, void *data)
{
	struct mw_sum_ctx *c = data;
	__u64 at = (__u64)i * MW_DATA_MAX;
	__u32 idx = c->chunk0 + i, n;

	if (at >= c->len || idx >= MW_CHAN_CHUNKS || !c->s || !c->sm)
		return 1;
	n = c->len - at > MW_DATA_MAX ? MW_DATA_MAX : (__u32)(c->len - at);
	barrier_var(n);
	if (n > MW_DATA_MAX)
		return 1;
	idx &= MW_CHAN_CHUNKS - 1;
	/* fails when the page is not present yet (the kernel's own copy faults it in) */
	if (bpf_probe_read_user(c->s->event, n, (const void *)(c->ubuf + at))) {
		c->sm->len[idx] = MW_SUM_UNREAD;
	} else {
		c->sm->len[idx] = (__u16)n;
		c->sm->hash[idx] = mw_hash(c->s, 0, n);
	}
	c->sm->at[idx] = (__u32)(c->call_done + at);
	c->sm->chunks = (__u16)(idx + 1);
	return 0;
}

/* The entry's side of mw_cap_span: hashes the chunks the exit would capture of a span of len
 * bytes (the length asked for: a write that moves less captures a prefix, whose last chunk the
 * exit reads whole to compare). Returns the number of chunks, as mw_cap_span does. Global, as
 * mw_cap_span, for the verifier. */
__weak __noinline int mw_sum_span(const struct mw_span *sp)
{
	struct mw_sum_ctx c = {};
	__u64 keep;
	__u32 chunks;

	if (!sp)
		return 0;
	keep = mw_span_keep(sp);
	chunks = (__u32)((keep + MW_DATA_MAX - 1) / MW_DATA_MAX);
	c.sm = mw_sums_slot(false);
	c.s = mw_entry_scratch();
	c.ubuf = sp->ubuf;
	c.len = keep;
	c.call_done = sp->call_done;
	c.chunk0 = sp->chunk0;
	if (chunks && c.sm && c.s)
		bpf_loop(chunks, mw_sum_chunk, &c, 0);
	return chunks;
}

/* ---- entry programs of the writes ---------------------------------------------------------- */

/* write, pwrite64, sendto on the stdout object: the buffer's chunks at entry. */
static __always_inline int mw_chan_sum_flat(struct pt_regs *regs)
{
	struct mw_span sp = {};
	struct mw_chan *ch;
	struct mw_chan_sums *sm;

	if (!mw_is_tracked())
		return 0;
	ch = mw_chan_match((int)mw_arg(regs, 0), MW_CHAN_OUT);
	if (!ch)
		return 0;
	sm = mw_sums_start();
	if (!sm)
		return 0;
	sp.ubuf = mw_arg(regs, 1);
	sp.len = mw_arg(regs, 2);
	sp.head = ch->head;
	sp.op = MW_OP_STDIO_WRITE;
	mw_sum_span(&sp);
	barrier();
	sm->op = MW_OP_STDIO_WRITE;
	return 0;
}

struct mw_sum_iov_ctx {
	const struct iovec *vec;
	struct mw_chan_sums *sm;
	__u64 done;
	__u32 head;
	__u32 chunks;
};

static long mw_sum_iov(__u32 i, void *data)
{
	struct mw_sum_iov_ctx *c = data;
	struct mw_span sp = {};
	struct iovec iov;

	if (!c->sm)
		return 1;
	if (bpf_probe_read_user(&iov, sizeof(iov), &c->vec[i])) {
		c->sm->partial = 1;
		return 1;
	}
	sp.ubuf = (__u64)iov.iov_base;
	sp.len = iov.iov_len;
	sp.call_done = c->done;
	sp.head = c->head;
	sp.chunk0 = c->chunks;
	sp.op = MW_OP_STDIO_WRITE;
	c->chunks += mw_sum_span(&sp);
	c->done += iov.iov_len;
	return c->chunks >= MW_CHAN_CHUNKS;
}

/* The iovecs of a write on the stdout object (writev, pwritev(2), sendmsg), walked as
 * mw_chan_iov walks them at exit; unread: the iovecs could not be found (a msghdr that could not
 * be read), so every chunk the exit captures will be UNCHECKED. */
static __always_inline void mw_chan_sum_iov(int fd, const struct iovec *vec, __u32 iovcnt,
					    bool unread)
{
	struct mw_sum_iov_ctx c = {.vec = vec};
	struct mw_chan *ch = mw_chan_match(fd, MW_CHAN_OUT);

	if (!ch)
		return;
	c.head = ch->head;
	c.sm = mw_sums_start();
	if (!c.sm)
		return;
	if (unread)
		c.sm->partial = 1;
	else
		bpf_loop(iovcnt > MW_IOV_WALK ? MW_IOV_WALK : iovcnt, mw_sum_iov, &c, 0);
	barrier();
	c.sm->op = MW_OP_STDIO_WRITE;
}

static __always_inline int mw_chan_sum_vec(struct pt_regs *regs)
{
	if (mw_is_tracked())
		mw_chan_sum_iov((int)mw_arg(regs, 0), (const struct iovec *)mw_arg(regs, 1),
				(__u32)mw_arg(regs, 2), false);
	return 0;
}

/* sendmsg on the stdout object; m is its msghdr as read at entry (NULL: unreadable). */
static __always_inline void mw_chan_sum_msg(struct pt_regs *regs, const struct user_msghdr *m)
{
	mw_chan_sum_iov((int)mw_arg(regs, 0), m ? m->msg_iov : NULL, m ? (__u32)m->msg_iovlen : 0,
			!m);
}

#endif /* MW_CHAN_SUMS_BPF_H */
