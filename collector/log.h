/*
 * log.h - the collector's one diagnostics channel: leveled messages on stderr (never stdout,
 * which belongs to the monitored server), prefixed with the program name, each line written
 * in one write. libbpf's output is
 * routed here too, its debug chatter only with -v -v.
 */
#ifndef MW_COLLECTOR_LOG_H
#define MW_COLLECTOR_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_QUIET = 0, LOG_ERROR = 1, LOG_WARN = 2, LOG_INFO = 3, LOG_DEBUG = 4 };

void log_set_level(enum log_level level);
/* From now on the monitored server shares our stderr: it could fill the pipe and let nobody
 * read it, so a line that would block is dropped (counted) instead of stalling the recording. */
void log_share_stderr(void);
/* How many lines were dropped so. */
unsigned long log_dropped(void);
enum log_level log_get_level(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf's print callback into log_msg. */
void log_route_libbpf(void);
/* The first program the kernel's verifier refused while libbpf's output was routed here, as
 * "NAME: VERDICT" (the verdict: the last line of its log that is not a statistic), at any log
 * level; NULL when none was. */
const char *log_refusal(void);
/* The verdict of a verifier log into out (truncated to size); false when it has none. */
bool log_verifier_verdict(const char *log, char *out, size_t size);

#define p_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define p_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define p_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define p_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
