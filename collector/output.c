/*
 * output.c - open the trace destination (see output.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "invoker.h"
#include "log.h"
#include "output.h"
#include "pathat.h"

#define FIFO_RETRY_MS 100 /* how often a FIFO without a reader is tried again */

void output_init(struct output *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
}

/* Resolves the directory part of path (with the caller's current filesystem rights) into
 * o->dirfd and keeps the last component in o->name. */
static int open_parent(struct output *o, const char *path)
{
	int err = pathat_split(path, &o->dirfd, &o->name);

	if (err)
		p_err("failed to create trace %s: %s", path, strerror(-err));
	return err;
}

/* What is at the name already: 0 and *fifo when nothing or a FIFO (which we write to), or
 * -errno (logged) for anything else, which is never overwritten. A symbolic link is not
 * followed, even to a FIFO: whoever may write to the directory could point it anywhere. */
static int check_existing(const struct output *o, const char *path, bool *fifo)
{
	struct stat st;

	*fifo = false;
	if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		p_err("failed to create trace %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISFIFO(st.st_mode)) {
		*fifo = true;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		p_err("failed to create trace %s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	if (S_ISLNK(st.st_mode)) {
		p_err("failed to create trace %s: it is a symbolic link (never followed)", path);
		return -ELOOP;
	}
	p_err("failed to create trace %s: %s (refusing to overwrite an existing file)", path,
	      strerror(EEXIST));
	return -EEXIST;
}

/* Returns the first INT, TERM, HUP or QUIT pending on sigfd, or 0. (No child exists yet, so a CHLD
 * can only be stray; it is dropped.) */
static uint32_t stop_signal(int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGCHLD)
			return si.ssi_signo;
	}
	return 0;
}

/* A writer's open of a FIFO blocks until a reader comes, and would sleep through INT, TERM,
 * HUP and QUIT (blocked for the signalfd). So the open is non-blocking (ENXIO while no reader is
 * there) and retried while sigfd stays quiet; the descriptor is made blocking once open. While
 * it waits, whoever may write to the directory may put something else at the name: a symbolic
 * link is never followed (ELOOP), and what was opened must still be a FIFO. */
static int open_fifo(struct output *o, const char *path, int sigfd)
{
	struct pollfd p = { .fd = sigfd, .events = POLLIN };
	struct stat st;
	uint32_t sig;
	int fl;

	p_info("waiting for a reader on FIFO %s", path);
	for (;;) {
		o->fd = openat(o->dirfd, o->name, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
		if (o->fd >= 0)
			break;
		if (errno == ELOOP) {
			p_err("failed to open FIFO %s: it became a symbolic link (never followed)",
			      path);
			return -ELOOP;
		}
		if (errno != ENXIO) {
			p_err("failed to open FIFO %s: %s", path, strerror(errno));
			return -errno;
		}
		if (poll(&p, 1, FIFO_RETRY_MS) < 0 && errno != EINTR) {
			p_err("failed to wait for a reader on FIFO %s: %s", path, strerror(errno));
			return -errno;
		}
		sig = stop_signal(sigfd);
		if (sig) {
			p_err("failed to open FIFO %s: signal %u came before a reader", path, sig);
			return -EINTR;
		}
	}
	if (fstat(o->fd, &st) || !S_ISFIFO(st.st_mode)) {
		p_err("failed to open FIFO %s: it is no longer a FIFO", path);
		close(o->fd);
		o->fd = -1;
		return -EINVAL;
	}
	fl = fcntl(o->fd, F_GETFL);
	if (fl < 0 || fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK)) {
		p_err("failed to set up FIFO %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Through sudo: whether the invoker may create a file in o->dirfd, checked with the current
 * (the invoker's) filesystem ids. faccessat2 is called directly: glibc's fallback for kernels
 * without it would check root's effective ids instead. */
static int invoker_may_create(const struct output *o, const char *path)
{
	if (syscall(SYS_faccessat2, o->dirfd, ".", W_OK | X_OK, AT_EACCESS)) {
		p_err("failed to create trace %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* As root: the file is root's from its creation, so no process of the server's uid can open
 * it for writing at any moment. */
static int create_file(struct output *o, const char *path, gid_t gid)
{
	int err;

	o->fd = openat(o->dirfd, o->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0640);
	if (o->fd < 0) {
		err = errno;
		p_err("failed to create trace %s: %s%s", path, strerror(err),
		      err == EEXIST ? " (refusing to overwrite an existing file)" : "");
		return -err;
	}
	o->is_file = true;
	if (fchown(o->fd, 0, gid) || fchmod(o->fd, 0640)) {
		err = errno;
		p_err("failed to set owner and mode of %s: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

/* Forgets the directory: only a file we created keeps it (for output_discard). */
static void drop_parent(struct output *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	free(o->name);
	o->name = NULL;
}

int output_open(struct output *o, const char *path, const struct invoker *inv, gid_t gid, int sigfd)
{
	bool fifo = false;
	int err = invoker_fs_begin(inv);

	if (err)
		return err;
	o->path = path;
	err = open_parent(o, path);
	if (!err)
		err = check_existing(o, path, &fifo);
	if (!err && fifo)
		err = open_fifo(o, path, sigfd);
	else if (!err && inv->via_sudo)
		err = invoker_may_create(o, path);
	invoker_fs_end(inv);
	if (!err && !fifo)
		return create_file(o, path, gid);
	drop_parent(o);
	return err;
}

int output_adopt(struct output *o, int fd)
{
	struct stat st;

	if (fstat(fd, &st) || fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		p_err("failed to set up --output-fd %d: %s", fd, strerror(errno));
		return -errno;
	}
	o->fd = fd;
	o->is_file = S_ISREG(st.st_mode);
	return 0;
}

void output_discard(struct output *o)
{
	struct stat mine, now;

	if (o->dirfd < 0 || o->fd < 0)
		return;
	if (fstat(o->fd, &mine) || fstatat(o->dirfd, o->name, &now, AT_SYMLINK_NOFOLLOW) ||
	    mine.st_dev != now.st_dev || mine.st_ino != now.st_ino)
		return; /* renamed or replaced since: not ours to remove */
	if (unlinkat(o->dirfd, o->name, 0))
		p_warn("failed to remove the unfinished trace %s: %s", o->path, strerror(errno));
	else
		p_info("removed the unfinished trace %s", o->path);
}

void output_close(struct output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	drop_parent(o);
}
