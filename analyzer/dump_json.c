/*
 * dump_json.c - the JSON Lines form of dump (see dump.h). Field names follow trace.proto;
 * decoded values (op names, open flags, addresses, argv lists) sit beside the raw numbers.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "event.h"
#include "events.h"
#include "jsonw.h"
#include "strbuf.h"
#include "traceinfo.h"

/* Byte strings, hex strings and names are left out when empty, as before (jansson objects
 * built with the same skips gave the same lines). */
static void put_bin(struct jsonl *j, const char *key, const ProtobufCBinaryData *b)
{
	if (b->len && b->data)
		jsonl_bytes(j, key, b->data, b->len);
}

static void put_hex(struct jsonl *j, const char *key, const ProtobufCBinaryData *b,
		    struct strbuf *sb)
{
	if (!b->len)
		return;
	strbuf_reset(sb);
	if (!strcmp(key, "key_id"))
		trace_key_id(sb, b);
	else
		trace_hex(sb, b);
	jsonl_strn(j, key, strbuf_str(sb) ?: "", sb->len);
}

static void put_str(struct jsonl *j, const char *key, const char *s)
{
	if (s && *s)
		jsonl_bytes(j, key, (const uint8_t *)s, strlen(s));
}

static void put_enum(struct jsonl *j, const char *key, const ProtobufCEnumDescriptor *d, int v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);

	if (ev)
		jsonl_str(j, key, ev->name);
	else
		jsonl_int(j, key, v);
}

static void argv_list(struct jsonl *j, const char *key, const ProtobufCBinaryData *argv, size_t n)
{
	jsonl_open(j, key, '[');
	for (size_t i = 0; i < n; i++)
		jsonl_bytes(j, NULL, argv[i].data, argv[i].data ? argv[i].len : 0);
	jsonl_close(j);
}

static void target_json(struct jsonl *j, const Mcpt__Target *t)
{
	jsonl_open(j, "target", '{');
	jsonl_int(j, "pid", t->pid);
	jsonl_u64(j, "pstart", t->pstart);
	jsonl_int(j, "uid", t->uid);
	jsonl_int(j, "gid", t->gid);
	put_bin(j, "user", &t->user);
	put_bin(j, "home", &t->home);
	put_bin(j, "passwd_home", &t->passwd_home);
	put_bin(j, "cwd", &t->cwd);
	put_bin(j, "tmp", &t->tmp);
	put_bin(j, "exe", &t->exe);
	argv_list(j, "argv", t->argv, t->n_argv);
	jsonl_bool(j, "attached", t->attached);
	jsonl_close(j);
}

static void header_json(struct jsonl *j, const Mcpt__Header *h, struct strbuf *sb)
{
	char wall[48];

	put_hex(j, "trace_id", &h->trace_id, sb);
	jsonl_open(j, "format", '[');
	jsonl_int(j, NULL, h->format_major);
	jsonl_int(j, NULL, h->format_minor);
	jsonl_close(j);
	put_str(j, "schema_id", h->schema_id);
	if (h->signer) {
		put_hex(j, "key_id", &h->signer->key_id, sb);
		put_enum(j, "sign_mode", &mcpt__sign_mode__descriptor, h->signer->mode);
	}
	if (h->kernel) {
		put_bin(j, "kernel_release", &h->kernel->release);
		put_bin(j, "kernel_machine", &h->kernel->machine);
	}
	if (h->host)
		put_bin(j, "hostname", &h->host->hostname);
	put_hex(j, "boot_id", &h->boot_id, sb);
	put_enum(j, "event_clock", &mcpt__clock_id__descriptor, h->event_clock);
	if (h->clock && trace_wallclock(h, h->clock->boottime_before_ns, wall, sizeof(wall)))
		jsonl_str(j, "started", wall);
	if (h->collector) {
		put_str(j, "collector", h->collector->name);
		put_str(j, "collector_version", h->collector->version);
		jsonl_int(j, "collector_pid", h->collector->pid);
		argv_list(j, "collector_notes", h->collector->notes, h->collector->n_notes);
	}
	if (h->target)
		target_json(j, h->target);
}

