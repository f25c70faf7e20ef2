/*
 * verify_excerpt.h - `mcpwitness verify EXCERPT`: an excerpt made by `export --record`
 * (proto/EXCERPT.md) recognised by its magic, verified with the trusted key alone, and shown:
 * the verdict (PROVEN, or the trace verdicts with their exit codes), where the record sits in
 * the signed trace, the host it was recorded on, and the record itself as dump prints it.
 */
#ifndef MW_VERIFY_EXCERPT_H
#define MW_VERIFY_EXCERPT_H

#include <stdbool.h>

#include "mcpt.h"

/* 1 when fd is a regular file starting with the excerpt magic, 0 otherwise (a trace, or a pipe:
 * it is read as a trace, whose reader names an excerpt's magic), -1 after an error is printed. */
int verify_excerpt_probe(const char *path, int fd);

/* Verifies the excerpt in the regular file fd (path names it in messages), prints the report on
 * stdout (text or one JSON object) and returns the exit code of its verdict. */
int verify_excerpt(const char *path, int fd, const struct mcpt_pubkey *key, bool allow_unsigned,
		   bool json);

#endif /* MW_VERIFY_EXCERPT_H */
