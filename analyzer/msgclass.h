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
 */
#ifndef MW_MSGCLASS_H
#define MW_MSGCLASS_H

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

#endif /* MW_MSGCLASS_H */
