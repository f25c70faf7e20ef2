/*
 * traceinfo.c - renderings of ids, times and integers (see traceinfo.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcpt.h"
#include "traceinfo.h"

void trace_hex(struct strbuf *sb, const ProtobufCBinaryData *b)
{
	size_t n = b->len > 64 ? 64 : b->len;

	if (b->data && n)
		strbuf_hex(sb, b->data, n);
	else
		strbuf_put(sb, "", 0);
}

void trace_key_id(struct strbuf *sb, const ProtobufCBinaryData *b)
{
	char hex[17];

	if (b->data && b->len == MCPT_KEY_ID_LEN) {
		mcpt_key_id_hex(b->data, hex);
		strbuf_puts(sb, hex);
	} else {
		trace_hex(sb, b);
	}
}

void trace_ts(char *buf, size_t len, uint64_t ts)
{
	char d[32], *p = d + sizeof(d);
	uint64_t s = ts / 1000000000ull, ns = ts % 1000000000ull;
	size_t n;

	*--p = '\0'; /* "%llu.%09llu", written from the end */
	for (int i = 0; i < 9; i++, ns /= 10)
		*--p = (char)('0' + ns % 10);
	*--p = '.';
	do
		*--p = (char)('0' + s % 10);
	while (s /= 10);
	n = (size_t)(d + sizeof(d) - p);
	if (!len)
		return;
	if (n > len) { /* cut as snprintf cuts */
		n = len;
		p[n - 1] = '\0';
	}
	memcpy(buf, p, n);
}

bool trace_wallclock(const Mcpt__Header *h, uint64_t ts, char *buf, size_t len)
{
	const Mcpt__ClockSample *c = h ? h->clock : NULL;
	uint64_t anchor;
	int64_t delta;
	__int128 wall;
	time_t sec;
	struct tm tm;

	if (!c || !c->realtime_ns)
		return false;
	if (h->event_clock == MCPT__CLOCK_ID__CLOCK_MONOTONIC)
		anchor = c->monotonic_ns;
	else
		anchor = c->boottime_before_ns / 2 + c->boottime_after_ns / 2 +
			 (c->boottime_before_ns % 2 + c->boottime_after_ns % 2) / 2;
	if (!anchor)
		return false;
	delta = (int64_t)(ts - anchor);
	wall = (__int128)c->realtime_ns + delta;
	if (wall < 0 || wall > (__int128)253402300799ll * 1000000000ll) /* year 9999 */
		return false;
	sec = (time_t)(wall / 1000000000);
	if (!gmtime_r(&sec, &tm))
		return false;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(wall % 1000000000));
	return true;
}

static void quoted(struct strbuf *sb, const char *pre, const void *p, size_t n)
{
	strbuf_printf(sb, "%s\"", pre);
	strbuf_escape(sb, p, n, ESC_QUOTE);
	strbuf_putc(sb, '"');
}

void trace_provenance(struct strbuf *sb, const Mcpt__Header *h)
{
	const Mcpt__Host *host = h ? h->host : NULL;
	const Mcpt__Collector *c = h ? h->collector : NULL;

	if (host) {
		quoted(sb, "  host     ", host->hostname.data, host->hostname.len);
		if (host->os_id.len) {
			quoted(sb, " os ", host->os_id.data, host->os_id.len);
			quoted(sb, " ", host->os_version.data, host->os_version.len);
		}
		if (host->machine_id.len) {
			strbuf_puts(sb, " machine-id ");
			trace_hex(sb, &host->machine_id);
		}
		strbuf_putc(sb, '\n');
	}
	if (c) {
		quoted(sb, "  collector ", c->name, strlen(c->name));
		quoted(sb, " ", c->version, strlen(c->version));
		strbuf_putc(sb, '\n');
	}
}

json_t *json_u64(uint64_t v)
{
	char buf[24];

	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return json_string(buf);
}

json_t *json_bytes(const uint8_t *p, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	strbuf_escape(&sb, p, n, 0);
	j = strbuf_str(&sb) ? json_stringn(strbuf_str(&sb), sb.len) : NULL;
	strbuf_fini(&sb);
	return j;
}

int json_put(json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return -ENOMEM;
	return json_object_set_new(obj, key, value) ? -ENOMEM : 0;
}
