/*
 * policy.h - policies: YAML files of lists, macros and rules, loaded, compiled into matchers
 * before any event is read, and evaluated against every event (policies/README.md is the
 * user's reference of the language).
 *
 * Life cycle:
 *   policy__new → policy__load_file (once per -p file, in order; later files may use and
 *   override what earlier ones define) → policy__compile (type-checks every value and compiles
 *   globs, CIDRs, ports...; with variables that have no value yet it only checks) →
 *   policy__compile again with the trace's variables once the header is known →
 *   policy_rule_match per event → policy__free.
 * Errors of user files go to a struct diag as "file:line:column: reason"; functions return
 * -EINVAL when at least one error was recorded.
 *
 * The condition tree is generic: a node is all/any/not, a macro reference, or a field test
 * (a field name from policy_field.c and a set of values). New fields (process ancestry, calls,
 * channel messages) and new operators extend the field table and the value forms without
 * changing this structure.
 */
#ifndef MW_POLICY_H
#define MW_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cidr.h"
#include "diag.h"
#include "event.h"
#include "vars.h"
#include "ytree.h"

#define POLICY_VERSION	1
#define POLICY_FILE_MAX (16u << 20) /* bytes */

enum severity {
	SEV_INFO = 0,
	SEV_LOW,
	SEV_MEDIUM,
	SEV_HIGH,
	SEV_CRITICAL,
	SEV_COUNT,
};

/* Names a rule message may use as "{name}", NULL-terminated (rendered by findings.c). */
extern const char *const policy_placeholders[];

const char *severity_name(enum severity s);
int severity_by_name(const char *name); /* -1 if unknown */

struct pol_list;

/* One element of a list, or one value written in a condition: a literal, or "@name". */
struct pol_value {
	struct srcpos pos;
	char *str; /* literal (NUL-terminated, len bytes) */
	size_t len;
	struct pol_list *ref; /* "@name": a list, expanded at compile time */
};

struct pol_list {
	char *name;
	struct srcpos pos;
	struct pol_value *items;
	size_t n;
	uint32_t n_expanded; /* values once the lists it includes are expanded (policy_field.c) */
	uint8_t expand_state;
};

/* Values all of a policy's tests may hold once lists are expanded: a list of ten lists of ten
 * lists ... is exponential in its text. */
#define POL_VALUES_MAX 262144

/* A compiled value of a field test (the kinds are in policy_field.c). */
struct fvalue {
	struct srcpos pos;
	bool never; /* uses a variable without a value: matches nothing */
	struct glob *glob;
	int64_t lo, hi; /* enum value, boolean, port range */
	struct cidr cidr;
};

struct field_desc;
struct match_memo;

struct field_test {
	const struct field_desc *f;
	struct srcpos pos;
	struct pol_value *src; /* as written */
	size_t n_src;
	struct fvalue *v; /* compiled */
	size_t n;
	/* glob tests: the policy's verdicts for recently seen strings (not the test's own; NULL
	 * when compiled outside a policy), the test's place in them */
	struct match_memo *memo;
	uint32_t memo_bit;
	bool reads_vars; /* a value names a variable: compiled again with each set of them */
};

enum cond_kind {
	COND_ALL,
	COND_ANY,
	COND_NOT,
	COND_MACRO,
	COND_FIELD,
};

struct pol_macro;
struct pol_names;

struct cond {
	enum cond_kind kind;
	struct srcpos pos;
	struct cond **kids; /* ALL, ANY (n >= 1), NOT (n == 1) */
	size_t n;
	struct pol_macro *macro;
	struct field_test *test;
};

struct pol_macro {
	char *name;
	struct srcpos pos;
	struct cond *cond;
	size_t index; /* in policy.macros: its slot in eval_subject.macro_memo */
};

struct pol_exception {
	char *name;
	struct srcpos pos;
	struct cond *cond;
};

struct pol_rule {
	char *id;
	struct srcpos pos;
	char *description;
	char *message; /* defaults to the description */
	char *category;
	enum severity severity;
	char **tags;
	size_t n_tags;
	struct cond *cond;
	struct pol_exception *exceptions;
	size_t n_exceptions;
	bool enabled;
	unsigned subjects; /* POL_SUBJ_*: what it is evaluated on (policy_reach.c) */
};

/* Subjects of the rules: events always; channel messages, losses and processes that outlived
 * the server only for rules that name them (policy_reach.c). */
