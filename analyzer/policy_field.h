/*
 * policy_field.h - the field table shared by the policy modules: policy_field.c compiles field
 * values, policy_eval.c reads fields from a subject, policy_reach.c tells which operations a
 * condition can hold for (to warn of exceptions that can never match).
 */
#ifndef MW_POLICY_FIELD_H
#define MW_POLICY_FIELD_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

enum vkind {
	VK_GLOB_PATH, /* glob, '/' is special */
	VK_GLOB_TEXT, /* glob over text (argv), wildcards cross '/' */
	VK_FAMILY,
	VK_OP,
	VK_RESULT,
	VK_AF,
	VK_ERRNO,
	VK_BOOL,
	VK_CIDR,
	VK_PORT,
	VK_BUCKET,
	VK_ATTRIBUTION,
	VK_INT,	     /* a number or "LO-HI" (uid, ino) */
	VK_DEV,	     /* "MAJOR:MINOR" */
	VK_DIRECTION, /* in, out */
	VK_MSGKIND,   /* request, response, notification, other */
	VK_SIGNAL,    /* a signal name (SIGSYS) or number (31) */
};

enum field_id {
	F_FAMILY,
	F_OP,
	F_PATH,
	F_PATH_ARG,
	F_OPENED_PATH,
	F_EXE,
	F_ARGV,
	F_ADDR,
	F_PORT,
	F_AF,
	F_RESULT,
	F_ERRNO,
	F_WRITE,
	F_LAUNCH,
	F_TRUNCATED,
	F_UNRESOLVED,
	F_TAMPERED,
	F_UNCHECKED,
	F_DIFFERS,
	F_TARGET,
	F_EXEC_BITS,
	F_DEV,
	F_INO,
	F_DNS,
	F_UID,
	F_PARENT_EXE,
	F_ANCESTOR_EXE,
	F_SERVER,
	F_TOOL,
	F_METHOD,
	F_ARGUMENTS,
	F_BUCKET,
	F_ATTRIBUTION,
	F_MESSAGE,
	F_DIRECTION,
	F_KIND,
	F_FOREIGN,
	F_NEW_NAMESPACES,
	F_SOCKET_PATH,
	F_EXIT_CODE,
	F_EXIT_SIGNAL,
	F_PROC_SELF,
};

/* Families of subjects that can carry a field (bit 1 << enum ev_family): a test of a field the
 * subject does not carry is false. */
#define FAMS_ALL     0xffffu
#define FAM_BIT(f)   (1u << (f))
#define FAMS_EVENTS  (FAMS_ALL & ~FAM_BIT(FAM_CHANNEL) & ~FAM_BIT(FAM_HEALTH))
/* evasion: an io_uring submission names the paths and address of the call it makes */
#define FAMS_PATHS                                                                                 \
	(FAM_BIT(FAM_FILE) | FAM_BIT(FAM_PROCESS) | FAM_BIT(FAM_PRIVILEGE) | FAM_BIT(FAM_EVASION))
#define FAMS_NET     (FAM_BIT(FAM_NETWORK) | FAM_BIT(FAM_EVASION))
#define FAMS_CHANNEL FAM_BIT(FAM_CHANNEL)

struct field_desc {
	const char *name;
	enum field_id id;
	enum vkind vk;
	uint32_t fams; /* FAMS_*: where the field exists */
};

/* Paths repeat: a server opens the same files again and again, and several rules test the
 * same path of an event. Two levels of memo (policy_memo.c), so that a repeated path costs a
 * hash and a memcmp per subject instead of a glob match per pattern, and the memo of each test
 * stays small enough for the cache:
 *   - the evaluator's string table: a cache of recently seen strings, MEMO_WAYS per set (so a
 *     few strings that hash to one set do not evict each other on every event), compared in
 *     full (never by hash alone); a slot gets a new generation whenever it takes a string;
 *   - the policy's verdicts: per slot, the generation of the string they are for, then two
 *     bits per glob test (tested, verdict), all valid while the slot still holds that
 *     generation. The verdicts of one string for every test of the policy lie side by side,
 *     so the tests of one subject read the same cache line instead of one memo each.
 * Strings longer than MEMO_BYTES are matched every time. The verdict depends only on the bytes
 * and the compiled test, so output is unchanged. 1 024 strings (~130 KiB with their verdicts)
 * stay in a core's L2 cache: with 4 096 (~600 KiB) the slot and tag loads missed it, which cost
 * more time than the extra hits saved (they saved ~0.5% of the instructions). */
#define MEMO_SETS  256
#define MEMO_WAYS  4
#define MEMO_SLOTS (MEMO_SETS * MEMO_WAYS)
#define MEMO_BYTES 118

struct str_slot {
	uint64_t gen; /* 0: empty */
	uint32_t len;
	uint8_t bytes[MEMO_BYTES];
};

/* A set's quick look: per way the high half of the string's hash (0: empty), and the way the
 * next string taken in replaces (first in, first out). */
struct str_set {
	uint32_t tag[MEMO_WAYS];
	uint32_t next;
};

/* A string of the current subject already found in the table: by address, as every field of
 * one subject stays in place while it is evaluated. */
#define STR_RECENT 4

struct str_memo {
	uint64_t next_gen;
	struct {
		const uint8_t *p;
		size_t n;
		size_t slot;
		uint64_t gen;
	} recent[STR_RECENT];
	unsigned n_recent, next_recent;
	struct str_set set[MEMO_SETS];
	struct str_slot slot[MEMO_SLOTS]; /* set i: slots i * MEMO_WAYS .. */
};

#define MEMO_TESTS_PER_WORD 32

struct match_memo {
	size_t words;	/* per slot: the generation (0: none), then the bits of the tests */
	uint64_t *rows; /* MEMO_SLOTS rows of words; NULL: no glob test */
};


/* The slot holding b (b.n <= MEMO_BYTES), b put there first when absent; *gen gets the slot's
 * generation (policy_memo.c). */
size_t str_memo_slot(struct str_memo *sm, struct ev_bytes b, uint64_t *gen);

struct field_test;

/* An integer field's value x is in one of the test's values or ranges (policy_eval.c). */
bool field_match_int(const struct field_test *t, int64_t x);

#endif /* MW_POLICY_FIELD_H */
