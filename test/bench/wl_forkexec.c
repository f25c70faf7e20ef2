/*
 * wl_forkexec.c - fork, exec of a small program, wait, in a loop: the process family (fork
 * record, tracked-set propagation, exec record with argv and the executable walked, exit).
 *
 * usage: wl_forkexec ITERATIONS PROGRAM
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static int one_spawn(void *ctx)
{
	const char *prog = ctx;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

int main(int argc, char **argv)
{
	long n = wl_iterations(argc, argv, "ITERATIONS PROGRAM");

	if (argc != 3)
		return 2;
	return wl_run("forkexec", n, one_spawn, argv[2]);
}
