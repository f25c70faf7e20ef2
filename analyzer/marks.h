/*
 * marks.h - explicit marks: the NDJSON lines a client wrote on the collector's control channel
 * (stored raw in Mark records, parsed here), in the sidecar protocol of mcpfz-probe:
 *
 *   {"op":"mark","phase":"begin","call_id":"17","tool":"fetch_url"}
 *   {"op":"mark","phase":"end","call_id":"17"}        (also "error", "cancel", "timeout")
 *   {"op":"scope","pgid":1234,"generation":2}
 *   {"op":"shutdown"}
 *
 * A begin/end pair names a call: the client request whose id reads as call_id (17 or "17"),
 * else the tools/call of that tool read inside the marked span. The marks then widen that
 * call's window (a mark never shrinks what the channel shows). A request read more than
 * MARK_TOLERANCE_NS before its begin mark or answered more than that after its end mark
 * disagrees with its marks (a forged or misplaced mark) and is reported, as is a mark that
 * names no request. When the channel was not captured (--stdio off), marks are the only
 * source of calls: each pair becomes a call of its own.
 * Malformed lines are reported and skipped. Memory grows with the number of marks.
 */
#ifndef MW_MARKS_H
#define MW_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "trace.pb-c.h"

#define MARK_TOLERANCE_NS 100000000ull /* 100 ms: the collector timestamps a line on reading it */

struct mark_scope {
	uint64_t ts;
	int64_t pgid, generation;
};

struct markset;

struct markset *markset__new(void);
void markset__free(struct markset *ms);

/* One Mark record; problems become notes of cs. Returns 0 or -ENOMEM. */
int markset__add(struct markset *ms, struct callset *cs, const Mcpt__Mark *m, uint64_t index);

/* After the last record: pairs the marks, matches them to the calls of cs (or makes calls of
 * them when channel_captured is false) and reports disagreements. Returns 0 or -ENOMEM. */
int markset__resolve(struct markset *ms, struct callset *cs, bool channel_captured);

/* The first {"op":"shutdown"} (0 when none). */
uint64_t markset__shutdown_ts(const struct markset *ms);
size_t markset__count(const struct markset *ms); /* begin and end marks */
size_t markset__n_scopes(const struct markset *ms);
const struct mark_scope *markset__scope(const struct markset *ms, size_t i);

#endif /* MW_MARKS_H */
