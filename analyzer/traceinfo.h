/*
 * traceinfo.h - small renderings of trace values shared by dump and the reports: ids in hex,
 * event timestamps, wall-clock time from the header's clock anchor, JSON integers.
 */
#ifndef MW_TRACEINFO_H
#define MW_TRACEINFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"
#include "trace.pb-c.h"

/* Lower-case hex of b (at most 64 bytes shown; "" for none). */
void trace_hex(struct strbuf *sb, const ProtobufCBinaryData *b);

/* A key id as `mcpwitness keygen` and verify show it (mcpt_key_id_hex); other lengths in
 * plain hex. */
void trace_key_id(struct strbuf *sb, const ProtobufCBinaryData *b);

/* Event clock nanoseconds as "seconds.nanoseconds". */
void trace_ts(char *buf, size_t len, uint64_t ts);

/* Wall-clock time of an event timestamp, from the header's clock sample (realtime read between
 * two boottime reads, or the monotonic reading for a MONOTONIC event clock), as RFC 3339 UTC
 * with nanoseconds. False when the header has no usable anchor. */
bool trace_wallclock(const Mcpt__Header *h, uint64_t ts, char *buf, size_t len);

/* JSON integer, or a decimal string for values above INT64_MAX (JSON integers are int64 in
 * jansson; a hostile trace must not make them negative). */
/* Where a trace comes from, for verify's text report: "  host     \"NAME\" os \"ID\"
 * \"VERSION\" machine-id HEX" and "  collector \"NAME\" \"VERSION\"" lines, each ending in a newline;
 * every string escaped (a crafted hostname cannot reach the terminal raw); missing parts left
 * out. Nothing for a NULL header. */
void trace_provenance(struct strbuf *sb, const Mcpt__Header *h);

json_t *json_u64(uint64_t v);
/* JSON string of escaped bytes (strbuf_escape), never NULL on success; NULL on ENOMEM. */
json_t *json_bytes(const uint8_t *p, size_t n);
/* Sets key to value and drops the reference; returns -ENOMEM if value is NULL. */
int json_put(json_t *obj, const char *key, json_t *value);

#endif /* MW_TRACEINFO_H */
