/*
 * trigger_file.c - file steps: every open variant, create/remove/rename/link, size, mode and
 * owner changes, device nodes, open_by_handle_at; and the adversarial paths (relative after a
 * chdir, a symlink out of the workspace, long, deep and over-long paths, names of every length
 * up to 48, a non-UTF-8 name, an open from a thread). Each works under the current directory, in names of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "trigger.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* dev and ino of the file behind fd (when the call under test returned one). */
static void out_fd_id(struct out *o, long fd)
{
	struct stat st;

	if (fd < 0 || fstat((int)fd, &st))
		return;
	out_int(o, "dev", (long long)st.st_dev);
	out_int(o, "ino", (long long)st.st_ino);
}

static void out_open(struct out *o, long r)
{
	out_ret(o, "ret", r);
	out_fd_id(o, r);
}

static int dir_fd(const char *name)
{
	int fd;

	if (mkdir(name, 0755) && errno != EEXIST)
		die(name);
	fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	must(fd >= 0, name);
	return fd;
}

/* ---- opens ---------------------------------------------------------------------------------- */

static void step_open(struct out *o)
{
	out_open(o, syscall(SYS_open, "open.f", O_CREAT | O_WRONLY | O_TRUNC, 0640));
}

static void step_openat(struct out *o)
{
	int dirfd = dir_fd("openat.d");

	out_int(o, "dirfd", dirfd);
	out_open(o, syscall(SYS_openat, dirfd, "f", O_CREAT | O_RDWR | O_CLOEXEC, 0600));
}

static void step_openat2(struct out *o)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	int dirfd = dir_fd("openat2.d");

	touch("openat2.d/f");
	out_int(o, "dirfd", dirfd);
	out_open(o, syscall(SYS_openat2, dirfd, "f", &how, sizeof(how)));
}

static void step_creat(struct out *o)
{
	out_open(o, syscall(SYS_creat, "creat.f", 0600));
}

static void step_open_enoent(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_openat, AT_FDCWD, "missing.f", O_RDONLY));
}

/* ---- create, remove, rename, link ----------------------------------------------------------- */

static void step_mkdir(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_mkdir, "mkdir.d", 0750));
}

static void step_mkdirat(struct out *o)
{
	int dirfd = dir_fd("mkdirat.d");

	out_int(o, "dirfd", dirfd);
	out_ret(o, "ret", syscall(SYS_mkdirat, dirfd, "sub", 0700));
}

static void step_unlink(struct out *o)
{
	touch("unlink.f");
	out_ret(o, "ret", syscall(SYS_unlink, "unlink.f"));
}

static void step_unlinkat(struct out *o)
{
	must(mkdir("unlinkat.d", 0755) == 0, "mkdir unlinkat.d");
	out_ret(o, "ret", syscall(SYS_unlinkat, AT_FDCWD, "unlinkat.d", AT_REMOVEDIR));
}

static void step_rmdir(struct out *o)
{
	must(mkdir("rmdir.d", 0755) == 0, "mkdir rmdir.d");
	out_ret(o, "ret", syscall(SYS_rmdir, "rmdir.d"));
}

static void step_rename(struct out *o)
{
	touch("rename.a");
	out_ret(o, "ret", syscall(SYS_rename, "rename.a", "rename.b"));
}

static void step_renameat(struct out *o)
{
	int d1 = dir_fd("renameat.d1"), d2 = dir_fd("renameat.d2");

	touch("renameat.d1/a");
	out_int(o, "dirfd1", d1);
	out_int(o, "dirfd2", d2);
	out_ret(o, "ret", syscall(SYS_renameat, d1, "a", d2, "b"));
}

static void step_renameat2(struct out *o)
{
	int d1 = dir_fd("renameat2.d");

	touch("renameat2.d/a");
	out_int(o, "dirfd1", d1);
	out_ret(o, "ret", syscall(SYS_renameat2, d1, "a", AT_FDCWD, "renameat2.b", RENAME_NOREPLACE));
}

static void step_link(struct out *o)
{
	touch("link.a");
	out_ret(o, "ret", syscall(SYS_link, "link.a", "link.b"));
}

static void step_linkat(struct out *o)
{
	int d1 = dir_fd("linkat.d");

	touch("linkat.d/a");
	out_int(o, "dirfd1", d1);
	out_ret(o, "ret", syscall(SYS_linkat, d1, "a", AT_FDCWD, "linkat.b", AT_SYMLINK_FOLLOW));
}

static void step_symlink(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_symlink, "some/target", "symlink.l"));
}

static void step_symlinkat(struct out *o)
{
	int d = dir_fd("symlinkat.d");

	out_int(o, "dirfd", d);
	out_ret(o, "ret", syscall(SYS_symlinkat, "../x", d, "l"));
}

/* ---- size, mode, owner, nodes --------------------------------------------------------------- */

static void step_truncate(struct out *o)
{
	touch("truncate.f");
	out_ret(o, "ret", syscall(SYS_truncate, "truncate.f", 100L));
}

