/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * path.bpf.h - absolute paths resolved in kernel.
 *
 * bpf_d_path() is only allowed in fentry/LSM programs, which this kernel refuses, so the path of
 * a `struct path` is rebuilt here the way the kernel's prepend_path() does: walk d_parent up to
 * the mount root, cross to the parent mount at its mountpoint, stop at the task's root (a path as
 * the task names it) or, for the file a call actually acted on, at the root of the task's mount
 * namespace (past a chroot: the file's place in the namespace, whatever root the task gave
 * itself; mw_fd_path). The walk runs in bpf_loop (verified once, whatever the depth) for up to
 * MW_WALK_STEPS steps and writes components backwards into the per-CPU path buffer.
 *
 * Honesty rules (DESIGN.md section 4): a walk that runs out of steps or bytes yields the suffix
 * it has *without* its leading '/', flagged truncated, so it can never pass for an absolute
 * path; a walk that ends at a mount outside the task's root, or outside its mount namespace for a
 * walk to the namespace's root (pipes, sockets, anonymous inodes, detached mounts, another
 * namespace's files; paths beyond a chroot for a walk to the task's root), yields nothing,
 * flagged unresolved.
 */
#ifndef MW_PATH_BPF_H
#define MW_PATH_BPF_H

#include "common.bpf.h"

#define MW_WALK_STEPS 160 /* components + mount crossings; DESIGN.md asks for at least 64 */

enum mw_walk_state {
	MW_WALK_RUNNING = 0,
	MW_WALK_DONE = 1,
	MW_WALK_TRUNC = 2,
	MW_WALK_UNRES = 3,
};

struct mw_walk {
	struct mw_scratch *s; /* this CPU's scratch, looked up once per walk, not per step */
	struct dentry *d;
	struct vfsmount *vm;
	struct dentry *vm_root; /* vm->mnt_root, read when vm changes, not per step */
	struct mount *mnt;
	struct dentry *root_d;
	struct vfsmount *root_vm;
	__u32 pos; /* start of the path in scratch->path; the path ends at MW_PATH_MAX */
	__u32 state;
	struct mount *ns_root; /* to_top: the root mount of the task's mount namespace */
	__u32 to_top; /* walk to the root of the task's mount namespace, not to the task's root */
	__u32 pad;
};

static __always_inline struct mount *mw_real_mount(struct vfsmount *vm)
{
	return (struct mount *)((void *)vm - bpf_core_field_offset(struct mount, mnt));
}

/* Whether the walk stops before this step: no scratch, or the task's root reached. */
static __always_inline bool mw_walk_at_end(struct mw_walk *w)
{
	if (!w->s) {
		w->state = MW_WALK_UNRES;
		return true;
	}
	if (w->d == w->root_d && w->vm == w->root_vm) {
		w->state = MW_WALK_DONE;
		return true;
	}
	return false;
}

/* Puts "/" + the len bytes of a component name at kernel address name in front of the path
 * built so far and moves up to its parent; 1 (stop) when it does not fit or cannot be read. */
static __always_inline long mw_walk_prepend(struct mw_walk *w, __u32 len, const void *name,
					    struct dentry *up)
{
	struct mw_scratch *s = w->s;
	__u32 pos = w->pos;

	if (!s || len + 1 > pos) {
		w->state = MW_WALK_TRUNC;
		return 1;
	}
	pos -= len;
	if (bpf_probe_read_kernel(&s->path[pos & (MW_PATH_MAX - 1)], len & (MW_PATH_MAX - 1),
				  name)) {
		w->state = MW_WALK_UNRES;
		return 1;
	}
	pos -= 1;
	s->path[pos & (MW_PATH_MAX - 1)] = '/';
	w->pos = pos;
	w->d = up;
	return 0;
}

/* One step: three helper calls (parent, name, name bytes), or three reads at a mount crossing.
 * The pointers come from bpf_probe_read_kernel (they are not BTF pointers: the walk starts
 * from a struct file read out of the fd table), hence BPF_CORE_READ rather than direct loads. */
