/*
 * passes.h - the first of the two reads of a trace that `calls` and `analyze` make (see
 * attribute.h): the MCP channel, marks, process facts and losses into a call model, which is
 * then resolved. The second read (verification, events) is the caller's, through replay.
 *
 * A trace on standard input or in a FIFO is copied first into an unlinked temporary file (in
 * TMPDIR, else /tmp), so both reads see the same bytes. Both reads digest every record
 * (BLAKE2b-256): a file that changed between them is refused.
 */
#ifndef MW_PASSES_H
#define MW_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "replay.h"

struct pass_digest {
	uint8_t state[384]; /* crypto_generichash_state, opaque here */
	uint64_t records;
};

void pass_digest_init(struct pass_digest *d);
void pass_digest_add(struct pass_digest *d, const struct mcpt_record *rec);
void pass_digest_final(struct pass_digest *d, uint8_t out[32]);

/* Opens path ("-" = stdin) for two reads: a seekable fd (close it when > 0). Returns the fd or
 * -errno with "failed to ..." in err. */
int pass_open(const char *path, char *err, size_t errlen);

/* Reads fd from its start into cm (structure only: seals are the second read's business),
 * resolves cm and rewinds fd. d gets the records' digest. Returns 0 or -errno. */
int pass_model(int fd, struct callmodel *cm, struct pass_digest *d, uint8_t digest[32]);

/* True when the second read saw other bytes than the first (a verifying read may stop early
 * at a bad seal: then only a longer second read is a change). */
bool pass_changed(const struct pass_digest *first, const uint8_t d1[32],
		  const struct pass_digest *second, const uint8_t d2[32]);

#endif /* MW_PASSES_H */
