/*
 * event.h - one normalized, read-only view of a trace Event record.
 *
 * Decoding is done once per record and shared by dump and the policy engine: the operation's
 * name and family from one table, the path fields, the result (success, failure with its errno
 * name, or pending for entry-time and unfinished records), open flags and write intent (open,
 * openat, openat2, creat, open_by_handle_at), the argv of an exec, the socket addresses of
 * socket calls. The meaning of args[] and data per operation is the one written on enum mw_op
 * in bpf/events.h (mirrored by enum Op in proto/trace.proto).
 * Nothing in a record is trusted: absent arguments read as 0, lengths are those of the bytes
 * actually present.
 */
#ifndef MW_EVENT_H
#define MW_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns.h"
#include "sockaddr.h"
#include "strbuf.h"
#include "trace.pb-c.h"

enum ev_family {
	FAM_NONE = 0,
	FAM_PROCESS,
	FAM_FILE,
	FAM_NETWORK,
	FAM_PRIVILEGE, /* injection and privilege */
	FAM_EVASION,
	FAM_CHANNEL,
	FAM_HEALTH,
	FAM_COUNT,
};

/* Subjects the analyzer builds itself, evaluated by the rules like events (numbers reserved in
 * bpf/events.h, never recorded): a JSON-RPC message of the MCP channel, a Loss record, and a
 * process still running after the server exited (outlived.h), unrecorded from then on. */
#define EV_OP_MESSAGE  199
#define EV_OP_LOSS     200
#define EV_OP_OUTLIVED 201

/* Bytes an operation's name may take, its NUL included ("rt_tgsigqueueinfo" is the longest). */
#define EV_OP_NAME_MAX 24

enum ev_msg_kind {
	MSG_REQUEST = 0,
	MSG_RESPONSE,
	MSG_NOTIFICATION,
	MSG_OTHER, /* not JSON-RPC (a line that does not parse, junk) */
	MSG_KINDS,
};

enum ev_result {
	RES_SUCCESS = 0,
	RES_FAILURE,
	RES_PENDING, /* entry-time record, or still pending when the trace ended */
	RES_COUNT,
};

struct ev_bytes {
	const uint8_t *p;
	size_t n;
};

struct ev_view {
	const Mcpt__Event *raw;
	uint64_t seq, ts, pstart;
	uint32_t pid, tid, uid, gid;
	int op;
	const char *op_name;
	enum ev_family family;
	uint32_t flags; /* MW_F_* */

	int64_t ret;
	enum ev_result result;
	int err; /* positive errno when RES_FAILURE */

	struct ev_bytes path;	/* as passed */
	struct ev_bytes abs;	/* resolved to absolute in kernel */
	struct ev_bytes opened; /* the file actually opened; exec: the binary loaded */
	struct ev_bytes path2;	/* exec: interpreter; rename/link: target */
	struct ev_bytes abs2;
	struct ev_bytes subject; /* what "path" conditions match: abs if present, else path */

	/* opens */
	bool has_open;
	uint64_t open_flags;
	uint32_t mode;
	bool has_mode; /* mode is meaningful: a creating open, or a chmod (which sets it) */
	bool write_intent;
	bool has_write; /* write_intent is meaningful: an open, an io_uring request naming a path */
	int64_t dirfd;

	/* exec: data = argv, NUL separated */
	struct ev_bytes argv;

	/* socket calls: the address given or received (data), the socket's own view after the
	 * call (data2: the peer for connect/accept/send, the local address for bind/listen) */
	bool has_addr; /* event_addr */
	bool has_peer; /* event_peer */
	int64_t fd;
	int sock_type, sock_family; /* from the kernel's socket, 0 when unknown */
	struct ev_bytes payload;    /* bytes sent, where the op records them (DNS queries) */
	bool has_dns;		    /* payload holds a DNS query (a datagram to port 53): event_dns */
	uint64_t dev, ino; /* the file the record concerns (0: none) */

	/* EV_OP_MESSAGE: one line of the channel; EV_OP_LOSS: one Loss record */
	int msg_dir; /* enum chan_dir: 0 client to server, 1 server to client */
	enum ev_msg_kind msg_kind; /* read it with event_msg_kind */
	/* or, when set, what classifies the line on demand (only a `kind` test reads it) */
	enum ev_msg_kind (*msg_kind_get)(void *ctx);
	void *msg_kind_ctx;
	struct ev_bytes message;
	const char *detail; /* one line saying what the subject is (messages, losses) */
	/* or, when detail is NULL, what makes that line on demand (only a finding reads it) */
	const char *(*describe)(void *ctx);
	void *describe_ctx;

	/* fork */
	uint32_t child_pid, child_tid;
	uint64_t child_pstart;
	bool thread;

	/* exit */
	int64_t exit_status;
	bool group_dead;

	/* Nothing from here on is cleared by event_decode (clearing a kilobyte for every record
	 * cost more than the rest of the decoding): each part holds this record's value only
	 * where its flag says so (has_addr, has_peer, has_dns), and otherwise whatever an earlier
	 * record left. Read it through event_addr, event_peer and event_dns, which check the flag;
	 * a view cleared whole (memset) is valid too, its flags being false. */
	struct {
		struct mw_sockaddr addr, peer;
		struct dns_query dns;
	} unchecked;
	char op_buf[16]; /* name of an operation this analyzer does not know: "op<N>" */
	char detail_buf[96]; /* describe()'s line for signals, pidfds, namespace forks,
			      * foreign-ABI syscalls */
};