static long mw_walk_step(__u32 i, void *ctx)
{
	struct mw_walk *w = ctx;
	/* locals: CO-RE reads must start from a kernel type, not from struct mw_walk */
	struct dentry *d = w->d;
	struct vfsmount *vm = w->vm;
	struct mount *mnt = w->mnt;
	struct dentry *up;
	struct qstr name;

	if (mw_walk_at_end(w))
		return 1;
	if (d == w->vm_root) {
		struct mount *parent = BPF_CORE_READ(mnt, mnt_parent);

		/* a top: done if it is the namespace's, when walking to it */
		if (parent == mnt) {
			w->state = w->to_top && mnt == w->ns_root ? MW_WALK_DONE : MW_WALK_UNRES;
			return 1;
		}
		vm = (struct vfsmount *)((void *)parent + bpf_core_field_offset(struct mount, mnt));
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = parent;
		w->vm = vm;
		w->vm_root = BPF_CORE_READ(vm, mnt_root);
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	if (up == d) { /* disconnected: the root of an unmounted (pseudo) filesystem */
		w->state = MW_WALK_UNRES;
		return 1;
	}
	name = BPF_CORE_READ(d, d_name);
	return mw_walk_prepend(w, name.len, name.name, up);
}

#ifdef MW_DIRECT_LOADS
/* mw_walk_step by direct loads: the same states, the same bytes. */
static long mw_walk_step_direct(__u32 i, void *ctx)
{
	struct mw_walk *w = ctx;
	struct dentry *d, *up;
	struct mount *mnt, *parent;
	struct vfsmount *vm;

	if (mw_walk_at_end(w))
		return 1;
	if (w->d == w->vm_root) {
		mnt = MW_RO(struct mount, w->mnt);
		parent = mnt->mnt_parent;
		/* a top: done if it is the namespace's, when walking to it */
		if (parent == w->mnt) {
			w->state = w->to_top && w->mnt == w->ns_root ? MW_WALK_DONE : MW_WALK_UNRES;
			return 1;
		}
		vm = (struct vfsmount *)((void *)parent + bpf_core_field_offset(struct mount, mnt));
		w->d = mnt->mnt_mountpoint;
		w->mnt = parent;
		w->vm = vm;
		w->vm_root = MW_RO(struct vfsmount, vm)->mnt_root;
		return 0;
	}
	d = MW_RO(struct dentry, w->d);
	up = d->d_parent;
	if (up == w->d) { /* disconnected: the root of an unmounted (pseudo) filesystem */
		w->state = MW_WALK_UNRES;
		return 1;
	}
	return mw_walk_prepend(w, d->d_name.len, d->d_name.name, up);
}

#endif /* MW_DIRECT_LOADS */

/* Where a walk starts: the kernel address of a struct path (read by a helper, so a plain
 * number to the verifier), or one of these, the current task's cwd or root. */
#define MW_WALK_CWD  1ull
#define MW_WALK_ROOT 2ull

/* The walk is a global function: the verifier checks it once per program, apart from its
 * callers, instead of again at every call site and for every state that reaches one (that was
 * three fifths of the collector's whole verification). A program with direct loads and one
 * without have different bodies, so different names; each object that includes this header
 * brings its variant, weak, and the linker keeps one of each. */
#ifdef MW_DIRECT_LOADS
#define mw_walk_from mw_walk_from_direct
#else
#define mw_walk_from mw_walk_from_core
#endif

/* Walks the struct path `from` against the current task's root, or with to_top up to the root of
 * the task's mount namespace (the file acted on, wherever the task's root is: a directory just
 * chrooted into, a file opened inside a chroot).
 * On return the path occupies this CPU's scratch->path[*start .. MW_PATH_MAX); the result is one
 * of enum mw_walk_state. */
__weak __noinline __u32 mw_walk_from(__u64 from, __u32 to_top, __u32 *start)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id();
	struct mw_walk w = {};
	bool direct = false;

	if (!start)
		return MW_WALK_UNRES;
	w.s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!w.s)
		return MW_WALK_UNRES;
