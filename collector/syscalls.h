/*
 * syscalls.h - syscall numbers by name, for placing the BPF handlers (see syscalls.c).
 */
#ifndef MW_COLLECTOR_SYSCALLS_H
#define MW_COLLECTOR_SYSCALLS_H

/* The number of the syscall called name on this architecture, or -1. */
long syscall_number(const char *name);

#endif
