/*
 * verifstat.c - what the kernel's verifier spends on each program of a BPF object: loads the
 * object once (its maps are created and freed with it; nothing is attached) with the verifier's
 * statistics log (log_level 4) per program, and prints per program the verification time and
 * the instructions the verifier processed, longest first, then the totals. The collector's
 * start is mostly this (bench.py's startup section runs it on the collector's object).
 *
 * usage: verifstat OBJECT.bpf.o      (root: loading BPF programs needs CAP_BPF and more)
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_BYTES (64 * 1024) /* the statistics log is two lines; room for a failure's tail */

struct progstat {
	const char *name;
	long usec;
	long insns;
	char *log;
};

/* A number that follows key in the log, or -1. */
static long log_value(const char *log, const char *key)
{
	const char *p = strstr(log, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int by_time(const void *a, const void *b)
{
	const struct progstat *x = a, *y = b;

	return (y->usec > x->usec) - (y->usec < x->usec);
}

__attribute__((format(printf, 2, 0))) static int silent(enum libbpf_print_level level,
							const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct progstat *st;
	size_t n = 0, i;
	long usec = 0, insns = 0;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OBJECT.bpf.o\n", argv[0]);
		return 2;
	}
	libbpf_set_print(silent);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "verifstat: %s: cannot open the object\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		n++;
	st = calloc(n ? n : 1, sizeof(*st));
	if (!st)
		return 1;
	i = 0;
	bpf_object__for_each_program(prog, obj) {
		st[i].name = bpf_program__name(prog);
		st[i].log = calloc(1, LOG_BYTES);
		if (!st[i].log || bpf_program__set_log_buf(prog, st[i].log, LOG_BYTES) ||
		    bpf_program__set_log_level(prog, 4)) {
			fprintf(stderr, "verifstat: cannot set the log of %s\n", st[i].name);
			return 1;
		}
		i++;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "verifstat: %s: load failed: %s\n", argv[1], strerror(-err));
		return 1;
	}
	for (i = 0; i < n; i++) {
		st[i].usec = log_value(st[i].log, "verification time ");
		st[i].insns = log_value(st[i].log, "processed ");
		if (st[i].usec < 0 || st[i].insns < 0) {
			fprintf(stderr, "verifstat: no statistics in the log of %s\n", st[i].name);
			return 1;
		}
		usec += st[i].usec;
		insns += st[i].insns;
	}
	qsort(st, n, sizeof(*st), by_time);
	for (i = 0; i < n; i++)
		printf("%10ld us %9ld insns  %s\n", st[i].usec, st[i].insns, st[i].name);
	printf("TOTAL %zu programs %ld us %ld insns\n", n, usec, insns);
	bpf_object__close(obj);
	for (i = 0; i < n; i++)
		free(st[i].log);
	free(st);
	return 0;
}
