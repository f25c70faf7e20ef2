/*
 * policy_testlib.h - helpers of the policy suites: a scratch directory, policies written and
 * loaded from text, synthetic subjects to evaluate conditions on.
 */
#ifndef MW_POLICY_TESTLIB_H
#define MW_POLICY_TESTLIB_H

#include <stdbool.h>

#include "policy.h"

#define HDR "version: 1\n"
#define RULE(cond)                                                                                 \
	HDR "rules:\n- id: r\n  description: d\n  severity: high\n  category: c\n  "               \
	    "condition: " cond "\n"

extern char t_tmpdir[];
void in_tmpdir(void);
void leave_tmpdir(void); /* checked fixture: removes the files and the directory */
void write_file(const char *name, const char *text);
/* Loads text as p.yaml and compiles it with variables that have no value (policy check). */
int load(const char *text, struct diag *d, struct policy **out);

struct evx {
	Mcpt__Event e;
	struct ev_view v;
	struct eval_subject s;
	int64_t args[3];
};

void ev_open(struct evx *x, const char *path, const char *abs, uint64_t flags, int64_t ret);
void ev_connect(struct evx *x, const uint8_t *sa, size_t n, int64_t ret);
/* Compiles cond (a YAML flow mapping) with home=/home/u, tmp=/tmp and --set extra=/opt. */
struct policy *compile_cond(const char *lists, const char *cond);
bool holds(struct policy *p, const struct evx *x); /* rule 0 matches */
/* A policy compiled from text (no variables), through a temporary file that is removed. */
struct policy *policy_from_text(const char *text);

#endif /* MW_POLICY_TESTLIB_H */
