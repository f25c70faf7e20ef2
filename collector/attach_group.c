/*
 * attach_group.c - --pgid mode: seed the tracked set with every process of a process group
 * (see attach.h). A harness such as mcp-server-fuzzer starts the server itself in a process
 * group of its own and names it by that group (the mcpfz-probe sidecar protocol's "scope"), so
 * the group, not one pid, is what must be recorded. Like --pid, it reads only the kernel's flat
 * /proc/PID/stat, never anything a process wrote itself; processes the group forks after
 * seeding are tracked by the kernel side.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "invoker.h"
#include "loader.h"
#include "log.h"

/* Calls fn for every live process of the group but the collector itself (attach.h), in /proc
 * order; stops on its non-zero return. */
static int each_member(pid_t pgid, int (*fn)(void *ctx, uint32_t pid, uint32_t ppid), void *ctx)
{
	uint32_t self = (uint32_t)getpid();
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		uint32_t pid, ppid, pgrp;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		if (pid != self && attach_read_stat(pid, &ppid, &pgrp) == 0 &&
		    pgrp == (uint32_t)pgid)
			err = fn(ctx, pid, ppid);
	}
	closedir(d);
	return err;
}

static int lowest(void *ctx, uint32_t pid, uint32_t ppid)
{
	pid_t *best = ctx;

	(void)ppid;
	if (*best <= 0 || (pid_t)pid < *best)
		*best = (pid_t)pid;
	return 0;
}

int attach_group_target(pid_t pgid, pid_t *target)
{
	uint32_t ppid, pgrp;
	pid_t best = 0;
	int err;

	if (pgid != getpid() && attach_read_stat((uint32_t)pgid, &ppid, &pgrp) == 0 &&
	    pgrp == (uint32_t)pgid) {
		*target = pgid;
		return 0;
	}
	err = each_member(pgid, lowest, &best);
	if (err)
		return err;
	if (best <= 0)
		return -ESRCH;
	*target = best;
	return 0;
}

struct seed {
	struct loader *l;
	struct attach_proc *v;
	size_t n, cap;
	int err; /* the first failure to track */
};

/* Lists and tracks pid (pidfd: opened before ppid was read; -1: open one now). */
static int add_member_fd(struct seed *s, uint32_t pid, uint32_t ppid, int pidfd)
{
	bool own = pidfd < 0;
	size_t i;
	int err;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return 0;
	if (own) {
		pidfd = attach_pidfd((pid_t)pid);
		if (pidfd < 0)
			return 0; /* gone since the scan */
		/* the facts again, now that the pidfd holds the process they must be of */
		if (attach_read_stat(pid, &ppid, NULL)) {
			close(pidfd);
			return 0;
		}
	}
	err = attach_track(s->l, (pid_t)pid, pidfd);
	if (own)
		close(pidfd);
	if (err == -ESRCH)
		return 0;
	if (s->n == s->cap) {
		struct attach_proc *nv = realloc(s->v, s->cap * 2 * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap *= 2;
	}
	s->v[s->n].pid = pid;
	s->v[s->n].ppid = ppid;
	s->n++;
	if (err && !s->err)
		s->err = -ENOSPC;
	return 0;
}

static int add_member(void *ctx, uint32_t pid, uint32_t ppid)
{
	return add_member_fd(ctx, pid, ppid, -1);
}

int attach_seed_group(struct loader *l, pid_t pgid, pid_t target, int pidfd,
		      struct attach_proc **out, size_t *n)
{
	struct seed s = {.l = l, .cap = 64};
	uint32_t ppid, pgrp;
	int err;

	s.v = calloc(s.cap, sizeof(*s.v));
	if (!s.v)
		return -ENOMEM;
	err = attach_read_stat((uint32_t)target, &ppid, &pgrp);
	if (!err && pgrp == (uint32_t)pgid)
		err = add_member_fd(&s, (uint32_t)target, ppid, pidfd); /* the target first */
	if (err || pgrp != (uint32_t)pgid || s.n == 0) {
		p_err("--pgid %d: process %d left the group before it could be tracked", (int)pgid,
		      (int)target);
		free(s.v);
		return -ESRCH;
	}
	err = each_member(pgid, add_member, &s);
	if (!err)
		err = s.err;
	if (!err)
		err = attach_seed_below(l, &s.v, &s.n, &s.cap);
	if (err) {
		p_err("failed to seed process group %d: %s", (int)pgid, strerror(-err));
		free(s.v);
		return err;
	}
	*out = s.v;
	*n = s.n;
	return 0;
}

struct owner_check {
	pid_t pgid;
	uid_t uid;
};

/* Whether every uid of pid (real, effective, saved, filesystem) is uid: a set-user-ID program
 * the user started (real uid theirs, effective root's) is not their own process, whatever its
 * real uid says; the kernel's ptrace check asks the same. 1 owned, 0 not (*first: the first uid
 * that differs), -errno when its status cannot be read. */
static int owned_by(pid_t pid, uid_t uid, unsigned long *first)
{
	unsigned long ids[4];
	int err = attach_status_ids(pid, "Uid:", ids);

	if (err)
		return err;
	for (int i = 0; i < 4; i++) {
		if (ids[i] != (unsigned long)uid) {
			*first = ids[i];
			return 0;
		}
	}
	return 1;
}

static int member_owned(void *ctx, uint32_t pid, uint32_t ppid)
{
	const struct owner_check *o = ctx;
	unsigned long uid;
	int owned = owned_by((pid_t)pid, o->uid, &uid);

	(void)ppid;
	if (owned != 0)
		return 0; /* owned, or gone since the scan */
	p_err("--pgid %d: process %u of the group belongs to uid %lu: through sudo, uid %u may "
	      "attach only to its own processes",
	      (int)o->pgid, pid, uid, (unsigned)o->uid);
	return -EPERM;
}

int attach_check_group_invoker(const struct invoker *inv, pid_t pgid)
{
	struct owner_check o = {.pgid = pgid, .uid = inv->uid};

	if (!inv->via_sudo)
		return 0;
	return each_member(pgid, member_owned, &o);
}

int attach_check_invoker(const struct invoker *inv, pid_t target)
{
	unsigned long uid;
	int owned;

	if (!inv->via_sudo)
		return 0;
	owned = owned_by(target, inv->uid, &uid);
	if (owned < 0) {
		p_err("--pid %d: cannot read its status: %s", (int)target, strerror(-owned));
		return owned;
	}
	if (owned)
		return 0;
	p_err("process %d belongs to uid %lu: through sudo, uid %u may attach only to its own "
	      "processes",
	      (int)target, uid, (unsigned)inv->uid);
	return -EPERM;
}
