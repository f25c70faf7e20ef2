// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * file.bpf.c - the file family. One program per syscall at its exit (arguments from the saved
 * registers, see syscall.bpf.h), so each record carries the arguments and the result.
 *
 * A path argument is recorded as passed and, when relative, resolved in kernel against the cwd
 * or the dirfd. A successful open also records the file actually opened, walked from the new fd,
 * with its device and inode: a symlink escape or an argument rewritten by another thread after
 * entry shows as a difference. Every call here with a path argument is also stashed at entry
 * with the first bytes of that path (and, when they fill the head, a hash of the whole path;
 * for rename, link and symlink also a hash of the second path), which its exit compares with
 * the paths it records (TAMPERED when another thread rewrote one meanwhile); for the opens,
 * which may block (FIFOs), the stash is also the pending call.
 */
#define MW_DIRECT_LOADS /* kernel structures read by direct loads (common.bpf.h) */
#include "syscall.bpf.h"

/* ---- opens ---------------------------------------------------------------------------------- */

MW_SYS_ENTER(openat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_OPENAT, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 1);
}

MW_SYS_EXIT(openat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_OPENAT, ret, MW_INT(0), MW_UINT(2), MW_UINT(3), 0))
		return 0;
	return mw_sys_path1(&s, ret, 0, 1, true);
}

MW_SYS_ENTER(open)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_OPEN, MW_UINT(1), MW_UINT(2), 0, 0, 0);
}

MW_SYS_EXIT(open)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_OPEN, ret, MW_UINT(1), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1(&s, ret, -1, 0, true);
}

MW_SYS_ENTER(creat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CREAT, MW_UINT(1), 0, 0, 0, 0);
}

MW_SYS_ENTER(openat2)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_OPENAT2, MW_INT(0), 0, 0, 0, 1);
}

MW_SYS_EXIT(creat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_CREAT, ret, MW_UINT(1), 0, 0, 0))
		return 0;
	return mw_sys_path1(&s, ret, -1, 0, true);
}

MW_SYS_EXIT(openat2)
{
	struct open_how how = {};
	struct mw_sys s;
	struct mw_event *e = mw_sys_begin(&s, MW_OP_OPENAT2, ret, MW_INT(0), 0, 0, 0);

	if (!e)
		return 0;
	if (bpf_probe_read_user(&how, sizeof(how), mw_uptr(&s, 2)) == 0) {
		e->arg[1] = how.flags;
		e->arg[2] = how.mode;
		e->arg[3] = how.resolve;
	} else {
		e->flags |= MW_F_FAULT;
	}
	return mw_sys_path1(&s, ret, 0, 1, true);
}

MW_SYS_EXIT(open_by_handle_at)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_OPEN_BY_HANDLE_AT, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	if (ret >= 0)
		mw_fd_path(&s.r, MW_S_OPENED, (int)ret);
	return mw_sys_plain(&s);
}

/* ---- exits shared by several calls ---------------------------------------------------------
 *
 * The calls with one path that open nothing (create, remove, change attributes), and the
 * renames and hard links, differ at exit only in the op, the integer arguments and where the
 * paths and their dirfds are. Each group shares one exit program, verified once instead of
 * once per syscall (7 to 13 ms each): each call's own exit program writes that description
 * into its CPU's scratch area and tail-calls the shared one, which records the call as the
 * common code does (mw_sys_path1_checked, mw_sys_path2). The collector places the shared
 * programs before attaching anything and fails to start without them, so the tail call
 * cannot miss. */
static __always_inline int mw_shared_exit(void *ctx, __u32 slot, __u16 op, int a0, int a1, int a2,
					  int a3, int dfd_i, int path_i, int dfd2_i, int path2_i)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct mw_scratch *sc = bpf_map_lookup_elem(&scratch, &cpu);

	if (!sc)
		return 0;
	sc->call.tid = (__u32)bpf_get_current_pid_tgid();
	sc->call.op = op;
	sc->call.dfd_i = (__s8)dfd_i;
	sc->call.path_i = (__u8)path_i;
	sc->call.dfd2_i = (__s8)dfd2_i;
	sc->call.path2_i = (__u8)path2_i;
	sc->call.spec[0] = (__u16)a0;
	sc->call.spec[1] = (__u16)a1;
	sc->call.spec[2] = (__u16)a2;
	sc->call.spec[3] = (__u16)a3;
	bpf_tail_call_static(ctx, &shared_progs, slot); /* slot is constant: a direct jump */
	return 0;
}

/* A call with one path that opens nothing: the integer arguments by spec, the path argument
 * and its dirfd argument (dfd_i < 0: AT_FDCWD). */
#define mw_path1_exit(op, a0, a1, a2, a3, dfd_i, path_i)                                           \
	mw_shared_exit(ctx, MW_SHARED_PATH1_EXIT, op, a0, a1, a2, a3, dfd_i, path_i, -1, 0)

