/*
 * check_jsonw.c - the member-by-member JSON writer against jansson's own dump of the whole
 * document (JSON_INDENT(2), then a newline): random documents written with each container
 * either streamed or handed over whole, empty containers at every depth, strings of every
 * control byte (NUL too) and of UTF-8, keys that need escaping, edge integers and reals; the
 * scalars written by their own functions (jsonw_int, _str, ...) or handed over as values; the
 * compact line writer (dump --json) the same way against json_dumps(JSON_COMPACT); both
 * writers' unsigned numbers and byte strings, the line writer's depth limit; and the errors: a
 * NULL value, too deep, a container left open, a failed write.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "strbuf.h"

static unsigned long rng_state = 12345;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(rng_state >> 33) % n;
}

/* A string of random bytes below 0x80 (every control, NUL included) and some UTF-8. */
static json_t *random_string(void)
{
	static const char *const utf8[] = {"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\x91",
					   "\xe2\x80\xa8", "\x7f"};
	char buf[64];
	size_t n = 0, len = rnd(12);

	for (size_t i = 0; i < len; i++) {
		if (rnd(5) == 0) {
			const char *u = utf8[rnd(sizeof(utf8) / sizeof(utf8[0]))];

			memcpy(buf + n, u, strlen(u));
			n += strlen(u);
		} else {
			buf[n++] = (char)(rnd(3) ? 0x20 + rnd(0x60) : rnd(0x20));
		}
	}
	return json_stringn(buf, n);
}

static bool no_reals; /* the compact line writer has no reals (dump --json writes none) */

static json_t *random_scalar(void)
{
	static const double reals[] = {0.0, -0.0, 0.1, 1.0, -2.5, 1e300, 1e-300, 123456789.125};
	static const json_int_t ints[] = {0, -1, INT64_MAX, INT64_MIN, 1000000007};

	switch (rnd(7)) {
	case 0:
	case 1:
		return random_string();
	case 2:
		return rnd(2) ? json_integer((json_int_t)rnd(1000000) - 500000)
			      : json_integer(ints[rnd(sizeof(ints) / sizeof(ints[0]))]);
	case 3:
		if (no_reals)
			return json_integer((json_int_t)rnd(1000));
		return rnd(2) ? json_real((double)rnd(100000) / 7.0)
			      : json_real(reals[rnd(sizeof(reals) / sizeof(reals[0]))]);
	case 4:
		return json_true();
	case 5:
		return json_false();
	default:
		return json_null();
	}
}

static json_t *random_value(int depth)
{
	json_t *v;
	unsigned n;
	char key[32];

	if (depth >= 5 || rnd(3) == 0)
		return random_scalar();
	n = rnd(4); /* empty ones too */
	if (rnd(2)) {
		v = json_array();
		for (unsigned i = 0; i < n; i++)
			json_array_append_new(v, random_value(depth + 1));
	} else {
		v = json_object();
		for (unsigned i = 0; i < n; i++) {
			snprintf(key, sizeof(key), rnd(4) ? "k%u" : "k\n\"%u\"\x01\xc3\xa9", i);
			json_object_set_new(v, key, random_value(depth + 1));
		}
	}
	return v;
}

/* Writes v through w, streaming a container when the coin says so, else handing it whole. */
static void write_value(struct jsonw *w, const char *key, json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v)) {
		/* a scalar: handed over, or written by its own function (strings without NUL) */
		if (rnd(2) && json_is_integer(v))
			jsonw_int(w, key, json_integer_value(v));
		else if (rnd(2) && json_is_boolean(v))
			jsonw_bool(w, key, json_is_true(v));
		else if (rnd(2) && json_is_null(v))
			jsonw_null(w, key);
		else if (rnd(2) && json_is_string(v) &&
			 strlen(json_string_value(v)) == json_string_length(v))
			jsonw_str(w, key, json_string_value(v));
		else
			jsonw_put(w, key, json_incref(v));
		return;
	}
	if (rnd(2)) {
		jsonw_put(w, key, json_incref(v));
		return;
	}
	jsonw_open(w, key, json_is_object(v) ? '{' : '[');
	if (json_is_object(v))
		json_object_foreach(v, k, x) write_value(w, k, x);
	else
		json_array_foreach(v, i, x) write_value(w, NULL, x);
	jsonw_close(w);
}

/* What jansson writes for the whole document. */
static char *jansson_text(const json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2));
	char *out;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_ge(asprintf(&out, "%s\n", s), 0);
	free(s);
	return out;
}

