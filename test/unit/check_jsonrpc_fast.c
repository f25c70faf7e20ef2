/*
 * check_jsonrpc_fast.c - the fast path of the channel (jsonrpc_fast.c) must leave a call set
 * exactly as jansson's path does: every field of every call, every note, the session. The same
 * conversations go through both (callset_chan_ops and callset_chan_ops_jansson), crafted ones
 * first, then many random mutations of them; and ordinary lines must take the fast path.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "chan.h"
#include "mutate.h"

/* A conversation: lines in order, each prefixed by '>' (client to server) or '<'. */
static const char *const convs[][12] = {
	{
		">{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"read_files\",\"arguments\":{\"count\":12}}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
		"\"4096 bytes\"}]}}",
		">{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"w\",\"arguments\":{\"path\":\"~/x\",\"content\":\"l1\\nl2 \\\"q\\\" \\\\ \\t\","
		"\"n\":[1,-2,{\"z\":\"file:///etc/passwd\",\"a\":true,\"b\":null}]}}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"isError\":true,\"content\":[]}}",
		">{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":"
		"\"file:///home/u/a.txt\"}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
		">{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}",
		">{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
		"<{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
	},
	{
		">{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"serverInfo\":{\"name\":\"s\"}}}",
		">{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
		"\"arguments\":{\"b\":1.5,\"a\":-0}},\"_meta\":{}}",
		"<{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"x\":1e2}}",
		">{\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"t\\u0041\","
		"\"arguments\":{\"s\":\"caf\xc3\xa9 \xe2\x80\xa8 \\u00e9 \\/\"}}}",
		"<{\"id\":5,\"result\":{\"text\":\"caf\xc3\xa9 \\u00e9\"}}",
		">{ \"id\" : 6 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"t\" ,"
		" \"arguments\" : { \"k\" : [ 1 , 2 ] } } }",
		"< {\"id\":6, \"result\": {\"content\": [ ]} } ",
		">{\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{"
		"\"k\":1,\"k\":2}}}",
		"<{\"id\":7,\"result\":{\"a\":{\"b\":1,\"b\":2}}}",
		">{\"id\":8,\"method\":\"x\",\"params\":{\"traceparent\":\"00-0af7651916cd43dd8448eb211c"
		"80319c-b7ad6b7169203331-01\"}}",
	},
	{
		">{\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"task\":{}}}",
		"<{\"id\":9,\"result\":{\"task\":{\"taskId\":\"T1\",\"status\":\"working\"}}}",
		">{\"id\":10,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"T1\"}}",
		"<{\"id\":10,\"result\":{\"status\":\"completed\"}}",
		">{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":11}}",
		">{\"id\":11,\"method\":\"slow\",\"params\":[1,2]}",
		">{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":11}}",
		"<{\"id\":11,\"error\":{\"code\":1.5}}",
		">[{\"id\":12,\"method\":\"a\"},{\"id\":13,\"method\":\"b\",\"params\":null}]",
		"<[{\"id\":12,\"result\":1},{\"id\":13,\"result\":\"x\"}]",
		">{\"id\":14,\"method\":\"m\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
		"clientInfo\":{\"name\":\"mc\"},\"protocolVersion\":\"2026-07-28\"}}}",
		"<{\"id\":14,\"result\":{\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":"
		"\"ms\"}}}}",
	},
	{
		"<{\"id\":\"s1\",\"method\":\"roots/list\"}",
		">{\"id\":\"s1\",\"result\":{\"roots\":[]}}",
		">{\"id\":123456789012345678,\"method\":\"m\",\"params\":{\"v\":123456789012345678}}",
		"<{\"id\":123456789012345678,\"error\":{\"code\":-0,\"data\":[1.25]}}",
		">{\"id\":\"1\",\"method\":\"m\",\"params\":{}}",
		"<{\"id\":1,\"result\":{}}",
		"<{\"id\":\"1\",\"result\":{},\"error\":{\"code\":7}}",
		">{\"id\":15,\"method\":\"m\\n\",\"params\":{}}",
		"<{\"id\":15,\"result\":{\"isError\":false}}",
		">{\"id\":16,\"method\":\"tools/call\",\"params\":{\"name\":7,\"arguments\":\"str\"}}",
		"<{\"id\":16,\"result\":[1,{\"a\":\"\\\"\"}]}",
		">{\"id\":17,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":null}}",
	},
	{
		">{\"id\":18,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{"
		"\"zz\":{\"y\":1,\"x\":[{\"d\":1,\"c\":2}]},\"aa\":\"v\",\"\":0}}}",
		"<{\"id\":18,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"long text long"
		" text long text long text long text long text long text long text long text long"
		" text long text long text long text long text long text long text long text long"
		" text long text long text\"}],\"score\":0.5}}",
		">{\"id\":19,\"method\":\"m\",\"params\":{\"a\":\"\xff\"}}",
		">{\"id\":20,\"method\":\"m\"} trailing",
		">{\"id\":21,\"method\":\"m\",\"params\":{\"a\":[[[[[[[[[[[[[[[[[[[\"deep\"]]]]]]]]]]]]"
		"]]]]]]],\"b\":\"ok\"}}",
		"<{\"id\":21,\"result\":{\"x\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}}",
		">{\"id\":true,\"method\":\"m\"}",
		"<{\"id\":[1],\"result\":1}",
		">{\"method\":7,\"id\":22,\"result\":1}",
		">{\"method\":\"notifications/tasks/status\",\"params\":{\"taskId\":\"T1\","
		"\"status\":\"failed\"}}",
		">{}",
		">   ",
	},
};