/* A rename or hard link: the old name (PATH) and the new one (PATH2), each with its dirfd. */
#define mw_path2_exit(op, a0, a1, a2, dfd1_i, path1_i, dfd2_i, path2_i)                            \
	mw_shared_exit(ctx, MW_SHARED_PATH2_EXIT, op, a0, a1, a2, 0, dfd1_i, path1_i, dfd2_i,      \
		       path2_i)

/* In a shared exit program: the description its caller left (taken once: a later program
 * finds none), and the record begun with it. NULL for none, or for an untracked task. */
static __always_inline struct mw_event *mw_shared_begin(struct mw_sys *s, struct pt_regs *regs,
							long ret, struct mw_shared_call *c)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct mw_scratch *sc = bpf_map_lookup_elem(&scratch, &cpu);

	if (!sc)
		return NULL;
	*c = sc->call;
	sc->call.tid = 0;
	if (c->tid != (__u32)bpf_get_current_pid_tgid() || c->op == MW_OP_UNSPEC)
		return NULL;
	return mw_sys_begin_regs(s, regs, c->op, ret, c->spec[0], c->spec[1], c->spec[2],
				 c->spec[3]);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mw_shared_path1_exit, struct pt_regs *mw_ctx_regs, long ret)
{
	struct mw_shared_call c;
	struct mw_sys s;

	if (!mw_shared_begin(&s, mw_ctx_regs, ret, &c))
		return 0;
	return mw_sys_path1_checked(&s, c.dfd_i, c.path_i);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mw_shared_path2_exit, struct pt_regs *mw_ctx_regs, long ret)
{
	struct mw_shared_call c;
	struct mw_sys s;

	if (!mw_shared_begin(&s, mw_ctx_regs, ret, &c))
		return 0;
	return mw_sys_path2(&s, c.dfd_i, c.path_i, c.dfd2_i, c.path2_i);
}

/* ---- create, remove, rename, link ----------------------------------------------------------- */

MW_SYS_ENTER(mkdir)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKDIR, MW_UINT(1), 0, 0, 0, 0);
}

MW_SYS_EXIT(mkdir)
{
	return mw_path1_exit(MW_OP_MKDIR, MW_UINT(1), 0, 0, 0, -1, 0);
}

MW_SYS_ENTER(mkdirat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKDIRAT, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(mkdirat)
{
	return mw_path1_exit(MW_OP_MKDIRAT, MW_INT(0), MW_UINT(2), 0, 0, 0, 1);
}

MW_SYS_ENTER(mknod)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKNOD, MW_UINT(1), MW_UINT(2), 0, 0, 0);
}

MW_SYS_EXIT(mknod)
{
	return mw_path1_exit(MW_OP_MKNOD, MW_UINT(1), MW_UINT(2), 0, 0, -1, 0);
}

MW_SYS_ENTER(mknodat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKNODAT, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 1);
}

MW_SYS_EXIT(mknodat)
{
	return mw_path1_exit(MW_OP_MKNODAT, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 0, 1);
}

MW_SYS_ENTER(unlink)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_UNLINK, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(unlink)
{
	return mw_path1_exit(MW_OP_UNLINK, 0, 0, 0, 0, -1, 0);
}

MW_SYS_ENTER(unlinkat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_UNLINKAT, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(unlinkat)
{
	return mw_path1_exit(MW_OP_UNLINKAT, MW_INT(0), MW_UINT(2), 0, 0, 0, 1);
}

MW_SYS_ENTER(rmdir)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_RMDIR, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(rmdir)
{
	return mw_path1_exit(MW_OP_RMDIR, 0, 0, 0, 0, -1, 0);
}

/* A call with two paths (rename*, link*, symlink*) is stashed with the head of the path its
 * record keeps in PATH (the old name of a rename, the existing file of a link, the new link of
 * a symlink) and the hash of the one it keeps in PATH2 (the new name, the symlink's target):
 * both are checked. */
MW_SYS_ENTER(rename)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_RENAME, 0, 0, 0, 0, 1);
}

MW_SYS_EXIT(rename)
{
	return mw_path2_exit(MW_OP_RENAME, 0, 0, 0, -1, 0, -1, 1);
}

MW_SYS_ENTER(renameat)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_RENAMEAT, MW_INT(0), MW_INT(2), 0, 1, 3);
}

MW_SYS_EXIT(renameat)
{
	return mw_path2_exit(MW_OP_RENAMEAT, MW_INT(0), MW_INT(2), 0, 0, 1, 2, 3);
}

MW_SYS_ENTER(renameat2)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_RENAMEAT2, MW_INT(0), MW_INT(2), MW_UINT(4), 1, 3);
}

MW_SYS_EXIT(renameat2)
{
	return mw_path2_exit(MW_OP_RENAMEAT2, MW_INT(0), MW_INT(2), MW_UINT(4), 0, 1, 2, 3);
}

MW_SYS_ENTER(link)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_LINK, 0, 0, 0, 0, 1);
}

