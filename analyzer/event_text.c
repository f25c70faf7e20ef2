/*
 * event_text.c - the text forms of an event's fields (see event.h): the names of families,
 * results, message kinds and errno values, each way; argv's NUL-separated entries iterated and
 * joined for display. Operation names live with the operation table, in event.c.
 */
#include <stdio.h>
#include <string.h>

#include "event.h"

static const char *const family_names[FAM_COUNT] = {
	[FAM_NONE] = "none",	   [FAM_PROCESS] = "process",	  [FAM_FILE] = "file",
	[FAM_NETWORK] = "network", [FAM_PRIVILEGE] = "privilege", [FAM_EVASION] = "evasion",
	[FAM_CHANNEL] = "channel", [FAM_HEALTH] = "health",
};

static const char *const result_names[RES_COUNT] = {
	[RES_SUCCESS] = "success",
	[RES_FAILURE] = "failure",
	[RES_PENDING] = "pending",
};

static const char *const msg_kind_names[MSG_KINDS] = {
	[MSG_REQUEST] = "request",
	[MSG_RESPONSE] = "response",
	[MSG_NOTIFICATION] = "notification",
	[MSG_OTHER] = "other",
};

const char *event_msg_kind_name(enum ev_msg_kind k)
{
	return (unsigned)k < MSG_KINDS ? msg_kind_names[k] : "?";
}

int event_msg_kind_by_name(const char *name)
{
	for (int i = 0; i < MSG_KINDS; i++)
		if (strcmp(msg_kind_names[i], name) == 0)
			return i;
	return -1;
}

const char *event_family_name(enum ev_family f)
{
	return (unsigned)f < FAM_COUNT ? family_names[f] : "none";
}

int event_family_by_name(const char *name)
{
	for (int i = FAM_PROCESS; i < FAM_COUNT; i++)
		if (strcmp(family_names[i], name) == 0)
			return i;
	return -1;
}

const char *event_result_name(enum ev_result r)
{
	return (unsigned)r < RES_COUNT ? result_names[r] : "?";
}

int event_result_by_name(const char *name)
{
	for (int i = 0; i < RES_COUNT; i++)
		if (strcmp(result_names[i], name) == 0)
			return i;
	return -1;
}

const char *event_errno_name(int err, char *buf, size_t len)
{
	const char *s = err > 0 ? strerrorname_np(err) : NULL;

	if (s)
		return s;
	snprintf(buf, len, "E%d", err);
	return buf;
}

int event_errno_by_name(const char *name)
{
	for (int e = 1; e < 4096; e++) {
		const char *s = strerrorname_np(e);

		if (s && strcmp(s, name) == 0)
			return e;
	}
	return -1;
}

bool event_argv_next(const struct ev_bytes *argv, size_t *pos, struct ev_bytes *arg)
{
	const uint8_t *start, *nul;
	size_t left;

	if (!argv->p || *pos >= argv->n)
		return false;
	start = argv->p + *pos;
	left = argv->n - *pos;
	nul = memchr(start, '\0', left);
	arg->p = start;
	arg->n = nul ? (size_t)(nul - start) : left;
	*pos += arg->n + (nul ? 1 : 0);
	return true;
}

void event_format_argv(struct strbuf *sb, const struct ev_bytes *argv, bool quote)
{
	struct ev_bytes a;
	size_t pos = 0;
	bool first = true;

	while (event_argv_next(argv, &pos, &a)) {
		if (!first)
			strbuf_putc(sb, ' ');
		first = false;
		if (quote)
			strbuf_putc(sb, '"');
		strbuf_escape(sb, a.p, a.n, quote ? ESC_QUOTE : 0);
		if (quote)
			strbuf_putc(sb, '"');
	}
	strbuf_put(sb, "", 0);
}
