/*
 * attach.h - --pid mode: start recording a server that is already running. The target goes
 * into the tracked set first; every process already below it is found in /proc and added, in
 * passes until one finds nothing new (children forked by a process already tracked are added
 * by the kernel side itself, so the scan only has to catch up with what existed before).
 *
 * The collector itself is never seeded, even when PID (or the group) is one of its ancestors
 * (--pid $$ from the shell that runs it, --pid 1): its own reads of /proc, bpf() calls and
 * privilege drop are not the server's. Its descendants need no exclusion of their own: it
 * starts no process when attaching, and what an untracked process forks is never tracked.
 */
#ifndef MW_COLLECTOR_ATTACH_H
#define MW_COLLECTOR_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loader;
struct launch_cred;
struct invoker;

struct attach_proc {
	uint32_t pid;
	uint32_t ppid;
};

/* Checks that --pid names a process (a thread group leader), not a thread of one, nor the
 * collector itself. 0, or -ESRCH / -EINVAL with one line logged. */
int attach_check_target(pid_t pid);
/* The number after key ("Uid:" -> the real uid) in /proc/PID/status: 0, -ENODATA without the
 * line, or -errno (-ENOENT: no such process). */
int attach_status_value(pid_t pid, const char *key, unsigned long *v);
/* The four numbers after key ("Uid:", "Gid:": real, effective, saved, filesystem). 0,
 * -ENODATA without the line or with fewer numbers, or -errno. */
int attach_status_ids(pid_t pid, const char *key, unsigned long ids[4]);

/* ppid (and, when pgrp is not NULL, the process group) of pid, from /proc/PID/stat. -ESRCH
 * for a process that has exited (a zombie), or -errno (-ENOENT: no such process). */
int attach_read_stat(uint32_t pid, uint32_t *ppid, uint32_t *pgrp);
/* A pidfd of pid (pidfd_open): the process as it is now, whatever later reuses its pid. */
int attach_pidfd(pid_t pid);
/* Whether the process of pidfd has not exited. */
bool attach_pidfd_alive(int pidfd);
/* Tracks pid, whose pidfd was opened before its facts were read, and checks that it still
 * names that process and that the process has not exited: the kernel side clears a process
 * from the tracked set at its exit, so one that exited before it was tracked (a zombie
 * included) would stay in it, and whatever reuses its pid would be recorded. 0; -ESRCH (gone,
 * left untracked); or the track's -errno. */
int attach_track(struct loader *l, pid_t pid, int pidfd);

/* Checks pid (pidfd: the process as checked) names a live process, tracks it and its
 * descendants. *out (malloc'd, target first) lists what was seeded. 0 or -errno with one line
 * logged. */
int attach_seed(struct loader *l, pid_t pid, int pidfd, struct attach_proc **out, size_t *n);

/* Adds to the list *v (*n entries, room for *cap; realloc'd) every process below one of them,
 * in /proc passes until one finds nothing new, tracking each. 0 or -errno. */
int attach_seed_below(struct loader *l, struct attach_proc **v, size_t *n, size_t *cap);

/* --pgid mode (attach_group.c). The process to watch for the end of the recording: the group's
 * leader (pid == pgid) while it lives, else the lowest pid still in the group, never the
 * collector itself; -ESRCH when the group has no other member. */
int attach_group_target(pid_t pgid, pid_t *target);

/* Tracks every process of the group pgid and everything below them (target, whose pidfd is
 * given, first); *out (malloc'd) lists what was seeded. 0 or -errno with one line logged. */
int attach_seed_group(struct loader *l, pid_t pgid, pid_t target, int pidfd,
		      struct attach_proc **out, size_t *n);

/* Run through sudo by a user other than root, attaching is allowed only to that user's
 * processes, those whose every uid (real, effective, saved, filesystem) is theirs: a sudoers
 * rule for the collector must not let a user record anyone else's processes and MCP channel,
 * nor a set-user-ID program they started. 0, or -EPERM (-errno) with one line logged. */
int attach_check_invoker(const struct invoker *inv, pid_t target);

/* The same for every process of group pgid (--pgid through sudo): each must be the invoker's.
 * 0, or -EPERM with one line logged. */
int attach_check_group_invoker(const struct invoker *inv, pid_t pgid);

/* The credentials the target runs with, from /proc/PID/status and the password database. */
int attach_cred(pid_t pid, struct launch_cred *cred);

#endif
