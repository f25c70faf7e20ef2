/*
 * handlers.h - the per-syscall handlers of the BPF object: which programs they are and the slot
 * each takes in the dispatchers' program arrays, their verification in parallel (in copies of
 * the object that share its maps), and their placement in the arrays. The loader (loader.c)
 * drives them through its open -> load -> attach sequence.
 */
#ifndef MW_COLLECTOR_HANDLERS_H
#define MW_COLLECTOR_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

struct bpf_program;
struct mcpwitness;

/* The handlers are verified in parallel, in up to this many copies of the object. */
#define HANDLERS_MAX_COPIES 4

struct handler {
	struct bpf_program *prog;
	uint32_t slot; /* the syscall's number, MW_FOREIGN_SLOT, or MW_SHARED_* for a shared exit */
	bool enter;
	bool shared;
};

struct handlers {
	struct handler h[MW_MAX_SYSCALLS];
	size_t n;
	struct mcpwitness *copies[HANDLERS_MAX_COPIES];
	size_t n_copies;
};

enum handler_take {
	HANDLER_NOT,	 /* not a handler: attached as the object says */
	HANDLER_TAKEN,	 /* a handler: not attached, placed in its slot after the load */
	HANDLER_NO_SLOT, /* a handler of a syscall this architecture lacks: disabled */
};

/* Between open and load: whether prog is a handler (then no longer auto-attached) and, when it
 * is, its slot; one with no slot is no longer loaded either. */
enum handler_take handlers__take(struct handlers *hs, struct bpf_program *prog);
/* Before the main object's load: opens copies of it (one per usable CPU, up to
 * HANDLERS_MAX_COPIES) and moves the handlers to them, so that the main object loads the rest.
 * Nothing to do on one CPU. 0 or -errno. */
int handlers__split(struct handlers *hs, struct mcpwitness *main);
/* After the main object's load: the copies reuse its maps and load, in threads. 0 or the
 * first error. */
int handlers__load_copies(struct handlers *hs, struct mcpwitness *main);
/* Puts every loaded handler in its slot of the main object's program arrays. 0 or -errno. */
int handlers__place(const struct handlers *hs, struct mcpwitness *main);
/* Closes the copies (the arrays hold their programs once placed) and forgets the handlers. */
void handlers__close(struct handlers *hs);

#endif
