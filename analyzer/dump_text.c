/*
 * dump_text.c - the text form of dump (see dump.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "event.h"
#include "events.h"
#include "strbuf.h"
#include "traceinfo.h"

#define STDIO_TEXT_MAX 160 /* bytes of channel data shown per line in text */

const char *dump_type_name(enum mcpt_type t)
{
	switch (t) {
	case MCPT_T_HEADER:
		return "header";
	case MCPT_T_EVENT:
		return "event";
	case MCPT_T_MARK:
		return "mark";
	case MCPT_T_STDIO:
		return "stdio";
	case MCPT_T_LOSS:
		return "loss";
	case MCPT_T_PROC:
		return "proc";
	case MCPT_T_NOTE:
		return "note";
	case MCPT_T_PATH_DEF:
		return "pathdef";
	case MCPT_T_TASK_DEF:
		return "taskdef";
	case MCPT_T_EPOCH_CERT:
		return "epoch-cert";
	case MCPT_T_SEAL:
		return "seal";
	}
	return NULL;
}

/* key="escaped bytes", skipped when empty. */
static void put_bytes(struct strbuf *sb, const char *key, const uint8_t *p, size_t n)
{
	if (!n)
		return;
	strbuf_putc(sb, ' ');
	strbuf_puts(sb, key);
	strbuf_put(sb, "=\"", 2);
	strbuf_escape(sb, p, n, ESC_QUOTE);
	strbuf_putc(sb, '"');
}

static void put_bin(struct strbuf *sb, const char *key, const ProtobufCBinaryData *b)
{
	put_bytes(sb, key, b->data, b->data ? b->len : 0);
}

static void put_argv_list(struct strbuf *sb, const ProtobufCBinaryData *argv, size_t n)
{
	strbuf_puts(sb, " argv=[");
	for (size_t i = 0; i < n; i++) {
		strbuf_puts(sb, i ? " \"" : "\"");
		strbuf_escape(sb, argv[i].data, argv[i].data ? argv[i].len : 0, ESC_QUOTE);
		strbuf_putc(sb, '"');
	}
	strbuf_putc(sb, ']');
}

static void header_target(struct strbuf *sb, const Mcpt__Target *t)
{
	strbuf_printf(sb, "\n  target pid=%u uid=%u gid=%u%s", t->pid, t->uid, t->gid,
		      t->attached ? " attached" : "");
	put_bin(sb, "user", &t->user);
	put_bin(sb, "home", &t->home);
	if (t->passwd_home.len && (t->passwd_home.len != t->home.len ||
				   memcmp(t->passwd_home.data, t->home.data, t->home.len)))
		put_bin(sb, "passwd_home", &t->passwd_home);
	put_bin(sb, "cwd", &t->cwd);
	put_bin(sb, "tmp", &t->tmp);
	put_bin(sb, "exe", &t->exe);
	put_argv_list(sb, t->argv, t->n_argv);
}

/* key=value for a protobuf string (unquoted: these are names this project defines, but the
 * bytes come from the file, so they are escaped like any other). */
static void put_str(struct strbuf *sb, const char *key, const char *s)
{
	strbuf_printf(sb, " %s=", key);
	if (s)
		strbuf_escape(sb, (const uint8_t *)s, strlen(s), 0);
}

static void header_text(struct strbuf *sb, const Mcpt__Header *h)
{
	char wall[48];

	strbuf_puts(sb, " trace=");
	trace_hex(sb, &h->trace_id);
	strbuf_printf(sb, " format=%u.%u", h->format_major, h->format_minor);
	put_str(sb, "schema", h->schema_id);
	if (h->signer) {
		strbuf_puts(sb, " key=");
		trace_key_id(sb, &h->signer->key_id);
		strbuf_printf(sb, " signing=%s",
			      h->signer->mode == MCPT__SIGN_MODE__SIGN_STATIC ? "static"
			      : h->signer->mode == MCPT__SIGN_MODE__SIGN_FS   ? "fs"
									      : "none");
	}
	if (h->kernel) {
		strbuf_puts(sb, "\n  kernel");
		put_bin(sb, "sysname", &h->kernel->sysname);
		put_bin(sb, "release", &h->kernel->release);
		put_bin(sb, "machine", &h->kernel->machine);
		strbuf_printf(sb, " io_uring_disabled=%d", h->kernel->io_uring_disabled);
	}
	if (h->host) {
		strbuf_puts(sb, "\n  host");
		put_bin(sb, "name", &h->host->hostname);
		put_bin(sb, "os", &h->host->os_id);
		put_bin(sb, "version", &h->host->os_version);
	}
	strbuf_puts(sb, "\n ");
	if (h->boot_id.len) {
		strbuf_puts(sb, " boot=");
		trace_hex(sb, &h->boot_id);
	}
	strbuf_printf(sb, " clock=%s",
		      h->event_clock == MCPT__CLOCK_ID__CLOCK_MONOTONIC ? "monotonic" : "boottime");
	if (h->clock && trace_wallclock(h, h->clock->boottime_before_ns, wall, sizeof(wall)))
		strbuf_printf(sb, " started=%s", wall);
	if (h->collector) {
		strbuf_puts(sb, "\n  collector");
		put_str(sb, "name", h->collector->name);
		put_str(sb, "version", h->collector->version);
		strbuf_printf(sb, " pid=%u", h->collector->pid);
		put_str(sb, "stdio", h->collector->stdio_capture);
	}
	if (h->target)
		header_target(sb, h->target);
}

