/*
 * calls_cmd.h - `mcpwitness calls`: one block per request (method, tool, arguments, result,
 * duration, window), the processes it created as a tree, and everything it caused grouped as
 * files, network and processes, then the startup, ambient and shutdown blocks, the processes
 * still running when recording stopped (outlived.h) and the notes about the channel. The work
 * is in cmd_calls.c, the rendering in report_calls.c.
 */
#ifndef MW_CALLS_CMD_H
#define MW_CALLS_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "attribute.h"
#include "callsum.h"
#include "mcpt.h"

struct procs_by_call;

struct calls_view {
	const char *trace;
	const Mcpt__Header *hdr;
	const struct mcpt_report *rep;
	bool verified;
	struct callmodel *cm;
	struct callsum *sum;
	uint64_t events;
	const struct procs_by_call *by_call; /* report_calls.c's own (set there) */
};

/* Return 0 or -ENOMEM / -EIO. */
int report_calls_text(FILE *out, const struct calls_view *v);
int report_calls_json(FILE *out, const struct calls_view *v);

#endif /* MW_CALLS_CMD_H */
