/*
 * glob_int.h - the compiled form of a glob, shared by the compiler (glob.c) and the matcher
 * (glob_match.c). Not for other modules.
 *
 * A pattern is a list of tokens; token i is NFA state i, state n accepts. Star tokens loop on
 * themselves and have epsilon edges forward. Patterns of at most GLOB_FAST_MAX tokens also get
 * bit masks per class of bytes so the whole state set is one 64-bit word (bit-parallel
 * simulation); longer ones run on a byte array. Prefilters reject most subjects before any
 * simulation: the literal prefix, the literal suffix, and the longest literal run (which every
 * match contains).
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

/* Bit-parallel tables. Bytes that every token treats alike form one class (most patterns have
 * a handful: their literal bytes, '/', the rest), so the tables take 256 bytes plus 16 a class
 * rather than 4 KiB: a policy holds hundreds of thousands of globs. For byte b of class
 * c = cls[b], by_class[c][0] (advance) has bit i when token i consumes b and moves on,
 * by_class[c][1] (stay) when it consumes b and stays (a star's loop). */
struct glob_tables {
	uint64_t eps1; /* tokens with an epsilon edge to i+1 */
	uint64_t eps2; /* tokens with an epsilon edge to i+2 (directory entry) */
	uint8_t cls[256];
	size_t n_cls;
	uint64_t by_class[][2];
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
	bool trim_slashes; /* path mode, not ending in '/': a subject's trailing '/'s do not count */
	struct glob_tables *tables; /* NULL when n > GLOB_FAST_MAX or literal */
};

/* Whether token t (of a glob with flags) consumes byte b (to move on, or to stay). */
bool glob_tok_accepts(const struct glob *g, const struct tok *t, uint8_t b);

/* Builds g->tables when the pattern is short enough and not literal. 0 or -ENOMEM. */
int glob_build_tables(struct glob *g);

#endif /* MW_GLOB_INT_H */