static void event_extra(struct jsonl *j, const struct ev_view *v, struct strbuf *sb)
{
	if (v->has_open) {
		strbuf_reset(sb);
		event_format_open_flags(sb, v->open_flags);
		jsonl_strn(j, "open_flags", strbuf_str(sb) ?: "", sb->len);
		jsonl_bool(j, "write", v->write_intent);
	}
	if (event_addr(v)) {
		strbuf_reset(sb);
		sockaddr_format(sb, event_addr(v));
		jsonl_strn(j, "addr", strbuf_str(sb) ?: "", sb->len);
		jsonl_str(j, "af", sockaddr_kind_name(event_addr(v)->kind));
	}
	if (event_peer(v)) {
		strbuf_reset(sb);
		sockaddr_format(sb, event_peer(v));
		jsonl_strn(j, "peer", strbuf_str(sb) ?: "", sb->len);
	}
	if (v->payload.n)
		jsonl_bytes(j, "payload", v->payload.p, v->payload.n);
	if (event_dns(v)) {
		jsonl_open(j, "dns", '{');
		jsonl_bytes(j, "name", (const uint8_t *)event_dns(v)->name, event_dns(v)->name_len);
		jsonl_int(j, "qtype", event_dns(v)->qtype);
		jsonl_close(j);
	}
	if (event_differs(v))
		jsonl_bool(j, "differs", true);
	/* DATA that no decoder above shows (a task name, memfd name, fs type, module
	 * parameters, gids, capability sets): its bytes, escaped */
	if (!v->has_addr && v->op != MCPT__OP__OP_EXEC && v->raw->data.len)
		put_bin(j, "data", &v->raw->data);
	if (v->op == MCPT__OP__OP_EXEC) {
		struct ev_bytes x;
		size_t pos = 0;

		jsonl_open(j, "argv", '[');
		while (event_argv_next(&v->argv, &pos, &x))
			jsonl_bytes(j, NULL, x.p, x.n);
		jsonl_close(j);
	}
	if (v->op == MCPT__OP__OP_FORK) {
		jsonl_open(j, "child", '{');
		jsonl_int(j, "pid", (int)v->child_pid);
		jsonl_int(j, "tid", (int)v->child_tid);
		jsonl_u64(j, "pstart", v->child_pstart);
		jsonl_bool(j, "thread", v->thread);
		jsonl_close(j);
	}
	if (v->op == MCPT__OP__OP_FORK && v->raw->child_task) /* defined the child's task */
		jsonl_bool(j, "child_task", true);
}

static void event_json(struct jsonl *j, const Mcpt__Event *e, struct strbuf *sb)
{
	struct ev_view v;
	char buf[24];

	event_decode(&v, e);
	jsonl_u64(j, "seq", v.seq);
	jsonl_u64(j, "ts", v.ts);
	jsonl_int(j, "pid", v.pid);
	jsonl_int(j, "tid", v.tid);
	jsonl_u64(j, "pstart", v.pstart);
	jsonl_int(j, "uid", v.uid);
	jsonl_str(j, "op", v.op_name);
	jsonl_str(j, "family", event_family_name(v.family));
	jsonl_int(j, "ret", v.ret);
	jsonl_str(j, "result", event_result_name(v.result));
	if (v.result == RES_FAILURE)
		jsonl_str(j, "errno", event_errno_name(v.err, buf, sizeof(buf)));
	jsonl_int(j, "flags", v.flags);
	put_bin(j, "path", &e->path);
	put_bin(j, "abs_path", &e->abs_path);
	put_bin(j, "opened_path", &e->opened_path);
	put_bin(j, "path2", &e->path2);
	put_bin(j, "abs_path2", &e->abs_path2);
	if (e->dev || e->ino) {
		jsonl_u64(j, "dev", e->dev);
		jsonl_u64(j, "ino", e->ino);
	}
	if (e->n_args) {
		jsonl_open(j, "args", '[');
		for (size_t i = 0; i < e->n_args; i++)
			jsonl_int(j, NULL, e->args[i]);
		jsonl_close(j);
	}
	event_extra(j, &v, sb);
}

