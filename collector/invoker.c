/*
 * invoker.c - the sudo invoker and acting with their filesystem rights (see invoker.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "invoker.h"
#include "log.h"

static int parse_env_id(const char *name, unsigned long *out)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || *end || *out > (uid_t)-2) {
		p_err("%s is not an id: '%s'", name, s);
		return -EINVAL;
	}
	return 0;
}

int invoker_get(struct invoker *inv)
{
	unsigned long uid, gid;
	struct passwd *pw;
	int err;

	memset(inv, 0, sizeof(*inv));
	if (getuid() != 0)
		return 0;
	err = parse_env_id("SUDO_UID", &uid);
	if (err == -ENOENT || (!err && uid == 0))
		return 0; /* root itself */
	if (err)
		return err;
	err = parse_env_id("SUDO_GID", &gid);
	if (err == -EINVAL)
		return err;
	inv->via_sudo = true;
	inv->uid = (uid_t)uid;
	inv->gid = err ? (gid_t)uid : (gid_t)gid;
	inv->ngroups = 64;
	pw = getpwuid(inv->uid);
	if (!pw || getgrouplist(pw->pw_name, inv->gid, inv->groups, &inv->ngroups) < 0) {
		inv->groups[0] = inv->gid; /* no entry, or more than 64 groups: the primary only */
		inv->ngroups = 1;
	}
	return 0;
}

int invoker_fs_begin(const struct invoker *inv)
{
	if (!inv->via_sudo)
		return 0;
	if (setgroups((size_t)inv->ngroups, inv->groups)) {
		p_err("failed to take the invoker's groups: %s", strerror(errno));
		return -errno;
	}
	/* setfsuid/setfsgid report the previous id, not success: check by reading back */
	setfsgid(inv->gid);
	setfsuid(inv->uid);
	if ((uid_t)setfsuid((uid_t)-1) != inv->uid || (gid_t)setfsgid((gid_t)-1) != inv->gid) {
		invoker_fs_end(inv);
		p_err("failed to take the invoker's filesystem ids");
		return -EPERM;
	}
	return 0;
}

void invoker_fs_end(const struct invoker *inv)
{
	if (!inv->via_sudo)
		return;
	setfsuid(0);
	setfsgid(0);
	setgroups(0, NULL);
}
