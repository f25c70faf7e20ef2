/*
 * pathat.c - a path split into its opened directory and last component (see pathat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pathat.h"

int pathat_split(const char *path, int *dirfd, char **name)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int err = 0;

	*dirfd = -1;
	if (slash == path)
		dir = strdup("/");
	else
		dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
	*name = strdup(slash ? slash + 1 : path);
	if (!dir || !*name)
		err = -ENOMEM;
	else if (!**name)
		err = -EISDIR; /* "dir/": a directory, not a file name */
	if (!err) {
		*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*dirfd < 0)
			err = -errno;
	}
	free(dir);
	if (err) {
		free(*name);
		*name = NULL;
	}
	return err;
}
