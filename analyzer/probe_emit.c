/*
 * probe_emit.c - trace records to mcpfz-probe protocol lines (see probe.h).
 *
 * Attribution is by time, on one clock: the collector stamps each control line it reads with
 * CLOCK_BOOTTIME, the clock of the kernel's event timestamps, so an event belongs to the call
 * whose begin mark precedes it and whose end mark (plus the grace window) follows it, whatever
 * order the records reach the trace in. Buckets: "startup" before the generation's first begin
 * mark, "call" inside a window, "ambient" outside every window after that.
 *
 * The "end" status must come after every event of the call (the harness collects the call's
 * events when it reads it). The collector reads a control line before it drains the ring in
 * the same turn, so the call's events follow its end mark in the trace; the end is acknowledged
 * once a record stamped after the grace window, or a seal sampled after it, has been read, or,
 * on an idle server, by the control loop's timer once the collector's 100 ms flush is surely
 * done (PROBE_FALLBACK_NS).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "events.h"
#include "log.h"
#include "probe.h"
#include "replay.h"
#include "strbuf.h"
#include "traceinfo.h"

uint64_t probe_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void probe_emit(struct probe *p, json_t *obj)
{
	char *line;

	if (!obj)
		return;
	if (!json_object_get(obj, "ts_ns"))
		json_object_set_new(obj, "ts_ns", json_integer((json_int_t)realtime_ns()));
	line = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!line || p->out_failed) {
		free(line);
		return;
	}
	if (fputs(line, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout)) {
		p->out_failed = true; /* the harness is gone; the trace is still recorded */
		p_err("failed to write an event line: %s", strerror(errno));
	}
	free(line);
}

void probe_status(struct probe *p, const char *msg, const char *bucket, const char *call_id)
{
	json_t *o =
		json_pack("{s:s, s:s, s:s}", "type", "status", "message", msg, "bucket", bucket);

	if (o && call_id)
		json_object_set_new(o, "call_id", json_string(call_id));
	probe_emit(p, o);
}

/* ---- windows ------------------------------------------------------------------------------ */

static struct probe_window *window_find(struct probe_gen *g, const char *call_id)
{
	for (size_t i = g->n_win; i-- > 0;)
		if (!strcmp(g->win[i].call_id, call_id))
			return &g->win[i];
	return NULL;
}

static struct probe_window *window_add(struct probe_gen *g, const char *call_id, uint64_t ts)
{
	struct probe_window *w;

	if (g->n_win == g->cap_win) {
		size_t cap = g->cap_win ? g->cap_win * 2 : 16;
		struct probe_window *nw = realloc(g->win, cap * sizeof(*nw));

		if (!nw)
			return NULL;
		g->win = nw;
		g->cap_win = cap;
	}
	w = &g->win[g->n_win];
	w->call_id = strdup(call_id);
	if (!w->call_id)
		return NULL;
	w->begin_ts = ts;
	w->end_ts = 0;
	w->end_acked = false;
	g->n_win++;
	return w;
}

void probe_gen_forget(struct probe_gen *g)
{
	for (size_t i = 0; i < g->n_win; i++)
		free(g->win[i].call_id);
	free(g->win);
	g->win = NULL;
	g->n_win = g->cap_win = 0;
}

/* The call an event at ts belongs to (the latest window holding it), or NULL. */
static const struct probe_window *window_at(const struct probe_gen *g, uint64_t ts)
{
	for (size_t i = g->n_win; i-- > 0;) {
		const struct probe_window *w = &g->win[i];

		if (ts >= w->begin_ts && (!w->end_ts || ts <= w->end_ts + g->probe->opts.grace_ns))
			return w;
	}
	return NULL;
}

/* Acknowledges the ended windows whose grace window closed before ts (a record stamped later
 * has been read, or time has passed). */
static void ack_before(struct probe_gen *g, uint64_t ts, uint64_t slack)
{
	for (size_t i = 0; i < g->n_win; i++) {
		struct probe_window *w = &g->win[i];

		if (w->end_ts && !w->end_acked &&
		    w->end_ts + g->probe->opts.grace_ns + slack < ts) {
			w->end_acked = true;
			probe_status(g->probe, "end", "call", w->call_id);
		}
	}
}

void probe_ack_ends(struct probe_gen *g, uint64_t now_ns, bool flush)
{
	ack_before(g, flush ? UINT64_MAX : now_ns, flush ? 0 : PROBE_FALLBACK_NS);
}

/* ---- process names ------------------------------------------------------------------------ */

