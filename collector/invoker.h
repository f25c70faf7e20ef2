/*
 * invoker.h - who asked for this recording when the collector runs through sudo. A sudoers rule
 * that lets a user run mcpwitness-collect must not hand that user root: through sudo by a
 * non-root user, COMMAND runs as that user only (never root, never someone else), attach
 * targets must be theirs, and what the collector creates on their behalf is created only where
 * they could create it themselves (a root-created file in /etc/cron.d with channel bytes in it
 * would be a way to root): the control FIFO with their filesystem rights; the trace in a
 * directory resolved and checked with their rights, but as root's own file (output.h), so the
 * server, which runs as that user, cannot rewrite its trace.
 */
#ifndef MW_COLLECTOR_INVOKER_H
#define MW_COLLECTOR_INVOKER_H

#include <stdbool.h>
#include <sys/types.h>

struct invoker {
	bool via_sudo; /* run by root through sudo on behalf of a non-root user */
	uid_t uid;
	gid_t gid;
	gid_t groups[64];
	int ngroups;
};

/* Reads SUDO_UID/SUDO_GID. 0, or -EINVAL (logged) when they are malformed. */
int invoker_get(struct invoker *inv);

/* Filesystem operations between begin and end run with the invoker's fsuid, fsgid and groups
 * (no-ops when not via sudo). begin returns 0 or -errno (logged); end restores root's. */
int invoker_fs_begin(const struct invoker *inv);
void invoker_fs_end(const struct invoker *inv);

#endif
