/*
 * leftovers.h - the recorded processes still alive when the linger after the server's exit runs
 * out: with --after-linger kill (a launched server's default), killed, so that nothing of the
 * tree goes on unrecorded, and each listed with whether that kill ended it; otherwise listed as
 * still running.
 */
#ifndef MW_COLLECTOR_LEFTOVERS_H
#define MW_COLLECTOR_LEFTOVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loader;

struct leftover {
	uint32_t tgid;
	uint64_t pstart; /* its exec identity when it was listed; 0 if the kernel had none */
};

struct leftovers {
	struct loader *bpf;
	struct leftover *v; /* alive when the kill began */
	size_t n, cap;
	bool listed; /* v is complete: leftovers_kill ran and could list every one */
};

/* Kills every recorded process still alive (SIGKILL, pass after pass while any is tracked, at
 * most LOADER_KILL_WAIT_MS; between runs after each pass, to reap), after listing them for
 * leftovers_record. Returns how many are still alive. */
size_t leftovers_kill(struct leftovers *lo, void (*between)(void *ctx), void *ctx);

/* Calls note for every process to list as alive at the end: after leftovers_kill, each one it
 * listed (killed: it is gone) and any other still tracked; without it, each tracked one (not
 * killed). Stops at note's first error and returns it; 0 otherwise. */
int leftovers_record(struct leftovers *lo,
		     int (*note)(void *ctx, uint32_t tgid, uint64_t pstart, bool killed),
		     void *ctx);

void leftovers_fini(struct leftovers *lo);

#endif
