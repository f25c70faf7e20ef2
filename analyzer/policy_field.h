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
};

/* Families of subjects that can carry a field (bit 1 << enum ev_family): a test of a field the
 * subject does not carry is false. */
#define FAMS_ALL     0xffffu
#define FAM_BIT(f)   (1u << (f))
#define FAMS_EVENTS  (FAMS_ALL & ~FAM_BIT(FAM_CHANNEL) & ~FAM_BIT(FAM_HEALTH))
#define FAMS_PATHS   (FAM_BIT(FAM_FILE) | FAM_BIT(FAM_PROCESS) | FAM_BIT(FAM_PRIVILEGE))
#define FAMS_NET     FAM_BIT(FAM_NETWORK)
#define FAMS_CHANNEL FAM_BIT(FAM_CHANNEL)

struct field_desc {
	const char *name;
	enum field_id id;
	enum vkind vk;
	uint32_t fams; /* FAMS_*: where the field exists */
};

/* Paths repeat: a server opens the same files again and again, and every rule tests the same
 * path of an event. Each glob test keeps a direct-mapped cache of its verdict for recently
 * seen strings, compared in full (never by hash alone), so a repeated path costs a hash and a
 * memcmp instead of a glob match per pattern. Strings longer than MEMO_BYTES are matched
 * every time. The verdict depends only on the bytes and the compiled test, so output is
 * unchanged. */
#define MEMO_SLOTS 1024
#define MEMO_BYTES 118

struct memo_slot {
	uint8_t used, hit;
	uint8_t bytes[MEMO_BYTES];
	uint32_t len;
};

struct match_memo {
	struct memo_slot slot[MEMO_SLOTS];
};

struct field_test;

/* An integer field's value x is in one of the test's values or ranges (policy_eval.c). */
bool field_match_int(const struct field_test *t, int64_t x);

#endif /* MW_POLICY_FIELD_H */