#define POL_SUBJ_EVENTS	  1u
#define POL_SUBJ_MESSAGES 2u
#define POL_SUBJ_LOSSES	  4u
#define POL_SUBJ_OUTLIVED 8u

struct pol_file {
	char *path;
	uint8_t digest[32]; /* BLAKE2b-256 of the file's bytes */
	size_t size;
};

/* The enabled rules by the op of the subject (policy_reach.c): for op < POL_INDEX_OPS, the
 * rules at rules[start[op] .. start[op + 1]), ascending; for any other op, every enabled rule
 * at rules[start[POL_INDEX_OPS] .. start[POL_INDEX_OPS + 1]). keys[k], beside rules[k]: the
 * subject keys (policy_pre.c) for which that rule can hold on that op, bit POL_KEY_UNKNOWN
 * always set. Rebuilt by each compilation; rules is NULL until the first one succeeds. */
#define POL_INDEX_OPS	256
#define POL_KEY_UNKNOWN 63 /* a subject whose facts make no key: every rule is evaluated */

struct pol_index {
	uint32_t *rules;
	uint64_t *keys;
	uint64_t *skips; /* beside each key set: policy_rule_skips */
	const struct field_test **direct; /* beside each key set: policy_rule_direct, or NULL */
	uint32_t start[POL_INDEX_OPS + 2];
	bool reads_calls; /* an enabled rule's condition or exception reads a call field */
};

struct policy {
	struct pol_file *files;
	size_t n_files;
	struct pol_list **lists;
	size_t n_lists;
	struct pol_macro **macros;
	size_t n_macros;
	struct pol_rule **rules; /* definition order; replaced rules keep their place */
	size_t n_rules;
	struct pol_index index;
	struct match_memo *memo; /* the verdicts of its glob tests (policy_memo.c) */
	struct pol_names *names; /* lookups by name (policy_names.c) */
	/* the last policy__compile succeeded and no file was loaded since: the next one only
	 * compiles again the tests that read variables (policy.c) */
	bool compiled;
};

struct attribution;
struct callset;
struct proctree;
struct proc;

/* What a condition is evaluated against: the event, the process that did it, the call it was
 * attributed to. */
struct eval_subject {
	const struct ev_view *ev;
	/* read through eval_subject_attr: attr, else attr_get(attr_ctx) made on first use (the
	 * engine's call model, so that subjects no call field or finding reads skip it); neither:
	 * no call model (every call field is false) */
	const struct attribution *attr;
	const struct attribution *(*attr_get)(void *ctx);
	void *attr_ctx;
	const struct callset *calls;
	struct ev_bytes exe;  /* executable of the process (after an exec: the new one) */
	struct ev_bytes argv; /* its argv joined by single spaces */
	bool launch;	      /* this exec started the monitored server itself */
	const struct proctree *pt; /* for ancestry (may be NULL) */
	const struct proc *proc;   /* the process of the subject (may be NULL) */
	unsigned attempts;	   /* an exec ending a PATH search: the failed attempts before */
	const char *attempted;	   /* their paths, escaped, ", "-separated (NULL: none) */
	/* optional, one byte per macro, zeroed for each event: a macro used by several rules
	 * is evaluated once per event (0 unknown, 1 false, 2 true) */
	uint8_t *macro_memo;
	/* optional, str_memo__reset for each subject: the string table that lets glob tests keep
	 * their verdicts for recently seen strings (none: every glob is matched every time) */
	struct str_memo *strs;
};

/* The string table of an evaluator (policy_memo.c): NULL and errno ENOMEM on failure. A
 * table may serve several policies; reset it before each subject. */
struct str_memo;
struct str_memo *str_memo__new(void);
void str_memo__free(struct str_memo *sm);
void str_memo__reset(struct str_memo *sm);

/* A policy's verdicts of its glob tests (policy_memo.c): *m (created when NULL) sized for n
 * tests, every verdict forgotten; 0 or -ENOMEM. */
int match_memo_size(struct match_memo **m, uint32_t n);
void match_memo_free(struct match_memo *m);

struct policy *policy__new(void);
void policy__free(struct policy *p);

/* Reads, digests and parses one file into p. Returns 0, -EINVAL (errors in d), -ENOMEM, or
 * -errno of the read (also reported in d). */
int policy__load_file(struct policy *p, const char *path, struct diag *d);

