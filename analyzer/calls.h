/*
 * calls.h - the calls of a trace: every JSON-RPC request seen on the MCP channel, paired with
 * its response, with the window of time it was in the server's hands, plus the notes about
 * everything on the channel that could not be read.
 *
 * A call is created when the request's line is complete (its window begins at the timestamp of
 * the frame that completed the line) and ends with the frame that completes its response. A
 * request cancelled by notifications/cancelled ends at the cancellation plus the grace period
 * (or its response, whichever is first); a task-augmented tools/call (its result is a task)
 * lasts until the task reaches a terminal status (notifications/tasks/status, or a tasks/get,
 * tasks/result or tasks/cancel response saying so). A request never answered stays open to the
 * end of the trace and is incomplete.
 *
 * Requests are paired by (direction, id): the client's requests (read by the server) with the
 * responses the server writes, the server's own requests (roots/list, sampling/createMessage,
 * elicitation/create...) with the responses it reads. Ids are compared as JSON values written
 * canonically, so 1 and "1" are different ids; an id is free again once answered.
 *
 * Memory grows with the number of calls and notes, never with the length of a message: what a
 * call keeps of its arguments and result is bounded (CALL_* limits below).
 */
#ifndef MW_CALLS_H
#define MW_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chan.h"

#define CALL_SHOW_MAX		240	      /* bytes of arguments / result kept for display */
#define CALL_EVIDENCE_MAX	64	      /* argument strings kept for evidence matching */
#define CALL_EVSTR_MAX		4096	      /* bytes of one such string */
#define CALL_NOTES_MAX		1000	      /* notes kept (all are counted) */
#define CALL_OPEN		UINT64_MAX    /* end of a window that never closed */
#define CANCEL_GRACE_DEFAULT_NS 1000000000ull /* 1 s */

enum call_status {
	CALL_PENDING = 0, /* no response (yet) */
	CALL_OK,	  /* a result */
	CALL_TOOL_ERROR,  /* a result with isError: true */
	CALL_ERROR,	  /* a JSON-RPC error */
};

/* Why a call is incomplete (bit mask). */
enum call_incomplete {
	CI_NO_RESPONSE = 1u << 0,     /* never answered */
	CI_REQUEST_DAMAGED = 1u << 1, /* its request was cut by a gap, too long or not decodable */
	CI_RESPONSE_DAMAGED = 1u << 2,
	CI_EVENTS_LOST = 1u << 3,  /* events were lost while its window was open */
	CI_INVALID_UTF8 = 1u << 4, /* its request was decoded with U+FFFD replacements */
	CI_TASK_OPEN = 1u << 5,	   /* its task never reached a terminal status */
	CI_BEFORE_ATTACH = 1u << 6, /* its request came before an attach: not in the trace */
};

enum call_end_how {
	END_NONE = 0,
	END_RESPONSE,
	END_CANCELLED, /* notifications/cancelled + grace */
	END_TASK,      /* terminal status of its task */
	END_MARK,      /* an explicit mark ended it later than the channel did */
};

