/*
 * attach.c - seed the tracked set from /proc for --pid mode (see attach.h). Reads only the
 * kernel's flat /proc files (stat, status), never anything the target wrote itself.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach.h"
#include "launch.h"
#include "loader.h"
#include "log.h"

#define MAX_SCAN_PASSES 8

int attach_read_stat(uint32_t pid, uint32_t *ppid, uint32_t *pgrp)
{
	char path[64], buf[512], *p;
	unsigned int a, b;
	char state;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %u %u", &state, &a, &b) != 3)
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		return -ESRCH; /* exited, not reaped yet: nothing left to record */
	*ppid = a;
	if (pgrp)
		*pgrp = b;
	return 0;
}

int attach_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

bool attach_pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int attach_track(struct loader *l, pid_t pid, int pidfd)
{
	uint32_t ppid;
	int err = loader__track(l, pid);

	if (err)
		return err;
	/* the stat first: a process alive after it was read was alive when it was tracked, so
	 * its exit, whenever it comes, clears what was just set */
	if (attach_read_stat((uint32_t)pid, &ppid, NULL) == 0 && attach_pidfd_alive(pidfd))
		return 0;
	loader__untrack(l, pid);
	return -ESRCH;
}

static bool listed(const struct attach_proc *v, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return true;
	return false;
}

/* One pass over /proc: appends every process whose parent is already listed. Returns how many
 * were added, or -errno. */
static int scan_pass(struct loader *l, struct attach_proc **v, size_t *n, size_t *cap)
{
	uint32_t self = (uint32_t)getpid(); /* never seeded (attach.h) */
	DIR *d = opendir("/proc");
	struct dirent *de;
	int added = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint32_t pid, ppid;
		int pidfd, err;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		if (pid == self || listed(*v, *n, pid))
			continue;
		/* the pidfd before the facts: attach_track then checks that they were this
		 * process's, and that it is alive */
		pidfd = attach_pidfd((pid_t)pid);
		if (pidfd < 0)
			continue;
		if (attach_read_stat(pid, &ppid, NULL) || !listed(*v, *n, ppid)) {
			close(pidfd);
			continue;
		}
		err = attach_track(l, (pid_t)pid, pidfd);
		close(pidfd);
		if (err == -ESRCH)
			continue; /* gone meanwhile */
		if (*n == *cap) {
			struct attach_proc *nv = realloc(*v, *cap * 2 * sizeof(**v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			*v = nv;
			*cap *= 2;
		}
		(*v)[*n].pid = pid;
		(*v)[*n].ppid = ppid;
		(*n)++;
		if (err == 0)
			added++;
	}
	closedir(d);
	return added;
}

int attach_seed_below(struct loader *l, struct attach_proc **v, size_t *n, size_t *cap)
{
	int pass, added;

	for (pass = 0; pass < MAX_SCAN_PASSES; pass++) {
		added = scan_pass(l, v, n, cap);
		if (added <= 0)
			return added;
	}
	return 0;
}

int attach_seed(struct loader *l, pid_t pid, int pidfd, struct attach_proc **out, size_t *n)
{
	size_t cap = 64;
	struct attach_proc *v = calloc(cap, sizeof(*v));
	uint32_t ppid;
	int err;

	if (!v)
		return -ENOMEM;
	err = attach_read_stat((uint32_t)pid, &ppid, NULL);
	if (!err)
		err = attach_track(l, pid, pidfd);
	if (err == -ESRCH || err == -ENOENT) {
		p_err("--pid %d: the process exited before it could be attached", (int)pid);
		free(v);
		return -ESRCH;
	}
	v[0].pid = (uint32_t)pid;
	v[0].ppid = ppid;
	*n = 1;
	if (!err)
		err = attach_seed_below(l, &v, n, &cap);
	if (err) {
		p_err("failed to seed the processes below %d: %s", (int)pid, strerror(-err));
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

/* "Uid:\t1000\t1000\t1000\t1000" -> the real id */
static int status_field(const char *line, const char *key, unsigned long *v)
{
	size_t k = strlen(key);

	if (strncmp(line, key, k))
		return -ENOENT;
	*v = strtoul(line + k, NULL, 10);
	return 0;
}

/* The line of /proc/PID/status that starts with key, into line. 0, -ENODATA, or -errno. */
static int status_line(pid_t pid, const char *key, char *line, int size)
{
	char path[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, size, f))
		found = !strncmp(line, key, strlen(key));
	fclose(f);
	return found ? 0 : -ENODATA;
}

int attach_status_value(pid_t pid, const char *key, unsigned long *v)
{
	char line[256];
	int err = status_line(pid, key, line, sizeof(line));

	return err ? err : status_field(line, key, v);
}

int attach_status_ids(pid_t pid, const char *key, unsigned long ids[4])
{
	char line[256], *p, *end;
	int err = status_line(pid, key, line, sizeof(line));

	if (err)
		return err;
	p = line + strlen(key);
	for (int i = 0; i < 4; i++, p = end) {
		errno = 0;
		ids[i] = strtoul(p, &end, 10);
		if (end == p || errno)
			return -ENODATA;
	}
	return 0;
}

/* /proc/TID of a thread exists too (unlisted), and reads as its process would: only the Tgid
 * line tells them apart. */
int attach_check_target(pid_t pid)
{
	unsigned long tgid = 0;
	int err;

	if (pid == getpid()) {
		p_err("--pid %d is the collector itself", (int)pid);
		return -EINVAL;
	}
	err = attach_status_value(pid, "Tgid:", &tgid);
	if (err == -ENOENT || err == -ESRCH) {
		p_err("--pid %d: no such process", (int)pid);
		return -ESRCH;
	}
	if (err) {
		p_err("--pid %d: cannot read its thread group: %s", (int)pid,
		      err == -ENODATA ? "no Tgid line in its status" : strerror(-err));
		return -EINVAL;
	}
	if (tgid != (unsigned long)pid) {
		p_err("--pid %d is a thread of process %lu, not a process: give --pid %lu",
		      (int)pid, tgid, tgid);
		return -EINVAL;
	}
	return 0;
}

static int read_groups(const char *list, struct launch_cred *c)
{
	char *end;
	size_t cap = 16;

	c->groups = malloc(cap * sizeof(gid_t));
	if (!c->groups)
		return -ENOMEM;
	for (;;) {
		unsigned long g = strtoul(list, &end, 10);

		if (end == list)
			break;
		if ((size_t)c->ngroups == cap) {
			gid_t *ng = realloc(c->groups, cap * 2 * sizeof(gid_t));

			if (!ng)
				return -ENOMEM;
			c->groups = ng;
			cap *= 2;
		}
		c->groups[c->ngroups++] = (gid_t)g;
		list = end;
	}
	return 0;
}

int attach_cred(pid_t pid, struct launch_cred *c)
{
	char path[64], line[4096];
	unsigned long v;
	struct passwd *pw;
	FILE *f;
	int err = 0;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (status_field(line, "Uid:", &v) == 0)
			c->uid = (uid_t)v;
		else if (status_field(line, "Gid:", &v) == 0)
			c->gid = (gid_t)v;
		else if (!strncmp(line, "Groups:", 7))
			err = read_groups(line + 7, c);
	}
	fclose(f);
	if (err)
		return err;
	pw = getpwuid(c->uid);
	if (pw) {
		c->user = strdup(pw->pw_name);
		c->passwd_home = strdup(pw->pw_dir);
	}
	return 0;
}
