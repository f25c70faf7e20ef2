/*
 * pending.h - calls written from their in-flight stash (struct mw_inflight, bpf/events.h)
 * rather than from a kernel record: a connect or accept still blocked a moment after its entry,
 * as an entry-time record while recording goes on (an attempt that never returns is evidence
 * without waiting for the end), and every call still in flight when recording stops, as
 * unfinished.
 */
#ifndef MW_COLLECTOR_PENDING_H
#define MW_COLLECTOR_PENDING_H

#include <stdbool.h>
#include <stdint.h>

struct mw_inflight;
struct session;

/* How long a connect or accept stays blocked before it is written as an entry-time record:
 * the calls that return sooner (nearly all: a loopback or LAN handshake, a waiting connection)
 * cost one record, their exit's. */
#define PENDING_ENTRY_MS 50
/* The shortest gap between two scans of the stash map (the loop turns at least every 50 ms). */
#define PENDING_SCAN_MS 20

/* From the record loop, every turn: writes, once each, the connects and accepts whose time
 * blocked reached PENDING_ENTRY_MS since the last scan (s->pending_scanned_ns, CLOCK_BOOTTIME;
 * 0 before the first). Nothing at all when the last scan is less than PENDING_SCAN_MS ago.
 *
 * The stash is read before the record is appended, and a call's exit program ends its stash
 * before it makes its exit record, so the exit record of a call written here is drained, and
 * appended, after it: an entry-time record always comes before its completion. */
void pending_scan(struct session *s);

/* Whether the stashed call f is written by a scan covering (from, to] (CLOCK_BOOTTIME ns): a
 * connect, accept or accept4 whose PENDING_ENTRY_MS since its entry ran out in that window.
 * Consecutive windows write each call once. */
bool pending_due(const struct mw_inflight *f, uint64_t from, uint64_t to);

/* At the end, once the ring is drained: every call still in flight, as unfinished. Returns how
 * many, or -errno. */
int pending_write_unfinished(struct session *s);

#endif
