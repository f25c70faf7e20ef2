/*
 * loader.h - the BPF side's lifecycle for the collector: open the skeleton, size the maps,
 * disable programs whose hook this kernel lacks (with a note), load, check the schema, attach,
 * seed the tracked set, and drain the record rings (ringpair.h) through a callback.
 */
#ifndef MW_COLLECTOR_LOADER_H
#define MW_COLLECTOR_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"

#define LOADER_MAX_NOTES 32

struct loader;

/* Called for every record drained from the ring; return non-zero to stop the drain. */
typedef int (*loader_record_fn)(void *ctx, const struct mw_event *ev, size_t size);

struct loader_opts {
	uint32_t ringbuf_bytes; /* the spill ring's (a power of two); the hot ring is fixed */
	loader_record_fn on_record;
	void *ctx;
};

/* Loads and attaches everything. NULL and errno on failure (the reason is logged). */
struct loader *loader__new(const struct loader_opts *opts);
void loader__free(struct loader *l); /* detaches; accepts NULL */

/* Adds tgid to the tracked set. */
int loader__track(struct loader *l, pid_t tgid);
/* Takes tgid out of the tracked set again when the collector put it there (the kernel side
 * has not tracked it at a fork since): for a process that exited before it was tracked. */
void loader__untrack(struct loader *l, pid_t tgid);
/* Names the object (by st_dev and inode, as stat() reports them) whose bytes are captured for
 * direction dir (enum mw_chan_dir); head = at most this many bytes per call, 0 = all; sock: the
 * object is a socket (the recv and send calls are looked at only then). */
int loader__set_chan(struct loader *l, uint32_t dir, uint64_t dev, uint64_t ino, uint32_t head,
		     bool sock);
/* Calls fn for each tgid in the tracked set (processes alive), read from its
 * bitmap: every member, however many, and a member that leaves meanwhile does not restart the
 * walk. Returns how many members it found. */
size_t loader__each_tracked(struct loader *l, void (*fn)(void *ctx, uint32_t tgid), void *ctx);
/* Whether the tracked set is empty (stops at its first member). */
bool loader__tracked_empty(struct loader *l);
/* How long a kill of the tracked set waits for the set to be empty. */
#define LOADER_KILL_WAIT_MS 2000
/* Sends SIGKILL to every process of the tracked set, pass after pass until the set is empty or
 * wait_ms has passed: a process that forks between a pass's scan and its own kill leaves a
 * child (tracked at fork, before it runs) for the next pass, and a killed process leaves the
 * set once its last thread has exited. between(ctx), when not NULL, runs after each pass.
 * Returns how many members the last pass found (0: the tree is gone). */
size_t loader__kill_tracked(struct loader *l, unsigned int wait_ms, void (*between)(void *ctx),
			    void *ctx);
/* The descriptors of the attached programs' links (a program stays attached while one is
 * open): up to cap into out; returns how many. */
size_t loader__link_fds(struct loader *l, int *out, size_t cap);
/* The start time (exec identity) the tracked set holds for tgid: set at fork for every child,
 * 0 for the process the collector seeded itself. */
uint64_t loader__tracked_start(struct loader *l, uint32_t tgid);
/* Whether tgid is in the tracked set (its entry exists: a process that has begun to exit has
 * none), its start time into *start. */
bool loader__tracked_lookup(struct loader *l, uint32_t tgid, uint64_t *start);
/* Calls fn for each call still in flight (stashed at entry, not returned; a thread's idle
 * entry is skipped) that want accepts (want NULL: every one), with a consistent copy of its
 * stash. Reads the map in batches; want sees each entry's batch copy first, which may be torn,
 * then the consistent copy. Returns how many, or -errno. */
int loader__inflight(struct loader *l, bool (*want)(void *ctx, const struct mw_inflight *f),
		     void (*fn)(void *ctx, const struct mw_inflight *f), void *ctx);
/* fd that becomes readable when either record ring holds a batch (for epoll). */
int loader__ring_fd(struct loader *l);
/* Drains every record the two rings let be taken now, each thread's in the order it made
 * them (ringpair.h). Returns records drained or -errno. */
int loader__drain(struct loader *l);
/* How many of the records drained came through the spill ring (the hot ring was full when
 * they were made): what they cost the server is more than a hot record's (bpf/maps.h). */
uint64_t loader__spilled(struct loader *l);
/* Whether a record is still in the rings that the last drain could not take yet (being
 * written, or waiting for one that is; ringpair.h). */
bool loader__ring_waiting(struct loader *l);
/* Sums the per-CPU loss counters into totals (enum mw_loss order). */
int loader__losses(struct loader *l, uint64_t totals[MW_LOSS_REASONS]);
/* The next sequence number the kernel side will assign: every record numbered before this call
 * returned, emitted or lost, has a lower one. */
int loader__next_seq(struct loader *l, uint64_t *next);
/* Notes about disabled programs, for the trace header and stderr. */
size_t loader__notes(struct loader *l, const char *const **notes);

#endif
