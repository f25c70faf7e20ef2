/*
 * wl_basecall.c - the two base costs of a tracked syscall, one call a loop: `getppid` (no
 * handler: the dispatchers' membership test and a failed tail call, nothing recorded) and
 * `bpf` (bpf(-1, NULL, 0), refused at once: the cheapest recorded call, a record of integers
 * only, so its exit's cost over getppid's is what any record costs before its own fields).
 *
 * usage: wl_basecall ITERATIONS getppid|bpf
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wl_common.h"

static int one_getppid(void *ctx)
{
	(void)ctx;
	syscall(SYS_getppid);
	return 0;
}

static int one_bpf(void *ctx)
{
	(void)ctx;
	syscall(SYS_bpf, -1, NULL, 0); /* EINVAL: no command -1 */
	return 0;
}

int main(int argc, char **argv)
{
	static const char usage[] = "ITERATIONS getppid|bpf";
	long n = wl_iterations(argc, argv, usage);

	if (argc == 3 && !strcmp(argv[2], "getppid"))
		return wl_run("getppid", n, one_getppid, NULL);
	if (argc == 3 && !strcmp(argv[2], "bpf"))
		return wl_run("bpf", n, one_bpf, NULL);
	fprintf(stderr, "usage: %s %s\n", argv[0], usage);
	return 2;
}
