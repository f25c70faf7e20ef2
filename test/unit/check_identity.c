/*
 * check_identity.c - who and what the channel says (identity.c): clientInfo of initialize
 * and of a 2026-07-28 request's _meta, serverInfo of the initialize and server/discover
 * results, the first one kept; W3C traceparent and tracestate of each request from _meta or
 * params, kept only when well formed (hostile values dropped, never echoed); the rendering
 * in JSON and text with the header's server, user and host.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "calls_testlib.h"
#include "identity.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static const struct call_session *sess(struct callmodel *cm)
{
	return callset__session(callmodel__calls(cm));
}

START_TEST(initialize_peers)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_reset_offsets();
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	       "\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"claude\\u001b[31m\","
	       "\"version\":\"1.2\"}}}\n",
	       1 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"serverInfo\":{\"name\":\"fs\","
	       "\"version\":\"0.2.0\"}}}\n",
	       2 * MS);
	/* a later clientInfo does not replace the first */
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"_meta\":{"
	       "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"other\"}}}}\n",
	       3 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_str_eq(sess(cm)->client.name, "claude\\x1b[31m");
	ck_assert_str_eq(sess(cm)->client.version, "1.2");
	ck_assert_str_eq(sess(cm)->client.from, "initialize");
	ck_assert_str_eq(sess(cm)->server.name, "fs");
	ck_assert_str_eq(sess(cm)->server.from, "initialize");
	callmodel__free(cm);
}
END_TEST

START_TEST(meta_peers)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_reset_offsets();
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"server/discover\",\"params\":{"
	       "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	       "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"agent\",\"version\":7}}}}\n",
	       1 * MS);
	t_send(cm, CHAN_OUT,
	       "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"serverInfo\":{\"name\":\"srv\"}}}"
	       "\n",
	       2 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_str_eq(sess(cm)->client.name, "agent");
	ck_assert_ptr_null(sess(cm)->client.version); /* not a string */
	ck_assert_str_eq(sess(cm)->client.from, "_meta");
	ck_assert_str_eq(sess(cm)->server.name, "srv");
	ck_assert_str_eq(sess(cm)->server.from, "server/discover");
	callmodel__free(cm);
}
END_TEST

START_TEST(traceparent_in_meta_and_params)
{
	struct callmodel *cm = t_model(0, 0, true);

	t_reset_offsets();
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
	       "\"_meta\":{\"traceparent\":\"" TP
	       "\",\"tracestate\":\"rojo=00f067aa0ba902b7\"}}}\n",
	       1 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"y\","
	       "\"traceparent\":\"" TP "\"}}\n",
	       2 * MS);
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"z\","
	       "\"_meta\":{\"traceparent\":\"00-ZZ\\n\",\"tracestate\":\"a=b\"}}}\n",
	       3 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_str_eq(t_call(cm, 1)->traceparent, TP);
	ck_assert_str_eq(t_call(cm, 1)->tracestate, "rojo=00f067aa0ba902b7");
	ck_assert_str_eq(t_call(cm, 2)->traceparent, TP);
	ck_assert_ptr_null(t_call(cm, 2)->tracestate);
	ck_assert_ptr_null(t_call(cm, 3)->traceparent);
	ck_assert_ptr_null(t_call(cm, 3)->tracestate);
	callmodel__free(cm);
}
END_TEST

START_TEST(traceparent_forms)
{
	static const struct {
		const char *s;
		bool ok;
	} t[] = {
		{TP, true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true},
		{TP "-more", false}, /* version 00 has exactly four fields */
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false},
		{"", false},
	};
	size_t keep;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		keep = 0;
		ck_assert_msg(identity_traceparent_ok(t[i].s, strlen(t[i].s), &keep) == t[i].ok,
			      "%s", t[i].s);
		if (t[i].ok)
			ck_assert_uint_eq(keep, 55);
	}
}
END_TEST

START_TEST(rendering)
{
	struct callmodel *cm = t_model(0, 0, true);
	struct strbuf sb = STRBUF_INIT;
	json_t *j, *tc;
	char *s;

	t_reset_offsets();
	t_send(cm, CHAN_IN,
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	       "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"},\"_meta\":{\"traceparent\":\"" TP
	       "\"}}}\n",
	       1 * MS);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	j = identity_json(NULL, callmodel__calls(cm));
	ck_assert_ptr_nonnull(j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s,
			 "{\"client\":{\"from\":\"initialize\",\"name\":\"c\",\"version\":\"1\"},"
			 "\"host\":null,\"server\":{\"from\":null,\"name\":null,\"version\":null},"
			 "\"trace_id\":null,\"user\":null}");
	free(s);
	json_decref(j);
	tc = identity_trace_context_json(t_call(cm, 1));
	ck_assert_str_eq(json_string_value(json_object_get(tc, "trace_id")),
			 "4bf92f3577b34da6a3ce929d0e0e4736");
	ck_assert_str_eq(json_string_value(json_object_get(tc, "parent_id")), "00f067aa0ba902b7");
	ck_assert(json_is_true(json_object_get(tc, "sampled")));
	json_decref(tc);
	identity_text(&sb, NULL, callmodel__calls(cm), "  ");
	ck_assert_str_eq(strbuf_str(&sb), "  client: c 1 (initialize)\n"
					  "  server: unknown (no serverInfo on the channel)\n");
	strbuf_fini(&sb);
	callmodel__free(cm);
}
END_TEST

Suite *identity_suite(void);
Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *core = tcase_create("core"), *bad = tcase_create("errors");

	tcase_add_test(core, initialize_peers);
	tcase_add_test(core, meta_peers);
	tcase_add_test(core, traceparent_in_meta_and_params);
	tcase_add_test(core, rendering);
	tcase_add_test(bad, traceparent_forms);
	suite_add_tcase(s, core);
	suite_add_tcase(s, bad);
	return s;
}
