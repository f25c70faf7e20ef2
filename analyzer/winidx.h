/*
 * winidx.h - which call windows contain a moment: intervals [begin, end] sorted by begin, with a
 * max-end segment tree, so a query costs O((k + 1) log n) for k windows found, whatever the
 * order of queries. Built once, after the windows are known; memory O(n).
 */
#ifndef MW_WINIDX_H
#define MW_WINIDX_H

#include <stddef.h>
#include <stdint.h>

struct win {
	uint64_t begin, end; /* inclusive */
	size_t call;	     /* 1-based call index */
};

struct winidx;

/* Takes a copy of w[0..n). NULL and errno ENOMEM on failure. */
struct winidx *winidx__new(const struct win *w, size_t n);
void winidx__free(struct winidx *wi);

/* Calls whose window contains ts, in call order, at most max of them in out; returns how many
 * there are in all. */
size_t winidx__at(const struct winidx *wi, uint64_t ts, size_t *out, size_t max);
/* How many windows begin at or before ts. */
size_t winidx__begun(const struct winidx *wi, uint64_t ts);
/* The k-th window by begin (0-based), NULL past the end. */
const struct win *winidx__nth(const struct winidx *wi, size_t k);

#endif /* MW_WINIDX_H */
