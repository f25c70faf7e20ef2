/*
 * glob_int.h - the compiled form of a glob, shared by the compiler (glob.c) and the matcher
 * (glob_match.c). Not for other modules.
 *
 * A pattern is a list of tokens; token i is NFA state i, state n accepts. Star tokens loop on
 * themselves and have epsilon edges forward. Patterns of at most GLOB_FAST_MAX tokens also get
 * per-byte bit masks so the whole state set is one 64-bit word (bit-parallel simulation);
 * longer ones run on a byte array. Prefilters reject most subjects before any simulation:
 * the literal prefix, the literal suffix, and the longest literal run (which every match
 * contains).
 */
#ifndef MW_GLOB_INT_H
#define MW_GLOB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GLOB_FAST_MAX 63 /* tokens; state n must fit in a 64-bit word */

enum tok_kind {
	T_LIT,	     /* one literal byte */
	T_ANY,	     /* ? */
	T_CLASS,     /* [...] */
	T_STAR,	     /* * */
	T_DSTAR,     /* ** */
	T_DIR_ENTRY, /* "**" then '/' as a whole component, i.e. "(any run ending in '/')?": */
		     /* epsilon edges to its loop and past it */
	T_DIR_LOOP,  /* its loop: any byte stays, '/' may also leave */
};

struct tok {
	uint8_t kind;
	uint8_t c;	/* T_LIT */
	uint16_t class; /* T_CLASS: index into classes[] */
};

/* Bit-parallel tables: for byte b, adv[b] has bit i when token i consumes b and moves on,
 * stay[b] when it consumes b and stays (a star's loop). */
struct glob_tables {
	uint64_t adv[256];
	uint64_t stay[256];
	uint64_t eps1; /* tokens with an epsilon edge to i+1 */
	uint64_t eps2; /* tokens with an epsilon edge to i+2 (directory entry) */
};

struct glob {
	unsigned flags;
	struct tok *toks;
	size_t n;
	uint8_t (*classes)[32]; /* 256-bit sets */
	size_t n_classes;
	uint8_t *lits;		/* toks[i].c for every i, so literal runs compare with memcmp */
	size_t lit_prefix;	/* leading T_LIT tokens */
	size_t lit_suffix;	/* trailing T_LIT tokens */
	size_t req_at, req_len; /* the longest run of T_LIT tokens */
	bool literal;
	struct glob_tables *tables; /* NULL when n > GLOB_FAST_MAX */
};

/* Whether token t (of a glob with flags) consumes byte b (to move on, or to stay). */
bool glob_tok_accepts(const struct glob *g, const struct tok *t, uint8_t b);

/* Builds g->tables when the pattern is short enough. 0 or -ENOMEM. */
int glob_build_tables(struct glob *g);

#endif /* MW_GLOB_INT_H */
