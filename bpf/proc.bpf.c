// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc.bpf.c - the process family: fork (thread or process), exec, exit; and the propagation of
 * the tracked set at every fork of a tracked task, in kernel, so no child is ever missed.
 *
 * tp_btf hooks: sched_process_fork runs in the parent; sched_process_exec in the task that has
 * just become the new image (its mm is the new one, so argv is read from user memory);
 * sched_process_exit once per exiting thread, with group_dead true for the last one.
 *
 * State changes (cwd, root, credentials, capabilities, namespaces, name) are syscall exits.
 */
#include "syscall.bpf.h"

/* Flags of the clone that is creating a child, from the parent's saved registers. */
static __always_inline __u64 mw_clone_flags(void)
{
	struct pt_regs *regs = mw_regs();
	long nr = mw_syscall_nr(regs); /* x86-64 numbers below */
	__u64 flags = 0;

	if (nr == 56 /* clone */)
		return mw_arg(regs, 0);
	if (nr == 435 /* clone3: struct clone_args starts with flags */) {
		bpf_probe_read_user(&flags, sizeof(flags), (void *)mw_arg(regs, 0));
		return flags;
	}
	if (nr == 58 /* vfork */)
		return 0x4000 | 0x100 | 17; /* CLONE_VFORK | CLONE_VM | SIGCHLD */
	return 17; /* fork: SIGCHLD */
}

/* Whether the child was given namespaces of its own: a user namespace (its credentials') or any
 * other (a new nsproxy). The kernel's view: the flags above are read from user memory and only
 * describe the request. */
static __always_inline bool mw_new_namespaces(struct task_struct *parent, struct task_struct *child)
{
	return BPF_CORE_READ(child, nsproxy) != BPF_CORE_READ(parent, nsproxy) ||
	       BPF_CORE_READ(child, cred, user_ns) != BPF_CORE_READ(parent, cred, user_ns);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u64 cstart = BPF_CORE_READ(child, start_boottime);
	struct mw_rec r;
	struct mw_event *e;

	if (!mw_tgid_tracked(ptgid))
		return 0;
	if (ctgid != ptgid && !mw_track(ctgid, cstart, true))
		mw_loss(MW_LOSS_TRACK_FULL);
	/* ret is what clone returned to the caller: the new task's id (a thread's tid) */
	e = mw_rec_begin(&r, MW_OP_FORK, BPF_CORE_READ(child, pid));
	if (!e)
		return 0;
	e->arg[0] = ctgid;
	e->arg[1] = BPF_CORE_READ(child, pid);
	e->arg[2] = ctgid == ptgid ? BPF_CORE_READ(child, group_leader, start_boottime) : cstart;
	e->arg[3] = mw_clone_flags();
	if (ctgid == ptgid)
		e->flags |= MW_F_THREAD;
	if (mw_new_namespaces(parent, child))
		e->flags |= MW_F_NEWNS;
	mw_rec_emit(&r);
	return 0;
}

/* The syscall (execve or execveat) of an exec that has just succeeded, from the stash its
 * sys_enter program made under the tid it had then (old_pid: a non-leader thread that execs
 * takes the leader's tid). The saved registers cannot tell: by the time sched_process_exec
 * fires, this kernel reports orig_ax = execve for an execveat too (as raw sys_exit does). */
