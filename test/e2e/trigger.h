/*
 * trigger.h - mw_trigger, the end-to-end tests' syscall trigger (falco-libs style: trigger ->
 * capture -> assert by pid, field by field).
 *
 * `mw_trigger STEP...` runs each step in a child process of its own (so the test finds the
 * step's records by that pid), and each step performs one syscall, or a minimal sequence, with
 * known arguments and prints one JSON line of what it did: {"step":..., "pid":..., "tid":...,
 * then the fds, paths, ports and results (ret = the value the kernel returned, -errno on
 * failure, exactly what the record must carry)}. Steps work relative to the current directory,
 * which the test owns. A few steps are modes of their own (flood, busy, hold) used by single
 * tests; see trigger.c.
 */
#ifndef MW_TRIGGER_H
#define MW_TRIGGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One JSON line, built in memory and written with one write(2) so lines never interleave. */
struct out {
	char buf[16384];
	size_t n;
	int first;
};

void out_begin(struct out *o, const char *step);
void out_int(struct out *o, const char *key, long long v);
/* Bytes outside printable ASCII are written as \u00XX: decode with latin-1 to get them back. */
void out_str(struct out *o, const char *key, const char *s);
void out_strn(struct out *o, const char *key, const char *s, size_t n);
/* "key": the syscall result as the kernel returned it (r, or -errno when r == -1). */
void out_ret(struct out *o, const char *key, long r);
void out_end(struct out *o);

/* The kernel's view of a syscall result from a raw syscall() return. */
long kret(long r);
/* Aborts the step (exit 3) with a message: its setup failed, not the syscall under test. */
void die(const char *what) __attribute__((noreturn));
void must(int ok, const char *what);
pid_t gettid_(void);
/* A child that pauses until killed; its pid. */
pid_t spawn_pauser(void);
void reap(pid_t pid);
/* Creates an empty file (0644), dies on failure. */
void touch(const char *path);

struct step {
	const char *name;
	void (*fn)(struct out *o);
};

extern const struct step proc_steps[], file_steps[], net_steps[], priv_steps[], uring_steps[],
	ns_steps[];
extern const char *trigger_self; /* absolute path of this executable */

/* Modes that are not one-step children. */
int mode_flood(int argc, char **argv);
int mode_busy(void);
int mode_hold(void);
int mode_swarm(int argc, char **argv);

#endif /* MW_TRIGGER_H */
