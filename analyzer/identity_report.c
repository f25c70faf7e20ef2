/*
 * identity_report.c - the identity block every report carries (see identity.h): client,
 * server, user, host and trace id in JSON and in text; and a call's W3C trace context.
 */
#include <jansson.h>
#include <string.h>

#include "identity.h"
#include "traceinfo.h"

static json_t *bin_or_null(const ProtobufCBinaryData *b)
{
	return b && b->len ? json_bytes(b->data, b->len) : json_null();
}

static json_t *hex_or_null(const ProtobufCBinaryData *b)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	if (!b || !b->len)
		return json_null();
	trace_hex(&sb, b);
	j = strbuf_str(&sb) ? json_string(strbuf_str(&sb)) : NULL;
	strbuf_fini(&sb);
	return j;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *peer_json(const struct call_peer *p)
{
	if (!p || !p->name)
		return json_null();
	return json_pack("{s:s,s:o,s:s}", "name", p->name, "version", str_or_null(p->version),
			 "from", p->from ? p->from : "?");
}

static json_t *argv_json(const Mcpt__Target *t)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < t->n_argv; i++)
		if (json_array_append_new(a, json_bytes(t->argv[i].data, t->argv[i].len))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *server_json(const Mcpt__Target *t, const struct call_session *s)
{
	json_t *o = peer_json(s ? &s->server : NULL);
	int err = 0;

	if (json_is_null(o))
		o = json_pack("{s:n,s:n,s:n}", "name", "version", "from");
	if (!t || !o)
		return o;
	err = json_put(o, "command", argv_json(t));
	err = err ?: json_put(o, "exe", bin_or_null(&t->exe));
	err = err ?: json_put(o, "exe_blake2b_256", hex_or_null(&t->exe_digest));
	err = err ?: json_put(o, "pid", json_integer(t->pid));
	err = err ?: json_put(o, "workspace", bin_or_null(&t->cwd));
	err = err ?: json_put(o, "attached", json_boolean(t->attached));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Whether the password entry names another home than the HOME the server was started with
 * (an environment that was not its user's: a trace from before the collector fixed sudo's). */
static bool other_passwd_home(const Mcpt__Target *t)
{
	return t->passwd_home.len && t->home.len &&
	       (t->passwd_home.len != t->home.len ||
		memcmp(t->passwd_home.data, t->home.data, t->home.len) != 0);
}

static json_t *user_json(const Mcpt__Target *t)
{
	if (!t)
		return json_null();
	return json_pack("{s:I,s:I,s:o,s:o,s:o}", "uid", (json_int_t)t->uid, "gid",
			 (json_int_t)t->gid, "name", bin_or_null(&t->user), "home",
			 bin_or_null(&t->home), "passwd_home", bin_or_null(&t->passwd_home));
}

static json_t *host_json(const Mcpt__Header *h)
{
	const Mcpt__Host *o = h->host;
	const Mcpt__Kernel *k = h->kernel;

	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "hostname", bin_or_null(o ? &o->hostname : 0),
			 "machine_id", hex_or_null(o ? &o->machine_id : 0), "os_id",
			 bin_or_null(o ? &o->os_id : 0), "os_version",
			 bin_or_null(o ? &o->os_version : 0), "kernel",
			 bin_or_null(k ? &k->release : 0), "boot_id", hex_or_null(&h->boot_id));
}

json_t *identity_json(const Mcpt__Header *h, const struct callset *cs)
{
	const struct call_session *s = cs ? callset__session(cs) : NULL;
	const Mcpt__Target *t = h ? h->target : NULL;

	return json_pack("{s:o,s:o,s:o,s:o,s:o}", "trace_id",
			 h ? hex_or_null(&h->trace_id) : json_null(), "client",
			 peer_json(s ? &s->client : NULL), "server", server_json(t, s), "user",
			 user_json(t), "host", h ? host_json(h) : json_null());
}

/* --- text --------------------------------------------------------------------------------- */

static void put_quoted(struct strbuf *sb, const uint8_t *p, size_t n)
{
	strbuf_putc(sb, '"');
	strbuf_escape(sb, p, n, ESC_QUOTE);
	strbuf_putc(sb, '"');
}

static void text_peer(struct strbuf *sb, const struct call_peer *p, const char *unknown)
{
	if (!p || !p->name) {
		strbuf_puts(sb, unknown);
		return;
	}
	strbuf_puts(sb, p->name);
	if (p->version)
		strbuf_printf(sb, " %s", p->version);
	strbuf_printf(sb, " (%s)", p->from ? p->from : "?");
}

static void text_server(struct strbuf *sb, const Mcpt__Target *t)
{
	strbuf_puts(sb, "; command");
	for (size_t i = 0; i < t->n_argv; i++) {
		strbuf_putc(sb, ' ');
		put_quoted(sb, t->argv[i].data, t->argv[i].len);
	}
	if (t->exe.len) {
		strbuf_puts(sb, "; exe ");
		put_quoted(sb, t->exe.data, t->exe.len);
	}
	if (t->exe_digest.len) {
		strbuf_puts(sb, " blake2b-256:");
		trace_hex(sb, &t->exe_digest);
	}
}

static void text_host(struct strbuf *sb, const Mcpt__Header *h, const char *indent)
{
	const Mcpt__Host *o = h->host;

	strbuf_printf(sb, "%shost:", indent);
	if (o && o->hostname.len) {
		strbuf_putc(sb, ' ');
		put_quoted(sb, o->hostname.data, o->hostname.len);
	}
	if (o && o->machine_id.len) {
		strbuf_puts(sb, " machine-id ");
		trace_hex(sb, &o->machine_id);
	}
	if (o && o->os_id.len) {
		strbuf_puts(sb, " os ");
		strbuf_escape(sb, o->os_id.data, o->os_id.len, 0);
		strbuf_putc(sb, ' ');
		strbuf_escape(sb, o->os_version.data, o->os_version.len, 0);
	}
	if (h->kernel && h->kernel->release.len) {
		strbuf_puts(sb, " kernel ");
		strbuf_escape(sb, h->kernel->release.data, h->kernel->release.len, 0);
	}
	strbuf_putc(sb, '\n');
}

void identity_text(struct strbuf *sb, const Mcpt__Header *h, const struct callset *cs,
		   const char *indent)
{
	const struct call_session *s = cs ? callset__session(cs) : NULL;
	const Mcpt__Target *t = h ? h->target : NULL;

	bool attached = t && t->attached; /* the handshake, if any, may predate the recording */

	strbuf_printf(sb, "%sclient: ", indent);
	text_peer(sb, s ? &s->client : NULL,
		  attached ? "unknown (no clientInfo on the channel since the attach)"
			   : "unknown (no clientInfo on the channel)");
	strbuf_printf(sb, "\n%sserver: ", indent);
	text_peer(sb, s ? &s->server : NULL,
		  attached ? "unknown (no serverInfo on the channel since the attach)"
			   : "unknown (no serverInfo on the channel)");
	if (t)
		text_server(sb, t);
	strbuf_putc(sb, '\n');
	if (t) {
		strbuf_printf(sb, "%suser: ", indent);
		if (t->user.len)
			strbuf_escape(sb, t->user.data, t->user.len, 0);
		else
			strbuf_puts(sb, "?");
		strbuf_printf(sb, " (uid %u gid %u)", t->uid, t->gid);
		if (t->home.len) {
			strbuf_puts(sb, " home ");
			put_quoted(sb, t->home.data, t->home.len);
		}
		if (other_passwd_home(t)) {
			strbuf_puts(sb, " (password entry: ");
			put_quoted(sb, t->passwd_home.data, t->passwd_home.len);
			strbuf_putc(sb, ')');
		}
		strbuf_putc(sb, '\n');
	}
	if (h)
		text_host(sb, h, indent);
}

json_t *identity_trace_context_json(const struct call *c)
{
	const char *tp = c ? c->traceparent : NULL;

	if (!tp)
		return json_null();
	/* "00-<trace id 32>-<parent id 16>-<flags 2>", checked when it was kept */
	return json_pack("{s:s,s:o,s:s%,s:s%,s:b}", "traceparent", tp, "tracestate",
			 str_or_null(c->tracestate), "trace_id", tp + 3, (size_t)32, "parent_id",
			 tp + 36, (size_t)16, "sampled",
			 (tp[54] - (tp[54] >= 'a' ? 'a' - 10 : '0')) & 1);
}
