/*
 * identity.c - the client, the server and the W3C trace context as the MCP channel states
 * them (see identity.h). Everything kept is bounded and escaped here, once.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"

#define META_CLIENT	"io.modelcontextprotocol/clientInfo"
#define META_SERVER	"io.modelcontextprotocol/serverInfo"
#define TRACEPARENT_LEN 55

/* An escaped copy of a JSON string cut to max bytes (NULL for anything else). *err gets
 * -ENOMEM on allocation failure. */
static char *escaped(const json_t *v, size_t max, int *err)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	if (!json_is_string(v))
		return NULL;
	n = json_string_length(v);
	strbuf_escape(&sb, (const uint8_t *)json_string_value(v), n < max ? n : max, 0);
	if (n > max)
		strbuf_puts(&sb, "...");
	if (!strbuf_str(&sb))
		*err = -ENOMEM;
	return strbuf_detach(&sb);
}

/* Fills an empty peer from an Implementation object {name, version}. */
static int set_peer(struct call_peer *p, const json_t *info, const char *from)
{
	int err = 0;

	if (p->name || !json_is_object(info) || !json_is_string(json_object_get(info, "name")))
		return 0;
	p->name = escaped(json_object_get(info, "name"), IDENTITY_NAME_MAX, &err);
	p->version = escaped(json_object_get(info, "version"), IDENTITY_NAME_MAX, &err);
	p->from = from;
	return err;
}

static bool is_lower_hex(const char *s, size_t n, bool *all_zero)
{
	*all_zero = true;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		*all_zero &= s[i] == '0';
	}
	return true;
}

bool identity_traceparent_ok(const char *s, size_t n, size_t *keep)
{
	static const size_t field[] = {0, 3, 36, 53}, width[] = {2, 32, 16, 2};
	bool zero;

	if (n < TRACEPARENT_LEN || (n > TRACEPARENT_LEN && s[TRACEPARENT_LEN] != '-'))
		return false;
	for (size_t i = 0; i < 4; i++) {
		if (i && s[field[i] - 1] != '-')
			return false;
		if (!is_lower_hex(s + field[i], width[i], &zero) || (zero && (i == 1 || i == 2)))
			return false;
	}
	if (!memcmp(s, "ff", 2) || (n > TRACEPARENT_LEN && !memcmp(s, "00", 2)))
		return false;
	*keep = TRACEPARENT_LEN;
	return true;
}

/* tracestate: printable ASCII only, bounded; anything else is dropped whole. */
static bool tracestate_ok(const char *s, size_t n)
{
	if (!n || n > IDENTITY_TRACESTATE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

/* The trace context of one request: _meta first (SEP-414), then params. */
static int trace_context(struct call *c, const json_t *params)
{
	const json_t *meta = json_object_get(params, "_meta");
	const json_t *from = json_is_string(json_object_get(meta, "traceparent")) ? meta : params;
	const json_t *tp = json_object_get(from, "traceparent");
	const json_t *ts = json_object_get(from, "tracestate");
	size_t keep;

	if (!json_is_string(tp) ||
	    !identity_traceparent_ok(json_string_value(tp), json_string_length(tp), &keep))
		return 0;
	c->traceparent = strndup(json_string_value(tp), keep);
	if (!c->traceparent)
		return -ENOMEM;
	if (json_is_string(ts) && tracestate_ok(json_string_value(ts), json_string_length(ts)) &&
	    !(c->tracestate = strdup(json_string_value(ts))))
		return -ENOMEM;
	return 0;
}

int identity_request(struct call_session *s, struct call *c, const char *method,
		     const json_t *params)
{
	const json_t *meta = json_object_get(params, "_meta");
	int err;

	if (!json_is_object(params))
		return 0;
	err = trace_context(c, params);
	if (!err && method && !strcmp(method, "initialize"))
		err = set_peer(&s->client, json_object_get(params, "clientInfo"), "initialize");
	if (!err)
		err = set_peer(&s->client, json_object_get(meta, META_CLIENT), "_meta");
	return err;
}

int identity_response(struct call_session *s, const struct call *c, const json_t *result)
{
	const char *from;
	int err;

	if (c->dir != CHAN_IN || !c->method || !json_is_object(result))
		return 0;
	from = !strcmp(c->method, "initialize")	       ? "initialize"
	       : !strcmp(c->method, "server/discover") ? "server/discover"
						       : NULL;
	err = from ? set_peer(&s->server, json_object_get(result, "serverInfo"), from) : 0;
	if (!err)
		err = set_peer(&s->server,
			       json_object_get(json_object_get(result, "_meta"), META_SERVER),
			       "_meta");
	return err;
}
