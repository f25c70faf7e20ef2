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
extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym __weak;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym;

/* Whether a signal aimed at id (a pid or tid as the caller names it, in its pid namespace)
 * stays inside the caller's own process: id is its tgid or the tid of any of its threads
 * (kill(tid) of a sibling thread signals our own group too). Looked up, not compared with our
 * own ids only: tkill(sibling) must not read as a signal to another process. */
static __always_inline bool mw_signal_inside(int id)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct task_struct *t;
	bool inside;

	if (id <= 0) /* a process group, or every process */
		return false;
	if (bpf_ksym_exists(bpf_task_from_vpid))
		t = bpf_task_from_vpid(id); /* 6.13+ */
	else if (bpf_ksym_exists(bpf_task_from_pid))
		t = bpf_task_from_pid(id); /* the initial pid namespace's ids */
	else
		return id == (int)(bpf_get_current_pid_tgid() >> 32);
	if (!t) /* no such task: an attempt aimed outside */
		return false;
	inside = t->tgid == me->tgid;
	bpf_task_release(t);
	return inside;
}

MW_SYS_EXIT(kill)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_KILL, ret, MW_INT(0), MW_INT(1), 0, 0);

	if (!e || mw_signal_inside((int)e->arg[0]))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(tkill)
{
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_TKILL, ret, MW_INT(0), MW_INT(1), 0, 0);

	if (!e || mw_signal_inside((int)e->arg[0]))
		return 0;
	return mw_sys_plain(&s);
}

/* tgkill(tgid, tid, sig) is delivered only if tid belongs to tgid: tgid decides. */
MW_SYS_EXIT(tgkill)
{
	struct mw_sys s;
	struct mw_event *e =
		mw_sys_begin(&s, MW_OP_TGKILL, ret, MW_INT(0), MW_INT(1), MW_INT(2), 0);

	if (!e || mw_signal_inside((int)e->arg[0]))
		return 0;
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(mount)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MOUNT, ret, MW_LONG(3), 0, 0, 0))
		return 0;
	/* source and fs type may be NULL (a propagation change, a remount): absent, not a fault */
	if (mw_uptr(&s, 0))
		mw_slot_str(&s.r, MW_S_PATH, mw_uptr(&s, 0), MW_PATH_MAX, true);
	mw_path_arg(&s.r, MW_S_PATH2, MW_S_ABS2, -100, mw_uptr(&s, 1));
	if (mw_uptr(&s, 2))
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