#define N_CONVS (sizeof(convs) / sizeof(convs[0]))
#define LINE_MAX_TEST 8192

struct side {
	struct callset *cs;
	struct chan *ch;
	uint64_t off[CHAN_DIRS];
};

static void side_init(struct side *s, const struct chan_ops *ops)
{
	memset(s, 0, sizeof(*s));
	s->cs = callset__new(0, "/home/u");
	ck_assert_ptr_nonnull(s->cs);
	s->ch = chan__new(0, ops, s->cs);
	ck_assert_ptr_nonnull(s->ch);
}

static void side_fini(struct side *s)
{
	chan__free(s->ch);
	callset__free(s->cs);
}

/* One line (and its newline) as one frame. */
static void side_line(struct side *s, const char *line, size_t n, uint64_t ts)
{
	Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;
	enum chan_dir dir = line[0] == '>' ? CHAN_IN : CHAN_OUT;
	uint8_t buf[LINE_MAX_TEST + 1];

	memcpy(buf, line + 1, n - 1);
	buf[n - 1] = '\n';
	f.dir = dir == CHAN_IN ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f.stream_offset = s->off[dir];
	f.ts = ts;
	f.data = (ProtobufCBinaryData){n, buf};
	ck_assert_int_eq(chan__frame(s->ch, &f, ts), 0);
	s->off[dir] += n;
}

static void same_str(const char *a, const char *b, const char *what, size_t i)
{
	ck_assert_msg(!a == !b && (!a || !strcmp(a, b)), "call %zu %s: %s vs %s", i, what,
		      a ? a : "(null)", b ? b : "(null)");
}

static void same_call(const struct call *a, const struct call *b, size_t i)
{
	ck_assert_msg(a->dir == b->dir && a->incomplete == b->incomplete && a->offset == b->offset &&
			      a->begin_ts == b->begin_ts && a->resp_ts == b->resp_ts &&
			      a->end_ts == b->end_ts && a->end_how == b->end_how &&
			      a->status == b->status && a->error_code == b->error_code &&
			      a->cancel_ts == b->cancel_ts && a->cancelled == b->cancelled &&
			      a->begin_record == b->begin_record &&
			      a->resp_record == b->resp_record,
		      "call %zu: scalar fields differ", i);
	same_str(a->id, b->id, "id", i);
	same_str(a->method, b->method, "method", i);
	same_str(a->tool, b->tool, "tool", i);
	same_str(a->args, b->args, "args", i);
	same_str(a->args_full, b->args_full, "args_full", i);
	ck_assert_msg((a->args == a->args_full) == (b->args == b->args_full), "call %zu cut", i);
	same_str(a->result, b->result, "result", i);
	same_str(a->task_id, b->task_id, "task_id", i);
	same_str(a->task_status, b->task_status, "task_status", i);
	same_str(a->task_ref, b->task_ref, "task_ref", i);
	same_str(a->traceparent, b->traceparent, "traceparent", i);
	same_str(a->tracestate, b->tracestate, "tracestate", i);
	same_str(a->digest, b->digest, "digest", i);
	ck_assert_msg(a->n_ev == b->n_ev, "call %zu: %zu vs %zu evidence strings", i, a->n_ev,
		      b->n_ev);
	for (size_t k = 0; k < a->n_ev; k++)
		same_str(a->ev[k], b->ev[k], "evidence", i);
}

static void same_peer(const struct call_peer *a, const struct call_peer *b)
{
	same_str(a->name, b->name, "peer name", 0);
	same_str(a->version, b->version, "peer version", 0);
	same_str(a->from, b->from, "peer from", 0);
}

static void same_set(struct callset *a, struct callset *b)
{
	const struct call_session *sa = callset__session(a), *sb = callset__session(b);

	ck_assert_uint_eq(callset__count(a), callset__count(b));
	for (size_t i = 0; i < callset__count(a); i++)
		same_call(callset__at(a, i), callset__at(b, i), i + 1);
	ck_assert_uint_eq(callset__notes_total(a), callset__notes_total(b));
	for (size_t i = 0; i < callset__n_notes(a); i++)
		ck_assert_str_eq(callset__note_at(a, i)->text, callset__note_at(b, i)->text);
	same_str(sa->protocol, sb->protocol, "protocol", 0);
	ck_assert(sa->initialize_seen == sb->initialize_seen &&
		  sa->per_request_meta == sb->per_request_meta &&
		  sa->discover_seen == sb->discover_seen && sa->batches == sb->batches &&
		  sa->has_first_request == sb->has_first_request &&
		  sa->first_request_ts == sb->first_request_ts);
	same_peer(&sa->client, &sb->client);
	same_peer(&sa->server, &sb->server);
}