static void comm_set(struct probe_gen *g, uint32_t pid, const uint8_t *name, size_t n)
{
	struct probe_comm *c = NULL;
	const uint8_t *slash;

	while (n && (slash = memchr(name, '/', n))) { /* the kernel names a task by basename */
		n -= (size_t)(slash + 1 - name);
		name = slash + 1;
	}
	for (size_t i = 0; i < g->n_comms && !c; i++)
		if (g->comms[i].pid == pid)
			c = &g->comms[i];
	if (!c) {
		size_t cap = sizeof(g->comms) / sizeof(g->comms[0]);

		if (g->n_comms < cap) {
			c = &g->comms[g->n_comms++];
		} else {
			c = &g->comms[g->next_comm]; /* the oldest entry goes */
			g->next_comm = (g->next_comm + 1) % cap;
		}
	}
	c->pid = pid;
	n = n < sizeof(c->comm) - 1 ? n : sizeof(c->comm) - 1;
	memcpy(c->comm, name, n);
	c->comm[n] = 0;
}

/* The name of pid as the trace says it, else /proc's (a process seeded at attach). */
static json_t *comm_get(struct probe_gen *g, uint32_t pid)
{
	char path[64], buf[32] = "";
	size_t n = 0;
	FILE *f;

	for (size_t i = 0; i < g->n_comms; i++)
		if (g->comms[i].pid == pid)
			return json_bytes((const uint8_t *)g->comms[i].comm,
					  strlen(g->comms[i].comm));
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	while (n && buf[n - 1] == '\n')
		n--;
	comm_set(g, pid, (const uint8_t *)buf, n);
	return json_bytes((const uint8_t *)buf, n);
}

/* ---- events ------------------------------------------------------------------------------- */

/* The common fields of an event line at ts of pid. */
static json_t *event_base(struct probe_gen *g, const char *type, uint64_t ts, uint32_t pid)
{
	const struct probe_window *w = window_at(g, ts);
	json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "type", type, "bucket",
			      w		      ? "call"
			      : g->seen_begin ? "ambient"
					      : "startup",
			      "generation", (json_int_t)g->generation, "ts_ns",
			      (json_int_t)((int64_t)ts + g->wall_offset));

	if (!o)
		return NULL;
	if (w)
		json_object_set_new(o, "call_id", json_string(w->call_id));
	if (pid) {
		json_object_set_new(o, "pid", json_integer(pid));
		json_object_set_new(o, "comm", comm_get(g, pid));
	}
	return o;
}

static json_t *bytes_of(const struct ev_bytes *b)
{
	return json_bytes(b->p, b->n);
}

static json_t *exec_line(struct probe_gen *g, const struct ev_view *v)
{
	json_t *o, *argv = json_array();
	struct ev_bytes arg;
	size_t pos = 0;

	comm_set(g, v->pid, v->path.p, v->path.n);
	while (argv && event_argv_next(&v->argv, &pos, &arg))
		json_array_append_new(argv, bytes_of(&arg));
	o = event_base(g, "exec", v->ts, v->pid);
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "path", bytes_of(&v->subject));
	return o;
}

static json_t *connect_line(struct probe_gen *g, const struct ev_view *v, const char *proto)
{
	const struct mw_sockaddr *a = event_addr(v);
	struct strbuf sb = STRBUF_INIT;
	json_t *o;

	if (!a || (a->kind != SA_INET && a->kind != SA_INET6))
		return NULL; /* no usable destination (unix sockets, unconnected sends) */
	sockaddr_format_ip(&sb, &a->ip);
	strbuf_printf(&sb, ":%u", a->port);
	o = event_base(g, "connect", v->ts, v->pid);
	json_object_set_new(o, "proto", json_string(proto));
	json_object_set_new(o, "dst", json_string(strbuf_str(&sb) ?: ""));
	strbuf_fini(&sb);
	return o;
}

static json_t *open_line(struct probe_gen *g, const struct ev_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o = event_base(g, "file_open", v->ts, v->pid);

	event_format_open_flags(&sb, v->open_flags);
	json_object_set_new(o, "path", bytes_of(&v->subject));
	json_object_set_new(o, "flags", json_string(strbuf_str(&sb) ?: ""));
	strbuf_fini(&sb);
	return o;
}

static json_t *chmod_line(struct probe_gen *g, const struct ev_view *v)
{
	const Mcpt__Event *e = v->raw;
	size_t i = v->op == MCPT__OP__OP_CHMOD
			   ? 0
			   : 1; /* chmod(path, mode); the others: fd/dirfd first */
	uint64_t mode = i < e->n_args ? (uint64_t)e->args[i] : 0;
	json_t *o = event_base(g, "chmod", v->ts, v->pid);
	char buf[16];

	snprintf(buf, sizeof(buf), "%llo", (unsigned long long)(mode & 07777));
	json_object_set_new(o, "path",
			    bytes_of(v->op == MCPT__OP__OP_FCHMOD ? &v->opened : &v->subject));
	json_object_set_new(o, "mode", json_string(buf));
	return o;
}

