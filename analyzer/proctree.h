/*
 * proctree.h - the process table of a replay, keyed by exec identity (pid, pstart) so a
 * reused pid is never confused with an earlier process.
 *
 * Built from fork, exec and exit records as they stream by, seeded with the monitored server
 * from the trace header. It holds one entry per process (never per event), so its size
 * follows the number of processes, not the length of the trace. Records of one process can
 * arrive before its fork record (the ring buffer is shared by all CPUs): the entry is then
 * created on first sight and the fork record later only fills in the parent.
 */
#ifndef MW_PROCTREE_H
#define MW_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define LINEAGE_MAX 32 /* ancestors kept in a finding; deeper chains are marked truncated */

struct proc {
	uint32_t pid;
	uint64_t pstart;
	bool has_parent;
	uint32_t ppid;
	uint64_t ppstart;
	uint8_t *exe; /* bytes (not NUL-terminated); NULL when unknown */
	size_t exe_len;
	uint8_t *argv; /* NUL-separated, as recorded */
	size_t argv_len;
	uint8_t *argv_join; /* joined by single spaces: what argv conditions match */
	size_t join_len;
	unsigned execs;
	bool exited;
	int64_t exit_status;
	bool is_target;	   /* the monitored server itself */
	bool launching;	   /* the server before it started its first child: its records before its
			    * first exec are the collector's launcher, its execs are the launch */
	struct proc *next; /* hash chain */
};

struct lineage_ent {
	uint32_t pid;
	const struct proc *proc; /* valid as long as the table */
};

struct proctree;

struct proctree *proctree__new(void);
void proctree__free(struct proctree *pt);

/* Seeds the server from the header: its identity, executable and argv. attached = --pid mode
 * (there is no launch exec to recognise). Returns 0 or -ENOMEM. */
int proctree__set_target(struct proctree *pt, uint32_t pid, uint64_t pstart,
			 const ProtobufCBinaryData *exe, const ProtobufCBinaryData *argv,
			 size_t argc, bool attached);

/* The entry for (pid, pstart), created (unknown parent, no exe) when absent. When the header
 * gave the server without its start time (0), the first entry asked for with the server's pid
 * is the server. NULL and errno ENOMEM on allocation failure. */
struct proc *proctree__get(struct proctree *pt, uint32_t pid, uint64_t pstart);
/* Lookup only. */
struct proc *proctree__find(const struct proctree *pt, uint32_t pid, uint64_t pstart);
/* The server as the header named it (its start time adopted from its first record when the
 * header had none), NULL before proctree__set_target. */
struct proc *proctree__target(const struct proctree *pt);

/* Applies a fork, exec or exit record (other records are ignored). For an exec, *launch is set
 * when it is the server's own launch (an exec of the server process before its first child).
 * Returns 0 or -ENOMEM. */
int proctree__apply(struct proctree *pt, const struct ev_view *v, bool *launch);

/* Fills out[] with p and its ancestors up to the server (out[0] = p); returns how many, and
 * sets *truncated when the chain was longer than max or ends at an unknown parent. Cycles
 * (only possible in a forged trace) stop the walk. */
size_t proctree__lineage(const struct proctree *pt, const struct proc *p, struct lineage_ent *out,
			 size_t max, bool *truncated);

size_t proctree__count(const struct proctree *pt);

#endif /* MW_PROCTREE_H */