#ifdef MW_DIRECT_LOADS
	direct = bpf_ksym_exists(bpf_rdonly_cast);
	if (direct) {
		const struct fs_struct *fs = mw_task_fs(task);
		const struct path *pp;

		if (from == MW_WALK_CWD)
			pp = &fs->pwd;
		else if (from == MW_WALK_ROOT)
			pp = &fs->root;
		else
			pp = MW_RO(struct path, (const void *)from);
		w.d = pp->dentry;
		w.vm = pp->mnt;
		if (!w.d || !w.vm)
			return MW_WALK_UNRES;
		w.vm_root = MW_RO(struct vfsmount, w.vm)->mnt_root;
		if (!to_top) {
			w.root_d = fs->root.dentry;
			w.root_vm = fs->root.mnt;
		} else {
			w.ns_root = MW_RO(struct task_struct, task)->nsproxy->mnt_ns->root;
		}
	}
#endif
	if (!direct) {
		const struct fs_struct *fs = mw_task_fs(task);
		const struct path *p = (const struct path *)from;
		struct vfsmount *vm;

		if (from == MW_WALK_CWD)
			p = __builtin_preserve_access_index(&fs->pwd);
		else if (from == MW_WALK_ROOT)
			p = __builtin_preserve_access_index(&fs->root);
		vm = BPF_CORE_READ(p, mnt); /* a local: CO-RE starts at kernel types */
		w.d = BPF_CORE_READ(p, dentry);
		w.vm = vm;
		if (!w.d || !vm)
			return MW_WALK_UNRES;
		w.vm_root = BPF_CORE_READ(vm, mnt_root);
		if (!to_top) {
			w.root_d = BPF_CORE_READ(fs, root.dentry);
			w.root_vm = BPF_CORE_READ(fs, root.mnt);
		} else {
			w.ns_root = BPF_CORE_READ(task, nsproxy, mnt_ns, root);
		}
	}
	w.mnt = mw_real_mount(w.vm);
	w.to_top = to_top;
	w.pos = MW_PATH_MAX;
#ifdef MW_DIRECT_LOADS
	if (direct)
		bpf_loop(MW_WALK_STEPS, mw_walk_step_direct, &w, 0);
	else
#endif
		bpf_loop(MW_WALK_STEPS, mw_walk_step, &w, 0);
	if (w.state == MW_WALK_RUNNING)
		w.state = MW_WALK_TRUNC;
	if (w.state == MW_WALK_DONE && w.pos == MW_PATH_MAX) { /* the root itself */
		w.pos = MW_PATH_MAX - 1;
		w.s->path[MW_PATH_MAX - 1] = '/';
	}
	if (w.state == MW_WALK_TRUNC && w.pos < MW_PATH_MAX)
		w.pos += 1; /* drop the leading '/': a cut path must not look absolute */
	*start = w.pos;
	return w.state;
}

/* Appends the walked path of `from` (mw_walk_from) to slot, or flags the slot truncated /
 * unresolved. */
static __always_inline void mw_slot_path_to(struct mw_rec *r, int slot, __u64 from, bool to_top)
{
	__u32 start = 0;
	__u32 state = mw_walk_from(from, to_top, &start);

	if (state == MW_WALK_UNRES) {
		r->e->flags |= MW_F_UNRES(slot);
		return;
	}
	if (state == MW_WALK_TRUNC)
		r->e->flags |= MW_F_TRUNC(slot);
	if (start > MW_PATH_MAX)
		return;
	mw_slot_bytes(r, slot, &r->s->path[start & (MW_PATH_MAX - 1)], MW_PATH_MAX - start,
		      MW_PATH_MAX, false);
}

static __always_inline void mw_slot_path(struct mw_rec *r, int slot, __u64 from)
{
	mw_slot_path_to(r, slot, from, false);
}

/* The struct file behind fd in the current task, or NULL. */
static __always_inline struct file *mw_fd_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = NULL;
	__u32 max_fds;

#ifdef MW_DIRECT_LOADS
	if (bpf_ksym_exists(bpf_rdonly_cast)) {
		fdt = MW_RO(struct task_struct, task)->files->fdt;
		if (!fdt)
			return NULL;
		max_fds = MW_RO(struct fdtable, fdt)->max_fds;
		fds = MW_RO(struct fdtable, fdt)->fd;
	} else
