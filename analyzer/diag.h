/*
 * diag.h - diagnostics of user-supplied files (policies): "file:line:column: message".
 *
 * A caller-owned list, so a loader can report every error of a file in one run (policy check)
 * while the first one stays easy to test. A message identical to an earlier one (a list item
 * checked once per rule that uses the list) is recorded once; errors are always counted. Lines and
 * columns are 1-based; line 0 means the message is about the file as a whole ("file: message").
 */
#ifndef MW_DIAG_H
#define MW_DIAG_H

#include <stddef.h>
#include <stdio.h>

#define DIAG_MAX 200 /* messages kept; later ones are only counted */

struct srcpos {
	const char *file; /* not owned; outlives the diagnostics */
	unsigned line, col;
};

struct diag {
	char **msgs;
	size_t n, cap;
	unsigned errors, warnings;
	unsigned dropped;
};

void diag_error(struct diag *d, const struct srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warn(struct diag *d, const struct srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* First message, or "" when there is none. */
const char *diag_first(const struct diag *d);

/* Writes every message, one a line, prefixed with prog ("mcpwitness: ") when not NULL. */
void diag_print(const struct diag *d, FILE *out, const char *prog);

void diag_fini(struct diag *d);

#endif /* MW_DIAG_H */
