/*
 * abi_names.h - the name of a syscall of another ABI than the trace's native one (a
 * foreign_abi record: i386 or x32 on an x86-64 host), by its number in that ABI.
 */
#ifndef MW_ABI_NAMES_H
#define MW_ABI_NAMES_H

/* "execve" for (MW_ABI_I386, 11); NULL for a number or an ABI without a name. */
const char *abi_syscall_name(long long abi, long long nr);

#endif /* MW_ABI_NAMES_H */
