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
 *   - a failed exec (exec_failed) is held per thread while a PATH search goes on: the attempts
 *     with one program name and the exec that ends them are evaluated once, on the last of
 *     them, which carries the count and the paths tried (one finding, not one per directory).
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
	uint64_t messages;	 /* channel messages evaluated */
	uint64_t losses;	 /* Loss records evaluated */
	uint64_t events_lost;	 /* the sum of their counts */
};

struct engine;

/* p must be compiled and outlive the engine. max_per_rule: see findings.h. */
struct engine *engine__new(const struct policy *p, size_t max_per_rule);
void engine__free(struct engine *e);

struct callmodel;
/* Attributes every subject with cm (resolved after pass 1, unless engine__later; must outlive
 * the engine) when a rule or a finding reads it, and evaluates the channel's messages
 * (chanmsg.h). Without it, events carry no call and messages are not evaluated. Returns 0 or
 * -ENOMEM. */
int engine__set_model(struct engine *e, struct callmodel *cm);

/* For a call model resolved only after the read (analyze's one read, possible when no rule
 * reads a call: policy_reads_calls): subjects are evaluated without attributions, and the
 * findings kept are attributed by engine__settle. Call before the first record. Returns 0 or
 * -ENOMEM. */
int engine__later(struct engine *e);
/* After engine__finish, with the model resolved: the findings' attributions. 0 or -ENOMEM. */
int engine__settle(struct engine *e);

/* Seeds the process table with the server of the header. Returns 0 or -ENOMEM. */
int engine__set_header(struct engine *e, const Mcpt__Header *h);

/* Evaluates one event record (index = its record index). Returns 0 or -ENOMEM. */
int engine__event(struct engine *e, const Mcpt__Event *ev, uint64_t index);

/* A StdioFrame of the channel (its messages are evaluated as their lines complete) and a Loss
 * record (evaluated as one subject, op loss, family health). Return 0 or -ENOMEM. */
int engine__stdio(struct engine *e, const Mcpt__StdioFrame *f, uint64_t index);
int engine__loss(struct engine *e, const Mcpt__Loss *l, uint64_t index);

/* Evaluates what is still held (entry records, exec searches, an unterminated last message).
 * Call once, after the last record. */
int engine__finish(struct engine *e);

struct findings *engine__findings(struct engine *e);
const struct engine_stats *engine__stats(const struct engine *e);
const struct proctree *engine__proctree(const struct engine *e);

#endif /* MW_ENGINE_H */
