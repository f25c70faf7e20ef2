// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * priv.bpf.c - injection and privilege: ptrace and cross-process memory access, signals aimed
 * outside the caller's own process, mounts, module loads, bpf(), anonymous executable memory
 * (memfd_create). Rare in a benign server, so every attempt is recorded with its result.
 * (Exec of an fd shows in proc.bpf.c: the exec record carries the syscall and the file.)
 */
#include "syscall.bpf.h"

MW_SYS_EXIT(ptrace)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PTRACE, ret, MW_LONG(0), MW_INT(1), MW_LONG(2), MW_LONG(3)))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(process_vm_readv)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PROCESS_VM_READV, ret, MW_INT(0), MW_LONG(2), MW_LONG(4),
			  MW_LONG(5)))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(process_vm_writev)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PROCESS_VM_WRITEV, ret, MW_INT(0), MW_LONG(2), MW_LONG(4),
			  MW_LONG(5)))
		return 0;
	return mw_sys_plain(&s);
}

/* Signals: only those aimed outside the caller's own thread group are recorded. */
static __always_inline bool mw_own_group(int pid)
{
	return pid == (int)(bpf_get_current_pid_tgid() >> 32);
}

MW_SYS_EXIT(kill)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_KILL, ret, MW_INT(0), MW_INT(1), 0, 0);

	if (!e || mw_own_group((int)e->arg[0]))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(tkill)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_TKILL, ret, MW_INT(0), MW_INT(1), 0, 0);
	struct task_struct *task = bpf_get_current_task_btf();

	if (!e)
		return 0;
	/* tkill names a thread: skip it when that thread belongs to the caller's process */
	if ((int)e->arg[0] == (int)(bpf_get_current_pid_tgid() >> 32) ||
	    (int)e->arg[0] == BPF_CORE_READ(task, pid))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(tgkill)
{
	struct mw_sys s;
	struct mw_event *e =
		mw_sys_begin(&s, MW_OP_TGKILL, ret, MW_INT(0), MW_INT(1), MW_INT(2), 0);

	if (!e || mw_own_group((int)e->arg[0]))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(mount)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MOUNT, ret, MW_LONG(3), 0, 0, 0))
		return 0;
	mw_slot_str(&s.r, MW_S_PATH, mw_uptr(&s, 0), MW_PATH_MAX, true);
	mw_path_arg(&s.r, MW_S_PATH2, MW_S_ABS2, -100, mw_uptr(&s, 1));
	mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 2), 64, true);
	return mw_sys_plain(&s);
}

/* umount2(target, flags) */
MW_SYS_EXIT(umount2)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_UMOUNT2, ret, MW_INT(1), 0, 0, 0))
		return 0;
	return mw_sys_path1(&s, ret, -1, 0, false);
}

MW_SYS_EXIT(init_module)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_INIT_MODULE, ret, MW_LONG(1), 0, 0, 0))
		return 0;
	mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 2), 256, true);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(finit_module)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FINIT_MODULE, ret, MW_INT(0), MW_INT(2), 0, 0))
		return 0;
	mw_fd_path(&s.r, MW_S_OPENED, mw_iarg(&s, 0));
	mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 1), 256, true);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(bpf)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_BPF, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(memfd_create)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MEMFD_CREATE, ret, MW_UINT(1), 0, 0, 0))
		return 0;
	mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 0), 256, true);
	return mw_sys_plain(&s);
}
