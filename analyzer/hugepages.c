/*
 * hugepages.c - runs the commands that hold a whole trace's calls and processes in memory with
 * transparent huge pages on their heap, where the host gives them only on request.
 *
 * analyze, calls, diff and policy learn keep every call and process of a trace: ~200 MiB for
 * 5 million events, reached through hash tables at random. In 4 KiB pages that is a page fault
 * every 4 KiB of growth and a TLB miss on most lookups. Many hosts run THP in "madvise" mode
 * (huge pages only where a process asks), and glibc's malloc asks only when the tunable
 * glibc.malloc.hugetlb=1 is set at its start (GLIBC_TUNABLES). So these commands re-execute
 * the same binary (/proc/self/exe) once with it set: 17% faster on 5 M events on the test host
 * (test/bench/HISTORY.md, change 36), the same output byte for byte. Only for 8 MiB of input or
 * more (the regular files named on the command line) or a pipe (its size unknown): below
 * that, the exec and the zeroing of 2 MiB pages cost more than they save (~3 ms). Nothing
 * happens when GLIBC_TUNABLES is already set (even empty: the user's choice, and the guard
 * against a second exec), when THP is "always" or "never", for a secure-execution process or
 * one under seccomp, or when the exec fails (the command then runs as it is).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugepages.h"
#include "log.h"

#define THP_MODE_FILE "/sys/kernel/mm/transparent_hugepage/enabled"
#define TUNABLE	      "glibc.malloc.hugetlb=1"
#define MIN_INPUT     (8u << 20)

/* Whether the command keeps state that grows with the trace (dump, verify and export
 * stream it in a few MiB; probe runs the collector, which must not inherit the tunable). */
static bool holds_the_trace(int argc, char **argv)
{
	const char *verb = argv[0];

	if (!strcmp(verb, "analyze") || !strcmp(verb, "calls") || !strcmp(verb, "diff"))
		return true;
	return !strcmp(verb, "policy") && argc > 1 && !strcmp(argv[1], "learn");
}

/* Whether the arguments name MIN_INPUT bytes of regular files or more (the traces; a policy
 * is small), or a pipe or socket (by path, or "-" for standard input), whose size is unknown. */
static bool large_input(int argc, char **argv)
{
	unsigned long long total = 0;
	struct stat st;
	int rc;

	for (int i = 1; i < argc; i++) {
		rc = strcmp(argv[i], "-") ? stat(argv[i], &st) : fstat(STDIN_FILENO, &st);
		if (rc != 0)
			continue; /* not a file (an option, a value), or the command will say why */
		if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
			return true;
		if (S_ISREG(st.st_mode))
			total += (unsigned long long)st.st_size;
	}
	return total >= MIN_INPUT;
}

/* Reads a small text file into buf (NUL-terminated): its length, or -1. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Whether a seccomp filter (or strict mode) confines the process: whether it allows execve
 * cannot be told, and a filter that kills on it (systemd's default action) would kill the
 * command instead of running it in 4 KiB pages. An unreadable status counts as confined (no
 * /proc: no /proc/self/exe either). */
static bool confined(void)
{
	static const char key[] = "\nSeccomp:";
	char buf[8192], *p;

	if (read_text("/proc/self/status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, key)))
		return true;
	return strtol(p + strlen(key), NULL, 10) != 0;
}

/* Whether the kernel gives huge pages to anonymous memory only where madvise asks. */
static bool thp_on_request(void)
{
	char buf[128];

	return read_text(THP_MODE_FILE, buf, sizeof(buf)) > 0 && strstr(buf, "[madvise]");
}

void hugepages_reexec(char **argv, int cmd_argc, char **cmd_argv)
{
	if (cmd_argc < 1 || !holds_the_trace(cmd_argc, cmd_argv) ||
	    !large_input(cmd_argc, cmd_argv))
		return;
	if (getenv("GLIBC_TUNABLES") || getauxval(AT_SECURE) || !thp_on_request() || confined())
		return;
	if (setenv("GLIBC_TUNABLES", TUNABLE, 1) != 0)
		return;
	p_info("re-executing with GLIBC_TUNABLES=%s (transparent huge pages for the heap)",
	       TUNABLE);
	execv("/proc/self/exe", argv);
	p_debug("could not re-execute /proc/self/exe: %s; going on with 4 KiB pages",
		strerror(errno));
	unsetenv("GLIBC_TUNABLES");
}
