/*
 * sandbox.h - the collector's privilege drop after setup (see sandbox.c).
 */
#ifndef MW_COLLECTOR_SANDBOX_H
#define MW_COLLECTOR_SANDBOX_H

#include <sys/types.h>

/* Becomes an unprivileged uid other than monitored, keeps CAP_KILL only, sets no_new_privs and
 * non-dumpable, installs the seccomp allow-list. 0 or -errno (logged); on failure the caller
 * must stop: a half-dropped collector must not record. */
int sandbox_enter(uid_t monitored);

#endif
