/*
 * pathproj.h - projected Event sizes with a chunk-scoped path and task table (pathproj.c).
 */
#ifndef MW_BENCH_PATHPROJ_H
#define MW_BENCH_PATHPROJ_H

#include <stddef.h>

#include "mcpt.h"

/* Feed every record in trace order. pathproj_event returns the projected frame bytes of the
 * Event (whose inner message is body_len bytes) plus the definition frames it needs. */
size_t pathproj_event(const Mcpt__Event *e, size_t body_len);
void pathproj_other(enum mcpt_type type, size_t frame_len);

#endif