MW_SYS_EXIT(link)
{
	return mw_path2_exit(MW_OP_LINK, 0, 0, 0, -1, 0, -1, 1);
}

MW_SYS_ENTER(linkat)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_LINKAT, MW_INT(0), MW_INT(2), MW_UINT(4), 1, 3);
}

MW_SYS_EXIT(linkat)
{
	return mw_path2_exit(MW_OP_LINKAT, MW_INT(0), MW_INT(2), MW_UINT(4), 0, 1, 2, 3);
}

/* symlink(target, linkpath): the link is the path acted on; its target is content, kept as
 * given (a relative target is relative to the link's directory, not to the cwd). Both are
 * checked against the stash, as mw_sys_path2 does. */
static __always_inline int mw_symlink(struct mw_sys *s, int dfd_i, int target_i, int link_i)
{
	int dirfd = dfd_i < 0 ? -100 : mw_iarg(s, dfd_i);
	__u32 off2;

	mw_path_arg(&s->r, MW_S_PATH, MW_S_ABS, dirfd, mw_uptr(s, link_i));
	mw_inflight_check(&s->r, MW_WHOLE_ARG, MW_S_PATH, MW_PATH_OFF, false);
	off2 = s->r.off;
	mw_slot_str(&s->r, MW_S_PATH2, mw_uptr(s, target_i), MW_PATH_MAX, true);
	mw_inflight_check(&s->r, MW_WHOLE_PATH2, MW_S_PATH2, off2, true);
	mw_rec_emit(&s->r);
	return 0;
}

MW_SYS_ENTER(symlink)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_SYMLINK, 0, 0, 0, 1, 0);
}

MW_SYS_EXIT(symlink)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_SYMLINK, ret, 0, 0, 0, 0))
		return 0;
	return mw_symlink(&s, -1, 0, 1);
}

MW_SYS_ENTER(symlinkat)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_SYMLINKAT, MW_INT(1), 0, 0, 2, 0);
}

MW_SYS_EXIT(symlinkat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_SYMLINKAT, ret, MW_INT(1), 0, 0, 0))
		return 0;
	return mw_symlink(&s, 1, 0, 2);
}

/* ---- attributes and size -------------------------------------------------------------------- */

MW_SYS_ENTER(truncate)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_TRUNCATE, MW_LONG(1), 0, 0, 0, 0);
}

MW_SYS_EXIT(truncate)
{
	return mw_path1_exit(MW_OP_TRUNCATE, MW_LONG(1), 0, 0, 0, -1, 0);
}

MW_SYS_EXIT(ftruncate)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FTRUNCATE, ret, MW_INT(0), MW_LONG(1), 0, 0))
		return 0;
	return mw_sys_fd(&s, 0);
}

MW_SYS_ENTER(chmod)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CHMOD, MW_UINT(1), 0, 0, 0, 0);
}

MW_SYS_EXIT(chmod)
{
	return mw_path1_exit(MW_OP_CHMOD, MW_UINT(1), 0, 0, 0, -1, 0);
}

MW_SYS_EXIT(fchmod)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHMOD, ret, MW_INT(0), MW_UINT(1), 0, 0))
		return 0;
	return mw_sys_fd(&s, 0);
}

MW_SYS_ENTER(fchmodat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FCHMODAT, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(fchmodat)
{
	return mw_path1_exit(MW_OP_FCHMODAT, MW_INT(0), MW_UINT(2), 0, 0, 0, 1);
}

MW_SYS_ENTER(fchmodat2)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FCHMODAT2, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 1);
}

MW_SYS_EXIT(fchmodat2)
{
	return mw_path1_exit(MW_OP_FCHMODAT2, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 0, 1);
}

MW_SYS_ENTER(chown)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CHOWN, MW_INT(1), MW_INT(2), 0, 0, 0);
}

MW_SYS_EXIT(chown)
{
	return mw_path1_exit(MW_OP_CHOWN, MW_INT(1), MW_INT(2), 0, 0, -1, 0);
}

MW_SYS_ENTER(lchown)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_LCHOWN, MW_INT(1), MW_INT(2), 0, 0, 0);
}

MW_SYS_EXIT(lchown)
{
	return mw_path1_exit(MW_OP_LCHOWN, MW_INT(1), MW_INT(2), 0, 0, -1, 0);
}

MW_SYS_EXIT(fchown)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHOWN, ret, MW_INT(0), MW_INT(1), MW_INT(2), 0))
		return 0;
	return mw_sys_fd(&s, 0);
}

MW_SYS_ENTER(fchownat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FCHOWNAT, MW_INT(0), MW_INT(2), MW_INT(3),
			     MW_UINT(4), 1);
}

MW_SYS_EXIT(fchownat)
{
	return mw_path1_exit(MW_OP_FCHOWNAT, MW_INT(0), MW_INT(2), MW_INT(3), MW_UINT(4), 0, 1);
}
