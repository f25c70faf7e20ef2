/*
 * hugepages.h - transparent huge pages for the commands that hold a whole trace (hugepages.c).
 */
#ifndef MW_HUGEPAGES_H
#define MW_HUGEPAGES_H

/* For analyze, calls, diff and policy learn (cmd_argv, cmd_argc: the command and its
 * arguments) with 8 MiB of input or more, on a host whose THP mode is "madvise": re-executes the binary with the whole
 * argv and GLIBC_TUNABLES=glibc.malloc.hugetlb=1. Returns only when it did not. */
void hugepages_reexec(char **argv, int cmd_argc, char **cmd_argv);

#endif /* MW_HUGEPAGES_H */
