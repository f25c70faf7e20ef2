/*
 * dump.h - one line per trace record, for people (text, like tcpdump -r) or tools (JSON Lines).
 *
 * Text: "<index> <type> ..." with the event timestamp in seconds, pid/tid, the operation, its
 * result and its arguments decoded (paths, open flags, argv, socket addresses); byte strings
 * are escaped (strbuf_escape) and quoted. The Header takes a few indented lines. JSON: one
 * object per record with the same fields, byte strings escaped the same way.
 */
#ifndef MW_DUMP_H
#define MW_DUMP_H

#include <jansson.h>
#include <stdio.h>

#include "replay.h"

struct strbuf;
/* Text line(s) of one record, made in sb (emptied first: a buffer kept from one record to the
 * next). Returns 0 or -ENOMEM. */
int dump_text(FILE *out, const struct replay_rec *r, struct strbuf *sb);

/* One JSON object and a newline, made in sb (as dump_text), with scratch for escaped and
 * formatted values (scratch[0] and [1], kept from one record to the next, like sb). Returns 0
 * or -ENOMEM. */
int dump_json(FILE *out, const struct replay_rec *r, struct strbuf *sb, struct strbuf *scratch);
/* That object (the caller owns it), or NULL when memory runs out. */
json_t *dump_json_object(const struct replay_rec *r);

/* Name of a record type: "header", "event", ... or NULL for an unknown type. */
const char *dump_type_name(enum mcpt_type t);

#endif /* MW_DUMP_H */
