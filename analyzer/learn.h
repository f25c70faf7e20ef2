/*
 * learn.h - the baseline model: what a server was seen doing, per scope, in the generalised
 * form of learn_gen.h. `mcpwitness policy learn` writes it as a policy (learn_emit.c);
 * `mcpwitness diff` builds one model from the baseline traces and one from the new trace and
 * compares them (diff.c).
 *
 * Scopes: the server itself (its own executables), the runtime (system and runtime files,
 * read server-wide), startup, each tool (tools/call), each other method, ambient, shutdown, and
 * the tool-call graph (edges: which tool follows which, "(start)" first).
 * An event is learned in the scope of its call (lineage, window, evidence); an ambiguous event
 * in the scope of every candidate; an event outside every call in its bucket. The collector's
 * launch of the server, forks and exits are not learned (lifecycle, not behaviour).
 *
 * Items, by kind: the executables of the processes seen (proc), programs run (exec: executable
 * and argv shape), files read, written and changed (by operation), network destinations
 * (connect and send: address and port, or unix), listening ports (bind), other operations by
 * name, DNS names queried, secrets seen (never allowed: kept to say so). Each item keeps its
 * first sighting (trace, call, record, the value seen) and how often it was seen. Memory grows
 * with distinct items, never with events.
 *
 * With a reference model (diff), reads and other operations of a process whose executable the
 * reference never saw in that scope are not items: the policy's drift rules report such a
 * process once, by its exec, not once per file it loads (learn_emit.c).
 */
#ifndef MW_LEARN_H
#define MW_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "learn_gen.h"
#include "obs.h"
#include "policy.h"

enum ls_kind {
	LS_SERVER = 0, /* the server's own processes */
	LS_RUNTIME,    /* runtime and system files, server-wide */
	LS_STARTUP,
	LS_TOOL,
	LS_METHOD,
	LS_AMBIENT,
	LS_SHUTDOWN,
	LS_GRAPH, /* tool-call graph edges */
	LS_KINDS,
};

enum lk_kind {
	LK_PROC = 0,
	LK_EXEC,    /* f1 executable, f2 argv shape */
	LK_READ,    /* f1 path glob */
	LK_WRITE,   /* f1 path glob */
	LK_CHANGE,  /* f1 operation, f2 path glob (opened: tested on opened_path) */
	LK_CONNECT, /* f1 address or "unix", f2 port ("" for unix) */
	LK_LISTEN,  /* f1 "bind", f2 port */
	LK_OTHER,   /* f1 operation */
	LK_DNS,	    /* f1 name */
	LK_SECRET,  /* f1 the path, escaped: seen, never allowed */
	LK_EDGE,    /* f1 from, f2 to */
	LK_KINDS,
};

struct lscope {
	enum ls_kind kind;
	char *name;	/* tool or method (escaped text, as the policy fields see it), else NULL */
	uint64_t calls; /* requests of this tool or method, every trace */
};

struct litem {
	size_t scope; /* index in the model's scopes */
	enum lk_kind kind;
	char *f1, *f2; /* never NULL */
	bool opened;   /* LK_CHANGE: the path is the fd's (opened_path) */
	/* first sighting */
	char *example;	/* the value seen, escaped; for an edge "calls 3 -> 4" */
	char *names;	/* LK_CONNECT: DNS names the process queried before, or NULL */
	uint32_t trace; /* 1-based, in reading order */
	size_t call;	/* 0 outside every call */
	size_t call2;	/* LK_EDGE: the call before (0: none, the first call) */
	char *call_id;	/* the request id, or NULL */
	uint64_t record;
	uint64_t count;
	/* seen only in records no verified seal covers (--allow-incomplete): in every trace it
	 * was seen in, after that trace's last verified seal (lmodel__trace_end) */
	bool unproven;
	uint32_t seen_trace; /* the last trace it was seen in (1-based), */
	uint64_t seen_first; /* and the record of its first sighting there */
};

/* What learn needs of the base policy. */
struct lbase {
	const char *secret_list; /* name of its sensitive list ("sensitive_paths"), or NULL */
	char **secrets;		 /* that list's patterns, flattened */
	size_t n_secrets;
};

/* Per call of the last trace read, for sequence drift. */
struct lcall_facts {
	bool secret_read; /* a secret opened for reading, successfully */
	bool sent;	  /* a connect or send to an IP address */
};

struct lmodel {
	const struct lbase *base;
	const struct lmodel *ref; /* diff: the baseline (known processes) */
	struct lscope *scopes;
	size_t n_scopes, cap_scopes;
	struct litem *items;
	size_t n_items, cap_items;
	size_t *slots; /* open addressing: item index + 1 */
	size_t n_slots;
	uint32_t traces;	   /* read so far */
	struct lcall_facts *facts; /* of the last trace, by call index (1-based; [0] unused) */
	size_t n_facts;
	void *cur; /* per-trace state while one is read (learn_read.c) */
};

/* An empty model. ref may be NULL. NULL and errno ENOMEM on failure. */
struct lmodel *lmodel__new(const struct lbase *base, const struct lmodel *ref);
void lmodel__free(struct lmodel *m);

/* The callbacks that read one trace into the model (ctx: the model); then lmodel__trace_end
 * with the same trace adds its calls and its tool-call edges. */
extern const struct obs_ops lmodel_obs_ops;
int lmodel__trace_end(struct lmodel *m, struct obs_trace *t);
/* Frees the per-trace state of a read that did not end (lmodel__free does it too). */
void lmodel__drop_cur(struct lmodel *m);

/* Sorts scopes (by kind, then name) and items (by scope, kind, f1, f2): the order of every
 * output. Returns 0 or -ENOMEM. */
int lmodel__sort(struct lmodel *m);

/* --- the store (learn.c) ------------------------------------------------------------------ */

/* The scope (kind, name), created when absent; its index, or -ENOMEM. */
long lmodel__scope(struct lmodel *m, enum ls_kind kind, const char *name);
/* Lookup only: the index, or -1. */
long lmodel__find_scope(const struct lmodel *m, enum ls_kind kind, const char *name);
/* The item, NULL when absent. */
const struct litem *lmodel__find(const struct lmodel *m, size_t scope, enum lk_kind kind,
				 const char *f1, const char *f2);
/* Adds one sighting; *added tells whether it is new. Returns the item or NULL (ENOMEM). The
 * strings are copied. */
struct litem *lmodel__add(struct lmodel *m, size_t scope, enum lk_kind kind, const char *f1,
			  const char *f2, bool *added);
/* Notes that the trace being read (m->traces) shows item it in record: what decides, at the
 * trace's end, whether a verified seal covers it. */
void lmodel__seen(const struct lmodel *m, struct litem *it, uint64_t record);

const char *lk_kind_name(enum lk_kind k);
const char *ls_kind_name(enum ls_kind k);

#endif /* MW_LEARN_H */
