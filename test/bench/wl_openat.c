/*
 * wl_openat.c - openat + close of one file in a loop: the file family's hot path (path as
 * passed, the file actually opened walked from the new fd, device and inode).
 *
 * usage: wl_openat ITERATIONS PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "wl_common.h"

static int one_open(void *ctx)
{
	int fd = openat(AT_FDCWD, (const char *)ctx, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long n = wl_iterations(argc, argv, "ITERATIONS PATH");

	if (argc != 3)
		return 2;
	return wl_run("openat", n, one_open, argv[2]);
}