static void event_result(struct strbuf *sb, const struct ev_view *v)
{
	char e[24];

	if (v->flags & MW_F_ENTRY)
		strbuf_puts(sb, " entry");
	else if (v->flags & MW_F_UNFINISHED)
		strbuf_puts(sb, " unfinished");
	else if (v->result == RES_PENDING && v->ret) /* a non-blocking connect under way */
		strbuf_printf(sb, " ret=%lld EINPROGRESS", (long long)v->ret);
	else if (v->result == RES_PENDING)
		return; /* a record without a result (foreign_abi: made at entry) */
	else if (v->result == RES_FAILURE)
		strbuf_printf(sb, " ret=%lld %s", (long long)v->ret,
			      event_errno_name(v->err, e, sizeof(e)));
	else if (v->family != FAM_PROCESS || v->ret) {
		strbuf_puts(sb, " ret=");
		strbuf_puti(sb, v->ret);
	}
}

static const char *sock_type_name(int t)
{
	static const char *const names[] = {NULL, "stream", "dgram", "raw", "rdm", "seqpacket"};

	return t > 0 && t < 6 ? names[t] : NULL;
}

static void event_sock(struct strbuf *sb, const struct ev_view *v)
{
	const char *type = sock_type_name(v->sock_type & 0xf);
	const struct dns_query *q = event_dns(v);

	if (v->family != FAM_NETWORK && !v->has_addr) /* an io_uring request's address */
		return;
	if (v->has_addr || v->has_peer)
		strbuf_printf(sb, " fd=%lld", (long long)v->fd);
	if (event_addr(v)) {
		strbuf_puts(sb, " addr=");
		sockaddr_format(sb, event_addr(v));
	}
	if (event_peer(v)) {
		strbuf_puts(sb, " peer=");
		sockaddr_format(sb, event_peer(v));
	}
	if (type)
		strbuf_printf(sb, " type=%s", type);
	if (q) {
		const char *t = dns_type_name(q->qtype);

		put_bytes(sb, "dns", (const uint8_t *)q->name, q->name_len);
		if (t)
			strbuf_printf(sb, " qtype=%s", t);
		else
			strbuf_printf(sb, " qtype=%u", q->qtype);
	}
	put_bytes(sb, "payload", v->payload.p,
		  v->payload.n > STDIO_TEXT_MAX ? STDIO_TEXT_MAX : v->payload.n);
}

/* Raw arguments of operations this dump does not decode further. */
static void event_args(struct strbuf *sb, const Mcpt__Event *e)
{
	for (size_t i = 0; i < e->n_args; i++)
		strbuf_printf(sb, "%s%lld", i ? "," : " args=", (long long)e->args[i]);
}

static void event_details(struct strbuf *sb, const struct ev_view *v)
{
	switch (v->op) {
	case MCPT__OP__OP_FORK:
		strbuf_printf(sb, " child=%u/%u%s", v->child_pid, v->child_tid,
			      v->thread ? " thread" : "");
		break;
	case MCPT__OP__OP_EXIT:
		strbuf_printf(sb, " status=%lld%s", (long long)v->exit_status,
			      v->group_dead ? " group" : "");
		break;
	default:
		break;
	}
	event_sock(sb, v);
	put_bytes(sb, "path", v->path.p, v->path.n);
	put_bytes(sb, "abs", v->abs.p, v->abs.n);
	put_bytes(sb, "opened", v->opened.p, v->opened.n);
	put_bytes(sb, v->op == MCPT__OP__OP_EXEC ? "interp" : "path2", v->path2.p, v->path2.n);
	put_bytes(sb, "abs2", v->abs2.p, v->abs2.n);
	if (v->has_open) {
		strbuf_puts(sb, " flags=");
		event_format_open_flags(sb, v->open_flags);
		if (v->open_flags & 0100) /* O_CREAT: the mode matters */
			strbuf_printf(sb, " mode=0%o", v->mode);
	}
	if (v->op == MCPT__OP__OP_EXEC) {
		strbuf_puts(sb, " argv=[");
		event_format_argv(sb, &v->argv, true);
		strbuf_putc(sb, ']');
	}
	if (!v->has_open && !v->has_addr && !v->has_peer && v->op != MCPT__OP__OP_EXEC &&
	    v->op != MCPT__OP__OP_FORK && v->op != MCPT__OP__OP_EXIT)
		event_args(sb, v->raw);
}

