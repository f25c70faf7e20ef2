// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring.bpf.c - the evasion signals. io_uring: work submitted through a ring does not pass
 * through the syscalls the other families watch, so its setup and use are recorded, and each
 * submission's opcode and fd from the io_uring_submit_req tracepoint (which runs in the
 * submitting task, so the membership test applies as everywhere else), where a request on the
 * channel's objects is also found (chan.bpf.h). userfaultfd: it lets a
 * process stop the kernel on a page of its own memory, the usual way to win a race against a
 * check of an argument (see the tamper check of syscall.bpf.h).
 */
#include "chan.bpf.h"

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

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(handle_io_uring_submit_req, struct io_kiocb *req)
{
	struct mw_rec r;
	struct mw_event *e;

	if (!mw_is_tracked())
		return 0;
	e = mw_rec_begin(&r, MW_OP_IO_URING_SUBMIT, 0);
	if (!e)
		return 0;
	e->arg[0] = BPF_CORE_READ(req, opcode);
	e->arg[1] = BPF_CORE_READ(req, cqe.fd);
	e->arg[2] = BPF_CORE_READ(req, cqe.user_data);
	mw_rec_emit(&r);
	mw_chan_uring_submit(req); /* a request on the channel's objects (chan.bpf.h) */
	return 0;
}

/* userfaultfd(flags) */
MW_SYS_EXIT(userfaultfd)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_USERFAULTFD, ret, MW_UINT(0), 0, 0, 0))
		return 0;
	return mw_sys_plain(&s);
}
