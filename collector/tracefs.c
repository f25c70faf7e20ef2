/*
 * tracefs.c - mount tracefs on demand (see tracefs.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "tracefs.h"

#define TRACEFS_MAGIC 0x74726163
#define TRACEFS_DIR   "/sys/kernel/tracing"

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && (unsigned long)st.f_type == TRACEFS_MAGIC;
}

int tracefs_ensure(bool *mounted)
{
	*mounted = false;
	/* libbpf looks in /sys/kernel/tracing first, then /sys/kernel/debug/tracing */
	if (is_tracefs(TRACEFS_DIR) || is_tracefs("/sys/kernel/debug/tracing"))
		return 0;
	if (mkdir(TRACEFS_DIR, 0700) && errno != EEXIST) {
		p_err("failed to create %s: %s", TRACEFS_DIR, strerror(errno));
		return -errno;
	}
	if (mount("nodev", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700")) {
		int err = errno;

		p_err("failed to mount tracefs on %s: %s%s", TRACEFS_DIR, strerror(err),
		      err == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return -err;
	}
	*mounted = true;
	p_info("mounted tracefs on %s", TRACEFS_DIR);
	return 0;
}

void tracefs_release(bool mounted)
{
	if (mounted && umount2(TRACEFS_DIR, MNT_DETACH))
		p_warn("failed to unmount %s: %s", TRACEFS_DIR, strerror(errno));
}
