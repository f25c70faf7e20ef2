/*
 * log.h - diagnostics of the mcpwitness binary.
 *
 * Every message goes to stderr, one line each, prefixed with the program name, so stdout only
 * ever carries data (reports, dumps, key ids). Errors go through p_err, the one error path of
 * the binary; warnings through p_warn; -v enables p_info and -vv p_debug. The verbosity is the
 * only process-wide setting: it is configuration, not state.
 */
#ifndef MW_LOG_H
#define MW_LOG_H

enum log_level {
	LOG_QUIET = 0, /* errors only */
	LOG_WARN = 1,  /* default */
	LOG_INFO = 2,
	LOG_DEBUG = 3,
};

/* Sets the verbosity (clamped to the known levels). */
void log_set_level(int level);
int log_level(void);

/* "mcpwitness: <message>" on stderr. The format must not end with a newline. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* MW_LOG_H */