struct call {
	size_t index;	   /* 1-based, in the order requests were read */
	enum chan_dir dir; /* CHAN_IN: a request of the client; CHAN_OUT: of the server */
	unsigned incomplete; /* enum call_incomplete */
	char *id;	   /* the id as canonical JSON: 17, "17" */
	char *method;	   /* escaped text */
	char *tool;	   /* tools/call: params.name, escaped; NULL otherwise */
	char *args;	 /* arguments (tools/call) or params, compact JSON, cut to CALL_SHOW_MAX */
	char *args_full; /* the same, uncut up to CALL_EVSTR_MAX (what `arguments` globs see);
			  * args is the same pointer when nothing was cut */
	char **ev;	 /* argument strings (and integers) for evidence matching */
	size_t n_ev;
	uint64_t offset; /* stream offset of the request */
	uint64_t begin_ts, begin_record;
	uint64_t resp_ts, resp_record; /* the response (0 when none) */
	uint64_t end_ts;	       /* end of the window: CALL_OPEN when it never closed */
	enum call_end_how end_how;
	enum call_status status;
	int64_t error_code;
	char *result; /* result or error, compact JSON cut to CALL_SHOW_MAX */
	uint64_t cancel_ts;
	char *task_id; /* a task-augmented call: its task */
	char *task_status;
	char *task_ref; /* tasks/get, tasks/result, tasks/cancel: the task it asks about */
	/* explicit marks (marks.c) */
	uint64_t mark_begin, mark_end; /* 0 / CALL_OPEN when absent */
	char *mark_call_id;
	/* W3C trace context of the request (identity.c): params._meta.traceparent, else
	 * params.traceparent, kept only when well formed; NULL when absent */
	char *traceparent, *tracestate;
	char digest[17]; /* first 8 bytes of BLAKE2b-256 of the arguments' JSON, in hex */
	bool cancelled;
	bool marked;	       /* marks.c */
	bool mark_disagrees;   /* marks.c */
	bool from_mark;	       /* known only from marks (--stdio off) */
};

struct call_note {
	char *text; /* one line: "stdin offset 1234: message" */
	uint64_t ts;
};

/* The protocol era of the session. */
struct call_session {
	char *protocol;	       /* protocolVersion of initialize, or of the first request's _meta */
	bool initialize_seen;  /* ...2025-11-25: an initialize handshake */
	bool per_request_meta; /* 2026-07-28: a protocol version in _meta on requests */
	bool discover_seen;    /* server/discover */
	uint64_t first_request_ts; /* the first request of the client read: end of startup */
	bool has_first_request;
	uint64_t batches;
	/* who and what (identity.c): clientInfo of initialize or of the requests' _meta, and
	 * serverInfo of the initialize / server/discover result */
	struct call_peer {
		char *name, *version; /* escaped text, bounded; NULL when unknown */
		const char *from;     /* "initialize", "_meta", "server/discover" */
	} client, server;
};

struct callset;

/* grace_ns: how long a cancelled request's window stays open (CANCEL_GRACE_DEFAULT_NS).
 * home: HOME of the server (evidence: "~/" in arguments), may be NULL. */
struct callset *callset__new(uint64_t grace_ns, const char *home);
void callset__free(struct callset *cs);

/* The channel callbacks that feed this set (jsonrpc.c); the same reading every line with
 * jansson, without the fast path (the reference, for the tests). */
extern const struct chan_ops callset_chan_ops;
extern const struct chan_ops callset_chan_ops_jansson;

/* Calls in index order; valid until the set is freed (adding calls does not move them). */
size_t callset__count(const struct callset *cs);
struct call *callset__at(struct callset *cs, size_t i);			 /* 0-based */
const struct call *callset__get(const struct callset *cs, size_t index); /* 1-based; NULL */
const struct call_session *callset__session(const struct callset *cs);
size_t callset__n_notes(const struct callset *cs);
const struct call_note *callset__note_at(const struct callset *cs, size_t i);
uint64_t callset__notes_total(const struct callset *cs);

