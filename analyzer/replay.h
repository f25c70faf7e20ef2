/*
 * replay.h - reading a trace: open the input, stream it through the trace library's verifier
 * (mcpt_verify), unpack every record with its schema type, and hand it to a callback.
 *
 * Memory per record is bounded: records are unpacked into an arena that is reset after each
 * callback, with a budget proportional to the frame (protobuf-c has no limit of its own on
 * what a small frame can make it allocate). Only the Header is kept for the whole run.
 */
#ifndef MW_REPLAY_H
#define MW_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcpt.h"

/* One record, unpacked. msg is NULL for a type this analyzer does not know, or when the
 * record could not be unpacked (malformed = true). Valid only during the callback. */
struct replay_rec {
	const struct mcpt_record *rec;
	const ProtobufCMessage *msg;
	const Mcpt__SealStatement *statement; /* seals: the signed statement, when it unpacks */
	bool malformed;
};

typedef int (*replay_cb)(void *ctx, const struct replay_rec *r);

struct replay_opts {
	const struct mcpt_pubkey *key; /* NULL: structure only, no signature checked */
	bool allow_unsigned;
	bool hold_segments;
	/* NULL: every Event; else only those whose op it accepts reach the callback, the others
	 * are skipped unparsed (mcpt_verify_opts.want_event: not for a verifying read) */
	bool (*want_event)(void *ctx, uint32_t op);
	void *want_ctx;
	bool skim; /* records not hashed (mcpt_verify_opts.skim): no key, not a verdict */
};

struct replay;

struct replay *replay__new(const struct replay_opts *o);
void replay__free(struct replay *r);

/* Opens a trace for reading: path "-" is standard input. Returns the fd (not to be closed
 * when it is 0) or -errno with "failed to open trace PATH: reason" in err. */
int replay_open(const char *path, char *err, size_t errlen);

/* Reads fd to the end, calling cb for every record (the Header first). Returns 0 when the
 * stream was read to its end whatever the verdict (see replay__report), cb's non-zero value,
 * or -errno of a read error (-ENOBUFS when a held segment outgrew its limit). */
int replay__run(struct replay *r, int fd, replay_cb cb, void *ctx);
/* The same, with on_read(on_read_ctx, bytes, n) called on every run of bytes as it is read,
 * before it is parsed (mcpt_verify_opts.on_read). */
int replay__run_reading(struct replay *r, int fd, replay_cb cb, void *ctx,
			void (*on_read)(void *ctx, const uint8_t *p, size_t n), void *on_read_ctx);

/* The Header (NULL until read or if it did not unpack); lives as long as r. */
const Mcpt__Header *replay__header(const struct replay *r);
const struct mcpt_report *replay__report(const struct replay *r);
uint64_t replay__malformed(const struct replay *r); /* records that did not unpack */

/* True when the bytes themselves are not a well-formed trace (not a trace, bad header, framing
 * error, torn or zero-filled tail, trailing bytes, a record that does not parse), whatever the
 * signatures say. */
bool replay_damaged(const struct mcpt_report *rep);
/* The same, less a torn or zero-filled tail (what a killed collector leaves): bytes no collector
 * writes. */
bool replay_malformed(const struct mcpt_report *rep);
/* A torn or zero-filled tail. */
bool replay_torn(const struct mcpt_report *rep);

#define REPLAY_MESSAGE_MAX 1024
/* The report's one-line message, sanitized (mcpt_sanitize: the library escapes trace bytes
 * it quotes at the source, this is the guard at the sink): printable ASCII, safe for a terminal
 * and for JSON. Returns out. */
const char *replay_message(const struct mcpt_report *rep, char out[REPLAY_MESSAGE_MAX]);

#endif /* MW_REPLAY_H */
