/*
 * calls_testlib.h - feeding a call model by hand (frames, marks, events) for the calls and
 * attribution suites: no trace file, the records are built in memory.
 */
#ifndef MW_CALLS_TESTLIB_H
#define MW_CALLS_TESTLIB_H

#include <stdint.h>

#include "attribute.h"

/* nanoseconds in a millisecond: the records' timestamps */
#define MS 1000000ull

#define T_SERVER 100
#define T_PSTART 1000

/* A model whose header names the server T_SERVER/T_PSTART, HOME /home/u; stdio "off" when
 * captured is false. grace_ns 0 = default; line_max 0 = default. */
struct callmodel *t_model(uint64_t grace_ns, size_t line_max, bool captured);
/* The same, of an attached server (--pid) whose recording began at attach_ts (not 0). */
struct callmodel *t_model_attached(uint64_t attach_ts);

/* One StdioFrame: dir CHAN_IN/CHAN_OUT, at offset, with chunk index. */
void t_frame(struct callmodel *cm, enum chan_dir dir, uint64_t off, const char *data, size_t len,
	     uint64_t ts, uint32_t chunk);
/* Consecutive frames: s at the direction's running offset (tracked here per model). */
void t_send(struct callmodel *cm, enum chan_dir dir, const char *s, uint64_t ts);
void t_gap(struct callmodel *cm, enum chan_dir dir, uint64_t off, uint64_t len, uint64_t ts);
void t_mark(struct callmodel *cm, const char *raw, uint64_t ts);
uint64_t t_offset(enum chan_dir dir); /* the running offset of t_send */
void t_reset_offsets(void);

/* Events: fork (process), exec, exit, open, connect; pass 1 (model) when attribute is NULL,
 * else pass 2 into *attribute. */
void t_fork(struct callmodel *cm, uint32_t pid, uint32_t child, uint64_t ts, bool thread);
void t_exec(struct callmodel *cm, uint32_t pid, const char *path, const char *argv, size_t argv_len,
	    uint64_t ts);
void t_exit(struct callmodel *cm, uint32_t pid, uint64_t ts);
void t_open(struct callmodel *cm, uint32_t pid, uint32_t tid, const char *path, uint64_t ts,
	    struct attribution *a);
void t_connect(struct callmodel *cm, uint32_t pid, const uint8_t sa[16], uint64_t ts,
	       struct attribution *a);
/* pstart of a test process: T_PSTART for the server, pid * 10 otherwise. */
uint64_t t_pstart(uint32_t pid);

/* Call i of the model's call set (ck_assert when there is none); how many it holds. */
const struct call *t_call(struct callmodel *cm, size_t i);
size_t t_ncalls(struct callmodel *cm);

/* The note containing needle (ck_assert when none). */
const char *t_note(struct callmodel *cm, const char *needle);
bool t_has_note(struct callmodel *cm, const char *needle);

#endif /* MW_CALLS_TESTLIB_H */
