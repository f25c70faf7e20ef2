/*
 * chanmsg.h - the MCP channel as subjects of the rules: while the rules are evaluated (the
 * second read of a trace, or its one read) the channel is reassembled again (chan.h), apart
 * from the call model's, and every line becomes one EV_OP_MESSAGE subject
 * (family channel): its bytes (`message`), its direction and its JSON-RPC kind, attributed to
 * the call it belongs to.
 *
 * A client's request and the response to it belong to their call (rule "window": they open and
 * close its window); anything else (notifications, the server's own requests, lines that are
 * not JSON-RPC) is attributed by its time like an event of the server. Memory is that of the
 * channel (bounded, chan.h) plus two record indexes of the calls, built once.
 */
#ifndef MW_CHANMSG_H
#define MW_CHANMSG_H

#include <stdint.h>

#include "attribute.h"
#include "event.h"
#include "trace.pb-c.h"

/* Called once per message with a subject valid during the call; its attribution is made when
 * first asked for (attr(attr_ctx)), as is its JSON-RPC kind (event_msg_kind): a line no rule
 * reads that far is never classified. Returns 0 or -errno. */
typedef int (*chanmsg_fn)(void *ctx, const struct ev_view *v,
			  const struct attribution *(*attr)(void *attr_ctx), void *attr_ctx,
			  uint64_t index);

struct chanmsg;

/* cm gives the calls and the attribution of what no call owns (may be NULL: no calls); the
 * subjects name the server (pid, pstart, uid) as the process. NULL and errno on failure. */
struct chanmsg *chanmsg__new(struct callmodel *cm, chanmsg_fn fn, void *ctx);
void chanmsg__free(struct chanmsg *m);
void chanmsg__set_server(struct chanmsg *m, uint32_t pid, uint64_t pstart, uint32_t uid);

/* The call model is resolved only after the read (analyze's one read): no attribution is made
 * during it; a subject whose attribution is wanted keeps its key (chanmsg_key_of) and is
 * attributed once the model is resolved (chanmsg__attribute_key). */
void chanmsg__later(struct chanmsg *m);

/* What the attribution of a message needs, kept beyond its line. */
struct chanmsg_key {
	uint64_t record, ts;
	enum chan_dir dir;
	enum ev_msg_kind kind;
	char *id; /* its JSON-RPC id (heap), or NULL */
};

/* The key of the subject whose attr_ctx fn was given, during fn: 0 or -ENOMEM. */
int chanmsg_key_of(void *attr_ctx, struct chanmsg_key *k);
void chanmsg_key_fini(struct chanmsg_key *k);
/* Its attribution, the same as during the read when the model had been resolved before it:
 * 0 or -ENOMEM. */
int chanmsg__attribute_key(struct chanmsg *m, const struct chanmsg_key *k, struct attribution *a);

/* One StdioFrame record; 0 or -errno (ENOMEM, or what fn returned). */
int chanmsg__frame(struct chanmsg *m, const Mcpt__StdioFrame *f, uint64_t index);
/* The end of the trace: an unterminated last line is still a message. */
int chanmsg__finish(struct chanmsg *m);

#endif /* MW_CHANMSG_H */
