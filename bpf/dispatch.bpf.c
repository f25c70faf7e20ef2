// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dispatch.bpf.c - the only programs attached to the syscall path. They run for every syscall
 * of every process on the host, so they do as little as possible: test membership of the
 * tracked set (an inlined bitmap lookup, maps.h) and return for any other task; for a tracked
 * task, read the syscall number and tail-call its handler (see syscall.bpf.h). A tracked
 * syscall with no handler costs a failed tail call.
 */
#include "syscall.bpf.h"

#define MW_TS_COMPAT 0x0002 /* x86 thread_info.status: a 32-bit syscall is in progress */

/* Whether the current syscall is of the native ABI: an i386 call (int $0x80) numbers its
 * syscalls differently, so a handler chosen by its number would record another call. A
 * launched server cannot make one (the collector's seccomp filter kills it); an attached one
 * can, and such calls are not recorded (DESIGN.md, limits). */
static __always_inline bool mw_native_abi(void)
{
#if defined(__TARGET_ARCH_x86)
	return !(bpf_get_current_task_btf()->thread_info.status & MW_TS_COMPAT);
#else
	return true;
#endif
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mw_dispatch_exit, struct pt_regs *regs, long ret)
{
	if (!mw_is_tracked() || !mw_native_abi())
		return 0;
#if defined(__TARGET_ARCH_x86)
	long nr = regs->orig_ax;
#else
	long nr = mw_syscall_nr(regs);
#endif

	bpf_tail_call(ctx, &sys_exit_progs, (__u32)nr);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(mw_dispatch_enter, struct pt_regs *regs, long id)
{
	if (!mw_is_tracked() || !mw_native_abi())
		return 0;
	bpf_tail_call(ctx, &sys_enter_progs, (__u32)id);
	return 0;
}