/* Compiles every field test with the variables vs. A variable without a value makes its
 * patterns match nothing, with a warning when warn_unset is set (with a trace) and silently
 * otherwise (policy check). Once compiled, and until a file is loaded, compiling again (with
 * the trace's variables) redoes only the tests that read a variable: the rest, the checks and
 * the rule index do not depend on them. Returns 0 or -EINVAL / -ENOMEM. */
int policy__compile(struct policy *p, const struct vars *vs, bool warn_unset, struct diag *d);

/* Number of enabled rules. */
size_t policy__enabled_rules(const struct policy *p);

/* The indices (in p->rules, ascending) of the enabled rules whose condition can hold for a
 * subject of this op: every rule that can match it, maybe more; *n gets their number. Needs a
 * successful policy__compile. */
const uint32_t *policy_rules_for_op(const struct policy *p, int op, size_t *n);
/* Whether an enabled rule's condition or one of its exceptions reads the subject's call (tool,
 * method, arguments, bucket, attribution): if not, no verdict depends on the call model, and
 * attributions can be made after every subject was evaluated. Needs policy__compile. */
bool policy_reads_calls(const struct policy *p);
/* Beside them, the key set of each (see struct pol_index): rule ix[k] can hold on a subject of
 * this op only when bit policy_subject_key(s) of keys[k] is set. */
const uint64_t *policy_keys_for_op(const struct policy *p, int op);

/* The prefilter (policy_pre.c): the key of a subject's cheap facts (result, write intent,
 * exec bits, tampered), 0..POL_KEY_UNKNOWN; and the keys for which rule r's condition can
 * hold on a subject of op (an op outside the index: op unknown). */
unsigned policy_subject_key(const struct eval_subject *s);
uint64_t policy_rule_keys(const struct pol_rule *r, int op);
/* Its second answer: the kids of r's top-level "all" (policy_cond_top; bit i for kid i < 64)
 * that hold on every subject of op whose key is one of keys (the unknown key aside). On such a
 * subject the condition holds exactly when the other kids do: evaluating these again cannot
 * change the verdict. 0 when the top is not an "all". */
uint64_t policy_rule_skips(const struct pol_rule *r, int op, uint64_t keys);
/* Beside policy_keys_for_op, the skips of each entry. */
const uint64_t *policy_skips_for_op(const struct policy *p, int op);
/* Its third answer: the one field test whose verdict is r's condition's on every subject of op
 * whose key is one of keys (the unknown key aside), when every other part of the condition is
 * decided by those facts ({any: [{op: userfaultfd}, {all: [{op: openat}, {path: P}]}]} on an
 * openat is its path test); NULL when there is none. The engine then evaluates that test
 * alone. */
const struct field_test *policy_rule_direct(const struct pol_rule *r, int op, uint64_t keys);
/* Beside policy_keys_for_op, the direct test of each entry (NULL for none). */
const struct field_test *const *policy_direct_for_op(const struct policy *p, int op);

/* The subject's attribution (see struct eval_subject), NULL without a call model. */
const struct attribution *eval_subject_attr(const struct eval_subject *s);

/* Evaluation (policy_cond.c, fields in policy_eval.c). */
bool cond_eval(const struct cond *c, const struct eval_subject *s);
/* The rule's condition holds and no exception does; *exc is set to the index of the first
 * exception that held (or -1). skip: kids of the condition's top-level "all" known to hold on
 * s (policy_rule_skips for s's op and key; 0 for none), not evaluated. */
bool policy_rule_match(const struct pol_rule *r, const struct eval_subject *s, uint64_t skip,
		       int *exc);
/* The same with the condition decided by its direct test t (policy_rule_direct for s's op and
 * key), the exceptions evaluated as they are. */
bool policy_rule_match_direct(const struct pol_rule *r, const struct eval_subject *s,
			      const struct field_test *t, int *exc);
/* c, or the "all" it is made of when it is an "all" of one "all" (a mapping of one entry). */
const struct cond *policy_cond_top(const struct cond *c);

/* --- internal to the policy modules ------------------------------------------------------ */

/* Loading context shared by policy.c, policy_rule.c and policy_cond.c. */
struct pol_loader {
	struct policy *p;
	struct diag *d;
	const char *file;
};

struct cond *cond_parse(struct pol_loader *ld, const struct ynode *n, int depth);
void cond_free(struct cond *c);
/* Compilation context: the variables, where errors go, and the variables found without a
 * value (one warning each at the end, not one per pattern). */
