/*
 * jsonscan.h - a streaming scanner of one JSON text, byte by byte, with constant memory.
 *
 * It checks the structure (strings, escapes, bracket matching, one top-level value) without
 * building anything, and remembers the few top-level members of a JSON-RPC object that pairing
 * needs: the raw token of "id" and "method", and whether "result" or "error" is present. So a
 * message too long to keep, or cut by a gap in the capture, can still be paired by its id, and
 * a line that jansson refuses can be told apart: not JSON at all, unbalanced, or balanced but
 * invalid (e.g. bad UTF-8, which the scanner does not check).
 *
 * Numbers and literals are not validated beyond their characters; jansson does that on lines
 * that are kept whole.
 */
#ifndef MW_JSONSCAN_H
#define MW_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSCAN_DEPTH_MAX 1024 /* deeper nesting is an error (jansson's own limit is 2048) */
#define JSCAN_TOKEN_MAX 256  /* bytes kept of the raw "id" / "method" token */

enum jscan_verdict {
	JSCAN_EMPTY,	  /* only whitespace */
	JSCAN_NOT_JSON,	  /* does not start like a JSON value */
	JSCAN_UNBALANCED, /* a structure error: brackets, an unterminated string, trailing bytes */
	JSCAN_BALANCED,	  /* one complete top-level value */
};

struct jscan_token {
	char raw[JSCAN_TOKEN_MAX]; /* the token as written (a string keeps its quotes) */
	size_t len;
	bool present, cut; /* cut: longer than JSCAN_TOKEN_MAX */
};

struct jscan {
	uint64_t pos;	 /* bytes fed */
	uint64_t bad_at; /* JSCAN_UNBALANCED: index of the offending byte */
	uint32_t depth;
	uint8_t state;			    /* internal */
	bool started;			    /* the first value began */
	bool done;			    /* the top-level value ended */
	bool bad;			    /* a structure error was seen */
	bool not_json;			    /* the first non-blank byte cannot start a JSON value */
	char top;			    /* '{', '[' or 0 for a scalar */
	uint8_t stack[JSCAN_DEPTH_MAX / 8]; /* one bit per level: 1 = object */
	/* depth-1 members of a top-level object */
	char key[8];
	size_t key_len;
	bool key_long;
	bool in_key;	/* the string is a key of the top-level object */
	bool str_key;	/* the string is a key (at any depth) */
	uint8_t want;	/* the member whose value comes next: 0 none, 1 id, 2 method */
	bool capturing; /* that value is being copied */
	struct jscan_token id, method;
	bool has_result, has_error, has_params;
};

void jscan_init(struct jscan *s);
void jscan_feed(struct jscan *s, const uint8_t *p, size_t n);
/* The verdict on everything fed so far, as if the text ended here. */
enum jscan_verdict jscan_end(const struct jscan *s);

#endif /* MW_JSONSCAN_H */