/* Adds a note ("<where>: <message>"); kept up to CALL_NOTES_MAX, always counted. */
void callset__note(struct callset *cs, uint64_t ts, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- internal to calls.c, jsonrpc.c and marks.c ------------------------------------------ */

struct json_t;
/* A new call for a request (method may be NULL when only the scanner saw the line). Returns
 * the call, or NULL on ENOMEM. */
struct call *callset__open(struct callset *cs, enum chan_dir dir, const char *id_canon,
			   const char *method, const struct json_t *params, uint64_t offset,
			   uint64_t ts, uint64_t record);
/* The pending request of dir with this id (removed from the pending table), or NULL. */
struct call *callset__take(struct callset *cs, enum chan_dir dir, const char *id_canon);
/* The pending request of dir with this id, left pending, or NULL. */
struct call *callset__pending(struct callset *cs, enum chan_dir dir, const char *id_canon);
/* Records a response on c (result or error may be NULL). */
void callset__answer(struct callset *cs, struct call *c, const struct json_t *result,
		     const struct json_t *error, uint64_t ts, uint64_t record);
/* The same for a plain response (no task) whose parts were read elsewhere (the channel's fast
 * path, jsonrpc_fast.c): shown (call_json_short of the error or result, owned by c from now
 * on), status and code. */
void call_answered(struct call *c, char *shown, enum call_status status, int64_t code, uint64_t ts,
		   uint64_t record);
/* The parts of a request that fill_request reads from its params, for the same: the tool name
 * (s[0..n), escaped here), argument strings and integers for evidence matching (a string also in
 * the forms a server turns it into: "~/x" under HOME, "file://x"). 0 or -ENOMEM. */
int call_set_tool(struct call *c, const char *s, size_t n);
int callset__evidence_string(struct callset *cs, struct call *c, const char *s, size_t n);
int call_evidence_push(struct call *c, const char *s, size_t n);
/* The fast path of the channel callbacks (jsonrpc_fast.c): 1 when it read the whole line l,
 * 0 when it declined it (nothing was done), or -ENOMEM. */
int jsonrpc_fast_line(struct callset *cs, const struct chan_line *l);
/* A trace of an attached server (--pid, --pgid) that began at ts: requests may have been made
 * before it, and their responses come after. */
void callset__attached(struct callset *cs, uint64_t ts);
/* A response of the server (or of the client, for dir CHAN_OUT) to id, with no pending
 * request: in a trace of an attached server, the request may have come before the attach.
 * *out is then a call of its own, answered by nobody yet, its window open from the start of
 * the trace, its method unknown, flagged CI_BEFORE_ATTACH; NULL when the trace was launched,
 * when a recorded request had that id (a second response), or past
 * CALL_BEFORE_ATTACH_CHECKS such responses. 0 or -ENOMEM. */
int callset__before_attach(struct callset *cs, enum chan_dir dir, const char *id_canon,
			   struct call **out);
/* A cancellation of c at ts. */
void callset__cancel(struct callset *cs, struct call *c, uint64_t ts);
/* A task reached status at ts (terminal or not). */
void callset__task_status(struct callset *cs, const char *task_id, const char *status, uint64_t ts);
struct call_session *callset__session_mut(struct callset *cs);
/* Closes what is left open at the end of the trace. */
void callset__finish(struct callset *cs);
uint64_t callset__grace(const struct callset *cs);

/* Canonical JSON of an id (jansson value), or NULL when it is not a string or number. */
char *call_id_canon(const struct json_t *id);
/* Compact JSON of v cut to max bytes (with "..." when cut); NULL on ENOMEM. */
char *call_json_short(const struct json_t *v, size_t max);
/* The forms a call keeps of its arguments (calljson.c): *full compact and cut to
 * CALL_EVSTR_MAX, *show cut to CALL_SHOW_MAX (the same pointer when nothing was cut), digest
 * the hex of the first 8 bytes of BLAKE2b-256 of their key-sorted compact JSON. 0 or -ENOMEM
 * (what was made is left for the caller to free). */
int call_args_forms(const struct json_t *args, char **show, char **full, char digest[17]);
/* The same from the compact dump of the arguments (len bytes) and their key-sorted compact dump
 * (sorted, sorted_len bytes; may be dump itself). */
int call_args_forms_dump(const char *dump, size_t len, const char *sorted, size_t sorted_len,
			 char **show, char **full, char digest[17]);
/* s[0..len) cut to max bytes as call_json_short cuts its dump; NULL on ENOMEM. */
char *call_text_short(const char *s, size_t len, size_t max);
/* "completed", "failed", "cancelled" */
bool call_task_terminal(const char *status);

#endif /* MW_CALLS_H */
