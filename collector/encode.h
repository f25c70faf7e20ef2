/*
 * encode.h - turns one struct mw_event from the ring buffer into the trace's Event message.
 * A table maps slots to fields, so no syscall needs code of its own here. The Event points
 * into the record (no copies); it is valid while the record is.
 */
#ifndef MW_COLLECTOR_ENCODE_H
#define MW_COLLECTOR_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "events.h"
#include "trace.pb-c.h"

struct encoded_event {
	Mcpt__Event msg;
	int64_t args[4];
};

/* dev_t conversions between the kernel's internal encoding (what BPF reads) and userspace's
 * (what stat() returns and the trace records). */
uint64_t encode_kdev(uint64_t kdev);
uint64_t encode_to_kdev(uint64_t dev);

/* Fills out from the size bytes at ev. Returns 0, or -EBADMSG when the record's own lengths
 * do not add up (never expected from our programs; the caller counts it as a loss). */
int encode_event(const struct mw_event *ev, size_t size, struct encoded_event *out);

/* Channel records (MW_OP_STDIO_*) become StdioFrame messages, pointing into the record. */
static inline bool encode_is_stdio(const struct mw_event *ev)
{
	return ev->op >= MW_OP_STDIO_READ && ev->op <= MW_OP_STDIO_MOVED;
}
int encode_stdio(const struct mw_event *ev, size_t size, Mcpt__StdioFrame *out);

#endif
