/*
 * privs.h - what the collector needs from the kernel before it does anything: it is never
 * setuid, and refuses to start without the capabilities it needs, naming the missing ones.
 */
#ifndef MW_COLLECTOR_PRIVS_H
#define MW_COLLECTOR_PRIVS_H

#include <stdbool.h>

/* Checks the effective capability set. need_setid: COMMAND will run as another user. Returns 0
 * or -EPERM after one line naming every missing capability. */
int privs_check(bool need_setid);

#endif