/* The address given or received by a socket call, the socket's own address after it, the DNS
 * query of the payload: NULL when the record has none. */
static inline const struct mw_sockaddr *event_addr(const struct ev_view *v)
{
	return v->has_addr ? &v->unchecked.addr : NULL;
}

static inline const struct mw_sockaddr *event_peer(const struct ev_view *v)
{
	return v->has_peer ? &v->unchecked.peer : NULL;
}

/* The address a policy's addr, port and af test and a finding's {addr} names: the address
 * given or received, or for a listen, which is given none, the socket's own name as the kernel
 * holds it after the call (the address it listens on). */
static inline const struct mw_sockaddr *event_sock_addr(const struct ev_view *v)
{
	if (v->op == MCPT__OP__OP_LISTEN && !v->has_addr)
		return event_peer(v);
	return event_addr(v);
}

static inline const struct dns_query *event_dns(const struct ev_view *v)
{
	return v->has_dns ? &v->unchecked.dns : NULL;
}

/* What the process named differs from what the kernel acted on: an open's path (made absolute
 * and normalised lexically) and the file opened, a connect's address and the socket's peer
 * (informational: symlinks such as /lib -> /usr/lib make it common). Computed on each call,
 * from the view alone: only a policy testing it, a finding and dump read it. */
bool event_differs(const struct ev_view *v);

/* Fills v from e (e must outlive v). Never fails. */
void event_decode(struct ev_view *v, const Mcpt__Event *e);

/* Sets describe() for a record whose subject is another process or new namespaces (signals,
 * pidfd calls, a fork into new namespaces): event_detail.c. Called by event_decode for the
 * operations its table marks so. */
void event_detail_set(struct ev_view *v);

/* Operation table lookups. event_op_by_name returns -1 for an unknown name. */
const char *event_op_name(int op);
int event_op_by_name(const char *name);
/* The i-th known operation name (table order), NULL past the end: for hints. */
const char *event_op_name_at(size_t i);
enum ev_family event_op_family(int op);
const char *event_family_name(enum ev_family f);
int event_family_by_name(const char *name); /* -1 if unknown */
const char *event_result_name(enum ev_result r);
int event_result_by_name(const char *name); /* -1 if unknown */

/* "ENOENT", or "E<n>" for a number without a name; writes into buf when needed. */
const char *event_errno_name(int err, char *buf, size_t len);
/* Positive errno for a name such as "EACCES", or -1. */
int event_errno_by_name(const char *name);

/* Appends the open flags as "O_WRONLY|O_CREAT|O_TRUNC" (x86-64/asm-generic values; unknown
 * bits as one hex number). */
void event_format_open_flags(struct strbuf *sb, uint64_t flags);

/* Write intent of open flags: write or read-write access, O_CREAT or O_TRUNC. */
bool event_open_writes(uint64_t flags);

/* Iterates over NUL-separated argv bytes: sets *arg to the next entry and returns true, or
 * returns false at the end. *pos starts at 0. A last entry without its NUL (cut short) is
 * returned too. */
bool event_argv_next(const struct ev_bytes *argv, size_t *pos, struct ev_bytes *arg);

/* Lexical normalisation of an absolute path into out (at most cap bytes): "//" and "/./"
 * collapse, "/x/.." goes up (never above "/"), a trailing '/' goes. Returns the length, or 0
 * when p is not absolute or does not fit. */
size_t event_normalize_path(const uint8_t *p, size_t n, char *out, size_t cap);

/* Names of message kinds: "request", "response", "notification", "other". */
/* The JSON-RPC kind of a channel message, classified when first asked for. */
static inline enum ev_msg_kind event_msg_kind(const struct ev_view *v)
{
	return v->msg_kind_get ? v->msg_kind_get(v->msg_kind_ctx) : v->msg_kind;
}
const char *event_msg_kind_name(enum ev_msg_kind k);
int event_msg_kind_by_name(const char *name); /* -1 if unknown */

/* Appends argv joined by single spaces, each entry escaped (no quoting): what argv globs match
 * is the raw join; this is for display. */
void event_format_argv(struct strbuf *sb, const struct ev_bytes *argv, bool quote);

/* A process's end from its wait status (an exit record's): "code 1", "signal SIGTERM",
 * "signal SIGSEGV, core dumped"; anything else as "status 0x...". */
void event_format_exit(struct strbuf *sb, int64_t status);
/* The code of an exit (-1 when killed), the name of the killing signal (NULL when it exited);
 * "SIG34" for a number without a name. buf holds that name when needed. */
int event_exit_code(int64_t status);
const char *event_exit_signal(int64_t status, char *buf, size_t len);
/* A signal's number from its name ("SIGSYS") or its decimal number (1..64); -1 if neither. */
int event_signal_by_name(const char *name);

#endif /* MW_EVENT_H */
