/*
 * outlived.h - the processes still running when recording stopped (the collector's ProcInfo
 * ALIVE_AT_END records, procbind__alive), as the reports name them: pid, executable, argv and
 * the call the process belongs to. What such a process did after that is not in the trace
 * (unless the collector killed it then, --after-linger kill: killed_at_end): a child that
 * outlives the server (a daemon, a backgrounded job) is exactly what a hostile tool would leave
 * behind, so `calls` lists them and `analyze` puts them under coverage.
 */
#ifndef MW_OUTLIVED_H
#define MW_OUTLIVED_H

#include <stdbool.h>
#include <stddef.h>

#include "attribute.h"
#include "strbuf.h"

struct json_t;

#define OUTLIVED_LINES 32 /* processes a text report lists; then "and N more" */

/* Processes other than the server still running when recording stopped. */
size_t outlived_count(const struct callmodel *cm);
/* Whether every one of them was killed by the collector when the linger ran out
 * (--after-linger kill): recorded to its end. */
bool outlived_all_killed(const struct callmodel *cm);
/* The reports' heading for the list: "still running after the server exited, " and either
 * "killed by the collector when the linger ran out" (all of them) or "not recorded from the
 * end of the trace on". */
const char *outlived_heading(const struct callmodel *cm);
/* Whether the server itself was no longer running then (it exited, or was never seen alive at
 * the end): its remaining processes outlived it. False when the recording was stopped with the
 * server running (a signal, --pid ended by hand): its children running then is no news. */
bool outlived_server_gone(const struct callmodel *cm);
/* One line each, in creation order: "INDENTpid 31751 /usr/bin/sleep ["sleep" "5"], call 3
 * tools/call run (lineage)", then ", killed" for one the collector killed; at most
 * OUTLIVED_LINES, then "INDENT... and N more". */
void outlived_text(struct strbuf *sb, const struct callmodel *cm, const char *indent);
/* [{"pid", "killed", "pstart", "exe", "argv", "binding", "call", "candidates"}], in creation order;
 * NULL on allocation failure. */
struct json_t *outlived_json(const struct callmodel *cm);

#endif /* MW_OUTLIVED_H */
