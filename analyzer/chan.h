/*
 * chan.h - the MCP channel rebuilt from StdioFrame records: each direction reassembled by
 * stream offset and cut into newline-delimited lines, the unit JSON-RPC is framed in on stdio.
 *
 * Frames may arrive out of order (several CPUs share the ring buffer) and may overlap or
 * repeat: bytes are placed by their stream offset, a byte already placed is never placed
 * twice. Bytes that were not captured (GAP records, or a range no frame ever covers) are a
 * hole: the line they fall in is delivered flagged CHAN_L_GAP, and the stream resynchronises
 * at the next newline - or at once when the bytes after the hole start a new write() with
 * '{' or '[' (a server writes one message per call; a wrong guess only yields a line that
 * fails to parse and is reported, never a message that was not sent). A line with bytes of a
 * frame flagged TAMPERED or UNCHECKED (the write's buffer changed, or could not be checked,
 * while the write ran) is delivered flagged so.
 *
 * Memory per direction is bounded: a line keeps at most line_max bytes (longer ones are
 * delivered flagged CHAN_L_OVERLONG with only the scanner's view of them), and at most
 * CHAN_PENDING_MAX bytes of out-of-order frames are held; past that the missing range before
 * them is declared a hole.
 */
#ifndef MW_CHAN_H
#define MW_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonscan.h"
#include "trace.pb-c.h"

enum chan_dir {
	CHAN_IN = 0,  /* what the server read from its stdin: client to server */
	CHAN_OUT = 1, /* what the server wrote to its stdout: server to client */
	CHAN_DIRS = 2,
};

#define CHAN_LINE_MAX_DEFAULT (8u << 20)  /* bytes of one message kept for parsing */
#define CHAN_PENDING_MAX      (32u << 20) /* out-of-order bytes held per direction */

enum chan_line_flag {
	CHAN_L_GAP = 1u,	  /* bytes of the line, or just before it, were not captured */
	CHAN_L_OVERLONG = 2u,	  /* longer than line_max: data is NULL, only scan is known */
	CHAN_L_UNTERMINATED = 4u, /* ended by a hole or the end of the trace, not a newline */
	CHAN_L_TAMPERED = 8u,	  /* bytes of it were rewritten while the write moving them ran:
				   * the trace's copy may not be what crossed the channel */
	CHAN_L_UNCHECKED = 16u,	  /* bytes of it could not be checked against such a rewrite */
};

/* The scanner of a line, run when first asked for (chan_line_scan). */
struct chan_scan {
	struct jscan js;
	uint64_t fed; /* bytes of the line fed to js */
	bool begun;   /* js was initialised for this line */
};

/* One line, valid during the callback. */
struct chan_line {
	enum chan_dir dir;
	uint64_t offset;	 /* stream offset of its first byte */
	uint64_t len;		 /* its length without the newline */
	const uint8_t *data;	 /* the bytes, or NULL when CHAN_L_OVERLONG */
	uint64_t ts;		 /* timestamp of the frame that completed it */
	uint64_t record;	 /* record index of that frame */
	unsigned flags;		 /* CHAN_L_* */
	struct chan_scan *scan_; /* read it with chan_line_scan */
};

/* The scanner's view of all of l's bytes (NULL when ops.no_scan). A line kept whole is scanned
 * the first time this is asked (a line that needs no scan costs none); an overlong one was
 * scanned as its bytes came. */
const struct jscan *chan_line_scan(const struct chan_line *l);

struct chan_ops {
	/* A line; returns 0 or -errno (stops the channel). */
	int (*line)(void *ctx, const struct chan_line *l);
	/* A problem of the stream at offset (one line of text, no trailing newline). */
	void (*note)(void *ctx, enum chan_dir dir, uint64_t offset, uint64_t ts, const char *msg);
	/* the line callback never calls chan_line_scan: no scanner runs, it returns NULL */
	bool no_scan;
};

struct chan_stats {
	uint64_t frames, bytes, duplicate_bytes, gap_bytes, lines, overlong, holes;
};

struct chan;

/* line_max 0 = CHAN_LINE_MAX_DEFAULT. NULL and errno ENOMEM on failure. */
struct chan *chan__new(size_t line_max, const struct chan_ops *ops, void *ctx);
void chan__free(struct chan *c);

/* One StdioFrame record (index = its record index). Returns 0 or -errno (from ENOMEM or the
 * line callback). */
int chan__frame(struct chan *c, const Mcpt__StdioFrame *f, uint64_t index);

/* End of the trace: ranges never captured become holes, a line without its newline is
 * delivered flagged CHAN_L_UNTERMINATED. */
int chan__finish(struct chan *c);

const struct chan_stats *chan__stats(const struct chan *c, enum chan_dir dir);
const char *chan_dir_name(enum chan_dir dir); /* "stdin", "stdout" */

#endif /* MW_CHAN_H */
