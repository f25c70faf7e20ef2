/*
 * passes.h - the first of the two reads of a trace that `calls` and `analyze` make (see
 * attribute.h): the MCP channel, marks, process facts and losses into a call model, which is
 * then resolved. The second read (verification, events) is the caller's, through replay.
 * analyze reads once when no rule reads a call (analyze.c): pass_once, the model fed from the
 * same records (pass_feed_model) and resolved after.
 *
 * A trace on standard input or in a FIFO is copied first into an unlinked temporary file (in
 * TMPDIR, else /tmp), so both reads see the same bytes. Each read digests (BLAKE2b-256) the
 * bytes of the file exactly as its verifying reader reads them (mcpt_verify_opts.on_read), then
 * the rest of the file to its end wherever the reader stopped: a file that changed between
 * the reads is refused, and the second digest is that of the whole file the reports name, with
 * no third read. The one read digests only for a report that names the digest (pass_once).
 */
#ifndef MW_PASSES_H
#define MW_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "replay.h"

struct pass_digest {
	_Alignas(64) uint8_t state[384]; /* crypto_generichash_state, opaque here */
	uint64_t length;    /* bytes digested: the file's length */
};

/* Opens path ("-" = stdin) for two reads: a seekable fd (close it when > 0). Returns the fd or
 * -errno with "failed to ..." in err. */
int pass_open(const char *path, char *err, size_t errlen);

/* Reads fd from its start into a new call model *out (structure only: seals are the second
 * read's business), resolves it and rewinds fd. digest gets the file's digest (d its state
 * and length). verified_only (a caller that verifies): the records after the last seal, which
 * no seal proves, are left out of the model, so that records forged onto the end of a trace
 * cannot move the attribution of sealed ones (the file is then read a second time);
 * *tail_left says whether any was. Returns 0 or -errno. */
int pass_model(int fd, const struct callmodel_opts *co, bool verified_only,
	       struct callmodel **out, bool *tail_left, struct pass_digest *d, uint8_t digest[32]);

/* What pass_model does with each record, for a caller that builds the model in a read of its
 * own (analyze's one read): cm and rp set, header false before the first record. It notes the
 * last seal met and whether the model took a record after it (tail_fed); with cut set, no
 * record after index cutoff is fed. */
struct pass_model_feed {
	struct callmodel *cm;
	struct replay *rp;
	bool header;
	bool cut;
	uint64_t cutoff;
	uint64_t last_seal; /* record index of the last seal met, 0 before the first */
	bool tail_fed;
};
int pass_feed_model(struct pass_model_feed *m, const struct replay_rec *rr);

/* The only read: replay__run of rp over fd with cb, digested as pass_model does, or not at all
 * when digest is NULL (a report that names no file digest: hashing every byte a second time,
 * beside the verifier's chunk leaves, is some 8% of the read). Returns cb's or replay__run's
 * error, or -errno of reading the rest. */
int pass_once(struct replay *rp, int fd, replay_cb cb, void *ctx, struct pass_digest *d,
	      uint8_t digest[32]);

/* The second read: replay__run of rp over fd (rewound by pass_model) with cb, digesting as
 * pass_model does into d and digest. Returns cb's or replay__run's error, -errno of reading the
 * rest, or -ESTALE when the file's bytes differ from those of the first read (first). */
int pass_second(struct replay *rp, int fd, replay_cb cb, void *ctx, const uint8_t first[32],
		struct pass_digest *d, uint8_t digest[32]);

#endif /* MW_PASSES_H */
