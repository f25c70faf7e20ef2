/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * args.bpf.h - a syscall's arguments, read back from the task's saved user registers (the
 * kernel does not modify them), at entry or at exit: by index, or by a spec that also says how
 * wide the argument is (an `int` is narrowed: the upper half of its register is undefined by
 * the ABI). Shared by the handlers (syscall.bpf.h) and the in-flight stash (inflight.bpf.h).
 */
#ifndef MW_ARGS_BPF_H
#define MW_ARGS_BPF_H

#include "common.bpf.h"

/* Argument specs for mw_sys_args: the index of a syscall argument and how wide it is. */
#define MW_INT(i)  ((i) | 0x100) /* int: sign-extended from 32 bits */
#define MW_UINT(i) ((i) | 0x200) /* unsigned int, flags, modes */
#define MW_LONG(i) ((i) | 0x400) /* long, size_t, pointers-as-values */
#define MW_NONE	   0

/* Syscall argument i (0..5) from the saved user registers. regs is a BTF pointer (the
 * tracepoint's argument or bpf_task_pt_regs), so on x86 its fields are read by direct loads,
 * not a bpf_probe_read_kernel() helper call each. */
static __always_inline __u64 mw_arg(struct pt_regs *regs, int i)
{
#if defined(__TARGET_ARCH_x86)
	switch (i) {
	case 0:
		return regs->di;
	case 1:
		return regs->si;
	case 2:
		return regs->dx;
	case 3:
		return regs->r10;
	case 4:
		return regs->r8;
	case 5:
		return regs->r9;
	}
	return 0;
#endif
	switch (i) {
	case 0:
		return PT_REGS_PARM1_CORE_SYSCALL(regs);
	case 1:
		return PT_REGS_PARM2_CORE_SYSCALL(regs);
	case 2:
		return PT_REGS_PARM3_CORE_SYSCALL(regs);
	case 3:
		return PT_REGS_PARM4_CORE_SYSCALL(regs);
	case 4:
		return PT_REGS_PARM5_CORE_SYSCALL(regs);
#if defined(__TARGET_ARCH_x86)
	case 5:
		return BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
	case 5:
		return BPF_CORE_READ((struct user_pt_regs *)regs, regs[5]);
#endif
	}
	return 0;
}

/* The number of the syscall the task is in (x86-64 numbering on x86). */
static __always_inline long mw_syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ((struct user_pt_regs *)regs, syscallno);
#else
	return -1;
#endif
}

static __always_inline __u64 mw_arg_spec(struct pt_regs *regs, int spec)
{
	__u64 v = mw_arg(regs, spec & 0xff);

	if (spec & 0x100)
		return (__u64)(__s64)(int)v;
	if (spec & 0x200)
		return (__u32)v;
	return v;
}

#endif /* MW_ARGS_BPF_H */
