/*
 * fuzz_policy.c - libFuzzer target for the policy loader (the YAML a user hands `analyze -p` and
 * `policy check`): arbitrary bytes as one policy file, or two when the input holds a NUL byte
 * (the second merged over the first: overrides, list and macro references across files), then
 * compiled as `policy check` does (no variables) and as `analyze` does (checked without
 * variables, then compiled again with a header's). What must hold on every input: a load or
 * compile that fails says why (at least one error), and every diagnostic is one line of
 * printable text that names the file, line and column ("FILE:LINE:COL: ..."), or the file
 * alone for what concerns all of it. And the second compilation, which redoes only the tests
 * that read a variable, leaves every test as one compilation with those variables makes it:
 * the same values, each deciding a few probe strings the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "diag.h"
#include "glob.h"
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

/* Loads the files into a new policy and compiles it with each of vs[0..n); NULL when a load
 * or the last compilation fails (its result in *err). */
static struct policy *load_and_compile(const char *const paths[2], const struct vars *const *vs,
				       size_t n, bool warn, int *err)
{
	struct policy *p = policy__new();
	struct diag d = {0};

	*err = 0;
	if (!p)
		return NULL;
	for (size_t i = 0; i < 2 && paths[i] && !*err; i++)
		*err = policy__load_file(p, paths[i], &d);
	for (size_t i = 0; i < n && !*err; i++)
		*err = policy__compile(p, vs[i], warn && i == n - 1, &d);
	if (*err != -ENOMEM)
		check_diag(&d, paths, *err);
	diag_fini(&d);
	if (*err) {
		policy__free(p);
		return NULL;
	}
	return p;
}

static const char *const probes[] = {
	"", "/home/u/.ssh/id_rsa", "/home/u/project/a.txt", "/tmp/x", "/etc/passwd", "curl -s x",
};

static void same_test(const struct field_test *a, const struct field_test *b)
{
	if (a->n != b->n || a->memo_bit != b->memo_bit)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const struct fvalue *x = &a->v[i], *y = &b->v[i];

		if (x->never != y->never || !x->glob != !y->glob || x->lo != y->lo ||
		    x->hi != y->hi)
			abort();
		/* a test kept from the check, or compiled again, that decides otherwise */
		for (size_t k = 0; x->glob && k < sizeof(probes) / sizeof(probes[0]); k++)
			if (glob_match(x->glob, (const uint8_t *)probes[k], strlen(probes[k])) !=
			    glob_match(y->glob, (const uint8_t *)probes[k], strlen(probes[k])))
				abort();
	}
}

/* Walks two conditions of the same source together (a macro's body is compared with the
 * policy's macros, not through each use). */
static void same_cond(const struct cond *a, const struct cond *b)
{
	if (a->kind != b->kind || a->n != b->n)
		abort();
	if (a->kind == COND_FIELD)
		same_test(a->test, b->test);
	for (size_t i = 0; i < a->n; i++)
		same_cond(a->kids[i], b->kids[i]);
}

static void same_policy(const struct policy *a, const struct policy *b)
{
	if (a->n_rules != b->n_rules || a->n_macros != b->n_macros)
		abort();
	for (size_t i = 0; i < a->n_macros; i++)
		same_cond(a->macros[i]->cond, b->macros[i]->cond);
	for (size_t i = 0; i < a->n_rules; i++) {
		same_cond(a->rules[i]->cond, b->rules[i]->cond);
		for (size_t j = 0; j < a->rules[i]->n_exceptions; j++)
			same_cond(a->rules[i]->exceptions[j].cond, b->rules[i]->exceptions[j].cond);
	}
}

/* As `policy check` (no variables), as `analyze` (no variables, then hdr's), and once with
 * hdr's: the last two must agree. */
static void compile_as_commands(const char *const paths[2], const struct vars *none,
				const struct vars *hdr)
{
	const struct vars *check[] = {none}, *analyze[] = {none, hdr}, *once[] = {hdr};
	struct policy *twice, *single;
	int err;

	policy__free(load_and_compile(paths, check, 1, false, &err));
	twice = load_and_compile(paths, analyze, 2, true, &err);
	single = load_and_compile(paths, once, 1, true, &err);
	if (twice && single)
		same_policy(twice, single);
	policy__free(twice);
	policy__free(single);
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
	compile_as_commands(paths, none, hdr);
	close(fd1);
	if (fd2 >= 0)
		close(fd2);
	vars__free(none);
	vars__free(hdr);
	return 0;
}
