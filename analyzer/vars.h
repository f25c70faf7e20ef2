/*
 * vars.h - the variables a policy can use in its patterns: ${home}, ${workspace}...
 *
 * Values come from the trace header (the monitored server's world, wherever the analysis runs)
 * and from --set NAME=VALUE, never from the analyzer's own environment. Built-in names are
 * always declared, so a policy can be checked before any trace is read; a declared variable
 * without a value (a trace that records no home) makes the patterns using it match nothing.
 *
 *   home         Target.home (HOME of the server), else Target.passwd_home
 *   passwd_home  Target.passwd_home (the password database's home), else Target.home
 *   workspace    Target.cwd (the server's working directory)
 *   tmp          Target.tmp, else "/tmp"
 *   user         Target.user (login name)
 * --set overrides a built-in or defines a new name.
 */
#ifndef MW_VARS_H
#define MW_VARS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.pb-c.h"

#define VARS_NAME_MAX 63

struct vars;

/* A set with the built-in names declared and no values. NULL and errno on failure. */
struct vars *vars__new(void);
void vars__free(struct vars *v);

/* Applies one --set argument "NAME=VALUE" (NAME: letters, digits, '_'). The value wins over
 * the header's. Returns 0, or -EINVAL with a reason in err, or -ENOMEM. */
int vars__set_arg(struct vars *v, const char *arg, char *err, size_t errlen);

/* Gives the built-in variables their values from the trace header, except those set by
 * --set. Returns 0 or -ENOMEM. */
int vars__from_header(struct vars *v, const Mcpt__Header *h);

/* 0 with the value, -ENOENT for an undeclared name, -ENODATA for a name without a value. */
int vars__get(const struct vars *v, const char *name, const char **val, size_t *len);

/* Iteration over the declared names in name order (deterministic reports). */
int vars__count(const struct vars *v);
const char *vars__name(const struct vars *v, int i);

#endif /* MW_VARS_H */
