/*
 * output.c - open the trace destination (see output.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "output.h"

int output_open(const char *path, gid_t gid, bool chown_root, bool *is_file)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
		p_info("waiting for a reader on FIFO %s", path);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			p_err("failed to open FIFO %s: %s", path, strerror(errno));
			return -errno;
		}
		*is_file = false;
		return fd;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		int err = errno;

		p_err("failed to create trace %s: %s%s", path, strerror(err),
		      err == EEXIST ? " (refusing to overwrite an existing file)" : "");
		return -err;
	}
	if ((chown_root && fchown(fd, 0, gid)) || fchmod(fd, 0640)) {
		int err = errno;

		p_err("failed to set owner and mode of %s: %s", path, strerror(err));
		close(fd);
		unlink(path);
		return -err;
	}
	*is_file = true;
	return fd;
}

int output_adopt(int fd, bool *is_file)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat(fd, &st)) {
		p_err("--output-fd %d is not an open file descriptor", fd);
		return -EBADF;
	}
	if ((fl & O_ACCMODE) == O_RDONLY) {
		p_err("--output-fd %d is not open for writing", fd);
		return -EBADF;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		p_err("failed to mark --output-fd %d close-on-exec: %s", fd, strerror(errno));
		return -errno;
	}
	*is_file = S_ISREG(st.st_mode);
	return fd;
}
