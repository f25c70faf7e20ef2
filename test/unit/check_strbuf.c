/*
 * check_strbuf.c - the byte-string escaper every output goes through: printable UTF-8 kept,
 * controls, invalid UTF-8, overlong forms, surrogates and terminal-deceiving code points
 * escaped, backslash and quotes made unambiguous; the decimal writers and trace_ts against
 * printf; printf output on both sides of the edge of the buffer.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "traceinfo.h"

static const char *esc(const char *s, size_t n, unsigned flags)
{
	static char out[1024];
	struct strbuf sb = STRBUF_INIT;

	strbuf_escape(&sb, (const uint8_t *)s, n, flags);
	snprintf(out, sizeof(out), "%s", strbuf_str(&sb));
	strbuf_fini(&sb);
	return out;
}

#define E(lit, flags) esc(lit, sizeof(lit) - 1, flags)

START_TEST(escape)
{
	ck_assert_str_eq(E("/home/u/.ssh/id_rsa", 0), "/home/u/.ssh/id_rsa");
	ck_assert_str_eq(E("a\\b", 0), "a\\\\b");
	ck_assert_str_eq(E("a\"b", 0), "a\"b");
	ck_assert_str_eq(E("a\"b", ESC_QUOTE), "a\\\"b");
	ck_assert_str_eq(E("l1\nl2\t\r", 0), "l1\\nl2\\t\\r");
	ck_assert_str_eq(E("\x1b[31mred", 0), "\\x1b[31mred");
	ck_assert_str_eq(E("a\0b", 0), "a\\x00b");
	ck_assert_str_eq(E("\x7f", 0), "\\x7f");
	ck_assert_str_eq(E("caf\xc3\xa9", 0), "caf\xc3\xa9");		/* é kept */
	ck_assert_str_eq(E("\xe2\x82\xac", 0), "\xe2\x82\xac");		/* € kept */
	ck_assert_str_eq(E("\xf0\x9f\x94\x91", 0), "\xf0\x9f\x94\x91"); /* emoji kept */
	ck_assert_str_eq(E("\xff\xfe", 0), "\\xff\\xfe");
	ck_assert_str_eq(E("\xc0\xaf", 0), "\\xc0\\xaf");	   /* overlong '/' */
	ck_assert_str_eq(E("\xed\xa0\x80", 0), "\\xed\\xa0\\x80"); /* surrogate */
	ck_assert_str_eq(E("\xc3", 0), "\\xc3");		   /* cut short */
	ck_assert_str_eq(E("\xe2\x80\xae"
			   "txt",
			   0),
			 "\\u202etxt");		       /* right-to-left override */
	ck_assert_str_eq(E("\xc2\x85", 0), "\\u0085"); /* C1 control */
	ck_assert_str_eq(E("", 0), "");
}
END_TEST

START_TEST(builders)
{
	struct strbuf sb = STRBUF_INIT;
	const uint8_t id[3] = {0x00, 0xab, 0xff};
	char *s;

	ck_assert_str_eq(strbuf_str(&sb), "");
	strbuf_printf(&sb, "%d-%s", 42, "x");
	strbuf_putc(&sb, ':');
	strbuf_hex(&sb, id, sizeof(id));
	ck_assert_str_eq(strbuf_str(&sb), "42-x:00abff");
	strbuf_reset(&sb);
	ck_assert_str_eq(strbuf_str(&sb), "");
	strbuf_puts(&sb, "kept");
	s = strbuf_detach(&sb);
	ck_assert_str_eq(s, "kept");
	ck_assert_ptr_null(sb.buf);
	free(s);
	strbuf_fini(&sb);
}
END_TEST