static __always_inline __u64 mw_exec_nr(__u32 old_pid)
{
	struct mw_inflight *f = bpf_map_lookup_elem(&inflight, &old_pid);
	__u64 nr = f && f->op == MW_OP_EXEC ? f->arg[0] : 59 /* execve */;

	bpf_map_delete_elem(&inflight, &old_pid);
	return nr;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_sched_process_exec, struct task_struct *task, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	const char *filename, *interp;
	unsigned long arg_start, arg_end;
	struct mw_rec r;
	struct mw_event *e;
	struct file *file;

	if (!mw_is_tracked())
		return 0;
	e = mw_rec_begin(&r, MW_OP_EXEC, 0);
	if (!e)
		return 0;
	e->arg[0] = old_pid;
	e->arg[1] = mw_exec_nr(old_pid);
	filename = BPF_CORE_READ(bprm, filename);
	interp = BPF_CORE_READ(bprm, interp);
	file = BPF_CORE_READ(bprm, file);
	mw_slot_str(&r, MW_S_PATH, filename, MW_PATH_MAX, false);
	if (file) {
		mw_slot_path_to(&r, MW_S_OPENED,
				(__u64)__builtin_preserve_access_index(&file->f_path), true);
		e->arg[MW_A_DEV] = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		e->arg[MW_A_INO] = BPF_CORE_READ(file, f_inode, i_ino);
	}
	if (interp && interp != filename)
		mw_slot_str(&r, MW_S_PATH2, interp, MW_PATH_MAX, false);
	arg_start = BPF_CORE_READ(task, mm, arg_start);
	arg_end = BPF_CORE_READ(task, mm, arg_end);
	if (arg_end > arg_start)
		mw_slot_bytes(&r, MW_S_DATA, (void *)arg_start, arg_end - arg_start, MW_ARGV_MAX,
			      true);
	mw_rec_emit(&r);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_sched_process_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct mw_rec r;
	struct mw_event *e;
	__u32 tid;
	int code;

	if (!mw_tgid_tracked(tgid))
		return 0;
	code = BPF_CORE_READ(task, exit_code);
	if (code == 0 && (BPF_CORE_READ(task, signal, flags) & 0x4 /* SIGNAL_GROUP_EXIT */))
		code = BPF_CORE_READ(task, signal, group_exit_code);
	e = mw_rec_begin(&r, MW_OP_EXIT, 0);
	if (e) {
		e->arg[0] = (__u32)code;
		e->arg[1] = group_dead;
		mw_rec_emit(&r);
	}
	tid = BPF_CORE_READ(task, pid);
	bpf_map_delete_elem(&inflight, &tid);
	if (group_dead)
		mw_track(tgid, 0, false);
	return 0;
}

/* ---- exec attempts that failed (a successful exec is recorded at sched_process_exec) -------- */

/* Exec attempts are stashed at entry: the exec record learns its syscall from the stash, and an
 * exec still in progress when recording stops (a binary on a hung filesystem) is written as
 * unfinished: arg[0] the syscall number (x86-64's, as elsewhere here), arg[1] the dirfd, arg[2]
 * the flags. */
static __always_inline int mw_exec_enter(struct pt_regs *regs, long nr, int dfd_i, int flags_i)
{
	struct mw_inflight *f;

	if (!mw_is_tracked())
		return 0;
	f = mw_inflight_start();
	if (!f)
		return 0;
	f->arg[0] = nr;
	f->arg[1] = dfd_i >= 0 ? mw_arg_spec(regs, MW_INT(dfd_i)) : (__u64)-100;
	f->arg[2] = flags_i >= 0 ? mw_arg_spec(regs, MW_UINT(flags_i)) : 0;
	mw_inflight_commit(f, MW_OP_EXEC);
	return 0;
}

MW_SYS_ENTER(execve)
{
	return mw_exec_enter(mw_regs(), 59, -1, -1);
}

MW_SYS_ENTER(execveat)
{
	return mw_exec_enter(mw_regs(), 322, 0, 4);
}

MW_SYS_EXIT(execve)
{
	struct mw_sys s;

	if (ret >= 0 || !mw_sys_begin(&s, MW_OP_EXEC_FAILED, ret, 0, 0, 0, 0))
		return 0;
	mw_inflight_end();
	s.r.e->arg[0] = -100; /* AT_FDCWD */
	return mw_sys_path1(&s, ret, -1, 0, false);
}

MW_SYS_EXIT(execveat)
{
	struct mw_sys s;

	if (ret >= 0 ||
	    !mw_sys_begin(&s, MW_OP_EXEC_FAILED, ret, MW_INT(0), MW_UINT(4), 0, 0))
		return 0;
	mw_inflight_end();
	return mw_sys_path1(&s, ret, 0, 1, false);
}

/* ---- cwd and root ----------------------------------------------------------------------------- */

/* chdir and chroot at exit: a successful call has already moved the task's cwd (root), so a
 * relative argument resolved now would be resolved against the new directory (chdir("d") would
 * read as .../d/d). The directory entered is taken from the task instead: ABS (for a relative
 * argument) and OPENED with dev/ino are the new cwd, or the new root; ABS walked as the task
 * names it (the new root up to the root of the mount namespace: it is no longer below the
 * task's root), OPENED from the namespace's root as for any file acted on (mw_fd_path). A failed
 * call changed nothing and resolves as usual. The argument is stashed at entry and checked, as a
 * file call's is. */