#define POL_UNSET_MAX 16
struct pol_compile {
	const struct vars *vs;
	bool warn_unset;
	struct diag *d;
	struct {
		char name[64];
		struct srcpos first;
		unsigned patterns;
	} unset[POL_UNSET_MAX];
	size_t n_unset;
	struct match_memo *memo; /* the policy's, given to each glob test compiled */
	uint32_t n_memo;	 /* glob tests compiled so far: the next one's memo_bit */
	uint64_t n_values;	 /* values of the tests compiled so far, lists expanded */
	bool vars_only;		 /* keep the values of tests that read no variable */
};

int cond_compile(struct cond *c, struct pol_compile *pc);

int rules_parse(struct pol_loader *ld, const struct ynode *seq);
void rule_free(struct pol_rule *r);

enum { POL_OVERRIDE_NONE = 0, POL_OVERRIDE_APPEND = 1, POL_OVERRIDE_REPLACE = 2 };

/* Validates an "override" value against whether name was defined earlier (old != NULL):
 * returns POL_OVERRIDE_* or -EINVAL (reported). */
int pol_override_check(struct pol_loader *ld, const struct ynode *key, const struct ynode *ov,
		       const struct srcpos *old, const char *what);
/* Reports every key of map not in keys (NULL-terminated); -EINVAL if any. */
int pol_check_keys(struct pol_loader *ld, const struct ynode *map, const char *const *keys,
		   const char *what);
void pol_unknown_key(struct pol_loader *ld, const struct ynode *key, const char *what,
		     const char *const *cands);
const char *pol_suggest(const char *s, const char *const *cands);
#define POL_NAME_MAX 128 /* bytes of a list or macro name or a rule id */
bool pol_name_ok(const char *s, size_t len);
/* 0 when n is a name (pol_name_ok); else an error in ld naming what ("list name", ...): too
 * long, or the characters it may hold. */
int pol_check_name(struct pol_loader *ld, const struct ynode *n, const char *what);

/* By name, through p->names (policy_names.c); NULL when there is none. */
struct pol_list *policy_find_list(const struct policy *p, const char *name);
struct pol_macro *policy_find_macro(const struct policy *p, const char *name);
struct pol_rule *policy_find_rule(const struct policy *p, const char *id);
struct pol_names *policy_names_new(void);
void policy_names_free(struct pol_names *t);

/* Parses a scalar into a pol_value: "@name" references a list that must exist. */
int pol_value_parse(struct pol_loader *ld, const struct ynode *n, struct pol_value *out);
void pol_value_fini(struct pol_value *v);
/* For messages: s escaped, its first ESC_SHORT_MAX bytes and its length when longer. */
char *pol_strdup_escaped(const char *s, size_t len);

/* After compilation (policy_reach.c): sets r->subjects; warns in d of a rule or an exception
 * that can never match. */
void policy_rule_subjects(struct pol_rule *r);
void policy_warn_unreachable(const struct pol_rule *r, struct diag *d);
/* Builds p->index from the compiled rules. Returns 0 or -ENOMEM (the old index is kept). */
int policy_index_build(struct policy *p);

/* How far a rule's condition (or an exception's) may reach once its macros are expanded: the
 * passes that walk it through them (policy_reach.c, policy_pre.c) are exact within these.
 * Depth counts each combinator and each macro use as a level. */
#define POL_DEPTH_MAX	   64
#define POL_EXPANDED_MAX   4096	 /* field tests, combinators and macro uses */
#define POL_EXPANDED_TOTAL 32768 /* the same, over all rules and exceptions */
/* Refuses, with an error in d naming the rule, any rule beyond them (policy_bounds.c).
 * 0, -EINVAL or -ENOMEM. */
int policy_check_bounds(const struct policy *p, struct diag *d);

/* Field table (policy_field.c). */
const struct field_desc *field_find(const char *name);
const char *const *field_key_names(void); /* combinators and fields, NULL-terminated */
const char *field_name(const struct field_desc *f);
bool field_single_value(const struct field_desc *f); /* booleans take exactly one value */
int field_test_compile(struct field_test *t, struct pol_compile *pc);
bool field_test_eval(const struct field_test *t, const struct eval_subject *s);
void field_test_free(struct field_test *t);

#endif /* MW_POLICY_H */
