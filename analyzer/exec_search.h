/*
 * exec_search.h - failed exec attempts grouped into PATH searches, for the engine: execvp
 * tries each directory of PATH in turn, and the attempts of one thread with one program name
 * are one search, held until the exec that ends it (found, another program, the end of the
 * trace). The engine evaluates a search once, on its last record, which then carries how many
 * attempts failed and the paths they tried (engine.h).
 */
#ifndef MW_EXEC_SEARCH_H
#define MW_EXEC_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "strbuf.h"

/* One thread's search: its last failed attempt, packed, and every path it tried. */
struct exec_search {
	uint32_t tid;
	uint64_t index;	 /* of the last attempt */
	uint8_t *packed; /* the last attempt */
	size_t len;
	unsigned count;
	struct strbuf paths; /* every attempted path, ", "-separated, escaped */
	char base[256];	     /* the program name they share */
};

/* The searches going on, at most EXEC_SEARCH_MAX (a hostile trace must not make every lookup
 * long: past it a failed exec is evaluated on its own). Zero-initialised is empty. */
struct exec_searches {
	struct exec_search *v;
	size_t n;
};

#define EXEC_SEARCH_MAX 256

void exec_searches_fini(struct exec_searches *s);

/* The search of v's thread (or, for an exec, of the thread it replaced), or NULL. */
struct exec_search *exec_search_find(const struct exec_searches *s, const struct ev_view *v);

/* Whether v, an exec or a failed one, names the program search x looks for. */
bool exec_search_same(const struct exec_search *x, const struct ev_view *v);

/* Keeps the failed attempt v as x's latest. Returns 0 or -ENOMEM. */
int exec_search_keep(struct exec_search *x, const struct ev_view *v, uint64_t index);

/* Starts a search with the failed attempt v. Returns 0, -ENOMEM, or 1 when v is not held (no
 * program name, or EXEC_SEARCH_MAX searches already) and is to be evaluated on its own. */
int exec_search_start(struct exec_searches *s, const struct ev_view *v, uint64_t index);

/* Removes x from s and hands it to *out, which the caller ends with exec_search_fini. */
void exec_search_take(struct exec_searches *s, struct exec_search *x, struct exec_search *out);

/* Removes x from s and frees it: the search is over and nothing is evaluated for it. */
void exec_search_drop(struct exec_searches *s, struct exec_search *x);

void exec_search_fini(struct exec_search *x);

#endif /* MW_EXEC_SEARCH_H */
