/*
 * attr_later.h - findings attributed after the read that found them.
 *
 * When no rule reads the call of its subject (policy_reads_calls), analyze reads a trace once:
 * the call model is built from the same records the rules are evaluated on, and resolved only
 * at the end. No verdict depends on an attribution then; only the findings carry one. Each kept
 * finding keeps here what its attribution needs (an event's record, packed again; a message's
 * key, chanmsg.h; a Loss record's time and sequence), and once the model is resolved each gets
 * the attribution it would have had with the model resolved before the read. Memory: one entry
 * per kept finding (at most max_per_rule per rule, findings.h), none per event.
 */
#ifndef MW_ATTR_LATER_H
#define MW_ATTR_LATER_H

#include <stddef.h>

#include "attribute.h"
#include "chanmsg.h"
#include "event.h"
#include "findings.h"

struct attr_later;

struct attr_later *attr_later__new(void);
void attr_later__free(struct attr_later *l);

/* Keeps what finding number `finding` of its list needs, v being its subject; msg_ctx: the
 * attr_ctx chanmsg gave for a message subject (else unused). Returns 0 or -ENOMEM. */
int attr_later__keep(struct attr_later *l, size_t finding, const struct ev_view *v, void *msg_ctx);

/* Attributes every kept finding of fs with cm, resolved (messages through cmsg), and forgets
 * them. Returns 0 or -ENOMEM. */
int attr_later__settle(struct attr_later *l, struct findings *fs, const struct callmodel *cm,
		       struct chanmsg *cmsg);

#endif /* MW_ATTR_LATER_H */
