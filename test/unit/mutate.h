/*
 * mutate.h - random edits of a line for the suites that compare two readers of it (msgclass,
 * jsonrpc_fast): bytes replaced, inserted and removed, biased to the characters JSON gives
 * meaning to.
 */
#ifndef MW_MUTATE_H
#define MW_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* Up to edits edits of buf[from..n) (buf has room for cap bytes), each byte drawn from special
 * (NUL-terminated) or at random; seed is rand_r's. Returns the new length. */
size_t mutate_bytes(uint8_t *buf, size_t n, size_t cap, size_t from, size_t edits,
		    const char *special, unsigned *seed);

#endif /* MW_MUTATE_H */
