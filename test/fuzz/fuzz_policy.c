/*
 * fuzz_policy.c - libFuzzer target for the policy loader (the YAML a user hands `analyze -p` and
 * `policy check`): arbitrary bytes as one policy file, or two when the input holds a NUL byte
 * (the second merged over the first: overrides, list and macro references across files), then
 * compiled as `policy check` does (no variables) and as `analyze` does (variables from a
 * header). What must hold on every input: a load or compile that fails says why (at least one
 * error), and every diagnostic is one line of printable text that names the file, line and
 * column ("FILE:LINE:COL: ..."), or the file alone for what concerns all of it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "diag.h"
#include "policy.h"
#include "vars.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One file's bytes in a memfd, named by its /proc/self/fd path. */
static int as_file(const uint8_t *p, size_t n, char *path, size_t len)
{
	int fd = memfd_create("policy", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* "PATH:LINE:COL: ..." or, for what concerns the whole file, "PATH: ...". */
static bool names_place(const char *m, const char *path)
{
	size_t pl = strlen(path);
	unsigned line, col;
	int n = 0;

	if (strncmp(m, path, pl) || m[pl] != ':')
		return false;
	if (m[pl + 1] == ' ')
		return true;
	return sscanf(m + pl, ":%u:%u: %n", &line, &col, &n) == 2 && n > 0 && line > 0;
}

static void check_diag(const struct diag *d, const char *const paths[2], int err)
{
	if (err == -EINVAL && !d->errors)
		abort(); /* refused without saying why */
	for (size_t i = 0; i < d->n; i++) {
		const char *m = d->msgs[i];
		size_t k;

		for (const char *c = m; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				abort(); /* a message must stay one printable line */
		for (k = 0; k < 2; k++)
			if (paths[k] && names_place(m, paths[k]))
				break;
		if (k == 2)
			abort(); /* does not say where */
	}
}

static void load_and_compile(const char *const paths[2], const struct vars *vs, bool warn)
{
	struct policy *p = policy__new();
	struct diag d = {0};
	int err = 0;

	if (!p)
		return;
	for (size_t i = 0; i < 2 && paths[i] && !err; i++)
		err = policy__load_file(p, paths[i], &d);
	if (!err)
		err = policy__compile(p, vs, warn, &d);
	if (err != -ENOMEM)
		check_diag(&d, paths, err);
	diag_fini(&d);
	policy__free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n1 = nul ? (size_t)(nul - data) : size;
	char p1[64], p2[64];
	const char *paths[2] = {p1, NULL};
	struct vars *none = vars__new(), *hdr = vars__new();
	char err[256];
	int fd1, fd2 = -1;

	if (!none || !hdr)
		abort();
	fd1 = as_file(data, n1, p1, sizeof(p1));
	if (nul) {
		fd2 = as_file(nul + 1, size - n1 - 1, p2, sizeof(p2));
		paths[1] = p2;
	}
	if (vars__set_arg(hdr, "home=/home/u", err, sizeof(err)) ||
	    vars__set_arg(hdr, "workspace=/home/u/project", err, sizeof(err)) ||
	    vars__set_arg(hdr, "tmp=/tmp", err, sizeof(err)))
		abort();
	load_and_compile(paths, none, false); /* policy check */
	load_and_compile(paths, hdr, true);   /* analyze, with a trace's variables */
	close(fd1);
	if (fd2 >= 0)
		close(fd2);
	vars__free(none);
	vars__free(hdr);
	return 0;
}
