/*
 * identity.h - who and what a report is about, and how its findings join the agent's own
 * traces.
 *
 * From the MCP channel (identity.c, fed by jsonrpc.c as requests and responses are read):
 *   client    clientInfo {name, version} of the initialize request, or (protocol 2026-07-28,
 *             no handshake) the "io.modelcontextprotocol/clientInfo" entry of a request's
 *             _meta; the first one seen is kept
 *   server    serverInfo of the initialize or server/discover result (or of the result's
 *             _meta "io.modelcontextprotocol/serverInfo")
 *   trace context of each client request: W3C traceparent (and tracestate) from
 *             params._meta (SEP-414), else from params itself; kept only when well formed,
 *             so a hostile client cannot put arbitrary text where tracing systems read ids
 * From the trace header (identity_report.c): the server's command line, executable and its
 * BLAKE2b-256 digest, the user it ran as, the host, the trace id.
 */
#ifndef MW_IDENTITY_H
#define MW_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "calls.h"
#include "strbuf.h"
#include "trace.pb-c.h"

#define IDENTITY_NAME_MAX	128 /* bytes of a client or server name kept (before escaping) */
#define IDENTITY_TRACESTATE_MAX 512 /* W3C: at most 32 members of 256 bytes; we keep less */

struct json_t;

/* A request of the client was read (c is its call). Fills c->traceparent / c->tracestate and
 * the session's client. Returns 0 or -ENOMEM. */
int identity_request(struct call_session *s, struct call *c, const char *method,
		     const struct json_t *params);

/* A response of the server to the client's request c. Fills the session's server from an
 * initialize or server/discover result. Returns 0 or -ENOMEM. */
int identity_response(struct call_session *s, const struct call *c, const struct json_t *result);

/* True when s[0..n) is a W3C traceparent this analyzer keeps: version 00 exactly
 * "00-<32 hex>-<16 hex>-<2 hex>" (lower case, ids not all zero); a later version (not ff) may
 * carry more after a '-', which is dropped. *keep gets the length to keep (55). */
bool identity_traceparent_ok(const char *s, size_t n, size_t *keep);

/* --- rendering (identity_report.c) ------------------------------------------------------ */

/* {"trace_id", "client", "server", "user", "host"}: every string escaped; parts the trace
 * does not hold are null. cs may be NULL (no channel read). NULL on ENOMEM. */
struct json_t *identity_json(const Mcpt__Header *h, const struct callset *cs);

/* The same as lines "client: ...", "server: ...", "user: ...", "host: ...", each starting with
 * indent and ending in a newline. */
void identity_text(struct strbuf *sb, const Mcpt__Header *h, const struct callset *cs,
		   const char *indent);

/* {"traceparent", "tracestate", "trace_id", "parent_id", "sampled"} of a call, or JSON null
 * when its request carried no (valid) traceparent. NULL on ENOMEM. */
struct json_t *identity_trace_context_json(const struct call *c);

#endif /* MW_IDENTITY_H */
