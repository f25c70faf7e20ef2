/*
 * leftovers.h - the recorded processes still alive when recording stops: killed when the
 * options say so (--after-linger kill once the linger after the server's exit runs out, a
 * launched server's default; --on-collector-exit kill when the stop is forced), and each
 * listed with whether it was gone after the kill; otherwise listed as still running.
 */
#ifndef MW_COLLECTOR_LEFTOVERS_H
#define MW_COLLECTOR_LEFTOVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loader;

struct leftover {
	uint32_t tgid;
	uint64_t pstart; /* its exec identity when it was listed (0: seeded by the collector) */
};

struct leftovers {
	struct loader *bpf;
	struct leftover *v; /* alive when the kill began */
	size_t n, cap;
	bool killed;   /* leftovers_kill ran */
	bool complete; /* ... and listed every process it found (else memory ran out) */
};

/* Lists every recorded process still alive, then kills them all (SIGKILL, pass after pass
 * while any is tracked, at most LOADER_KILL_WAIT_MS; between runs after each pass: reap,
 * drain). A process already exiting when listed (its entry gone) is not listed: its exit is
 * its record. Returns how many are still alive. */
size_t leftovers_kill(struct leftovers *lo, void (*between)(void *ctx), void *ctx);

/* Calls note for every process to list as alive at the end: each one leftovers_kill listed
 * that is gone (killed; it may have exited on its own meanwhile: its exit record says how),
 * then every one still tracked (not killed). Stops at note's first error and returns it; 0
 * otherwise. */
int leftovers_record(struct leftovers *lo,
		     int (*note)(void *ctx, uint32_t tgid, uint64_t pstart, bool killed),
		     void *ctx);

void leftovers_fini(struct leftovers *lo);

#endif
