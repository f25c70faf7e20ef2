/*
 * launch.h - starting the monitored server: resolve the user it runs as, fork a child that
 * waits on a gate until the collector has put its pid in the tracked set (so not one syscall of
 * the server escapes), drops to the user's uid/gid/groups with no_new_privs and a clean fd
 * table, and execs COMMAND with stdin/stdout/stderr untouched.
 */
#ifndef MW_COLLECTOR_LAUNCH_H
#define MW_COLLECTOR_LAUNCH_H

#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>

struct options;

struct launch_cred {
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups, malloc'd */
	int ngroups;
	char *user;	   /* login name, or NULL when uid has no password entry */
	char *passwd_home; /* home in the password database, or NULL */
};

/* Decides who COMMAND runs as: --user, else SUDO_UID/SUDO_GID, else the caller; refuses root
 * unless --allow-root. 0 or -errno with one line logged. */
int launch_resolve_cred(const struct options *opts, struct launch_cred *cred);
void launch_cred_fini(struct launch_cred *cred);
/* COMMAND inherits the collector's environment, but the login variables sudo (or su) set for
 * the collector's own user would tell COMMAND, run as another user, that it is root: its `~`
 * would be root's home, where it cannot write, and the trace's home would not be its user's.
 * So HOME, USER and LOGNAME that still name the collector's own user are set to cred's user's,
 * as sudo -u USER would set them; a value the caller chose passes unchanged, and so does
 * everything when COMMAND runs as the collector's user or its uid has no password entry.
 * 0 or -errno with one line logged. */
int launch_user_env(const struct launch_cred *cred);

struct launch {
	pid_t pid;  /* the server */
	int pidfd;  /* pidfd of the server, readable when it exits */
	int gate;   /* write end of the gate; closed once released */
	int status; /* exec result pipe, read end */
	sigset_t ignored; /* signals our caller ignored (launch_note_ignored) */
};

/* Notes which signals the collector's caller left ignored (nohup: HUP; a script's background
 * job: INT and QUIT), before the collector changes any disposition: COMMAND keeps them
 * ignored, as it would have run without the collector; every other signal is reset to its
 * default. */
void launch_note_ignored(struct launch *l);

/* Forks the child, which waits at the gate. kill_with_parent: the child gets SIGKILL if the
 * collector dies (--on-collector-exit kill). 0 or -errno. */
int launch_fork(struct launch *l, char **command, const struct launch_cred *cred,
		bool kill_with_parent);
/* Opens the gate and waits for exec: 0 once COMMAND runs, with *exe (malloc'd) the file the
 * child's own PATH search executed; or -errno why exec failed (the child has then exited
 * 126/127). */
int launch_release(struct launch *l, char **exe);
void launch_close(struct launch *l);

#endif