static void mark_json(struct jsonl *j, const Mcpt__Mark *m)
{
	jsonl_u64(j, "ts", m->ts);
	jsonl_int(j, "pid", m->pid);
	jsonl_int(j, "tid", m->tid);
	put_enum(j, "phase", &mcpt__mark__phase__descriptor, m->phase);
	put_enum(j, "source", &mcpt__mark__source__descriptor, m->source);
	put_bin(j, "call_id", &m->call_id);
	put_bin(j, "jsonrpc_id", &m->jsonrpc_id);
	put_bin(j, "method", &m->method);
	put_bin(j, "tool", &m->tool);
	put_bin(j, "raw", &m->raw);
	jsonl_bool(j, "cut", m->flags & 1);
}

static void stdio_json(struct jsonl *j, const Mcpt__StdioFrame *s)
{
	jsonl_u64(j, "seq", s->seq);
	jsonl_u64(j, "ts", s->ts);
	jsonl_int(j, "pid", s->pid);
	jsonl_int(j, "tid", s->tid);
	jsonl_int(j, "fd", s->fd);
	put_enum(j, "dir", &mcpt__stdio_frame__dir__descriptor, s->dir);
	jsonl_u64(j, "stream_offset", s->stream_offset);
	jsonl_int(j, "orig_len", s->orig_len);
	jsonl_int(j, "chunk", s->chunk);
	jsonl_bool(j, "last", s->last);
	jsonl_int(j, "flags", s->flags);
	if (s->flags & MW_F_GAP)
		jsonl_u64(j, "gap_len", s->gap_len);
	jsonl_bytes(j, "data", s->data.data, s->data.data ? s->data.len : 0);
}

static void loss_json(struct jsonl *j, const Mcpt__Loss *l)
{
	jsonl_u64(j, "ts", l->ts);
	put_enum(j, "src", &mcpt__loss_source__descriptor, l->src);
	jsonl_int(j, "cpu", l->cpu);
	jsonl_u64(j, "delta", l->delta);
	jsonl_u64(j, "cumulative", l->cumulative);
	jsonl_u64(j, "first_seq", l->first_seq);
	jsonl_u64(j, "last_seq", l->last_seq);
}

static void proc_json(struct jsonl *j, const Mcpt__ProcInfo *p)
{
	jsonl_u64(j, "ts", p->ts);
	put_enum(j, "kind", &mcpt__proc_info__kind__descriptor, p->kind);
	jsonl_int(j, "pid", p->pid);
	jsonl_u64(j, "pstart", p->pstart);
	jsonl_int(j, "ppid", p->ppid);
	if (p->kind == MCPT__PROC_INFO__KIND__ALIVE_AT_END) {
		jsonl_null(j, "uid"); /* not known at the end (trace.proto) */
		jsonl_bool(j, "killed", p->killed);
	} else {
		jsonl_int(j, "uid", p->uid);
	}
	put_bin(j, "exe", &p->exe);
	argv_list(j, "argv", p->argv, p->n_argv);
}

static void note_json(struct jsonl *j, const Mcpt__Annotation *n)
{
	jsonl_u64(j, "ts", n->ts);
	put_str(j, "kind", n->kind);
	put_bin(j, "text", &n->text);
}

static void pathdef_json(struct jsonl *j, const Mcpt__PathDef *d)
{
	jsonl_int(j, "id", d->id);
	put_bin(j, "value", &d->value);
}

static void taskdef_json(struct jsonl *j, const Mcpt__TaskDef *d)
{
	jsonl_int(j, "id", d->id);
	jsonl_int(j, "pid", d->pid);
	jsonl_int(j, "tid", d->tid);
	jsonl_u64(j, "pstart", d->pstart);
	jsonl_int(j, "uid", d->uid);
	jsonl_int(j, "gid", d->gid);
}

