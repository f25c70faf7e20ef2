// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mount.bpf.c - changes to the mount tree: mount(2), umount2, pivot_root, and the fd-based mount
 * API of Linux 5.2+ (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr,
 * open_tree_attr). In a user namespace of its own a process may use all of them without
 * privilege, for instance to bind a credential directory under an innocent name, so every call
 * is recorded with its result and the paths it names.
 *
 * Every call here that names a path or a source in user memory is stashed at entry with it (see
 * mw_arg_check), as the file calls are: a thread that rewrites the argument while the call runs
 * (a mount blocks on the mount point's lock) makes its record TAMPERED.
 */
#include "syscall.bpf.h"

/* mount(source, target, fstype, flags, data): the source (a device, a directory to bind, or
 * NULL) is the record's PATH, the target its PATH2; both are checked. */
MW_SYS_ENTER(mount)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_MOUNT, MW_LONG(3), 0, 0, 0, 1);
}

MW_SYS_EXIT(mount)
{
	struct mw_sys s;
	__u32 off2;

	if (!mw_sys_begin(&s, MW_OP_MOUNT, ret, MW_LONG(3), 0, 0, 0))
		return 0;
	/* source and fs type may be NULL (a propagation change, a remount): absent, not a fault */
	if (mw_uptr(&s, 0))
		mw_slot_str(&s.r, MW_S_PATH, mw_uptr(&s, 0), MW_PATH_MAX, true);
	mw_inflight_check(&s.r, MW_WHOLE_ARG, MW_S_PATH, MW_PATH_OFF, false);
	off2 = s.r.off;
	mw_path_arg(&s.r, MW_S_PATH2, MW_S_ABS2, -100, mw_uptr(&s, 1));
	mw_inflight_check(&s.r, MW_WHOLE_PATH2, MW_S_PATH2, off2, true);
	if (mw_uptr(&s, 2))
		mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 2), 64, true);
	return mw_sys_plain(&s);
}

/* umount2(target, flags) */
MW_SYS_ENTER(umount2)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_UMOUNT2, MW_INT(1), 0, 0, 0, 0);
}

MW_SYS_EXIT(umount2)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_UMOUNT2, ret, MW_INT(1), 0, 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, -1, 0);
}

/* pivot_root(new_root, put_old) */
MW_SYS_ENTER(pivot_root)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_PIVOT_ROOT, 0, 0, 0, 0, 1);
}

MW_SYS_EXIT(pivot_root)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_PIVOT_ROOT, ret, 0, 0, 0, 0))
		return 0;
	return mw_sys_path2(&s, -1, 0, -1, 1);
}

/* open_tree(dirfd, path, flags) and open_tree_attr(dirfd, path, flags, attr, size): a handle on
 * a mount, or (OPEN_TREE_CLONE) a detached copy of it to attach elsewhere. */
static __always_inline int mw_open_tree(struct mw_sys *s, long ret)
{
	mw_path_arg(&s->r, MW_S_PATH, MW_S_ABS, mw_iarg(s, 0), mw_uptr(s, 1));
	mw_head_check(&s->r, MW_S_PATH, MW_PATH_OFF);
	if (ret >= 0)
		mw_fd_path(&s->r, MW_S_OPENED, (int)ret);
	return mw_sys_plain(s);
}

MW_SYS_ENTER(open_tree)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_OPEN_TREE, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(open_tree)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_OPEN_TREE, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_open_tree(&s, ret);
}

/* The first 8 bytes of a struct mount_attr (attr_set) at user address p, 0 if unreadable. */
static __always_inline __u64 mw_attr_set(const void *p)
{
	__u64 v = 0;

	if (p)
		bpf_probe_read_user(&v, sizeof(v), p);
	return v;
}

MW_SYS_ENTER(open_tree_attr)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_OPEN_TREE_ATTR, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(open_tree_attr)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_OPEN_TREE_ATTR, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	s.r.e->arg[2] = mw_attr_set(mw_uptr(&s, 3));
	return mw_open_tree(&s, ret);
}

#define MW_MOVE_MOUNT_F_EMPTY_PATH 0x04
#define MW_MOVE_MOUNT_T_EMPTY_PATH 0x40

/* move_mount(from_dirfd, from_path, to_dirfd, to_path, flags): attaches (or moves) a mount. With
 * an empty from path the mount is the from dirfd itself (a tree open_tree detached): OPENED; with
 * an empty to path the mount point is the to dirfd: ABS2. Slots in slot order. Both paths are
 * checked, the to path (empty or not) as PATH2. */
MW_SYS_ENTER(move_mount)
{
	return mw_path2_enter(mw_ctx_regs, MW_OP_MOVE_MOUNT, MW_INT(0), MW_INT(2), MW_UINT(4), 1,
			      3);
}

