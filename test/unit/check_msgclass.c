/*
 * check_msgclass.c - the channel line classifier: its validator must give jansson's answer on
 * every line it answers (kind, method, canonical id), and answer ordinary JSON-RPC lines
 * without jansson. Crafted lines, then many random mutations of them, then every byte value at
 * every place of a string, compared both ways.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgclass.h"
#include "mutate.h"

static const char *const lines[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
	"\"arguments\":{\"count\":12}}}",
	"{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
	"\"4096 bytes\"}]}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"error\":{\"code\":-32601,\"message\":\"no\"}}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}",
	"{\"id\":-0,\"method\":\"m\"}",
	"{\"id\":-12,\"method\":\"m\"}",
	"{\"id\":1.5,\"result\":{}}",
	"{\"id\":1e2,\"result\":{}}",
	"{\"id\":12345678901234567890,\"result\":1}",
	"{\"id\":123456789012345678,\"result\":1}",
	"{\"id\":\"a\\\"b\",\"result\":1}",
	"{\"id\":\"caf\xc3\xa9\",\"method\":\"caf\xc3\xa9\"}",
	"{\"id\":\"\xff\",\"method\":\"m\"}",
	"{\"id\":\"\\u00e9\",\"method\":\"m\\u0041\"}",
	"{\"id\":1,\"method\":\"m\\u0000x\"}",
	"{\"id\":1,\"method\":\"m\",\"method\":\"n\"}",
	"{\"id\":1,\"id\":2,\"method\":\"n\"}",
	"{\"i\\u0064\":1,\"method\":\"n\"}",
	"{\"id\":1,\"method\":7}",
	"{\"id\":true,\"method\":\"m\"}",
	"{\"id\":[1],\"result\":null}",
	"[{\"id\":1,\"method\":\"a\"},{\"id\":2,\"method\":\"b\"}]",
	"[{\"method\":\"notifications/x\"}]",
	"[1,{\"id\":1,\"method\":\"a\"}]",
	"[]",
	"[[{\"id\":1,\"method\":\"a\"}]]",
	"{}",
	"\"just a string\"",
	"42",
	"true",
	"null",
	"nul",
	"truex",
	"  {\"id\":1,\"method\":\"m\"}  \r\t",
	"{\"id\":1,\"method\":\"m\"} x",
	"{\"id\":1,\"method\":\"m\",}",
	"{\"id\":01,\"method\":\"m\"}",
	"{\"id\":1.,\"method\":\"m\"}",
	"{\"id\":1e400,\"method\":\"m\"}",
	"{\"a\":1e400,\"method\":\"m\"}",
	"{\"a\":1e99,\"id\":\"1\",\"method\":\"m\"}",
	"{\"a\":\"\\ud83d\\ude00\",\"id\":1,\"method\":\"m\"}",
	"{\"a\":\"\\ud83d\",\"id\":1,\"method\":\"m\"}",
	"{\"a\":\"\\x\",\"id\":1,\"method\":\"m\"}",
	"{\"a\":\"tab\there\",\"id\":1,\"method\":\"m\"}",
	"{\"a\":[1,2,{\"b\":[true,false,null,-1.25e-3]}],\"id\":\"q\",\"result\":{}}",
	"{\"a\":{\"id\":9,\"method\":\"inner\"},\"result\":5}",
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":{}}}",
	"",
	"   ",
	"not json at all",
};

static void check_same(const uint8_t *p, size_t n)
{
	struct msgclass a, b;

	msgclass_line(&a, p, n);
	msgclass_line_jansson(&b, p, n);
	ck_assert_msg(a.kind == b.kind, "kind %d vs %d on %.*s", a.kind, b.kind, (int)n, p);
	ck_assert_msg(!a.method == !b.method, "method on %.*s", (int)n, p);
	if (a.method)
		ck_assert_msg(a.method_len == b.method_len &&
				      !memcmp(a.method, b.method, a.method_len),
			      "method %.*s vs %.*s", (int)a.method_len, a.method,
			      (int)b.method_len, b.method);
	ck_assert_msg(!a.id == !b.id, "id %s vs %s on %.*s", a.id ? a.id : "-",
		      b.id ? b.id : "-", (int)n, p);
	if (a.id)
		ck_assert_str_eq(a.id, b.id);
	msgclass_fini(&a);
	msgclass_fini(&b);
}

START_TEST(crafted)
{
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		check_same((const uint8_t *)lines[i], strlen(lines[i]));
	check_same(NULL, 0);
}
END_TEST

START_TEST(ordinary_lines_need_no_tree)
{
	for (size_t i = 0; i < 4; i++) {
		struct msgclass a;

		msgclass_line(&a, (const uint8_t *)lines[i], strlen(lines[i]));
		ck_assert_ptr_null(a.doc);
		msgclass_fini(&a);
	}
}
END_TEST

/* Random edits of the crafted lines: bytes replaced, inserted and removed, with a bias to the
 * characters JSON gives meaning to. */
START_TEST(mutations)
{
	static const char special[] = "{}[]\",:\\u0e-+.1 \t\x01\x7f\xc3\xa9\xed\xa0\xff";
	uint8_t buf[512];
	unsigned seed = 12345;

	for (int round = 0; round < 200000; round++) {
		const char *src = lines[(unsigned)rand_r(&seed) % (sizeof(lines) / sizeof(lines[0]))];
		size_t n = strlen(src), edits = 1 + (unsigned)rand_r(&seed) % 4;

		memcpy(buf, src, n);
		n = mutate_bytes(buf, n, sizeof(buf), 0, edits, special, &seed);
		check_same(buf, n);
	}
}
END_TEST

/* Every byte value at every place of a long string, whose plain bytes are skipped eight at a
 * time: the classifier must stop at each byte that needs a look, wherever it falls in a word. */
START_TEST(every_byte_at_every_offset)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":\"", tail[] = "\",\"method\":\"m\"}";
	uint8_t buf[128];
	size_t h = strlen(head), t = strlen(tail);

	for (size_t len = 1; len <= 40; len++) {
		for (size_t at = 0; at < len; at++) {
			for (unsigned c = 0; c < 256; c++) {
				memcpy(buf, head, h);
				memset(buf + h, 'a', len);
				buf[h + at] = (uint8_t)c;
				memcpy(buf + h + len, tail, t);
				check_same(buf, h + len + t);
			}
		}
	}
}
END_TEST

Suite *msgclass_suite(void);

Suite *msgclass_suite(void)
{
	Suite *s = suite_create("msgclass");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, crafted);
	tcase_add_test(tc, ordinary_lines_need_no_tree);
	tcase_add_test(tc, mutations);
	tcase_add_test(tc, every_byte_at_every_offset);
	suite_add_tcase(s, tc);
	return s;
}
