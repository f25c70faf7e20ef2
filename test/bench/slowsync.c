/*
 * slowsync.c - a slow disk for the `slowdisk` benchmark: preloaded into the collector
 * (LD_PRELOAD), it makes every fdatasync and fsync wait MW_SLOW_SYNC_MS milliseconds before
 * the real call, as a network volume or a busy disk does, and prints at exit how many syncs
 * were made and how long they waited. The wait is a ppoll with no descriptors: a syscall the
 * collector's sandbox allows, which blocks as a real sync does instead of spinning.
 *
 * Not a test double: the collector runs unchanged, only its syncs take longer.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long delay_ns;
static unsigned long syncs;

__attribute__((constructor)) static void slowsync_init(void)
{
	const char *e = getenv("MW_SLOW_SYNC_MS");

	delay_ns = e ? strtol(e, NULL, 10) * 1000000L : 0;
}

__attribute__((destructor)) static void slowsync_report(void)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "slowsync: %lu syncs, %.3f s waited\n", syncs,
			 (double)syncs * (double)delay_ns / 1e9);

	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

static int slow(long nr, int fd)
{
	struct timespec ts = {delay_ns / 1000000000L, delay_ns % 1000000000L};

	syncs++;
	if (delay_ns > 0)
		ppoll(NULL, 0, &ts, NULL);
	return (int)syscall(nr, fd);
}

int fdatasync(int fd)
{
	return slow(SYS_fdatasync, fd);
}

int fsync(int fd)
{
	return slow(SYS_fsync, fd);
}