#endif
	{
		fdt = BPF_CORE_READ(task, files, fdt);
		if (!fdt)
			return NULL;
		max_fds = BPF_CORE_READ(fdt, max_fds);
		fds = BPF_CORE_READ(fdt, fd);
	}
	if (fd < 0 || (__u32)fd >= max_fds)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* Appends the absolute form of a relative user path: the directory (cwd for AT_FDCWD, else the
 * dirfd's file) walked into the path buffer, then '/', then the rel_len bytes of the relative
 * path already stored in the record at rel_off. A result longer than MW_PATH_MAX is dropped
 * and flagged truncated. */
static __always_inline void mw_slot_abs(struct mw_rec *r, int slot, int dirfd, __u32 rel_off,
					__u32 rel)
{
	__u64 dir = MW_WALK_CWD;
	struct file *f;
	__u32 start = 0, state, end;

	if (dirfd != -100 /* AT_FDCWD */) {
		f = mw_fd_file(dirfd);
		if (!f) {
			r->e->flags |= MW_F_UNRES(slot);
			return;
		}
		dir = (__u64)__builtin_preserve_access_index(&f->f_path);
	}
	state = mw_walk_from(dir, false, &start);
	if (state != MW_WALK_DONE || rel == 0 || rel >= MW_PATH_MAX || start > MW_PATH_MAX) {
		r->e->flags |= state == MW_WALK_UNRES ? MW_F_UNRES(slot) : MW_F_TRUNC(slot);
		return;
	}
	end = MW_PATH_MAX;
	if (start != MW_PATH_MAX - 1) { /* not the root directory: add the separator */
		r->s->path[MW_PATH_MAX] = '/';
		end = MW_PATH_MAX + 1;
	}
	/* end is MW_PATH_MAX or MW_PATH_MAX + 1 and rel < MW_PATH_MAX: within the path buffer */
	if (bpf_probe_read_kernel(&r->s->path[end], rel & (MW_PATH_MAX - 1),
				  &r->s->event[rel_off & (MW_EVENT_MAX - 1)])) {
		r->e->flags |= MW_F_FAULT;
		return;
	}
	end += rel;
	if (end - start > MW_PATH_MAX) {
		r->e->flags |= MW_F_TRUNC(slot);
		return;
	}
	mw_slot_bytes(r, slot, &r->s->path[start & (MW_PATH_MAX - 1)], end - start, MW_PATH_MAX,
		      false);
}

/* Appends a path argument (in user memory, or the kernel's copy of one) to slot_path and, when
 * it is relative, its absolute form (against dirfd) to slot_abs. slot_abs must follow
 * slot_path. */
static __always_inline void mw_path_arg_from(struct mw_rec *r, int slot_path, int slot_abs,
					     int dirfd, const char *path, bool user)
{
	__u32 off = r->off;
	__u32 len;

	mw_slot_str(r, slot_path, path, MW_PATH_MAX, user);
	len = r->e->slen[slot_path];
	if (len && r->s->event[off & (MW_EVENT_MAX - 1)] != '/')
		mw_slot_abs(r, slot_abs, dirfd, off, len);
}

static __always_inline void mw_path_arg(struct mw_rec *r, int slot_path, int slot_abs, int dirfd,
					const char *upath)
{
	mw_path_arg_from(r, slot_path, slot_abs, dirfd, upath, true);
}

/* Appends the path of the file behind fd to slot, from the root of the task's mount namespace
 * (past a chroot), with its device and inode in arg[]. */
static __always_inline void mw_fd_path(struct mw_rec *r, int slot, int fd)
{
	struct file *f = mw_fd_file(fd);

	if (!f) {
		r->e->flags |= MW_F_UNRES(slot);
		return;
	}
	mw_slot_path_to(r, slot, (__u64)__builtin_preserve_access_index(&f->f_path), true);
#ifdef MW_DIRECT_LOADS
	if (bpf_ksym_exists(bpf_rdonly_cast)) {
		const struct inode *inode = MW_RO(struct file, f)->f_inode;

		r->e->arg[MW_A_DEV] = inode->i_sb->s_dev;
		r->e->arg[MW_A_INO] = inode->i_ino;
		return;
	}
#endif
	r->e->arg[MW_A_DEV] = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	r->e->arg[MW_A_INO] = BPF_CORE_READ(f, f_inode, i_ino);
}

#endif /* MW_PATH_BPF_H */
