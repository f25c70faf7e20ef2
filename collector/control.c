/*
 * control.c - the explicit-marks channel (see control.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "pathat.h"

#define CONTROL_TURN_BYTES (256u << 10) /* read at most this much per loop turn */

struct control {
	int fd;
	bool fifo;	  /* opened O_RDWR: writers may come and go without EOF */
	bool discarding;  /* the current line was cut: drop bytes until its newline */
	size_t len;
	uint8_t line[CONTROL_LINE_MAX];
};

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Creates the FIFO at path (unless one is there) and opens it; one this call created is given
 * to uid:gid through the descriptor, never by path: between the mkfifo and a chown by path, a
 * user who can write to the directory could put a symlink there, and root would give that
 * user the link's target. The directory is resolved once (pathat.h), and what is opened must
 * be, when this call created it, the FIFO it created: made by our filesystem uid, with one link
 * (not another's FIFO put in its place, nor a hard link to one elsewhere). */
static int open_fifo(const char *path, uid_t uid, gid_t gid)
{
	uid_t creator = (uid_t)setfsuid((uid_t)-1); /* -1 changes nothing: the current fsuid */
	bool created;
	struct stat st;
	char *name;
	int dirfd, fd = -1, err = pathat_split(path, &dirfd, &name);

	if (err) {
		p_err("failed to create control FIFO %s: %s", path, strerror(-err));
		return err;
	}
	created = mkfifoat(dirfd, name, 0620) == 0;
	if (!created && errno != EEXIST) {
		err = -errno;
		p_err("failed to create control FIFO %s: %s", path, strerror(-err));
		goto out;
	}
	/* O_RDWR on a FIFO (Linux): we count as a writer ourselves, so there is no EOF when a
	 * client closes, and a later client can reopen it. */
	fd = openat(dirfd, name, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
		p_err("failed to open control FIFO %s: %s", path, strerror(-err));
		goto out;
	}
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		p_err("--control %s is not a FIFO", path);
		err = -EINVAL;
	} else if (created && (st.st_uid != creator || st.st_nlink != 1)) {
		p_err("control FIFO %s was replaced while it was being created", path);
		err = -EEXIST;
	} else if (created && fchown(fd, uid, gid)) {
		err = -errno;
		p_err("failed to give control FIFO %s to uid %u: %s", path, (unsigned)uid,
		      strerror(-err));
		unlinkat(dirfd, name, 0);
	}
	if (err)
		close(fd);
out:
	close(dirfd);
	free(name);
	return err ? err : fd;
}

static int adopt_fd(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0) {
		p_err("--control-fd %d is not an open file descriptor", fd);
		return -EBADF;
	}
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) || fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		p_err("failed to set up --control-fd %d: %s", fd, strerror(errno));
		return -errno;
	}
	return fd;
}

struct control *control__new_unbound(void)
{
	struct control *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	c->len = 0;
	c->discarding = false;
	c->fifo = false;
	c->fd = -1;
	return c;
}

struct control *control__open(const char *path, int fd, uid_t uid, gid_t gid)
{
	struct control *c = control__new_unbound();
	int err;

	if (!c)
		return NULL;
	c->fifo = path != NULL;
	c->fd = path ? open_fifo(path, uid, gid) : adopt_fd(fd);
	if (c->fd < 0) {
		err = c->fd;
		free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

void control__free(struct control *c)
{
	if (!c)
		return;
	if (c->fifo && c->fd >= 0)
		close(c->fd);
	free(c);
}

int control__fd(const struct control *c)
{
	return c->fd;
}

int control__feed(struct control *c, const uint8_t *p, size_t n, uint64_t ts, control_line_fn fn,
		  void *ctx)
{
	while (n) {
		const uint8_t *nl = memchr(p, '\n', n);
		size_t part = nl ? (size_t)(nl - p) : n, room = CONTROL_LINE_MAX - c->len;
		int err;

		if (!c->discarding) {
			size_t keep = part < room ? part : room;

			memcpy(c->line + c->len, p, keep);
			c->len += keep;
			if (c->len == CONTROL_LINE_MAX && (part > keep || !nl)) {
				err = fn(ctx, c->line, c->len, true, ts);
				c->len = 0;
				c->discarding = true;
				if (err)
					return err;
			}
		}
		if (!nl)
			return 0;
		if (!c->discarding && c->len) { /* empty lines carry nothing */
			err = fn(ctx, c->line, c->len, false, ts);
			if (err)
				return err;
		}
		c->len = 0;
		c->discarding = false;
		p += part + 1;
		n -= part + 1;
	}
	return 0;
}

int control__read(struct control *c, control_line_fn fn, void *ctx)
{
	uint8_t buf[16384];
	size_t total = 0;
	ssize_t n;
	int err;

	while (total < CONTROL_TURN_BYTES) {
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 1; /* --control-fd: the writer closed it */
		err = control__feed(c, buf, (size_t)n, boottime_ns(), fn, ctx);
		if (err)
			return err;
		total += (size_t)n;
	}
	return 0;
}

int control__flush(struct control *c, control_line_fn fn, void *ctx)
{
	int err = 0;

	if (c->len && !c->discarding)
		err = fn(ctx, c->line, c->len, true, boottime_ns());
	c->len = 0;
	return err;
}