/* Runs lines through both paths; mutate: which line to replace by (mut, mut_len), or -1. */
static void run_conv(const char *const *lines, long mutate, const char *mut, size_t mut_len)
{
	struct side fast, ref;
	uint64_t ts = 1000;

	side_init(&fast, &callset_chan_ops);
	side_init(&ref, &callset_chan_ops_jansson);
	for (long i = 0; i < 12 && lines[i]; i++, ts += 10) {
		const char *l = i == mutate ? mut : lines[i];
		size_t n = i == mutate ? mut_len : strlen(l);

		if (!n)
			continue;
		side_line(&fast, l, n, ts);
		side_line(&ref, l, n, ts);
	}
	callset__finish(fast.cs);
	callset__finish(ref.cs);
	same_set(fast.cs, ref.cs);
	side_fini(&fast);
	side_fini(&ref);
}

START_TEST(crafted)
{
	for (size_t i = 0; i < N_CONVS; i++)
		run_conv(convs[i], -1, NULL, 0);
}
END_TEST

/* Long arguments: cut to CALL_EVSTR_MAX and CALL_SHOW_MAX, in and out of key order, and more
 * values than a tape holds. */
START_TEST(long_arguments)
{
	static char big[3][LINE_MAX_TEST];
	const char *lines[12] = {big[0], big[1], big[2], NULL};
	size_t n = 0;

	n = (size_t)snprintf(big[0], sizeof(big[0]),
			     ">{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
			     "\"arguments\":{\"b\":\"");
	memset(big[0] + n, 'x', 5000);
	strcpy(big[0] + n + 5000, "\",\"a\":1}}}");
	n = (size_t)snprintf(big[1], sizeof(big[1]), ">{\"id\":2,\"method\":\"m\",\"params\":{"
						     "\"a\":\"~/");
	memset(big[1] + n, 'y', 4500);
	strcpy(big[1] + n + 4500, "\",\"b\":[\"file://z\"]}}");
	n = (size_t)snprintf(big[2], sizeof(big[2]), ">{\"id\":3,\"method\":\"m\",\"params\":{"
						     "\"a\":[");
	for (int i = 0; i < 1100; i++)
		n += (size_t)snprintf(big[2] + n, sizeof(big[2]) - n, "%s%d", i ? "," : "", i % 10);
	strcpy(big[2] + n, "]}}");
	run_conv(lines, -1, NULL, 0);
	for (int i = 0; i < 3; i++) { /* all three are read by the fast path */
		struct callset *cs = callset__new(0, NULL);
		struct chan_line l = {.data = (const uint8_t *)big[i] + 1, .len = strlen(big[i]) - 1};

		ck_assert_int_eq(jsonrpc_fast_line(cs, &l), 1);
		callset__free(cs);
	}
}
END_TEST

START_TEST(ordinary_lines_take_the_fast_path)
{
	struct callset *cs = callset__new(0, NULL);
	struct chan_line l = {.dir = CHAN_IN};

	ck_assert_ptr_nonnull(cs);
	for (int i = 0; i < 3; i++) {
		const char *s = convs[0][i] + 1;

		l.dir = convs[0][i][0] == '>' ? CHAN_IN : CHAN_OUT;
		l.data = (const uint8_t *)s;
		l.len = strlen(s);
		ck_assert_int_eq(jsonrpc_fast_line(cs, &l), 1);
	}
	l.data = (const uint8_t *)"{\"id\":0,\"method\":\"initialize\"}";
	l.len = strlen((const char *)l.data);
	ck_assert_int_eq(jsonrpc_fast_line(cs, &l), 0);
	ck_assert_uint_eq(callset__count(cs), 2);
	callset__free(cs);
}
END_TEST

/* Random edits of one line of a conversation (its direction kept). */
START_TEST(mutations)
{
	static const char special[] = "{}[]\",:\\u0e-+.1 \t\x01\x7f\xc3\xa9\xed\xa0\xff/n";
	char buf[1024];
	unsigned seed = 4242;

	for (int round = 0; round < 6000; round++) {
		size_t c = (unsigned)rand_r(&seed) % N_CONVS, k = 0, n, edits;
		long at_line;

		while (k < 12 && convs[c][k])
			k++;
		at_line = (long)((unsigned)rand_r(&seed) % k);
		n = strlen(convs[c][at_line]);
		memcpy(buf, convs[c][at_line], n);
		edits = 1 + (unsigned)rand_r(&seed) % 3;
		n = mutate_bytes((uint8_t *)buf, n, sizeof(buf), 1, edits, special, &seed);
		run_conv(convs[c], at_line, buf, n);
	}
}
END_TEST

Suite *jsonrpc_fast_suite(void);

Suite *jsonrpc_fast_suite(void)
{
	Suite *s = suite_create("jsonrpc_fast");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, crafted);
	tcase_add_test(tc, long_arguments);
	tcase_add_test(tc, ordinary_lines_take_the_fast_path);
	tcase_add_test(tc, mutations);
	tcase_set_timeout(tc, 240);
	suite_add_tcase(s, tc);
	return s;
}
