/*
 * callsum.h - what each call caused, for `mcpwitness calls`: the events attributed to a call
 * (or to the startup, ambient and shutdown buckets) grouped as files, network and processes,
 * each distinct effect once with how many times it happened, the first record index and the
 * rules that attributed it. An ambiguous event is listed under every candidate, flagged.
 *
 * Memory is bounded per call: at most CALLSUM_ENTRIES_MAX distinct effects are kept for each
 * call and bucket; the rest are only counted. An effect's text is kept once for the whole
 * trace, however many calls list it (a server's calls open the same files over and over).
 */
#ifndef MW_CALLSUM_H
#define MW_CALLSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "event.h"

#define CALLSUM_ENTRIES_MAX 512

enum callsum_group {
	CS_FILES = 0,
	CS_NETWORK,
	CS_PROCESSES,
	CS_GROUPS,
};

struct callsum_entry {
	const char *text; /* "openat /etc/passwd read -> success", escaped; shared, see above */
	uint64_t count, first_record, first_ts;
	uint32_t first_pid;
	uint16_t rules; /* bit per enum attr_rule */
	uint8_t group;	/* enum callsum_group */
};

struct callsum_sink {
	struct callsum_entry *v;
	size_t n, cap;
	uint64_t events;   /* every event attributed here */
	uint64_t unlisted; /* events of effects beyond CALLSUM_ENTRIES_MAX */
};

struct callsum;

/* Sinks for n_calls calls and the three buckets. NULL and errno ENOMEM on failure. */
struct callsum *callsum__new(size_t n_calls);
void callsum__free(struct callsum *s);

/* Adds event v attributed by a (index = its record index). An entry-time record is held
 * until its thread's next record and dropped when that is its completion. Returns 0 or
 * -ENOMEM. */
int callsum__add(struct callsum *s, const struct ev_view *v, const struct attribution *a,
		 uint64_t index);

/* The sink of call index (1-based), or of a bucket (call 0, bucket given). Entries are sorted
 * by (group, first record) once callsum__sort was called. */
const struct callsum_sink *callsum__call(const struct callsum *s, size_t index);
const struct callsum_sink *callsum__bucket(const struct callsum *s, enum attr_bucket b);
/* Lists the entry records whose completion never came (call once, after the last event). */
int callsum__finish(struct callsum *s);
void callsum__sort(struct callsum *s);

const char *callsum_group_name(enum callsum_group g);

#endif /* MW_CALLSUM_H */