static void step_ftruncate(struct out *o)
{
	int fd = open("ftruncate.f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	must(fd >= 0, "open ftruncate.f");
	out_int(o, "fd", fd);
	out_fd_id(o, fd);
	out_ret(o, "ret", syscall(SYS_ftruncate, fd, 50L));
}

static void step_chmod(struct out *o)
{
	touch("chmod.f");
	out_ret(o, "ret", syscall(SYS_chmod, "chmod.f", 0600));
}

static void step_fchmod(struct out *o)
{
	int fd = open("fchmod.f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	must(fd >= 0, "open fchmod.f");
	out_int(o, "fd", fd);
	out_fd_id(o, fd);
	out_ret(o, "ret", syscall(SYS_fchmod, fd, 0640));
}

static void step_fchmodat(struct out *o)
{
	int d = dir_fd("fchmodat.d");

	touch("fchmodat.d/f");
	out_int(o, "dirfd", d);
	out_ret(o, "ret", syscall(SYS_fchmodat, d, "f", 0644));
}

static void step_fchmodat2(struct out *o)
{
	int d = dir_fd("fchmodat2.d");

	touch("fchmodat2.d/f");
	out_int(o, "dirfd", d);
	out_ret(o, "ret", syscall(SYS_fchmodat2, d, "f", 0600, AT_SYMLINK_NOFOLLOW));
}

static void step_chown(struct out *o)
{
	touch("chown.f");
	out_int(o, "uid", getuid());
	out_int(o, "gid", getgid());
	out_ret(o, "ret", syscall(SYS_chown, "chown.f", getuid(), getgid()));
}

static void step_fchown(struct out *o)
{
	int fd = open("fchown.f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	must(fd >= 0, "open fchown.f");
	out_int(o, "fd", fd);
	out_fd_id(o, fd);
	out_int(o, "uid", getuid());
	out_int(o, "gid", getgid());
	out_ret(o, "ret", syscall(SYS_fchown, fd, getuid(), getgid()));
}

static void step_fchownat(struct out *o)
{
	int d = dir_fd("fchownat.d");

	touch("fchownat.d/f");
	out_int(o, "dirfd", d);
	out_int(o, "gid", getgid());
	out_ret(o, "ret", syscall(SYS_fchownat, d, "f", -1, getgid(), AT_SYMLINK_NOFOLLOW));
}

static void step_lchown(struct out *o)
{
	must(symlink("nowhere", "lchown.l") == 0, "symlink lchown.l");
	out_int(o, "uid", getuid());
	out_int(o, "gid", getgid());
	out_ret(o, "ret", syscall(SYS_lchown, "lchown.l", getuid(), getgid()));
}

static void step_mknod(struct out *o)
{
	out_ret(o, "ret", syscall(SYS_mknod, "mknod.p", S_IFIFO | 0644, 0));
}

static void step_mknodat(struct out *o)
{
	int d = dir_fd("mknodat.d");

	out_int(o, "dirfd", d);
	out_ret(o, "ret", syscall(SYS_mknodat, d, "p", S_IFIFO | 0600, 0));
}

static void step_open_by_handle_at(struct out *o)
{
	struct {
		struct file_handle h;
		unsigned char bytes[MAX_HANDLE_SZ];
	} fh;
	int mount_id, mfd;

	touch("obh.f");
	fh.h.handle_bytes = MAX_HANDLE_SZ;
	must(name_to_handle_at(AT_FDCWD, "obh.f", &fh.h, &mount_id, 0) == 0, "name_to_handle_at");
	mfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(mfd >= 0, "open .");
	out_int(o, "mount_fd", mfd);
	out_open(o, syscall(SYS_open_by_handle_at, mfd, &fh.h, O_RDONLY | O_CLOEXEC));
}

/* ---- adversarial paths ---------------------------------------------------------------------- */

static void step_rel_after_chdir(struct out *o)
{
	must(mkdir("rel.d", 0755) == 0 && chdir("rel.d") == 0, "mkdir/chdir rel.d");
	out_open(o, syscall(SYS_openat, AT_FDCWD, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

/* A link in the workspace to a file outside it: the path passed and the file opened differ. */
static void step_symlink_escape(struct out *o)
{
	must(symlink("/etc/hostname", "escape.l") == 0, "symlink escape.l");
	out_open(o, syscall(SYS_openat, AT_FDCWD, "escape.l", O_RDONLY | O_CLOEXEC));
}

/* An absolute path of more than 300 bytes (two long components). */
static void step_long_path(struct out *o)
{
	char a[201], b[151], path[4096], cwd[2048];

	memset(a, 'L', 200);
	a[200] = 0;
	memset(b, 'M', 150);
	b[150] = 0;
	must(getcwd(cwd, sizeof(cwd)) != NULL, "getcwd");
	snprintf(path, sizeof(path), "%s", a);
	must(mkdir(path, 0755) == 0, "mkdir long a");
	snprintf(path, sizeof(path), "%s/%s", a, b);
	must(mkdir(path, 0755) == 0, "mkdir long b");
	snprintf(path, sizeof(path), "%s/%s/%s/f", cwd, a, b);
	out_str(o, "path", path);
	out_open(o, syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

#define DEEP_LEVELS 100

/* A relative path 100 directories deep. */
static void step_deep_path(struct out *o)
{
	char path[DEEP_LEVELS * 2 + 8];
	size_t n = 0;

	for (int i = 0; i < DEEP_LEVELS; i++) {
		memcpy(path + n, i ? "/d" : "d", i ? 2 : 1);
		n += i ? 2 : 1;
		path[n] = 0;
		must(mkdir(path, 0755) == 0, "mkdir deep");
	}
	memcpy(path + n, "/f", 3);
	out_str(o, "path", path);
	out_int(o, "levels", DEEP_LEVELS);
	out_open(o, syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

#define HUGE_LEVELS 20

/* A cwd whose absolute path is longer than 4096 bytes (20 components of 250 bytes, built one
 * dirfd at a time), then an open relative to it: both its absolute path and the path of the
 * file opened exceed MW_PATH_MAX. */
static void step_huge_path(struct out *o)
{
	char name[251];
	int d = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC), next;

	must(d >= 0, "open .");
	memset(name, 'H', 250);
	name[250] = 0;
	for (int i = 0; i < HUGE_LEVELS; i++) {
		must(mkdirat(d, name, 0755) == 0, "mkdirat huge");
		next = openat(d, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		must(next >= 0, "openat huge");
		close(d);
		d = next;
	}
	must(fchdir(d) == 0, "fchdir huge");
	out_int(o, "levels", HUGE_LEVELS);
	out_int(o, "component", 250);
	out_open(o, syscall(SYS_openat, AT_FDCWD, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

#define NAME_LENGTHS 48

/* A relative path through directories named with every length from 1 to 48, each name a
 * different run of characters (names under 40 bytes are stored in the dentry itself since 6.14,
 * longer ones outside it), so the walks meet every length at every offset. */
static void step_name_lengths(struct out *o)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char path[NAME_LENGTHS * (NAME_LENGTHS + 1) + 8];
	size_t n = 0;

	for (int len = 1; len <= NAME_LENGTHS; len++) {
		if (len > 1)
			path[n++] = '/';
		for (int i = 0; i < len; i++)
			path[n++] = chars[(len * 7 + i) % (sizeof(chars) - 1)];
		path[n] = 0;
		must(mkdir(path, 0755) == 0, "mkdir name_lengths");
	}
	memcpy(path + n, "/f", 3);
	out_str(o, "path", path);
	out_int(o, "levels", NAME_LENGTHS);
	out_open(o, syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

static void step_non_utf8(struct out *o)
{
	static const char name[] = "caf\xe9-\xff.f";

	out_str(o, "name", name);
	out_open(o, syscall(SYS_openat, AT_FDCWD, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

struct thread_open {
	pid_t tid;
	long ret;
	int err;
};

static void *thread_open_fn(void *arg)
{
	struct thread_open *t = arg;

	t->tid = gettid_();
	t->ret = syscall(SYS_openat, AT_FDCWD, "thread.f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	t->err = errno;
	return NULL;
}

static void step_thread_open(struct out *o)
{
	struct thread_open t = { 0 };
	pthread_t th;

	must(pthread_create(&th, NULL, thread_open_fn, &t) == 0, "pthread_create");
	pthread_join(th, NULL);
	out_int(o, "thread_tid", t.tid);
	errno = t.err;
	out_open(o, t.ret);
}

const struct step file_steps[] = {
	{ "open", step_open },
	{ "openat", step_openat },
	{ "openat2", step_openat2 },
	{ "creat", step_creat },
	{ "open_enoent", step_open_enoent },
	{ "mkdir", step_mkdir },
	{ "mkdirat", step_mkdirat },
	{ "unlink", step_unlink },
	{ "unlinkat", step_unlinkat },
	{ "rmdir", step_rmdir },
	{ "rename", step_rename },
	{ "renameat", step_renameat },
	{ "renameat2", step_renameat2 },
	{ "link", step_link },
	{ "linkat", step_linkat },
	{ "symlink", step_symlink },
	{ "symlinkat", step_symlinkat },
	{ "truncate", step_truncate },
	{ "ftruncate", step_ftruncate },
	{ "chmod", step_chmod },
	{ "fchmod", step_fchmod },
	{ "fchmodat", step_fchmodat },
	{ "fchmodat2", step_fchmodat2 },
	{ "chown", step_chown },
	{ "fchown", step_fchown },
	{ "fchownat", step_fchownat },
	{ "lchown", step_lchown },
	{ "mknod", step_mknod },
	{ "mknodat", step_mknodat },
	{ "open_by_handle_at", step_open_by_handle_at },
	{ "rel_after_chdir", step_rel_after_chdir },
	{ "symlink_escape", step_symlink_escape },
	{ "long_path", step_long_path },
	{ "deep_path", step_deep_path },
	{ "huge_path", step_huge_path },
	{ "name_lengths", step_name_lengths },
	{ "non_utf8", step_non_utf8 },
	{ "thread_open", step_thread_open },
	{ NULL, NULL },
};