static char *jsonw_text(json_t *doc, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jsonw w;

	ck_assert_ptr_nonnull(f);
	jsonw_init(&w, f);
	write_value(&w, NULL, doc);
	*err = jsonw_finish(&w);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(same_as_jansson)
{
	for (int round = 0; round < 3000; round++) {
		json_t *doc = rnd(2) ? json_object() : json_array();
		unsigned n = rnd(6);
		char key[16], *want, *got;
		int err;

		for (unsigned i = 0; i < n; i++) {
			snprintf(key, sizeof(key), "m%u", i);
			if (json_is_object(doc))
				json_object_set_new(doc, key, random_value(1));
			else
				json_array_append_new(doc, random_value(1));
		}
		want = jansson_text(doc);
		got = jsonw_text(doc, &err);
		ck_assert_int_eq(err, 0);
		ck_assert_msg(strcmp(want, got) == 0, "round %d:\njansson:\n%s\njsonw:\n%s", round,
			      want, got);
		free(want);
		free(got);
		json_decref(doc);
	}
}
END_TEST

/* v through the compact line writer, member by member. */
static void emit(struct jsonl *j, const char *key, const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		jsonl_open(j, key, '{');
		json_object_foreach((json_t *)v, k, x) emit(j, k, x);
		jsonl_close(j);
		return;
	case JSON_ARRAY:
		jsonl_open(j, key, '[');
		json_array_foreach(v, i, x) emit(j, NULL, x);
		jsonl_close(j);
		return;
	case JSON_STRING:
		jsonl_strn(j, key, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		jsonl_int(j, key, json_integer_value(v));
		return;
	case JSON_TRUE:
	case JSON_FALSE:
		jsonl_bool(j, key, json_is_true(v));
		return;
	case JSON_NULL:
	case JSON_REAL: /* not generated here */
		jsonl_null(j, key);
		return;
	}
}

/* The compact line writer (dump --json's records) against json_dumps(JSON_COMPACT) of the
 * object the same calls build: random members, nested containers, every control byte. */
START_TEST(compact_as_jansson)
{
	struct strbuf esc = STRBUF_INIT;

	no_reals = true;
	for (int round = 0; round < 3000; round++) {
		json_t *doc = json_object();
		struct strbuf sb = STRBUF_INIT;
		struct jsonl j;
		const char *k;
		json_t *x;
		char *want;

		for (unsigned i = 0, n = rnd(5); i < n; i++) {
			char key[16];

			snprintf(key, sizeof(key), "m%u", i);
			json_object_set_new(doc, key, random_value(1));
		}
		want = json_dumps(doc, JSON_COMPACT);
		ck_assert_ptr_nonnull(want);
		strbuf_puts(&sb, "kept|"); /* appended to what the buffer holds */
		jsonl_begin(&j, &sb, &esc);
		json_object_foreach(doc, k, x) emit(&j, k, x);
		ck_assert_int_eq(jsonl_end(&j), 0);
		ck_assert_msg(strncmp(strbuf_str(&sb), "kept|", 5) == 0 &&
				      strcmp(strbuf_str(&sb) + 5, want) == 0,
			      "round %d:\njansson: %s\njsonl:   %s", round, want, strbuf_str(&sb));
		free(want);
		strbuf_fini(&sb);
		json_decref(doc);
	}
	no_reals = false;
	strbuf_fini(&esc);
}
END_TEST

/* What the line writer adds to jansson's values: unsigned 64-bit numbers (a string past
 * INT64_MAX, as traceinfo.h's json_u64), byte strings escaped as json_bytes escapes them, and
 * a refusal past its depth. */
START_TEST(compact_u64_bytes_depth)
{
	static const uint8_t raw[] = {'a', 0, '\n', 0xff, '"', 0xc3, 0xa9, 0x1b};
	struct strbuf sb = STRBUF_INIT, esc = STRBUF_INIT, e = STRBUF_INIT;
	struct jsonl j;
	json_t *want;
	char *w;

	jsonl_begin(&j, &sb, &esc);
	jsonl_u64(&j, "small", (uint64_t)INT64_MAX);
	jsonl_u64(&j, "big", UINT64_MAX);
	jsonl_bytes(&j, "raw", raw, sizeof(raw));
	jsonl_bytes(&j, "none", raw, 0);
	jsonl_bytes(&j, "null", NULL, 0); /* an empty bytes field of a parsed message */
	ck_assert_int_eq(jsonl_end(&j), 0);
	strbuf_escape(&e, raw, sizeof(raw), 0);
	want = json_pack("{s:I,s:s,s:s%,s:s,s:s}", "small", (json_int_t)INT64_MAX, "big",
			 "18446744073709551615", "raw", strbuf_str(&e), e.len, "none", "", "null",
			 "");
	w = json_dumps(want, JSON_COMPACT);
	ck_assert_str_eq(strbuf_str(&sb), w);
	free(w);
	json_decref(want);

	strbuf_reset(&sb);
	jsonl_begin(&j, &sb, &esc);
	for (int i = 0; i < JSONL_DEPTH_MAX + 1; i++)
		jsonl_open(&j, "d", '{');
	ck_assert_int_eq(jsonl_end(&j), -EINVAL);
	strbuf_fini(&sb);
	strbuf_fini(&esc);
	strbuf_fini(&e);
}
END_TEST

/* The indented writer's own scalars for unsigned numbers (a string past INT64_MAX) and byte
 * strings (escaped as json_bytes escapes them; an empty one may come without data). */
START_TEST(indented_u64_bytes)
{
	static const uint8_t raw[] = {'a', 0, '\n', 0xff, '"', 0xc3, 0xa9, 0x1b};
	struct strbuf e = STRBUF_INIT;
	char *buf = NULL, *want;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jsonw w;
	json_t *doc;

	ck_assert_ptr_nonnull(f);
	jsonw_init(&w, f);
	jsonw_open(&w, NULL, '{');
	jsonw_u64(&w, "small", (uint64_t)INT64_MAX);
	jsonw_u64(&w, "big", UINT64_MAX);
	jsonw_bytes(&w, "raw", raw, sizeof(raw));
	jsonw_bytes(&w, "null", NULL, 0);
	jsonw_str(&w, "none", NULL);
	jsonw_close(&w);
	ck_assert_int_eq(jsonw_finish(&w), 0);
	ck_assert_int_eq(fclose(f), 0);
	strbuf_escape(&e, raw, sizeof(raw), 0);
	doc = json_pack("{s:I,s:s,s:s%,s:s,s:n}", "small", (json_int_t)INT64_MAX, "big",
			"18446744073709551615", "raw", strbuf_str(&e), e.len, "null", "", "none");
	want = jansson_text(doc);
	ck_assert_str_eq(buf, want);
	free(want);
	free(buf);
	json_decref(doc);
	strbuf_fini(&e);
}
END_TEST

/* Large enough to be written out in several pieces. */
START_TEST(long_array_in_pieces)
{
	json_t *doc = json_pack("{s:s,s:[]}", "head", "x", "items");
	json_t *items = json_object_get(doc, "items");
	char *want, *got;
	int err;

	for (int i = 0; i < 20000; i++)
		json_array_append_new(items, json_pack("{s:i,s:s}", "i", i, "s", "some text"));
	want = jansson_text(doc);
	got = jsonw_text(doc, &err);
	ck_assert_int_eq(err, 0);
	ck_assert_uint_gt(strlen(want), 3 * 65536);
	ck_assert(strcmp(want, got) == 0);
	free(want);
	free(got);
	json_decref(doc);
}
END_TEST

static int write_into(FILE *f, void (*fill)(struct jsonw *))
{
	struct jsonw w;

	jsonw_init(&w, f);
	fill(&w);
	return jsonw_finish(&w);
}

static void null_value(struct jsonw *w)
{
	jsonw_open(w, NULL, '{');
	jsonw_put(w, "a", json_integer(1));
	jsonw_put(w, "b", NULL);
	jsonw_put(w, "c", json_integer(3)); /* not written: the error is sticky */
	jsonw_close(w);
}

static void too_deep(struct jsonw *w)
{
	for (int i = 0; i <= JSONW_DEPTH_MAX; i++)
		jsonw_open(w, NULL, '[');
}

static void left_open(struct jsonw *w)
{
	jsonw_open(w, NULL, '{');
	jsonw_put(w, "a", json_true());
}

static void big(struct jsonw *w)
{
	jsonw_open(w, NULL, '[');
	for (int i = 0; i < 50000; i++)
		jsonw_put(w, NULL, json_string("0123456789"));
	jsonw_close(w);
}

START_TEST(errors)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	FILE *full = fopen("/dev/full", "w");

	ck_assert_int_eq(write_into(f, null_value), -ENOMEM);
	fflush(f);
	ck_assert_ptr_null(strstr(buf, "\"c\"")); /* nothing after the error */
	ck_assert_int_eq(write_into(f, too_deep), -EINVAL);
	ck_assert_int_eq(write_into(f, left_open), -EINVAL);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	ck_assert_int_eq(write_into(full, big), -EIO);
	fclose(full);
}
END_TEST

Suite *jsonw_suite(void);

Suite *jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, same_as_jansson);
	tcase_add_test(tc, compact_as_jansson);
	tcase_add_test(tc, compact_u64_bytes_depth);
	tcase_add_test(tc, indented_u64_bytes);
	tcase_add_test(tc, long_array_in_pieces);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}
