/*
 * privs.h - what the collector needs from the kernel before it does anything: it is never
 * setuid, and refuses to start without the capabilities it needs, naming the missing ones.
 */
#ifndef MW_COLLECTOR_PRIVS_H
#define MW_COLLECTOR_PRIVS_H


/* Checks the effective capability set holds what setup needs (BPF, the launch as another user,
 * the collector's own privilege drop). Returns 0 or -EPERM after one line naming every missing
 * capability. */
int privs_check(void);

#endif
