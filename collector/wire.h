/*
 * wire.h - protobuf wire encoding of the two records the collector writes per kernel event
 * (Event and StdioFrame), by hand: the generic protobuf-c packer walks the message descriptor
 * twice per record (get_packed_size, then pack) and was a third of the collector's CPU at
 * 100 000 events/s. The output is byte for byte what protobuf_c_message_pack() gives (fields
 * in field-number order, proto3 defaults omitted, repeated scalars packed), which
 * test/unit/check_encode.c holds it to.
 */
#ifndef MW_COLLECTOR_WIRE_H
#define MW_COLLECTOR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "trace.pb-c.h"

/* Upper bound of the packed size of e (for sizing the output buffer). */
size_t wire_event_max(const Mcpt__Event *e);
size_t wire_stdio_max(const Mcpt__StdioFrame *f);

/* Packs e (or f) at out, which holds at least wire_*_max() bytes; returns the length. */
size_t wire_event_pack(const Mcpt__Event *e, uint8_t *out);
size_t wire_stdio_pack(const Mcpt__StdioFrame *f, uint8_t *out);

#endif
