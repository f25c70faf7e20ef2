/*
 * check_strbuf.c - the byte-string escaper every output goes through: printable UTF-8 kept,
 * controls, invalid UTF-8, overlong forms, surrogates and terminal-deceiving code points
 * escaped, backslash and quotes made unambiguous.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

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

Suite *strbuf_suite(void);

Suite *strbuf_suite(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, escape);
	tcase_add_test(tc, builders);
	suite_add_tcase(s, tc);
	return s;
}
