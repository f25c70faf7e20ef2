// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dispatch.bpf.c - the only programs attached to the syscall path. They run for every syscall
 * of every process on the host, so they do as little as possible: test membership of the
 * tracked set (an inlined bitmap lookup, maps.h) and return for any other task; for a tracked
 * task, read the syscall number and tail-call its handler (see syscall.bpf.h). A tracked
 * syscall with no handler costs a failed tail call. On x86-64 the syscalls a server makes most
 * (MW_HOT_CALLS) are reached by a direct jump instead of the retpoline an indexed tail call costs.
 * A tracked syscall of another ABI (i386, x32), which no handler can read, goes to
 * handle_foreign_abi, which records that it was made.
 */
#include "syscall.bpf.h"

#define MW_TS_COMPAT  0x0002	  /* x86 thread_info.status: a 32-bit syscall is in progress */
#define MW_X32_BIT    0x40000000u /* __X32_SYSCALL_BIT */
#define MW_ABI_NR_MAX 1024	  /* foreign numbers at or above it are ENOSYS on every kernel */
#define MW_EEXIST     17

/* Whether the current syscall is of the native ABI: an i386 call (int $0x80) numbers its
 * syscalls differently, so a handler chosen by its number would record another call. */
static __always_inline bool mw_native_abi(void)
{
#if defined(__TARGET_ARCH_x86)
	return !(bpf_get_current_task_btf()->thread_info.status & MW_TS_COMPAT);
#else
	return true;
#endif
}

/* Whether a native-entry syscall number is an x32 one (its number in the x32 table, plus
 * __X32_SYSCALL_BIT): no handler's slot, and a syscall on a kernel built with x32. */
static __always_inline bool mw_x32_nr(long id)
{
#if defined(__TARGET_ARCH_x86)
	return (__u32)id - MW_X32_BIT < MW_ABI_NR_MAX;
#else
	return false;
#endif
}

/* The handler of syscall nr, for the syscalls an MCP server makes most, reached by a tail call
 * with a constant slot: the x86-64 JIT patches each such call site into a direct jump to the
 * program in its slot (a no-op while the slot is empty), where a tail call through a slot known
 * only at run time is an indirect jump, a retpoline on hosts that mitigate Spectre v2 (~45 ns a
 * call on the README's AMD host: ~0.03x of its openat loop; test/bench/HISTORY.md, change 42).
 * Slot n is syscall n's handler whichever n this list names, so the list is a choice of speed
 * only; a number not in it takes the indexed tail call after it. x86-64 numbers, since other
 * architectures number the syscalls differently (and their JITs may not patch). Returns from the
 * program when nr is in the list. */
#if defined(__TARGET_ARCH_x86)
#define MW_HOT(progs, n)                                                                           \
	case n:                                                                                    \
		bpf_tail_call_static(ctx, progs, n);                                               \
		return 0;
#define MW_HOT_CALLS(progs, nr)                                                                    \
	switch (nr) {                                                                              \
		MW_HOT(progs, 0)   /* read */                                                      \
		MW_HOT(progs, 1)   /* write */                                                     \
		MW_HOT(progs, 2)   /* open */                                                      \
		MW_HOT(progs, 16)  /* ioctl */                                                     \
		MW_HOT(progs, 17)  /* pread64 */                                                   \
		MW_HOT(progs, 18)  /* pwrite64 */                                                  \
		MW_HOT(progs, 19)  /* readv */                                                     \
		MW_HOT(progs, 20)  /* writev */                                                    \
		MW_HOT(progs, 41)  /* socket */                                                    \
		MW_HOT(progs, 42)  /* connect */                                                   \
		MW_HOT(progs, 43)  /* accept */                                                    \
		MW_HOT(progs, 44)  /* sendto */                                                    \
		MW_HOT(progs, 45)  /* recvfrom */                                                  \
		MW_HOT(progs, 46)  /* sendmsg */                                                   \
		MW_HOT(progs, 47)  /* recvmsg */                                                   \
		MW_HOT(progs, 59)  /* execve */                                                    \
		MW_HOT(progs, 257) /* openat */                                                    \
		MW_HOT(progs, 263) /* unlinkat */                                                  \
		MW_HOT(progs, 288) /* accept4 */                                                   \
	}
#else
#define MW_HOT_CALLS(progs, nr)
#endif

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

	MW_HOT_CALLS(&sys_exit_progs, nr)
	bpf_tail_call(ctx, &sys_exit_progs, (__u32)nr);
	return 0;
}

/* A tracked native syscall goes to its handler; one without a handler returns (most of them:
 * read, mmap, ...). A syscall of another ABI goes to handle_foreign_abi. */
SEC("tp_btf/sys_enter")
int BPF_PROG(mw_dispatch_enter, struct pt_regs *regs, long id)
{
	if (!mw_is_tracked())
		return 0;
	if (mw_native_abi()) {
		MW_HOT_CALLS(&sys_enter_progs, id)
		bpf_tail_call(ctx, &sys_enter_progs, (__u32)id);
		if (!mw_x32_nr(id))
			return 0;
	}
	bpf_tail_call(ctx, &sys_enter_progs, MW_FOREIGN_SLOT);
	return 0;
}

/* A syscall of another ABI (i386, x32) that a tracked process made: no handler can record it
 * (the numbers mean other calls), so what it did is missing from the trace. A launched server
 * never gets here (the collector's seccomp filter kills it at its first, before the
 * tracepoint); an attached one can, and this record says so: the number in that ABI and the
 * ABI, once per process, ABI and number (foreign_seen), at entry (the result is not read). The
 * collector puts it in sys_enter_progs at MW_FOREIGN_SLOT. */
SEC("tp_btf/sys_enter")
int BPF_PROG(handle_foreign_abi, struct pt_regs *regs, long id)
{
	struct mw_foreign_key k = {};
	__u32 nr = (__u32)id;
	__u8 seen = 1;
	struct mw_event *e;
	struct mw_rec r;

	k.abi = mw_native_abi() ? MW_ABI_X32 : MW_ABI_I386;
	if (k.abi == MW_ABI_X32)
		nr -= MW_X32_BIT;
	if (nr >= MW_ABI_NR_MAX)
		return 0; /* ENOSYS whatever the kernel: nothing escapes */
	k.nr = (__u16)nr;
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.pstart = mw_task_pstart(bpf_get_current_task_btf());
	if (bpf_map_update_elem(&foreign_seen, &k, &seen, BPF_NOEXIST) == -MW_EEXIST)
		return 0; /* recorded before; any other failure records it again */
	e = mw_rec_begin(&r, MW_OP_FOREIGN_ABI, 0);
	if (!e)
		return 0;
	e->arg[0] = nr;
	e->arg[1] = k.abi;
	mw_rec_emit(&r);
	return 0;
}