static void event_text(struct strbuf *sb, const Mcpt__Event *e)
{
	struct ev_view v;
	char ts[32];

	event_decode(&v, e);
	trace_ts(ts, sizeof(ts), v.ts);
	strbuf_putc(sb, ' '); /* " %s %u/%u %s" */
	strbuf_puts(sb, ts);
	strbuf_putc(sb, ' ');
	strbuf_putu(sb, v.pid);
	strbuf_putc(sb, '/');
	strbuf_putu(sb, v.tid);
	strbuf_putc(sb, ' ');
	strbuf_puts(sb, v.op_name);
	event_result(sb, &v);
	event_details(sb, &v);
	if (v.flags & ~(uint32_t)(MW_F_ENTRY | MW_F_UNFINISHED | MW_F_THREAD))
		strbuf_printf(sb, " eflags=0x%x", v.flags);
	strbuf_puts(sb, " seq=");
	strbuf_putu(sb, v.seq);
}

static void mark_text(struct strbuf *sb, const Mcpt__Mark *m)
{
	char ts[32];
	const ProtobufCEnumValue *ph =
		protobuf_c_enum_descriptor_get_value(&mcpt__mark__phase__descriptor, m->phase);
	const ProtobufCEnumValue *src =
		protobuf_c_enum_descriptor_get_value(&mcpt__mark__source__descriptor, m->source);

	trace_ts(ts, sizeof(ts), m->ts);
	strbuf_printf(sb, " %s %u/%u phase=%s source=%s", ts, m->pid, m->tid, ph ? ph->name : "?",
		      src ? src->name : "?");
	put_bin(sb, "call", &m->call_id);
	put_bin(sb, "id", &m->jsonrpc_id);
	put_bin(sb, "method", &m->method);
	put_bin(sb, "tool", &m->tool);
	put_bin(sb, "raw", &m->raw);
	if (m->flags & 1)
		strbuf_puts(sb, " cut");
}

static void stdio_text(struct strbuf *sb, const Mcpt__StdioFrame *s)
{
	char ts[32];
	size_t n = s->data.data ? s->data.len : 0;

	trace_ts(ts, sizeof(ts), s->ts);
	strbuf_printf(sb, " %s %u/%u %s fd=%d off=%llu len=%zu", ts, s->pid, s->tid,
		      s->dir == MCPT__STDIO_FRAME__DIR__READ	? "read"
		      : s->dir == MCPT__STDIO_FRAME__DIR__WRITE ? "write"
								: "?",
		      s->fd, (unsigned long long)s->stream_offset, n);
	if (s->orig_len > n)
		strbuf_printf(sb, " orig_len=%u", s->orig_len);
	if (s->flags & MW_F_GAP)
		strbuf_printf(sb, " gap=%llu", (unsigned long long)s->gap_len);
	if (s->flags & MW_F_TAMPERED)
		strbuf_puts(sb, " tampered");
	if (s->flags & MW_F_UNCHECKED)
		strbuf_puts(sb, " unchecked");
	put_bytes(sb, "data", s->data.data, n > STDIO_TEXT_MAX ? STDIO_TEXT_MAX : n);
	if (n > STDIO_TEXT_MAX)
		strbuf_puts(sb, "...");
}

static void loss_text(struct strbuf *sb, const Mcpt__Loss *l)
{
	char ts[32];
	const ProtobufCEnumValue *src =
		protobuf_c_enum_descriptor_get_value(&mcpt__loss_source__descriptor, l->src);

	trace_ts(ts, sizeof(ts), l->ts);
	strbuf_printf(sb, " %s src=%s cpu=%u delta=%llu cumulative=%llu seq=%llu..%llu", ts,
		      src ? src->name : "?", l->cpu, (unsigned long long)l->delta,
		      (unsigned long long)l->cumulative, (unsigned long long)l->first_seq,
		      (unsigned long long)l->last_seq);
}

static void proc_text(struct strbuf *sb, const Mcpt__ProcInfo *p)
{
	char ts[32];
	const ProtobufCEnumValue *k =
		protobuf_c_enum_descriptor_get_value(&mcpt__proc_info__kind__descriptor, p->kind);

	trace_ts(ts, sizeof(ts), p->ts);
	strbuf_printf(sb, " %s kind=%s pid=%u ppid=%u", ts, k ? k->name : "?", p->pid, p->ppid);
	if (p->kind != MCPT__PROC_INFO__KIND__ALIVE_AT_END) /* not known at the end (trace.proto) */
		strbuf_printf(sb, " uid=%u", p->uid);
	else if (p->killed)
		strbuf_puts(sb, " killed");
	put_bin(sb, "exe", &p->exe);
	put_argv_list(sb, p->argv, p->n_argv);
}

