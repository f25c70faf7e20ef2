/*
 * msgclass.h - the JSON-RPC kind, method and id of one channel line, as the rule subjects of
 * the channel need them (chanmsg.c), without building a JSON tree when it can be helped.
 *
 * The answer is by definition what jansson says: the line decoded whole (JSON_DECODE_ANY,
 * JSON_ALLOW_NUL), the first element of a batch for the kind and method, the id of a lone
 * message written canonically (call_id_canon). A strict one-pass validator (no allocation)
 * answers the lines it can prove jansson accepts and reads the same way: ASCII or valid UTF-8,
 * no \u escape of a surrogate or of NUL, no escape in a top-level key, method or string id,
 * integers of at most 18 digits, exponents of at most two digits, no repeated top-level
 * member that classification reads, nesting at most 512. Every other line (invalid ones
 * included) goes to jansson, so the two ways cannot disagree.
 *
 * The same validator also writes the tape of a line for the call model's fast path
 * (jsonrpc_fast.c): every value of one top-level object in document order, under the same
 * proof and two more rules (no key with an escape, no object repeating a key), so that a
 * member is found by its text and a value's compact dump can be told from its text.
 */
#ifndef MW_MSGCLASS_H
#define MW_MSGCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define MSGCLASS_ID_INLINE 48 /* canonical ids up to this long need no allocation */

struct msgclass {
	enum ev_msg_kind kind;
	const char *method; /* not NUL-terminated: method_len bytes; NULL when none */
	size_t method_len;
	char *id; /* canonical id of a lone message, or NULL: idbuf or heap */
	char idbuf[MSGCLASS_ID_INLINE + 1];
	void *doc; /* jansson's tree when it was used (method points into it) */
};

/* Classifies data[0..len) (data NULL: MSG_OTHER). Release with msgclass_fini. */
void msgclass_line(struct msgclass *mc, const uint8_t *data, size_t len);
/* The same answer through jansson alone (the reference, for the tests). */
void msgclass_line_jansson(struct msgclass *mc, const uint8_t *data, size_t len);
void msgclass_fini(struct msgclass *mc);

#define JT_NODES_INLINE 128	   /* values a tape holds without allocating */
#define JT_NODES_MAX	(1u << 16) /* values of a line a tape holds (more: no tape) */

enum jt_type { JT_STR, JT_INT, JT_REAL, JT_OBJ, JT_ARR, JT_TRUE, JT_FALSE, JT_NULL };

/* One value. Its children follow it; the node at index next is the one after all of them. */
struct jt_node {
	uint32_t start, len;   /* its text in the line (a string with its quotes) */
	uint32_t key, key_len; /* a member: its key's text, inside the quotes */
	uint32_t next;
	uint8_t type; /* enum jt_type */
	bool member;  /* a member of an object (else an element, or the top) */
	bool esc;     /* a string with a backslash */
	bool canon;   /* a scalar jansson's compact dump writes as it is written here */
};

struct jtape {
	const uint8_t *text;
	struct jt_node *n; /* count values: small, or on the heap past JT_NODES_INLINE */
	uint32_t count, cap;
	struct jt_node small[JT_NODES_INLINE];
};

/* The tape of data[0..len) when it is one JSON object the validator proves jansson reads the
 * same way, no key has an escape, no object repeats a key and it has at most JT_NODES_MAX
 * values; false otherwise (the tape is then meaningless, also on ENOMEM). Either way release
 * it with jtape_fini. */
bool msgclass_tape(struct jtape *t, const uint8_t *data, size_t len);
void jtape_fini(struct jtape *t);

#endif /* MW_MSGCLASS_H */