static __always_inline int mw_sys_dir_change(struct mw_sys *s, long ret, bool root)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct path *dir;
	__u32 off = s->r.off;

	if (ret != 0)
		return mw_sys_path1_checked(s, -1, 0);
	dir = root ? __builtin_preserve_access_index(&mw_task_fs(task)->root) :
		     __builtin_preserve_access_index(&mw_task_fs(task)->pwd);
	mw_slot_str(&s->r, MW_S_PATH, mw_uptr(s, 0), MW_PATH_MAX, true);
	mw_head_check(&s->r, MW_S_PATH, MW_PATH_OFF);
	if (s->r.e->slen[MW_S_PATH] && s->r.s->event[off & (MW_EVENT_MAX - 1)] != '/')
		mw_slot_path_to(&s->r, MW_S_ABS, (__u64)dir, root);
	mw_slot_path_to(&s->r, MW_S_OPENED, (__u64)dir, true);
	s->r.e->arg[MW_A_DEV] = BPF_CORE_READ(dir, dentry, d_sb, s_dev);
	s->r.e->arg[MW_A_INO] = BPF_CORE_READ(dir, dentry, d_inode, i_ino);
	mw_rec_emit(&s->r);
	return 0;
}

MW_SYS_ENTER(chdir)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CHDIR, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(chdir)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_CHDIR, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_dir_change(&s, ret, false);
}

MW_SYS_EXIT(fchdir)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHDIR, ret, MW_INT(0), 0, 0, 0))
		return 0;
	return mw_sys_fd(&s, 0);
}

MW_SYS_ENTER(chroot)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CHROOT, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(chroot)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_CHROOT, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_dir_change(&s, ret, true);
}

/* ---- credentials -------------------------------------------------------------------------- */

#define MW_ID_SYSCALL(name, op, a0, a1, a2)                                                         \
	MW_SYS_EXIT(name)                                                                          \
	{                                                                                          \
		struct mw_sys s;                                                                   \
                                                                                                   \
		if (!mw_sys_begin(&s, op, ret, a0, a1, a2, 0))                                \
			return 0;                                                                  \
		return mw_sys_plain(&s);                                                           \
	}

MW_ID_SYSCALL(setuid, MW_OP_SETUID, MW_INT(0), 0, 0)
MW_ID_SYSCALL(setgid, MW_OP_SETGID, MW_INT(0), 0, 0)
MW_ID_SYSCALL(setreuid, MW_OP_SETREUID, MW_INT(0), MW_INT(1), 0)
MW_ID_SYSCALL(setregid, MW_OP_SETREGID, MW_INT(0), MW_INT(1), 0)
MW_ID_SYSCALL(setresuid, MW_OP_SETRESUID, MW_INT(0), MW_INT(1), MW_INT(2))
MW_ID_SYSCALL(setresgid, MW_OP_SETRESGID, MW_INT(0), MW_INT(1), MW_INT(2))
MW_ID_SYSCALL(setfsuid, MW_OP_SETFSUID, MW_INT(0), 0, 0)
MW_ID_SYSCALL(setfsgid, MW_OP_SETFSGID, MW_INT(0), 0, 0)
MW_ID_SYSCALL(unshare, MW_OP_UNSHARE, MW_LONG(0), 0, 0)

MW_SYS_EXIT(setgroups)
{
	struct mw_sys s;
	int n;

	if (!mw_sys_begin(&s, MW_OP_SETGROUPS, ret, MW_INT(0), 0, 0, 0))
		return 0;
	n = mw_iarg(&s, 0);
	if (n > 0)
		mw_slot_bytes(&s.r, MW_S_DATA, mw_uptr(&s, 1), (__u32)n * 4, 64 * 4, true);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(capset)
{
	struct mw_sys s;
	int pid = 0;

	if (!mw_sys_begin(&s, MW_OP_CAPSET, ret, 0, 0, 0, 0))
		return 0;
	/* struct __user_cap_header_struct { u32 version; int pid; } */
	bpf_probe_read_user(&pid, sizeof(pid), (const char *)mw_uptr(&s, 0) + 4);
	s.r.e->arg[0] = pid;
	mw_slot_bytes(&s.r, MW_S_DATA, mw_uptr(&s, 1), 24, 24, true);
	return mw_sys_plain(&s);
}

MW_SYS_EXIT(setns)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_SETNS, ret, MW_INT(0), MW_INT(1), 0, 0))
		return 0;
	return mw_sys_fd(&s, 0);
}

MW_SYS_EXIT(prctl)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PRCTL, ret, MW_INT(0), MW_LONG(1), 0, 0))
		return 0;
	if (mw_iarg(&s, 0) == 15 /* PR_SET_NAME */)
		mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 1), 16, true);
	return mw_sys_plain(&s);
}
