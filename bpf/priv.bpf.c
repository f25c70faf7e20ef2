// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * priv.bpf.c - injection and privilege: ptrace, cross-process memory access and fd theft
 * (pidfd_getfd), signals aimed outside the caller's own process, module loads, bpf(), anonymous
 * executable memory (memfd_create). Rare in a benign server, so every attempt is recorded with
 * its result; and the ioctls that type into a terminal (TIOCSTI, TIOCLINUX). (Mounts are in
 * mount.bpf.c.)
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

/* Signals and pidfds. A signal is recorded only when aimed outside the caller's own thread
 * group, with FOREIGN when its target is not a tracked process: killing a child the server
 * started is routine, signalling the client or another process on the host is not. */
extern struct task_struct *bpf_task_from_vpid(s32 vpid) __ksym __weak;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak; /* with them, 6.2+ */

enum mw_target {
	MW_TARGET_SELF,	   /* the caller's own thread group: not recorded */
	MW_TARGET_TREE,	   /* another tracked process */
	MW_TARGET_FOREIGN, /* an untracked process, a process group or every process */
	MW_TARGET_NONE,	   /* no such task (any more), or a process whose every thread has
			    * exited (a zombie): a signal does nothing; recorded without FOREIGN */
	MW_TARGET_UNKNOWN, /* not judged at entry (mw_signal_judged) */
};

/* Whether every thread of t's process has exited (t may be a zombie waiting for its parent):
 * the tracked set forgets a process when its last thread exits, so without this a child of
 * the server killed just after it exited, before it was reaped, would read as foreign. */
static __always_inline bool mw_group_exited(struct task_struct *t)
{
	return BPF_CORE_READ(t, signal, live.counter) == 0;
}

/* Where task t, of process tgid, stands as seen from the caller: the one classification of
 * signal and pidfd targets. */
static __always_inline enum mw_target mw_task_target(struct task_struct *t, __u32 tgid)
{
	if (tgid == (__u32)(bpf_get_current_pid_tgid() >> 32))
		return MW_TARGET_SELF;
	if (mw_group_exited(t))
		return MW_TARGET_NONE;
	return mw_tgid_tracked(tgid) ? MW_TARGET_TREE : MW_TARGET_FOREIGN;
}

/* The target of a signal aimed at id as the caller names it (its pid namespace): a pid or tid
 * (kill(tid) of a sibling thread signals our own group too), -pgid a process group (judged by
 * its leader), 0 the caller's group or -1 every process (both FOREIGN: a group may hold the
 * collector and the client). Looked up, not compared with our own ids only: tkill(sibling)
 * must not read as a signal to another process. */
static __always_inline enum mw_target mw_signal_target(int id)
{
	struct task_struct *t;
	enum mw_target where;

	if (id == 0 || id == -1)
		return MW_TARGET_FOREIGN;
	if (id < 0)
		id = -id;
	if (bpf_ksym_exists(bpf_task_from_vpid))
		t = bpf_task_from_vpid(id); /* 6.13+ */
	else if (bpf_ksym_exists(bpf_task_from_pid))
		t = bpf_task_from_pid(id); /* the initial pid namespace's ids */
	else
		return id == (int)(bpf_get_current_pid_tgid() >> 32) ? MW_TARGET_SELF
									  : MW_TARGET_FOREIGN;
	if (!t)
		return MW_TARGET_NONE;
	where = mw_task_target(t, t->tgid);
	bpf_task_release(t);
	return where;
}

/* A signal's target is judged at entry, before the signal is sent: by the call's exit a target
 * it killed may have exited, even been reaped (on another CPU; on this one under full
 * preemption, the woken target running before the caller returns), and would read as no
 * process at all rather than a foreign one. The stash keeps the judgement in head[0] (head_len
 * 0: no argument is checked) and the call's integer arguments (a pidfd's target tgid in
 * arg[3]), as the exit record has them, for a call pending when recording stops. */
static __always_inline int mw_signal_enter(struct pt_regs *regs, __u16 op, int a0, int a1, int a2,
					   enum mw_target where, __u32 tgid)
{
	struct mw_inflight *f = mw_inflight_start();

	if (!f)
		return 0;
	mw_inflight_args(f, regs, a0, a1, a2, 0);
	f->arg[3] = tgid;
	f->head[0] = (__u8)where;
	mw_inflight_commit(f, op);
	return 0;
}

/* At exit: the entry's judgement of the target, which ends the stash (and gives a pidfd's
 * target tgid back to arg[3]); MW_TARGET_UNKNOWN when the call was not stashed (the map full,
 * recording begun during the call): the exit then judges it itself. */
static __always_inline enum mw_target mw_signal_judged(struct mw_sys *s)
{
	struct mw_inflight *f = mw_inflight_of(s->r.e->op, true);

	if (!f)
		return MW_TARGET_UNKNOWN;
	s->r.e->arg[3] = f->arg[3];
	return (enum mw_target)f->head[0];
}