MW_SYS_EXIT(move_mount)
{
	struct mw_sys s;
	__u32 flags, off2;

	if (!mw_sys_begin(&s, MW_OP_MOVE_MOUNT, ret, MW_INT(0), MW_INT(2), MW_UINT(4), 0))
		return 0;
	flags = (__u32)s.r.e->arg[2];
	mw_path_arg(&s.r, MW_S_PATH, MW_S_ABS, mw_iarg(&s, 0), mw_uptr(&s, 1));
	mw_inflight_check(&s.r, MW_WHOLE_ARG, MW_S_PATH, MW_PATH_OFF, false);
	if (flags & MW_MOVE_MOUNT_F_EMPTY_PATH)
		mw_fd_path(&s.r, MW_S_OPENED, mw_iarg(&s, 0));
	if (flags & MW_MOVE_MOUNT_T_EMPTY_PATH) {
		struct file *to = mw_fd_file(mw_iarg(&s, 2)); /* the mount point is the to dirfd */

		if (to)
			mw_slot_path(&s.r, MW_S_ABS2,
				     (__u64)__builtin_preserve_access_index(&to->f_path));
		else
			s.r.e->flags |= MW_F_UNRES(MW_S_ABS2);
		mw_inflight_end(); /* the to path is not recorded: nothing to check it against */
	} else {
		off2 = s.r.off;
		mw_path_arg(&s.r, MW_S_PATH2, MW_S_ABS2, mw_iarg(&s, 2), mw_uptr(&s, 3));
		mw_inflight_check(&s.r, MW_WHOLE_PATH2, MW_S_PATH2, off2, true);
	}
	return mw_sys_plain(&s);
}

/* fsopen(fs_name, flags): a filesystem context to configure. */
MW_SYS_EXIT(fsopen)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FSOPEN, ret, MW_UINT(1), 0, 0, 0))
		return 0;
	mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 0), 64, true);
	return mw_sys_plain(&s);
}

#define MW_FSCONFIG_SET_STRING	   1
#define MW_FSCONFIG_SET_PATH	   3
#define MW_FSCONFIG_SET_PATH_EMPTY 4
#define MW_FSCONFIG_SET_FD	   5

/* fsconfig(fd, cmd, key, value, aux): one parameter of the context ("source" names what is
 * mounted). The value is kept when it is a string or a path (and checked); a file when it is an
 * fd. */
static __always_inline bool mw_fsconfig_has_string(__u32 cmd)
{
	return cmd == MW_FSCONFIG_SET_STRING || cmd == MW_FSCONFIG_SET_PATH ||
	       cmd == MW_FSCONFIG_SET_PATH_EMPTY;
}

MW_SYS_ENTER(fsconfig)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FSCONFIG, MW_INT(0), MW_UINT(1), MW_INT(4), 0,
			     mw_fsconfig_has_string((__u32)mw_arg(mw_ctx_regs, 1)) ? 3 : -1);
}

MW_SYS_EXIT(fsconfig)
{
	struct mw_sys s;
	__u32 cmd;

	if (!mw_sys_begin(&s, MW_OP_FSCONFIG, ret, MW_INT(0), MW_UINT(1), MW_INT(4), 0))
		return 0;
	cmd = (__u32)s.r.e->arg[1];
	/* slots in slot order: PATH, OPENED, DATA */
	if (mw_fsconfig_has_string(cmd) && mw_uptr(&s, 3))
		mw_slot_str(&s.r, MW_S_PATH, mw_uptr(&s, 3), MW_PATH_MAX, true);
	mw_head_check(&s.r, MW_S_PATH, MW_PATH_OFF);
	if (cmd == MW_FSCONFIG_SET_FD)
		mw_fd_path(&s.r, MW_S_OPENED, mw_iarg(&s, 4));
	if (mw_uptr(&s, 2))
		mw_slot_str(&s.r, MW_S_DATA, mw_uptr(&s, 2), 64, true);
	return mw_sys_plain(&s);
}

/* fsmount(fs_fd, flags, attr_flags): the configured filesystem as a detached mount. */
MW_SYS_EXIT(fsmount)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FSMOUNT, ret, MW_INT(0), MW_UINT(1), MW_UINT(2), 0))
		return 0;
	return mw_sys_plain(&s);
}

/* fspick(dirfd, path, flags): the context of an existing mount, to reconfigure it. */
MW_SYS_ENTER(fspick)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_FSPICK, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(fspick)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_FSPICK, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	return mw_sys_path1_checked(&s, 0, 1);
}

/* mount_setattr(dirfd, path, flags, attr, size): changes a mount's attributes (read-only,
 * nosuid, idmapping...). */
MW_SYS_ENTER(mount_setattr)
{
	return mw_path_enter(mw_ctx_regs, MW_OP_MOUNT_SETATTR, MW_INT(0), MW_UINT(2), 0, 0, 1);
}

MW_SYS_EXIT(mount_setattr)
{
	struct mw_sys s;

	if (!mw_sys_begin(&s, MW_OP_MOUNT_SETATTR, ret, MW_INT(0), MW_UINT(2), 0, 0))
		return 0;
	s.r.e->arg[2] = mw_attr_set(mw_uptr(&s, 3));
	return mw_sys_path1_checked(&s, 0, 1);
}
