/*
 * valtab_int.h - the Event fields that may name a value-table entry, shared by the reader's
 * table (valtab.c) and the writer's (writer_vt.c). Private to the library.
 */
#ifndef MCPT_VALTAB_INT_H
#define MCPT_VALTAB_INT_H

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

#endif /* MCPT_VALTAB_INT_H */
