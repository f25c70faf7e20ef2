/*
 * ytree.h - a YAML document as a small tree of scalars, sequences and mappings, each node
 * carrying its file:line:column, built with libyaml's event parser.
 *
 * Only what a policy needs and nothing that can be abused: one document per file, no aliases
 * (so no "billion laughs"), no tags, nesting at most YTREE_MAX_DEPTH, at most YTREE_MAX_NODES
 * nodes, mapping keys must be scalars without a NUL byte and unique. Every error has its
 * line and column, encoding errors (bad UTF-8, a NUL or another control character) included.
 * Scalars are kept as bytes; whether a plain scalar is a number or a boolean is decided by the
 * consumer (ynode_bool, ynode_int), so "true" and true stay distinguishable.
 */
#ifndef MW_YTREE_H
#define MW_YTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

#define YTREE_MAX_DEPTH 64
#define YTREE_MAX_NODES 1000000

enum ynode_kind {
	YN_SCALAR,
	YN_SEQ,
	YN_MAP,
};

struct ynode {
	enum ynode_kind kind;
	struct srcpos pos;
	char *str; /* YN_SCALAR: NUL-terminated (may also hold NULs: see len) */
	size_t len;
	bool quoted;	     /* any style but plain: always a string */
	struct ynode **kids; /* YN_SEQ: items; YN_MAP: key, value, key, value... */
	size_t n;	     /* number of kids */
};

/* Parses buf[0..len) (file names it in diagnostics; kept by pointer). Returns the root node, or
 * NULL after recording the error in d (errno EINVAL, or ENOMEM). */
struct ynode *ytree_parse(const char *file, const uint8_t *buf, size_t len, struct diag *d);

void ynode_free(struct ynode *n);

/* "a scalar", "a sequence", "a mapping": for messages. */
const char *ynode_kind_name(const struct ynode *n);

/* Plain empty, "~" or "null". */
bool ynode_is_null(const struct ynode *n);
/* Plain "true"/"false" only. Returns 0 or -EINVAL. */
int ynode_bool(const struct ynode *n, bool *out);
/* Plain decimal integer (optional '-') that fits in int64. Returns 0 or -EINVAL. */
int ynode_int(const struct ynode *n, int64_t *out);
/* A scalar that is not null. */
bool ynode_is_string(const struct ynode *n);

/* Mapping lookup: the value for key, or NULL. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);

#endif /* MW_YTREE_H */