static json_t *ptrace_line(struct probe_gen *g, const struct ev_view *v)
{
	const Mcpt__Event *e = v->raw;
	json_t *o = event_base(g, "ptrace", v->ts, v->pid);

	json_object_set_new(o, "request", json_integer(e->n_args > 0 ? e->args[0] : 0));
	json_object_set_new(o, "target_pid", json_integer(e->n_args > 1 ? e->args[1] : 0));
	return o;
}

/* A connect is reported once: from its entry-time record when it has one (a connect that
 * stayed blocked for a while: one that never returns is still reported), else from its exit (or
 * unfinished) record. connect_reported_at_entry() says whether thread tid's connect was, and
 * forgets it: a thread makes one syscall at a time, so its next connect record not at entry is
 * that connect's end. Past PROBE_CONNECTS_MAX threads blocked in a connect at once, the oldest
 * is forgotten, and its connect is reported again when it returns. */
static void connect_at_entry(struct probe_gen *g, uint32_t tid)
{
	if (g->n_connect_tids == PROBE_CONNECTS_MAX) {
		memmove(g->connect_tids, g->connect_tids + 1,
			(PROBE_CONNECTS_MAX - 1) * sizeof(g->connect_tids[0]));
		g->n_connect_tids--;
	}
	g->connect_tids[g->n_connect_tids++] = tid;
}

static bool connect_reported_at_entry(struct probe_gen *g, uint32_t tid)
{
	for (size_t i = g->n_connect_tids; i-- > 0;) {
		if (g->connect_tids[i] != tid)
			continue;
		memmove(g->connect_tids + i, g->connect_tids + i + 1,
			(g->n_connect_tids - i - 1) * sizeof(g->connect_tids[0]));
		g->n_connect_tids--;
		return true;
	}
	return false;
}

/* The protocol line of an event, NULL for the events the protocol has no type for. Connects
 * as above; the other calls from their record at exit, successful or not. */
static json_t *event_line(struct probe_gen *g, const struct ev_view *v)
{
	bool entry = v->flags & MW_F_ENTRY;
	json_t *o = NULL;

	switch (v->op) {
	case MCPT__OP__OP_EXEC:
		return entry ? NULL : exec_line(g, v);
	case MCPT__OP__OP_CONNECT:
		if (entry)
			connect_at_entry(g, v->tid);
		else if (connect_reported_at_entry(g, v->tid))
			return NULL;
		return connect_line(g, v, v->sock_type == 2 ? "udp" : "tcp");
	case MCPT__OP__OP_SENDTO:
	case MCPT__OP__OP_SENDMSG:
		return entry ? NULL : connect_line(g, v, "udp");
	case MCPT__OP__OP_OPEN:
	case MCPT__OP__OP_OPENAT:
	case MCPT__OP__OP_OPENAT2:
	case MCPT__OP__OP_CREAT:
	case MCPT__OP__OP_OPEN_BY_HANDLE_AT:
		o = entry ? NULL : open_line(g, v);
		break;
	case MCPT__OP__OP_UNLINK:
	case MCPT__OP__OP_UNLINKAT:
	case MCPT__OP__OP_RMDIR:
		o = event_base(g, "file_delete", v->ts, v->pid);
		json_object_set_new(o, "path", bytes_of(&v->subject));
		break;
	case MCPT__OP__OP_CHMOD:
	case MCPT__OP__OP_FCHMOD:
	case MCPT__OP__OP_FCHMODAT:
	case MCPT__OP__OP_FCHMODAT2:
		o = chmod_line(g, v);
		break;
	case MCPT__OP__OP_PTRACE:
		o = ptrace_line(g, v);
		break;
	default:
		return NULL;
	}
	if (o)
		json_object_set_new(o, "result", json_string(event_result_name(v->result)));
	return o;
}

static void on_event(struct probe_gen *g, const Mcpt__Event *e)
{
	struct ev_view v;

	event_decode(&v, e);
	if (v.op == MCPT__OP__OP_FORK && !v.thread) { /* the child starts with its parent's name */
		json_t *c = comm_get(g, v.pid);

		comm_set(g, v.child_pid, (const uint8_t *)json_string_value(c),
			 json_string_length(c));
		json_decref(c);
	}
	ack_before(g, v.ts, 0);
	probe_emit(g->probe, event_line(g, &v));
}