static void note_text(struct strbuf *sb, const Mcpt__Annotation *n)
{
	char ts[32];

	trace_ts(ts, sizeof(ts), n->ts);
	strbuf_printf(sb, " %s kind=", ts);
	strbuf_escape(sb, (const uint8_t *)(n->kind ? n->kind : ""), strlen(n->kind ? n->kind : ""),
		      0);
	put_bin(sb, "text", &n->text);
}

/* A value-table definition; the events after it show the value itself, resolved by replay. */
static void pathdef_text(struct strbuf *sb, const Mcpt__PathDef *d)
{
	strbuf_puts(sb, " id=");
	strbuf_putu(sb, d->id);
	put_bin(sb, "value", &d->value);
}

/* A task-table definition; the events after it show the five fields, resolved by replay. */
static void taskdef_text(struct strbuf *sb, const Mcpt__TaskDef *d)
{
	strbuf_printf(sb, " id=%u pid=%u tid=%u pstart=%llu uid=%u gid=%u", d->id, d->pid, d->tid,
		      (unsigned long long)d->pstart, d->uid, d->gid);
}

static void seal_text(struct strbuf *sb, const Mcpt__Seal *s, const Mcpt__SealStatement *st)
{
	static const char *const flag_names[] = {"final", "heartbeat", "mark", "signal", "rotate"};

	if (!st) {
		strbuf_printf(sb, " (statement malformed, %zu bytes)", s->statement.len);
		return;
	}
	strbuf_printf(sb, " #%llu records=%llu+%llu leaves=%llu",
		      (unsigned long long)st->seal_index, (unsigned long long)st->first_record,
		      (unsigned long long)st->record_count, (unsigned long long)st->leaf_count);
	for (unsigned i = 0; i < 5; i++)
		if (st->flags & (1u << i))
			strbuf_printf(sb, " %s", flag_names[i]);
	if (st->flags & MCPT_SEAL_FINAL) {
		const ProtobufCEnumValue *er = protobuf_c_enum_descriptor_get_value(
			&mcpt__end_reason__descriptor, (int)st->end_reason);

		strbuf_printf(sb, " end=%s", er ? er->name : "?");
	}
	strbuf_puts(sb, " key=");
	trace_key_id(sb, &s->key_id);
}

static void body_text(struct strbuf *sb, const struct replay_rec *r)
{
	const ProtobufCMessage *m = r->msg;

	switch (r->rec->type) {
	case MCPT_T_HEADER:
		header_text(sb, (const Mcpt__Header *)m);
		break;
	case MCPT_T_EVENT:
		event_text(sb, (const Mcpt__Event *)m);
		break;
	case MCPT_T_MARK:
		mark_text(sb, (const Mcpt__Mark *)m);
		break;
	case MCPT_T_STDIO:
		stdio_text(sb, (const Mcpt__StdioFrame *)m);
		break;
	case MCPT_T_LOSS:
		loss_text(sb, (const Mcpt__Loss *)m);
		break;
	case MCPT_T_PROC:
		proc_text(sb, (const Mcpt__ProcInfo *)m);
		break;
	case MCPT_T_NOTE:
		note_text(sb, (const Mcpt__Annotation *)m);
		break;
	case MCPT_T_PATH_DEF:
		pathdef_text(sb, (const Mcpt__PathDef *)m);
		break;
	case MCPT_T_TASK_DEF:
		taskdef_text(sb, (const Mcpt__TaskDef *)m);
		break;
	case MCPT_T_SEAL:
		seal_text(sb, (const Mcpt__Seal *)m, r->statement);
		break;
	case MCPT_T_EPOCH_CERT:
		strbuf_printf(sb, " len=%zu", r->rec->body_len);
		break;
	}
}

int dump_text(FILE *out, const struct replay_rec *r, struct strbuf *sb)
{
	const char *name = dump_type_name(r->rec->type);
	int err;

	strbuf_reset(sb);
	strbuf_putu(sb, r->rec->index);
	strbuf_putc(sb, ' ');
	if (!name)
		strbuf_printf(sb, "type=%u len=%zu (unknown type)", (unsigned)r->rec->type,
			      r->rec->body_len);
	else if (r->malformed)
		strbuf_printf(sb, "%s (malformed, %zu bytes)", name, r->rec->body_len);
	else {
		strbuf_puts(sb, name);
		body_text(sb, r);
	}
	strbuf_putc(sb, '\n');
	err = strbuf_error(sb);
	if (!err)
		fwrite(sb->buf, 1, sb->len, out);
	return err;
}