/* The target of the current kill-family call, aimed at id: as judged at entry, else now. */
static __always_inline enum mw_target mw_signal_where(struct mw_sys *s, int id)
{
	enum mw_target where = mw_signal_judged(s);

	return where == MW_TARGET_UNKNOWN ? mw_signal_target(id) : where;
}

/* Emits a signal record aimed at target, unless it is the caller's own process. */
static __always_inline int mw_signal_emit(struct mw_sys *s, enum mw_target where)
{
	if (where == MW_TARGET_SELF)
		return 0;
	if (where == MW_TARGET_FOREIGN)
		s->r.e->flags |= MW_F_FOREIGN;
	return mw_sys_plain(s);
}

/* The kill family, aimed at argument 0: a pid or tid, or -pgid for kill; for tgkill(tgid, tid,
 * sig) and rt_tgsigqueueinfo(tgid, tid, sig, info) the tgid decides, as the signal is delivered
 * only if tid belongs to it; rt_sigqueueinfo(tgid, sig, info) is kill with a payload. a0..a2:
 * the integer arguments recorded. */
#define MW_SIGNAL_SYSCALL(name, op, a0, a1, a2)                                                    \
	MW_SYS_ENTER(name)                                                                         \
	{                                                                                          \
		if (!mw_is_tracked())                                                              \
			return 0;                                                                  \
		return mw_signal_enter(mw_ctx_regs, op, a0, a1, a2,                                \
				       mw_signal_target((int)mw_arg(mw_ctx_regs, 0)), 0);          \
	}                                                                                          \
                                                                                                   \
	MW_SYS_EXIT(name)                                                                          \
	{                                                                                          \
		struct mw_sys s;                                                                   \
		struct mw_event *e = mw_sys_begin(&s, op, ret, a0, a1, a2, 0);                     \
                                                                                                   \
		if (!e)                                                                            \
			return 0;                                                                  \
		return mw_signal_emit(&s, mw_signal_where(&s, (int)e->arg[0]));                    \
	}

MW_SIGNAL_SYSCALL(kill, MW_OP_KILL, MW_INT(0), MW_INT(1), 0)
MW_SIGNAL_SYSCALL(tkill, MW_OP_TKILL, MW_INT(0), MW_INT(1), 0)
MW_SIGNAL_SYSCALL(tgkill, MW_OP_TGKILL, MW_INT(0), MW_INT(1), MW_INT(2))
MW_SIGNAL_SYSCALL(rt_sigqueueinfo, MW_OP_RT_SIGQUEUEINFO, MW_INT(0), MW_INT(1), 0)
MW_SIGNAL_SYSCALL(rt_tgsigqueueinfo, MW_OP_RT_TGSIGQUEUEINFO, MW_INT(0), MW_INT(1), MW_INT(2))

#define MW_PIDFS_MAGIC 0x50494446 /* PID_FS_MAGIC: pidfd_open's files since 6.9 */
#define MW_PROC_MAGIC  0x9fa0	  /* PROC_SUPER_MAGIC: a /proc/<pid> directory works too */
#define MW_ANON_MAGIC  0x09041934 /* ANON_INODE_FS_MAGIC: pidfds before 6.9 */

/* The task a pidfd (or an open /proc/<pid> directory) of the caller refers to, or NULL: the
 * struct pid sits in the pidfs inode's i_private (6.9+), in the proc inode, or in the file's
 * private_data (the anonymous inode of older kernels); its first PIDTYPE_PID task is the
 * process (or, for a PIDFD_THREAD pidfd, the thread). Not referenced: read, not kept. */
static __always_inline struct task_struct *mw_pidfd_task(int fd)
{
	struct file *f = mw_fd_file(fd);
	struct hlist_node *first;
	struct inode *inode;
	struct pid *pid;
	unsigned long magic;

	if (!f)
		return NULL;
	inode = BPF_CORE_READ(f, f_inode);
	magic = BPF_CORE_READ(inode, i_sb, s_magic);
	if (magic == MW_PIDFS_MAGIC)
		pid = BPF_CORE_READ(inode, i_private);
	else if (magic == MW_PROC_MAGIC)
		pid = BPF_CORE_READ((struct proc_inode *)((void *)inode -
							  bpf_core_field_offset(struct proc_inode,
										vfs_inode)),
				    pid);
	else if (magic == MW_ANON_MAGIC)
		pid = BPF_CORE_READ(f, private_data);
	else
		return NULL; /* not a pidfd: the call fails with EBADF */
	if (!pid)
		return NULL;
	first = BPF_CORE_READ(pid, tasks[0].first); /* PIDTYPE_PID */
	if (!first)
		return NULL;
	return (struct task_struct *)((void *)first - bpf_core_field_offset(struct task_struct,
									     pid_links));
}

