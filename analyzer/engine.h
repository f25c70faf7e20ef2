/*
 * engine.h - replay of events against a compiled policy.
 *
 * One event at a time, as the trace streams by: the process table is updated (fork, exec,
 * exit), every enabled rule is evaluated on the event (no first match: a rule never hides
 * another), and matches become findings. Nothing per event is kept except:
 *   - an entry-time record of a syscall that may block (MW_F_ENTRY) is held, one per thread,
 *     until the same thread's next record: if that is the syscall's completion the entry is
 *     dropped (one finding per syscall, with its result), otherwise, and at the end of the
 *     trace, the entry is evaluated on its own as pending (the attempt is still evidence).
 *     At most 256 entries are held; past that the oldest is evaluated on its own.
 * Records do not need to arrive in timestamp order.
 */
#ifndef MW_ENGINE_H
#define MW_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "findings.h"
#include "policy.h"
#include "proctree.h"
#include "trace.pb-c.h"

struct engine_stats {
	uint64_t events;
	uint64_t held_entries;	 /* entry records evaluated on their own */
	uint64_t merged_entries; /* entry records superseded by their completion */
	uint64_t exceptions_hit; /* matches suppressed by an exception */
};

struct engine;

/* p must be compiled and outlive the engine. max_per_rule: see findings.h. */
struct engine *engine__new(const struct policy *p, size_t max_per_rule);
void engine__free(struct engine *e);

struct callmodel;
/* Attributes every event with cm (resolved after pass 1; must outlive the engine) before it is
 * evaluated. Without it, events carry no call. */
void engine__set_model(struct engine *e, struct callmodel *cm);

/* Seeds the process table with the server of the header. Returns 0 or -ENOMEM. */
int engine__set_header(struct engine *e, const Mcpt__Header *h);

/* Evaluates one event record (index = its record index). Returns 0 or -ENOMEM. */
int engine__event(struct engine *e, const Mcpt__Event *ev, uint64_t index);

/* Evaluates the entry records still held. Call once, after the last event. */
int engine__finish(struct engine *e);

struct findings *engine__findings(struct engine *e);
const struct engine_stats *engine__stats(const struct engine *e);
const struct proctree *engine__proctree(const struct engine *e);

#endif /* MW_ENGINE_H */
