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

/* ---- create, remove, rename, link ----------------------------------------------------------- */

MW_SYS_ENTER(mkdir)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKDIR, MW_UINT(1), 0, 0, 0, 0);
}

MW_SYS_EXIT(mkdir)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MKDIR, ret, MW_UINT(1), 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
}

MW_SYS_ENTER(mkdirat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKDIRAT, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(mkdirat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MKDIRAT, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

MW_SYS_ENTER(mknod)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKNOD, MW_UINT(1), MW_UINT(2), 0, 0, 0);
}

MW_SYS_EXIT(mknod)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MKNOD, ret, MW_UINT(1), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
}

MW_SYS_ENTER(mknodat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MKNODAT, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 1);
}

MW_SYS_EXIT(mknodat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MKNODAT, ret, MW_INT(0), MW_UINT(2), MW_UINT(3), 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

MW_SYS_ENTER(unlink)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_UNLINK, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(unlink)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_UNLINK, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
}

MW_SYS_ENTER(unlinkat)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_UNLINKAT, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(unlinkat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_UNLINKAT, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

MW_SYS_ENTER(rmdir)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_RMDIR, 0, 0, 0, 0, 0);
}

MW_SYS_EXIT(rmdir)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_RMDIR, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
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
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_RENAME, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_path2(&s, -1, 0, -1, 1);
}

MW_SYS_ENTER(renameat)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_RENAMEAT, MW_INT(0), MW_INT(2), 0, 1, 3);
}

MW_SYS_EXIT(renameat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_RENAMEAT, ret, MW_INT(0), MW_INT(2), 0, 0))
		return 0;
	return mw_sys_path2(&s, 0, 1, 2, 3);
}

MW_SYS_ENTER(renameat2)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_RENAMEAT2, MW_INT(0), MW_INT(2), MW_UINT(4), 1, 3);
}

MW_SYS_EXIT(renameat2)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_RENAMEAT2, ret, MW_INT(0), MW_INT(2), MW_UINT(4), 0))
		return 0;
	return mw_sys_path2(&s, 0, 1, 2, 3);
}

MW_SYS_ENTER(link)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_LINK, 0, 0, 0, 0, 1);
}

MW_SYS_EXIT(link)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_LINK, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_path2(&s, -1, 0, -1, 1);
}

MW_SYS_ENTER(linkat)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_LINKAT, MW_INT(0), MW_INT(2), MW_UINT(4), 1, 3);
}

MW_SYS_EXIT(linkat)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_LINKAT, ret, MW_INT(0), MW_INT(2), MW_UINT(4), 0))
		return 0;
	return mw_sys_path2(&s, 0, 1, 2, 3);
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
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_TRUNCATE, ret, MW_LONG(1), 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
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
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_CHMOD, ret, MW_UINT(1), 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
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
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHMODAT, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

MW_SYS_ENTER(fchmodat2)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FCHMODAT2, MW_INT(0), MW_UINT(2), MW_UINT(3), 0, 1);
}

MW_SYS_EXIT(fchmodat2)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHMODAT2, ret, MW_INT(0), MW_UINT(2), MW_UINT(3), 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

MW_SYS_ENTER(chown)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_CHOWN, MW_INT(1), MW_INT(2), 0, 0, 0);
}

MW_SYS_EXIT(chown)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_CHOWN, ret, MW_INT(1), MW_INT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
}

MW_SYS_ENTER(lchown)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_LCHOWN, MW_INT(1), MW_INT(2), 0, 0, 0);
}

MW_SYS_EXIT(lchown)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_LCHOWN, ret, MW_INT(1), MW_INT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
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
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FCHOWNAT, ret, MW_INT(0), MW_INT(2), MW_INT(3), MW_UINT(4)))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}