/* Runs of plain bytes are copied at once: around every kind of byte that is not plain. */
START_TEST(escape_runs)
{
	ck_assert_str_eq(E("/a/b c\x01"
			   "d\xe2\x80\xae\"e\\f~",
			   0),
			 "/a/b c\\x01d\\u202e\"e\\\\f~");
	ck_assert_str_eq(E("/a/b c\x01"
			   "d\xe2\x80\xae\"e\\f~",
			   ESC_QUOTE),
			 "/a/b c\\x01d\\u202e\\\"e\\\\f~");
	ck_assert_str_eq(E("0123456789abcdef\xc3\xa9ghijklmnop\x7fqrs", 0),
			 "0123456789abcdef\xc3\xa9ghijklmnop\\x7fqrs");
}
END_TEST

/* The decimal writers and trace_ts against printf, on the edges and on random values. */
/* A value quoted in a message: its first 64 bytes, never half a UTF-8 sequence, and its
 * length. */
START_TEST(escape_short)
{
	struct strbuf sb = STRBUF_INIT;
	uint8_t v[80];

	memset(v, 'a', sizeof(v));
	strbuf_escape_short(&sb, v, 64, 0);
	ck_assert_uint_eq(sb.len, 64);
	strbuf_reset(&sb);
	v[0] = '\n';
	v[63] = 0xc3; /* "é" across the cut: kept whole or not at all */
	v[64] = 0xa9;
	strbuf_escape_short(&sb, v, sizeof(v), ESC_QUOTE);
	ck_assert_str_eq(strbuf_str(&sb),
			 "\\n"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "... (80 bytes)");
	strbuf_fini(&sb);
}
END_TEST

START_TEST(numbers_as_printf)
{
	static const uint64_t edge[] = {0,
					1,
					9,
					10,
					999999999,
					1000000000,
					1000000001,
					UINT64_MAX,
					(uint64_t)INT64_MAX,
					(uint64_t)INT64_MIN};
	unsigned seed = 7;
	char want[64], got[64];

	for (size_t i = 0; i < 10000; i++) {
		uint64_t v = i < sizeof(edge) / sizeof(edge[0])
				     ? edge[i]
				     : (uint64_t)rand_r(&seed) << 33 ^
					       (uint64_t)rand_r(&seed) << 11 ^
					       (uint64_t)rand_r(&seed) >> (i % 31);
		struct strbuf sb = STRBUF_INIT;

		strbuf_putu(&sb, v);
		strbuf_putc(&sb, ' ');
		strbuf_puti(&sb, (int64_t)v);
		snprintf(want, sizeof(want), "%llu %lld", (unsigned long long)v, (long long)v);
		ck_assert_str_eq(strbuf_str(&sb), want);
		strbuf_fini(&sb);
		for (size_t len = i < 64 ? 0 : 32; len <= 32; len++) { /* cut as snprintf cuts */
			memset(got, 'x', sizeof(got));
			memset(want, 'x', sizeof(want));
			trace_ts(got, len, v);
			snprintf(want, len, "%llu.%09llu", (unsigned long long)(v / 1000000000ull),
				 (unsigned long long)(v % 1000000000ull));
			ck_assert_mem_eq(got, want, sizeof(got));
		}
	}
}
END_TEST

/* printf output written where there is room, else made again after growing: on both sides of
 * the edge of the buffer. */
START_TEST(printf_at_the_edge)
{
	char want[256];

	for (size_t k = 40; k < 80; k++) {
		struct strbuf sb = STRBUF_INIT;

		memset(want, 'a', k);
		want[k] = '\0';
		strbuf_puts(&sb, want);
		strbuf_printf(&sb, "<%d:%s>", 12345, "xyz");
		snprintf(want + k, sizeof(want) - k, "<%d:%s>", 12345, "xyz");
		ck_assert_str_eq(strbuf_str(&sb), want);
		ck_assert_uint_eq(sb.len, strlen(want));
		strbuf_fini(&sb);
	}
}
END_TEST

Suite *strbuf_suite(void);

Suite *strbuf_suite(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, escape);
	tcase_add_test(tc, builders);
	tcase_add_test(tc, escape_runs);
	tcase_add_test(tc, escape_short);
	tcase_add_test(tc, numbers_as_printf);
	tcase_add_test(tc, printf_at_the_edge);
	suite_add_tcase(s, tc);
	return s;
}
