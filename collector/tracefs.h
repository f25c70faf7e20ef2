/*
 * tracefs.h - makes sure tracefs is mounted: syscall tracepoints cannot attach without it, and
 * many hosts (this one included) do not mount it at boot.
 */
#ifndef MW_COLLECTOR_TRACEFS_H
#define MW_COLLECTOR_TRACEFS_H

#include <stdbool.h>

/* Mounts tracefs at /sys/kernel/tracing unless it (or debugfs's tracing directory) is already
 * usable. *mounted says whether this call mounted it (so the caller can unmount it). 0 or
 * -errno, with the reason logged. */
int tracefs_ensure(bool *mounted);
/* Unmounts what tracefs_ensure mounted; lazy, as other tracers may have started using it. */
void tracefs_release(bool mounted);

#endif
