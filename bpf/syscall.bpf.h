/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * syscall.bpf.h - what every syscall handler shares on top of common.bpf.h.
 *
 * Two dispatchers sit on the kernel's raw syscall tracepoints (tp_btf sys_enter / sys_exit) and
 * tail-call the handler of the syscall in progress through a program array indexed by syscall
 * number (filled by the collector); a syscall nobody handles costs one failed tail call. One
 * attachment per direction instead of one perf event per syscall: attaching needs no tracefs,
 * and detaching costs two RCU grace periods, not eighty (each syscall tracepoint's unregister
 * waits for one, serialised by the kernel's event_mutex).
 *
 * Handlers run at exit: the result is the tracepoint's `ret`, the arguments are read back from
 * the task's saved user registers (the kernel does not modify them), so one program per syscall
 * records arguments and result together (args.bpf.h). A call that may block, or whose record
 * names what it acts on through user memory, is also stashed at entry and checked against the
 * stash at exit (inflight.bpf.h).
 */
#ifndef MW_SYSCALL_BPF_H
#define MW_SYSCALL_BPF_H

#include "inflight.bpf.h"

/* Handlers are loaded but never attached themselves: the collector puts each in the program
 * array slot of the syscall its name ends with (handle_sys_exit_openat -> __NR_openat). */
/* The tracepoint's regs argument (mw_ctx_regs) is the task's saved user registers, the same
 * pointer bpf_task_pt_regs() would return, without the helper calls. */
#define MW_SYS_EXIT(name)                                                                          \
	SEC("tp_btf/sys_exit")                                                                     \
	int BPF_PROG(handle_sys_exit_##name, struct pt_regs *mw_ctx_regs, long ret)
#define MW_SYS_ENTER(name)                                                                         \
	SEC("tp_btf/sys_enter")                                                                    \
	int BPF_PROG(handle_sys_enter_##name, struct pt_regs *mw_ctx_regs, long id)

/* A syscall exit being recorded: the record and the registers its arguments come from. */
struct mw_sys {
	struct mw_rec r;
	struct pt_regs *regs;
};

/* Starts the record of syscall op with result ret, copying up to four integer arguments (by
 * spec) from regs into arg[0..3]. NULL for an untracked task, having done nothing but the
 * lookup. In a handler, mw_sys_begin() passes the tracepoint's own regs. */
static __always_inline struct mw_event *mw_sys_begin_regs(struct mw_sys *s, struct pt_regs *regs,
							  __u16 op, long ret, int a0, int a1,
							  int a2, int a3)
{
	struct mw_event *e;

	if (!mw_is_tracked())
		return NULL;
	e = mw_rec_begin(&s->r, op, ret);
	if (!e)
		return NULL;
	s->regs = regs;
	if (a0)
		e->arg[0] = mw_arg_spec(s->regs, a0);
	if (a1)
		e->arg[1] = mw_arg_spec(s->regs, a1);
	if (a2)
		e->arg[2] = mw_arg_spec(s->regs, a2);
	if (a3)
		e->arg[3] = mw_arg_spec(s->regs, a3);
	return e;
}

#define mw_sys_begin(s, ...) mw_sys_begin_regs(s, mw_ctx_regs, __VA_ARGS__)

static __always_inline const void *mw_uptr(struct mw_sys *s, int i)
{
	return (const void *)mw_arg(s->regs, i);
}

static __always_inline int mw_iarg(struct mw_sys *s, int i)
{
	return (int)mw_arg(s->regs, i);
}

/* The path slot is the record's first: it starts right after the header. */
#define MW_PATH_OFF MW_EVENT_HDR_SIZE

/* The common shape: one path argument, optionally relative to a dirfd argument (dfd_i < 0:
 * AT_FDCWD). stashed: the entry program kept the path's head (mw_inflight_path), so check the
 * argument against it, which ends the stash; opens: on success, also the new fd's file. */
static __always_inline int mw_sys_path1_of(struct mw_sys *s, long ret, int dfd_i, int path_i,
					   bool stashed, bool opens)
{
	int dirfd = dfd_i < 0 ? -100 : mw_iarg(s, dfd_i);

	mw_path_arg(&s->r, MW_S_PATH, MW_S_ABS, dirfd, mw_uptr(s, path_i));
	if (stashed)
		mw_head_check(&s->r, MW_S_PATH, MW_PATH_OFF);
	if (opens && ret >= 0)
		mw_fd_path(&s->r, MW_S_OPENED, (int)ret);
	mw_rec_emit(&s->r);
	return 0;
}

/* An open (stashed at entry, the new fd's file on success), or a call whose entry is not
 * stashed (opens false: a failed execve, whose stash ends apart). */
static __always_inline int mw_sys_path1(struct mw_sys *s, long ret, int dfd_i, int path_i,
					bool opens)
{
	return mw_sys_path1_of(s, ret, dfd_i, path_i, opens, opens);
}

/* A call that opens nothing, stashed at entry with its path's head (create, remove, change
 * attributes: the file calls of file.bpf.c; chdir, chroot; umount2 and the mount API). */
static __always_inline int mw_sys_path1_checked(struct mw_sys *s, int dfd_i, int path_i)
{
	return mw_sys_path1_of(s, 0, dfd_i, path_i, true, false);
}

/* Two path arguments (rename, link): the first in PATH/ABS, the second in PATH2/ABS2. Stashed
 * at entry (by mw_inflight_path2: the head of the first, the hash of the second) when the call
 * is a file call; each path is checked once it is in the record. */
static __always_inline int mw_sys_path2(struct mw_sys *s, int dfd1_i, int path1_i, int dfd2_i,
					int path2_i)
{
	int dfd1 = dfd1_i < 0 ? -100 : mw_iarg(s, dfd1_i);
	int dfd2 = dfd2_i < 0 ? -100 : mw_iarg(s, dfd2_i);
	__u32 off2;

	mw_path_arg(&s->r, MW_S_PATH, MW_S_ABS, dfd1, mw_uptr(s, path1_i));
	mw_inflight_check(&s->r, MW_WHOLE_ARG, MW_S_PATH, MW_PATH_OFF, false);
	off2 = s->r.off;
	mw_path_arg(&s->r, MW_S_PATH2, MW_S_ABS2, dfd2, mw_uptr(s, path2_i));
	mw_inflight_check(&s->r, MW_WHOLE_PATH2, MW_S_PATH2, off2, true);
	mw_rec_emit(&s->r);
	return 0;
}

/* An fd argument whose file is the object acted on (fchmod, ftruncate, ...). */
static __always_inline int mw_sys_fd(struct mw_sys *s, int fd_i)
{
	mw_fd_path(&s->r, MW_S_OPENED, mw_iarg(s, fd_i));
	mw_rec_emit(&s->r);
	return 0;
}

/* Integer arguments only. */
static __always_inline int mw_sys_plain(struct mw_sys *s)
{
	mw_rec_emit(&s->r);
	return 0;
}

#endif /* MW_SYSCALL_BPF_H */
