// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * chan.bpf.c - the MCP channel: the bytes any tracked task reads from the server's stdin object
 * and writes to its stdout object, so the analyzer can rebuild every JSON-RPC message without
 * the client's help.
 *
 * The objects are named by (device, inode) in the `chan` map, set by the collector at launch or
 * attach, so a child that inherited stdout is captured too, and a dup'd fd is still the same
 * object. Each call's transferred bytes (the result, not the request) are captured from user
 * memory after the call in MW_DATA_MAX chunks, up to MW_CHAN_CHUNKS per call, each stamped with
 * its offset in the stream; whatever is not captured (beyond that, a --stdio head:N limit,
 * splice/sendfile, vmsplice, tee, recvmmsg/sendmmsg, Linux AIO, io_uring) becomes a GAP record with
 * its offsets and length, never a silent hole.
 */
#include "chan_async.bpf.h"

MW_SYS_EXIT(read)
{
	return mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(pread64)
{
	return mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(readv)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_ENTER(write)
{
	return mw_chan_sum_flat(mw_ctx_regs);
}

MW_SYS_EXIT(write)
{
	return mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_OUT);
}

MW_SYS_ENTER(pwrite64)
{
	return mw_chan_sum_flat(mw_ctx_regs);
}

MW_SYS_EXIT(pwrite64)
{
	return mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_OUT);
}

MW_SYS_ENTER(writev)
{
	return mw_chan_sum_vec(mw_ctx_regs);
}

MW_SYS_EXIT(writev)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_OUT);
}

MW_SYS_EXIT(preadv)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(preadv2)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_ENTER(pwritev)
{
	return mw_chan_sum_vec(mw_ctx_regs);
}

MW_SYS_EXIT(pwritev)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_OUT);
}

MW_SYS_ENTER(pwritev2)
{
	return mw_chan_sum_vec(mw_ctx_regs);
}

MW_SYS_EXIT(pwritev2)
{
	return mw_chan_vec(mw_ctx_regs, ret, MW_CHAN_OUT);
}

/* A stdio object that is a socket (a socketpair, as libuv gives a child): recv and recvmsg
 * read it as read and readv do (a peek takes nothing); sendto and sendmsg, whose exits are
 * net.bpf.c's, write it through mw_chan_sent. */
MW_SYS_EXIT(recvfrom)
{
	if (!mw_chan_sock(MW_CHAN_IN) || ((__u32)mw_arg(mw_ctx_regs, 3) & MW_MSG_PEEK))
		return 0;
	return mw_chan_flat(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(recvmsg)
{
	if (!mw_chan_sock(MW_CHAN_IN))
		return 0;
	return mw_chan_msg(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(recvmmsg)
{
	if (!mw_chan_sock(MW_CHAN_IN) || ((__u32)mw_arg(mw_ctx_regs, 3) & MW_MSG_PEEK))
		return 0;
	return mw_chan_mmsg(mw_ctx_regs, ret, MW_CHAN_IN);
}

MW_SYS_EXIT(splice)
{
	return mw_chan_moved(mw_ctx_regs, ret, 0, 2);
}

MW_SYS_EXIT(sendfile64)
{
	return mw_chan_moved(mw_ctx_regs, ret, 1, 0);
}

MW_SYS_EXIT(copy_file_range)
{
	return mw_chan_moved(mw_ctx_regs, ret, 0, 2);
}

/* vmsplice moves user pages into (or out of) a pipe by reference: what the reader gets is
 * whatever those pages hold when it reads, so no copy made here could be trusted. A gap. */
MW_SYS_EXIT(vmsplice)
{
	return mw_chan_moved(mw_ctx_regs, ret, 0, 0);
}

/* tee copies a pipe's bytes into another pipe without taking them: into the stdout object it
 * adds to the stream, out of the stdin object it takes nothing (the read that follows does). */
MW_SYS_EXIT(tee)
{
	return mw_chan_moved(mw_ctx_regs, ret, -1, 1);
}

/* Linux AIO: an iocb on the channel's objects is a gap (chan_async.bpf.h), found at entry. */
MW_SYS_ENTER(io_submit)
{
	return mw_chan_aio(mw_ctx_regs);
}

/* io_uring: a request that moved bytes on the channel's objects is a gap (chan_async.bpf.h),
 * found at its submission (bpf/uring.bpf.c) and counted at its completion. */
SEC("tp_btf/io_uring_cqe_overflow")
int BPF_PROG(handle_io_uring_cqe_overflow)
{
	return mw_chan_uring_overflow();
}