/* ---- marks -------------------------------------------------------------------------------- */

/* A control line read back from the trace: it opens or closes a window from now on. */
static void on_mark(struct probe_gen *g, const Mcpt__Mark *m)
{
	json_t *j = json_loadb((const char *)m->raw.data, m->raw.len, 0, NULL);
	const char *op = json_string_value(json_object_get(j, "op"));
	const char *phase = json_string_value(json_object_get(j, "phase"));
	const char *call_id = json_string_value(json_object_get(j, "call_id"));
	struct probe_window *w;

	if (!op || strcmp(op, "mark") || !phase)
		goto done; /* scope and shutdown lines are in the trace for the record only */
	if (!strcmp(phase, "begin")) {
		if (window_add(g, call_id ? call_id : "", m->ts)) {
			g->seen_begin = true;
			probe_status(g->probe, "begin", "call", call_id ? call_id : "");
		}
	} else if (!strcmp(phase, "end")) {
		w = call_id ? window_find(g, call_id) : NULL;
		if (!w && !call_id && g->n_win) /* an end without call_id ends the latest call */
			w = &g->win[g->n_win - 1];
		if (w && !w->end_ts)
			w->end_ts = m->ts;
		else if (!w && call_id && (w = window_add(g, call_id, m->ts)))
			w->end_ts = m->ts; /* an end without begin: acknowledge it all the same */
	}
done:
	json_decref(j);
}

/* ---- records ------------------------------------------------------------------------------ */

static void on_header(struct probe_gen *g, const Mcpt__Header *h)
{
	const Mcpt__ClockSample *c = h->clock;
	json_t *o;

	if (c && c->realtime_ns)
		g->wall_offset = (int64_t)c->realtime_ns -
				 (int64_t)(c->boottime_before_ns / 2 + c->boottime_after_ns / 2);
	g->attached = true;
	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "type", "status", "message", "scope",
		      "bucket", "ambient", "pgid", (json_int_t)g->pgid, "generation",
		      (json_int_t)g->generation, "trace", g->path);
	probe_emit(g->probe, o);
}

static void on_loss(struct probe_gen *g, const Mcpt__Loss *l)
{
	const ProtobufCEnumValue *ev =
		protobuf_c_enum_descriptor_get_value(&mcpt__loss_source__descriptor, l->src);
	char reason[64] = "unknown";
	json_t *o = json_pack("{s:s, s:I}", "type", "drop", "count", (json_int_t)l->delta);

	if (l->src == MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL)
		snprintf(reason, sizeof(reason), "ring_buffer_full");
	else if (ev)
		for (size_t i = 0; i + 1 < sizeof(reason) && (i == 0 || ev->name[i - 1]); i++)
			reason[i] =
				(char)(ev->name[i] >= 'A' && ev->name[i] <= 'Z' ? ev->name[i] + 32
										: ev->name[i]);
	json_object_set_new(o, "reason", json_string(reason));
	json_object_set_new(o, "generation", json_integer(g->generation));
	probe_emit(g->probe, o);
}

int probe_on_record(void *ctx, const struct replay_rec *r)
{
	struct probe_gen *g = ctx;
	struct probe *p = g->probe;

	if (!r->msg && r->rec->type != MCPT_T_SEAL)
		return 0;
	pthread_mutex_lock(&p->lock);
	switch (r->rec->type) {
	case MCPT_T_HEADER:
		on_header(g, (const Mcpt__Header *)r->msg);
		break;
	case MCPT_T_MARK:
		on_mark(g, (const Mcpt__Mark *)r->msg);
		break;
	case MCPT_T_EVENT:
		on_event(g, (const Mcpt__Event *)r->msg);
		break;
	case MCPT_T_STDIO:
		ack_before(g, ((const Mcpt__StdioFrame *)r->msg)->ts, 0);
		break;
	case MCPT_T_LOSS:
		on_loss(g, (const Mcpt__Loss *)r->msg);
		break;
	case MCPT_T_PROC: {
		const Mcpt__ProcInfo *pi = (const Mcpt__ProcInfo *)r->msg;

		json_t *c = comm_get(g, pi->pid); /* /proc names it while it lives */

		if (!json_string_length(c) && pi->exe.len)
			comm_set(g, pi->pid, pi->exe.data, pi->exe.len);
		json_decref(c);
		break;
	}
	case MCPT_T_SEAL:
		if (r->statement && r->statement->clock)
			ack_before(g, r->statement->clock->boottime_before_ns, 0);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}
