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

static int put_bin(json_t *o, const char *key, const ProtobufCBinaryData *b)
{
	if (!b->len || !b->data)
		return 0;
	return json_put(o, key, json_bytes(b->data, b->len));
}

static int put_hex(json_t *o, const char *key, const ProtobufCBinaryData *b)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (!b->len)
		return 0;
	if (!strcmp(key, "key_id"))
		trace_key_id(&sb, b);
	else
		trace_hex(&sb, b);
	err = strbuf_str(&sb) ? json_put(o, key, json_string(strbuf_str(&sb))) : -ENOMEM;
	strbuf_fini(&sb);
	return err;
}

static int put_str(json_t *o, const char *key, const char *s)
{
	if (!s || !*s)
		return 0;
	return json_put(o, key, json_bytes((const uint8_t *)s, strlen(s)));
}

static int put_enum(json_t *o, const char *key, const ProtobufCEnumDescriptor *d, int v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);

	return ev ? json_put(o, key, json_string(ev->name)) : json_put(o, key, json_integer(v));
}

static json_t *argv_list(const ProtobufCBinaryData *argv, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		if (json_array_append_new(
			    a, json_bytes(argv[i].data, argv[i].data ? argv[i].len : 0))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static int target_json(json_t *o, const Mcpt__Target *t)
{
	json_t *j = json_object();
	int err;

	if (!j)
		return -ENOMEM;
	err = json_put(j, "pid", json_integer(t->pid));
	err = err ?: json_put(j, "pstart", json_u64(t->pstart));
	err = err ?: json_put(j, "uid", json_integer(t->uid));
	err = err ?: json_put(j, "gid", json_integer(t->gid));
	err = err ?: put_bin(j, "user", &t->user);
	err = err ?: put_bin(j, "home", &t->home);
	err = err ?: put_bin(j, "passwd_home", &t->passwd_home);
	err = err ?: put_bin(j, "cwd", &t->cwd);
	err = err ?: put_bin(j, "tmp", &t->tmp);
	err = err ?: put_bin(j, "exe", &t->exe);
	err = err ?: json_put(j, "argv", argv_list(t->argv, t->n_argv));
	err = err ?: json_put(j, "attached", json_boolean(t->attached));
	if (err) {
		json_decref(j);
		return err;
	}
	return json_put(o, "target", j);
}

static int header_json(json_t *o, const Mcpt__Header *h)
{
	char wall[48];
	int err;

	err = put_hex(o, "trace_id", &h->trace_id);
	err = err ?: json_put(o, "format", json_pack("[ii]", h->format_major, h->format_minor));
	err = err ?: put_str(o, "schema_id", h->schema_id);
	if (!err && h->signer) {
		err = put_hex(o, "key_id", &h->signer->key_id);
		err = err
			      ?: put_enum(o, "sign_mode", &mcpt__sign_mode__descriptor,
					  h->signer->mode);
	}
	if (!err && h->kernel) {
		err = put_bin(o, "kernel_release", &h->kernel->release);
		err = err ?: put_bin(o, "kernel_machine", &h->kernel->machine);
	}
	if (!err && h->host)
		err = put_bin(o, "hostname", &h->host->hostname);
	err = err ?: put_hex(o, "boot_id", &h->boot_id);
	err = err ?: put_enum(o, "event_clock", &mcpt__clock_id__descriptor, h->event_clock);
	if (!err && h->clock &&
	    trace_wallclock(h, h->clock->boottime_before_ns, wall, sizeof(wall)))
		err = json_put(o, "started", json_string(wall));
	if (!err && h->collector) {
		err = put_str(o, "collector", h->collector->name);
		err = err ?: put_str(o, "collector_version", h->collector->version);
		err = err ?: json_put(o, "collector_pid", json_integer(h->collector->pid));
		err = err
			      ?: json_put(o, "collector_notes",
					  argv_list(h->collector->notes, h->collector->n_notes));
	}
	if (!err && h->target)
		err = target_json(o, h->target);
	return err;
}

static json_t *argv_bytes(const struct ev_bytes *argv)
{
	json_t *a = json_array();
	struct ev_bytes x;
	size_t pos = 0;

	while (a && event_argv_next(argv, &pos, &x)) {
		if (json_array_append_new(a, json_bytes(x.p, x.n))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static int event_extra(json_t *o, const struct ev_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	int err = 0;

	if (v->has_open) {
		event_format_open_flags(&sb, v->open_flags);
		err = json_put(o, "open_flags", json_string(strbuf_str(&sb) ?: ""));
		err = err ?: json_put(o, "write", json_boolean(v->write_intent));
	}
	if (!err && event_addr(v)) {
		strbuf_reset(&sb);
		sockaddr_format(&sb, event_addr(v));
		err = json_put(o, "addr", json_string(strbuf_str(&sb) ?: ""));
		err = err
			      ?: json_put(o, "af",
					  json_string(sockaddr_kind_name(event_addr(v)->kind)));
	}
	if (!err && event_peer(v)) {
		strbuf_reset(&sb);
		sockaddr_format(&sb, event_peer(v));
		err = json_put(o, "peer", json_string(strbuf_str(&sb) ?: ""));
	}
	if (!err && v->payload.n)
		err = json_put(o, "payload", json_bytes(v->payload.p, v->payload.n));
	if (!err && event_dns(v))
		err = json_put(o, "dns",
			       json_pack("{s:o,s:i}", "name",
					 json_bytes((const uint8_t *)event_dns(v)->name,
						    event_dns(v)->name_len),
					 "qtype", (json_int_t)event_dns(v)->qtype));
	if (!err && event_differs(v))
		err = json_put(o, "differs", json_true());
	/* DATA that no decoder above shows (a task name, memfd name, fs type, module
	 * parameters, gids, capability sets): its bytes, escaped */
	if (!err && !v->has_addr && v->op != MCPT__OP__OP_EXEC && v->raw->data.len)
		err = put_bin(o, "data", &v->raw->data);
	if (!err && v->op == MCPT__OP__OP_EXEC)
		err = json_put(o, "argv", argv_bytes(&v->argv));
	if (!err && v->op == MCPT__OP__OP_FORK)
		err = json_put(o, "child",
			       json_pack("{s:i,s:i,s:o,s:b}", "pid", v->child_pid, "tid",
					 v->child_tid, "pstart", json_u64(v->child_pstart),
					 "thread", v->thread));
	if (!err && v->op == MCPT__OP__OP_FORK && v->raw->child_task) /* defined the child's task */
		err = json_put(o, "child_task", json_true());
	strbuf_fini(&sb);
	return err;
}

static int event_json(json_t *o, const Mcpt__Event *e)
{
	struct ev_view v;
	char buf[24];
	int err;

	event_decode(&v, e);
	err = json_put(o, "seq", json_u64(v.seq));
	err = err ?: json_put(o, "ts", json_u64(v.ts));
	err = err ?: json_put(o, "pid", json_integer(v.pid));
	err = err ?: json_put(o, "tid", json_integer(v.tid));
	err = err ?: json_put(o, "pstart", json_u64(v.pstart));
	err = err ?: json_put(o, "uid", json_integer(v.uid));
	err = err ?: json_put(o, "op", json_string(v.op_name));
	err = err ?: json_put(o, "family", json_string(event_family_name(v.family)));
	err = err ?: json_put(o, "ret", json_integer(v.ret));
	err = err ?: json_put(o, "result", json_string(event_result_name(v.result)));
	if (!err && v.result == RES_FAILURE)
		err = json_put(o, "errno", json_string(event_errno_name(v.err, buf, sizeof(buf))));
	err = err ?: json_put(o, "flags", json_integer(v.flags));
	err = err ?: put_bin(o, "path", &e->path);
	err = err ?: put_bin(o, "abs_path", &e->abs_path);
	err = err ?: put_bin(o, "opened_path", &e->opened_path);
	err = err ?: put_bin(o, "path2", &e->path2);
	err = err ?: put_bin(o, "abs_path2", &e->abs_path2);
	if (!err && (e->dev || e->ino))
		err = json_put(o, "dev", json_u64(e->dev)) ?: json_put(o, "ino", json_u64(e->ino));
	if (!err && e->n_args) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < e->n_args; i++) {
			if (json_array_append_new(a, json_integer(e->args[i]))) {
				json_decref(a);
				a = NULL;
			}
		}
		err = json_put(o, "args", a);
	}
	return err ?: event_extra(o, &v);
}

static int mark_json(json_t *o, const Mcpt__Mark *m)
{
	int err = json_put(o, "ts", json_u64(m->ts));

	err = err ?: json_put(o, "pid", json_integer(m->pid));
	err = err ?: json_put(o, "tid", json_integer(m->tid));
	err = err ?: put_enum(o, "phase", &mcpt__mark__phase__descriptor, m->phase);
	err = err ?: put_enum(o, "source", &mcpt__mark__source__descriptor, m->source);
	err = err ?: put_bin(o, "call_id", &m->call_id);
	err = err ?: put_bin(o, "jsonrpc_id", &m->jsonrpc_id);
	err = err ?: put_bin(o, "method", &m->method);
	err = err ?: put_bin(o, "tool", &m->tool);
	err = err ?: put_bin(o, "raw", &m->raw);
	return err ?: json_put(o, "cut", json_boolean(m->flags & 1));
}

static int stdio_json(json_t *o, const Mcpt__StdioFrame *s)
{
	int err = json_put(o, "seq", json_u64(s->seq));

	err = err ?: json_put(o, "ts", json_u64(s->ts));
	err = err ?: json_put(o, "pid", json_integer(s->pid));
	err = err ?: json_put(o, "tid", json_integer(s->tid));
	err = err ?: json_put(o, "fd", json_integer(s->fd));
	err = err ?: put_enum(o, "dir", &mcpt__stdio_frame__dir__descriptor, s->dir);
	err = err ?: json_put(o, "stream_offset", json_u64(s->stream_offset));
	err = err ?: json_put(o, "orig_len", json_integer(s->orig_len));
	err = err ?: json_put(o, "chunk", json_integer(s->chunk));
	err = err ?: json_put(o, "last", json_boolean(s->last));
	err = err ?: json_put(o, "flags", json_integer(s->flags));
	if (!err && (s->flags & MW_F_GAP))
		err = json_put(o, "gap_len", json_u64(s->gap_len));
	return err ?: json_put(o, "data", json_bytes(s->data.data, s->data.data ? s->data.len : 0));
}

static int loss_json(json_t *o, const Mcpt__Loss *l)
{
	int err = json_put(o, "ts", json_u64(l->ts));

	err = err ?: put_enum(o, "src", &mcpt__loss_source__descriptor, l->src);
	err = err ?: json_put(o, "cpu", json_integer(l->cpu));
	err = err ?: json_put(o, "delta", json_u64(l->delta));
	err = err ?: json_put(o, "cumulative", json_u64(l->cumulative));
	err = err ?: json_put(o, "first_seq", json_u64(l->first_seq));
	return err ?: json_put(o, "last_seq", json_u64(l->last_seq));
}

static int proc_json(json_t *o, const Mcpt__ProcInfo *p)
{
	int err = json_put(o, "ts", json_u64(p->ts));

	err = err ?: put_enum(o, "kind", &mcpt__proc_info__kind__descriptor, p->kind);
	err = err ?: json_put(o, "pid", json_integer(p->pid));
	err = err ?: json_put(o, "pstart", json_u64(p->pstart));
	err = err ?: json_put(o, "ppid", json_integer(p->ppid));
	err = err ?: json_put(o, "uid", p->kind == MCPT__PROC_INFO__KIND__ALIVE_AT_END
						? json_null() /* not known at the end (trace.proto) */
						: json_integer(p->uid));
	err = err ?: put_bin(o, "exe", &p->exe);
	return err ?: json_put(o, "argv", argv_list(p->argv, p->n_argv));
}

static int note_json(json_t *o, const Mcpt__Annotation *n)
{
	int err = json_put(o, "ts", json_u64(n->ts));

	err = err ?: put_str(o, "kind", n->kind);
	return err ?: put_bin(o, "text", &n->text);
}

static int pathdef_json(json_t *o, const Mcpt__PathDef *d)
{
	int err = json_put(o, "id", json_integer(d->id));

	return err ?: put_bin(o, "value", &d->value);
}

static int taskdef_json(json_t *o, const Mcpt__TaskDef *d)
{
	int err = json_put(o, "id", json_integer(d->id));

	err = err ?: json_put(o, "pid", json_integer(d->pid));
	err = err ?: json_put(o, "tid", json_integer(d->tid));
	err = err ?: json_put(o, "pstart", json_u64(d->pstart));
	err = err ?: json_put(o, "uid", json_integer(d->uid));
	return err ?: json_put(o, "gid", json_integer(d->gid));
}

static int seal_json(json_t *o, const Mcpt__Seal *s, const Mcpt__SealStatement *st)
{
	int err = put_hex(o, "key_id", &s->key_id);

	if (err || !st)
		return err ?: json_put(o, "statement_malformed", json_true());
	err = json_put(o, "seal_index", json_u64(st->seal_index));
	err = err ?: json_put(o, "first_record", json_u64(st->first_record));
	err = err ?: json_put(o, "record_count", json_u64(st->record_count));
	err = err ?: json_put(o, "leaf_count", json_u64(st->leaf_count));
	err = err ?: json_put(o, "flags", json_integer(st->flags));
	err = err ?: json_put(o, "final", json_boolean(st->flags & MCPT_SEAL_FINAL));
	if (!err && (st->flags & MCPT_SEAL_FINAL))
		err = put_enum(o, "end_reason", &mcpt__end_reason__descriptor, (int)st->end_reason);
	return err ?: put_hex(o, "segment_root", &st->segment_root);
}

static int body_json(json_t *o, const struct replay_rec *r)
{
	const ProtobufCMessage *m = r->msg;

	switch (r->rec->type) {
	case MCPT_T_HEADER:
		return header_json(o, (const Mcpt__Header *)m);
	case MCPT_T_EVENT:
		return event_json(o, (const Mcpt__Event *)m);
	case MCPT_T_MARK:
		return mark_json(o, (const Mcpt__Mark *)m);
	case MCPT_T_STDIO:
		return stdio_json(o, (const Mcpt__StdioFrame *)m);
	case MCPT_T_LOSS:
		return loss_json(o, (const Mcpt__Loss *)m);
	case MCPT_T_PROC:
		return proc_json(o, (const Mcpt__ProcInfo *)m);
	case MCPT_T_NOTE:
		return note_json(o, (const Mcpt__Annotation *)m);
	case MCPT_T_PATH_DEF:
		return pathdef_json(o, (const Mcpt__PathDef *)m);
	case MCPT_T_TASK_DEF:
		return taskdef_json(o, (const Mcpt__TaskDef *)m);
	case MCPT_T_SEAL:
		return seal_json(o, (const Mcpt__Seal *)m, r->statement);
	case MCPT_T_EPOCH_CERT:
		return 0;
	}
	return 0;
}

json_t *dump_json_object(const struct replay_rec *r)
{
	const char *name = dump_type_name(r->rec->type);
	json_t *o = json_object();
	int err;

	if (!o)
		return NULL;
	err = json_put(o, "index", json_u64(r->rec->index));
	err = err ?: json_put(o, "offset", json_u64(r->rec->offset));
	err = err ?: json_put(o, "type", name ? json_string(name) : json_integer(r->rec->type));
	err = err ?: json_put(o, "len", json_u64(r->rec->body_len));
	if (!err && (r->malformed || !name))
		err = json_put(o, r->malformed ? "malformed" : "unknown_type", json_true());
	else if (!err)
		err = body_json(o, r);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Serialized into sb (jsonw.h: jansson's compact form, without its dump's call per token), then
 * one write. */
int dump_json(FILE *out, const struct replay_rec *r, struct strbuf *sb)
{
	json_t *o = dump_json_object(r);
	int err;

	if (!o)
		return -ENOMEM;
	strbuf_reset(sb);
	err = jsonw_compact(sb, o);
	json_decref(o);
	strbuf_putc(sb, '\n');
	err = err ?: strbuf_error(sb);
	if (err)
		return err;
	fwrite(sb->buf, 1, sb->len, out);
	return 0;
}
