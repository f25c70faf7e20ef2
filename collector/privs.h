/*
 * privs.h - what the collector needs from the kernel before it does anything: it is never
 * setuid, and refuses to start without the capabilities it needs, naming the missing ones, or
 * outside the host's PID namespace.
 */
#ifndef MW_COLLECTOR_PRIVS_H
#define MW_COLLECTOR_PRIVS_H


/* Checks the effective capability set holds what setup needs (BPF, the launch as another user,
 * the collector's own privilege drop). Returns 0 or -EPERM after one line naming every missing
 * capability. */
int privs_check(void);

/* Checks the collector runs in the initial PID namespace (by its namespace inode). Its BPF programs
 * see the kernel's process ids; in a PID namespace of its own (a container without the host's) the
 * server it forks or the --pid it is given would be another process to them: the recording would
 * follow the wrong process, and a kill at the end could reach one. Returns 0, or -EPERM after one
 * line saying so (or why it could not tell). */
int privs_check_pid_namespace(void);

#endif
