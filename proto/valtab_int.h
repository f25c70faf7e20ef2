/*
 * valtab_int.h - the Event fields that may name a value-table entry, shared by the reader's
 * table (valtab.c) and the writer's (writer_vt.c), and the rule of a fork that defines its
 * child's task (trace.proto, Event child_task). Private to the library.
 */
#ifndef MCPT_VALTAB_INT_H
#define MCPT_VALTAB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.pb-c.h"

#define MCPT_VT_SLOTS 7

/* One byte field of Event and the reference field that may stand for it. */
struct mcpt_vt_slot {
	const char *name;
	size_t bytes_off, ref_off;
};

extern const struct mcpt_vt_slot mcpt_vt_slots[MCPT_VT_SLOTS];

static inline ProtobufCBinaryData *mcpt_vt_bytes(Mcpt__Event *e, unsigned i)
{
	return (ProtobufCBinaryData *)((char *)e + mcpt_vt_slots[i].bytes_off);
}

static inline uint32_t *mcpt_vt_ref(Mcpt__Event *e, unsigned i)
{
	return (uint32_t *)((char *)e + mcpt_vt_slots[i].ref_off);
}

/* The child a fork Event names, when it may define the child's task (Event child_task): op
 * OP_FORK, ret > 0, args[0] (tgid) and args[1] (tid) in 1..2^32-1, args[2] (pstart) > 0. */
static inline bool mcpt_fork_child(const Mcpt__Event *e, uint32_t *pid, uint32_t *tid,
				   uint64_t *pstart)
{
	if (e->op != MCPT__OP__OP_FORK || e->ret <= 0 || e->n_args < 3 || e->args[0] < 1 ||
	    e->args[0] > UINT32_MAX || e->args[1] < 1 || e->args[1] > UINT32_MAX || e->args[2] < 1)
		return false;
	*pid = (uint32_t)e->args[0];
	*tid = (uint32_t)e->args[1];
	*pstart = (uint64_t)e->args[2];
	return true;
}

#endif /* MCPT_VALTAB_INT_H */
