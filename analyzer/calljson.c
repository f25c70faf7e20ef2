/*
 * calljson.c - the JSON forms a call keeps (see calls.h): canonical ids, compact dumps cut to a
 * bound without dumping more than the cut needs, and the arguments' digest - from a jansson
 * value, or from dumps the channel's fast path wrote itself.
 */
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"

char *call_id_canon(const json_t *id)
{
	if (!json_is_string(id) && !json_is_number(id))
		return NULL;
	return json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
}

char *call_text_short(const char *s, size_t len, size_t max)
{
	size_t n = len;
	char *out;

	if (len > max) {
		n = max;
		while (n && ((uint8_t)s[n] & 0xc0) == 0x80) /* never cut inside a UTF-8 sequence */
			n--;
	}
	out = malloc(n + (len > max ? 4 : 1));
	if (!out)
		return NULL;
	memcpy(out, s, n);
	if (len > max)
		memcpy(out + n, "...", 4);
	else
		out[n] = '\0';
	return out;
}

/* The first bytes of a dump: one more than the cut needs, then the dump is stopped. */
struct bounded {
	char *buf;
	size_t len, cap;
};

static int bounded_put(const char *p, size_t n, void *data)
{
	struct bounded *b = data;
	size_t room = b->cap - b->len;

	memcpy(b->buf + b->len, p, n < room ? n : room);
	b->len += n < room ? n : room;
	return n > room ? -1 : 0; /* enough: stop jansson here */
}

/* call_json_short, and whether it cut (*cut). */
static char *json_short(const json_t *v, size_t max, bool *cut)
{
	const size_t flags = JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15);
	char stack[CALL_EVSTR_MAX + 1];
	struct bounded b = {.buf = stack, .cap = max + 1};
	char *out;

	if (max > CALL_EVSTR_MAX && !(b.buf = malloc(b.cap)))
		return NULL;
	/* only a dump stopped by bounded_put fails with more than max bytes */
	if (json_dump_callback(v, bounded_put, &b, flags) && b.len <= max)
		out = NULL;
	else
		out = call_text_short(b.buf, b.len, max);
	*cut = b.len > max;
	if (b.buf != stack)
		free(b.buf);
	return out;
}

char *call_json_short(const json_t *v, size_t max)
{
	bool cut;

	return json_short(v, max, &cut);
}

/* True when every object in v lists its keys in the order JSON_SORT_KEYS writes them. */
static bool keys_sorted(const json_t *v, int depth)
{
	const char *k, *prev = NULL;
	json_t *x;
	size_t i;

	if (depth > 64)
		return false;
	if (json_is_array(v))
		json_array_foreach(v, i, x) if (!keys_sorted(x, depth + 1)) return false;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) {
			if ((prev && strcmp(prev, k) >= 0) || !keys_sorted(x, depth + 1))
				return false;
			prev = k;
		}
	}
	return true;
}

static void digest_hex(const char *json, size_t len, char out[17])
{
	uint8_t h[32];
	static const char hex[] = "0123456789abcdef";

	crypto_generichash(h, sizeof(h), (const uint8_t *)json, len, NULL, 0);
	for (int i = 0; i < 8; i++) {
		out[2 * i] = hex[h[i] >> 4];
		out[2 * i + 1] = hex[h[i] & 15];
	}
	out[16] = '\0';
}

/* The shown form of the arguments from their full form (the same when short enough). */
static char *show_of(char *full)
{
	size_t len = full ? strlen(full) : 0;

	return len <= CALL_SHOW_MAX ? full : call_text_short(full, len, CALL_SHOW_MAX);
}

/* The arguments' three forms from one dump when it is short and already in key order. */
int call_args_forms(const struct json_t *args, char **show, char **full, char digest[17])
{
	char *canon;
	bool cut;

	*full = json_short(args, CALL_EVSTR_MAX, &cut);
	*show = show_of(*full);
	canon = *full && !cut && keys_sorted(args, 0)
			? *full
			: json_dumps(args, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS |
						   JSON_REAL_PRECISION(15));
	if (!canon || !*show || !*full) {
		if (canon != *full)
			free(canon);
		return -ENOMEM;
	}
	digest_hex(canon, strlen(canon), digest);
	if (canon != *full)
		free(canon);
	return 0;
}

int call_args_forms_dump(const char *dump, size_t len, const char *sorted, size_t sorted_len,
			 char **show, char **full, char digest[17])
{
	*full = call_text_short(dump, len, CALL_EVSTR_MAX);
	*show = show_of(*full);
	if (!*show || !*full)
		return -ENOMEM;
	digest_hex(sorted, sorted_len, digest);
	return 0;
}