static void seal_json(struct jsonl *j, const Mcpt__Seal *s, const Mcpt__SealStatement *st,
		      struct strbuf *sb)
{
	put_hex(j, "key_id", &s->key_id, sb);
	if (!st) {
		jsonl_bool(j, "statement_malformed", true);
		return;
	}
	jsonl_u64(j, "seal_index", st->seal_index);
	jsonl_u64(j, "first_record", st->first_record);
	jsonl_u64(j, "record_count", st->record_count);
	jsonl_u64(j, "leaf_count", st->leaf_count);
	jsonl_int(j, "flags", st->flags);
	jsonl_bool(j, "final", st->flags & MCPT_SEAL_FINAL);
	if (st->flags & MCPT_SEAL_FINAL)
		put_enum(j, "end_reason", &mcpt__end_reason__descriptor, (int)st->end_reason);
	put_hex(j, "segment_root", &st->segment_root, sb);
}

static void body_json(struct jsonl *j, const struct replay_rec *r, struct strbuf *sb)
{
	const ProtobufCMessage *m = r->msg;

	switch (r->rec->type) {
	case MCPT_T_HEADER:
		header_json(j, (const Mcpt__Header *)m, sb);
		return;
	case MCPT_T_EVENT:
		event_json(j, (const Mcpt__Event *)m, sb);
		return;
	case MCPT_T_MARK:
		mark_json(j, (const Mcpt__Mark *)m);
		return;
	case MCPT_T_STDIO:
		stdio_json(j, (const Mcpt__StdioFrame *)m);
		return;
	case MCPT_T_LOSS:
		loss_json(j, (const Mcpt__Loss *)m);
		return;
	case MCPT_T_PROC:
		proc_json(j, (const Mcpt__ProcInfo *)m);
		return;
	case MCPT_T_NOTE:
		note_json(j, (const Mcpt__Annotation *)m);
		return;
	case MCPT_T_PATH_DEF:
		pathdef_json(j, (const Mcpt__PathDef *)m);
		return;
	case MCPT_T_TASK_DEF:
		taskdef_json(j, (const Mcpt__TaskDef *)m);
		return;
	case MCPT_T_SEAL:
		seal_json(j, (const Mcpt__Seal *)m, r->statement, sb);
		return;
	case MCPT_T_EPOCH_CERT:
		return;
	}
}

/* The record's object at the end of line (no newline), with scratch for escaped (0) and
 * formatted (1) values. Returns 0 or -ENOMEM. */
static int record_line(struct strbuf *line, const struct replay_rec *r, struct strbuf scratch[2])
{
	const char *name = dump_type_name(r->rec->type);
	struct jsonl j;

	jsonl_begin(&j, line, &scratch[0]);
	jsonl_u64(&j, "index", r->rec->index);
	jsonl_u64(&j, "offset", r->rec->offset);
	if (name)
		jsonl_str(&j, "type", name);
	else
		jsonl_int(&j, "type", r->rec->type);
	jsonl_u64(&j, "len", r->rec->body_len);
	if (r->malformed || !name)
		jsonl_bool(&j, r->malformed ? "malformed" : "unknown_type", true);
	else
		body_json(&j, r, &scratch[1]);
	return jsonl_end(&j) ?: strbuf_error(&scratch[1]);
}

json_t *dump_json_object(const struct replay_rec *r)
{
	struct strbuf line = STRBUF_INIT, scratch[2] = {STRBUF_INIT, STRBUF_INIT};
	json_t *o = NULL;

	if (!record_line(&line, r, scratch))
		o = json_loadb(line.buf, line.len, 0, NULL);
	strbuf_fini(&line);
	strbuf_fini(&scratch[0]);
	strbuf_fini(&scratch[1]);
	return o;
}

/* Written member by member into sb (jsonw.h, jsonl: the bytes jansson's compact dump of the
 * same object gives, without building it), then one write. */
int dump_json(FILE *out, const struct replay_rec *r, struct strbuf *sb, struct strbuf *scratch)
{
	int err;

	strbuf_reset(sb);
	err = record_line(sb, r, scratch);
	strbuf_putc(sb, '\n');
	err = err ?: strbuf_error(sb);
	if (err)
		return err;
	fwrite(sb->buf, 1, sb->len, out);
	return 0;
}
