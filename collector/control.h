/*
 * control.h - the explicit-marks channel (DESIGN.md section 6). A client such as a fuzzer writes
 * NDJSON lines ({"op":"mark","phase":"begin",...}); each complete line is timestamped with
 * CLOCK_BOOTTIME (the kernel events' clock) and handed over raw: the collector never parses it.
 * Memory is bounded (one line of at most CONTROL_LINE_MAX bytes is buffered; longer lines are
 * cut and flagged), and each turn reads a bounded amount so a flood cannot starve draining.
 */
#ifndef MW_COLLECTOR_CONTROL_H
#define MW_COLLECTOR_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTROL_LINE_MAX (64u << 10)

struct control;

/* Called once per line: the bytes without the newline, whether it was cut, its timestamp. */
typedef int (*control_line_fn)(void *ctx, const uint8_t *line, size_t len, bool cut, uint64_t ts);

/* Opens the FIFO at path (created 0620, owned by uid:gid, when missing) or adopts fd (>= 0),
 * non-blocking and close-on-exec so the server never inherits it. NULL and errno. */
struct control *control__open(const char *path, int fd, uid_t uid, gid_t gid);
void control__free(struct control *c);
int control__fd(const struct control *c);
/* Reads what is available (at most a bounded amount) and calls fn per complete line. Returns
 * 0, 1 when the writer side is gone for good (--control-fd at EOF), or -errno. */
int control__read(struct control *c, control_line_fn fn, void *ctx);

/* The line splitter alone, for tests and fuzzing: a reader bound to no descriptor, fed bytes
 * with control__feed (what control__read does with each read). */
struct control *control__new_unbound(void);
int control__feed(struct control *c, const uint8_t *p, size_t n, uint64_t ts, control_line_fn fn,
		  void *ctx);

/* Hands over a line still unterminated when recording stops, flagged cut. */
int control__flush(struct control *c, control_line_fn fn, void *ctx);

#endif