/* The target of a pidfd call: its tgid in arg[3], and where it is. */
static __always_inline enum mw_target mw_pidfd_target(struct mw_sys *s, int fd)
{
	struct task_struct *t = mw_pidfd_task(fd);
	__u32 tgid;

	if (!t)
		return MW_TARGET_NONE;
	tgid = BPF_CORE_READ(t, tgid);
	s->r.e->arg[3] = tgid;
	return mw_task_target(t, tgid);
}

/* pidfd_send_signal(pidfd, sig, info, flags) */
MW_SYS_ENTER(pidfd_send_signal)
{
	struct task_struct *t;
	__u32 tgid = 0;

	if (!mw_is_tracked())
		return 0;
	t = mw_pidfd_task((int)mw_arg(mw_ctx_regs, 0));
	if (t)
		tgid = BPF_CORE_READ(t, tgid);
	return mw_signal_enter(mw_ctx_regs, MW_OP_PIDFD_SEND_SIGNAL, MW_INT(0), MW_INT(1),
			       MW_UINT(3), t ? mw_task_target(t, tgid) : MW_TARGET_NONE, tgid);
}

MW_SYS_EXIT(pidfd_send_signal)
{
	struct mw_sys s;
	enum mw_target where;

	if (!mw_sys_begin(&s, MW_OP_PIDFD_SEND_SIGNAL, ret, MW_INT(0), MW_INT(1), MW_UINT(3),
			  0))
		return 0;
	where = mw_signal_judged(&s);
	if (where == MW_TARGET_UNKNOWN)
		where = mw_pidfd_target(&s, mw_iarg(&s, 0));
	return mw_signal_emit(&s, where);
}

/* pidfd_getfd(pidfd, targetfd, flags): a copy of another process's file descriptor, with
 * ptrace's access check. Always recorded (taken from our own process too: rare), with the
 * file obtained. */
MW_SYS_EXIT(pidfd_getfd)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PIDFD_GETFD, ret, MW_INT(0), MW_INT(1), MW_UINT(2), 0))
		return 0;
	if (mw_pidfd_target(&s, mw_iarg(&s, 0)) == MW_TARGET_FOREIGN)
		s.r.e->flags |= MW_F_FOREIGN;
	if (ret >= 0)
		mw_fd_path(&s.r, MW_S_OPENED, (int)ret);
	return mw_sys_plain(&s);
}

#define MW_TIOCSTI   0x5412 /* push a byte into a terminal's input, as if typed */
#define MW_TIOCLINUX 0x541C /* the console's services; subcode 2 selection + 3 paste types too */

/* ioctl: only the requests that inject input into a terminal (another process's shell reads
 * it as typed by the user), with the terminal (OPENED) and the byte or subcode (DATA). Every
 * other ioctl of a tracked task costs this test only. */
MW_SYS_EXIT(ioctl)
{
	__u32 cmd = (__u32)mw_arg(mw_ctx_regs, 1);
	struct mw_sys s;

	if (cmd != MW_TIOCSTI && cmd != MW_TIOCLINUX)
		return 0;
	if (!mw_sys_begin(&s, MW_OP_IOCTL, ret, MW_INT(0), MW_UINT(1), 0, 0))
		return 0;
	mw_fd_path(&s.r, MW_S_OPENED, mw_iarg(&s, 0));
	mw_slot_bytes(&s.r, MW_S_DATA, mw_uptr(&s, 2), 1, 1, true);
	return mw_sys_plain(&s);
}

/* The kernel's key retention service: keys and credentials stored for the user (Kerberos
 * tickets, filesystem encryption keys...). keyctl(operation, arg2, ...): the operation and the
 * key or keyring it names (the later arguments mean something else for each operation, and are
 * left out); add_key/request_key(type, description, ...): the type (DATA) and the description
 * (PATH), never the payload. */
MW_SYS_EXIT(keyctl)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_KEYCTL, ret, MW_INT(0), MW_INT(1), 0, 0))
		return 0;
	return mw_sys_plain(&s);
}

static __always_inline int mw_key_named(struct mw_sys *s)
{
	if (mw_uptr(s, 1))
		mw_slot_str(&s->r, MW_S_PATH, mw_uptr(s, 1), 256, true);
	if (mw_uptr(s, 0))
		mw_slot_str(&s->r, MW_S_DATA, mw_uptr(s, 0), 64, true);
	return mw_sys_plain(s);
}

/* add_key(type, description, payload, plen, keyring) */
MW_SYS_EXIT(add_key)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_ADD_KEY, ret, MW_INT(4), MW_LONG(3), 0, 0))
		return 0;
	return mw_key_named(&s);
}

/* request_key(type, description, callout_info, dest_keyring) */
MW_SYS_EXIT(request_key)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_REQUEST_KEY, ret, MW_INT(3), 0, 0, 0))
		return 0;
	return mw_key_named(&s);
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
