/*
 * check_callscmd.c - `mcpwitness calls` and the calls in `analyze`, through the same do_<verb>
 * functions the binary runs, on a small signed trace with a channel: a tools/call whose child
 * shell connects to the cloud metadata address, a benign call, an ambient event, a junk line.
 * The call and its rule appear in calls (text and JSON) and in analyze's findings; policy
 * fields tool / method / arguments / attribution / bucket; byte-identical output run after
 * run; standard input; usage errors; a trace cut before its FINAL seal (exit 3 unless
 * --allow-incomplete, with --no-verify too) and a file that is not a trace (exit 2).
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "synth_trace.h"

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"

struct result {
	int code;
	char *out, *err;
};

static struct synth S;

static struct result run(const char *stdin_path, int (*fn)(int, char **), ...)
{
	char *argv[32], outp[] = "/tmp/mw-out-XXXXXX", errp[] = "/tmp/mw-err-XXXXXX";
	int argc = 0, so = dup(1), se = dup(2), si = dup(0), fo = mkstemp(outp), fe = mkstemp(errp);
	struct result r;
	va_list ap;

	va_start(ap, fn);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	ck_assert(fo >= 0 && fe >= 0);
	fflush(stdout);
	fflush(stderr);
	dup2(fo, 1);
	dup2(fe, 2);
	if (stdin_path) {
		int fi = open(stdin_path, O_RDONLY);

		ck_assert_int_ge(fi, 0);
		dup2(fi, 0);
		close(fi);
	}
	optind = 0;
	r.code = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1), dup2(se, 2), dup2(si, 0);
	close(so), close(se), close(si), close(fo), close(fe);
	r.out = synth_slurp(outp, NULL);
	r.err = synth_slurp(errp, NULL);
	unlink(outp);
	unlink(errp);
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static const uint8_t sa_metadata[16] = {2, 0, 0, 80, 169, 254, 169, 254};
static uint64_t in_off, out_off;

static void send(int read, const char *s)
{
	synth_stdio(&S, read, read ? in_off : out_off, s, 0);
	*(read ? &in_off : &out_off) += strlen(s);
}

static void make(void)
{
	in_off = out_off = 0;
	synth_begin(&S, "calls.mcpt");
	synth_exec(&S, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	send(1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2025-06-18\"}}\n");
	send(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n");
	send(0, "debug: ready\n");
	send(1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"fetch_url\",\"arguments\":{\"url\":\"http://169.254.169.254/latest\"}}}\n");
	synth_fork(&S, SYNTH_PID, SYNTH_PSTART, 101, 1010);
	synth_exec(&S, 101, 1010, "/bin/sh", "/bin/sh\0-c\0curl http://169.254.169.254/latest", 46);
	synth_connect(&S, 101, 1010, sa_metadata, 16, 0, 0);
	send(0, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[],\"isError\":false}}\n");
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/etc/hosts", NULL, 0, 3);
	send(1, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"echo\",\"arguments\":{\"text\":\"hi\"}}}\n");
	send(0, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n");
	synth_exit(&S, SYNTH_PID, SYNTH_PSTART, 0);
	synth_finish(&S);
}

static const char *jstr(json_t *o, const char *path)
{
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = json_is_array(o) ? json_array_get(o, strtoul(tok, NULL, 10))
				     : json_object_get(o, tok);
	ck_assert_msg(json_is_string(o), "%s is not a string", path);
	return json_string_value(o);
}

START_TEST(calls_json)
{
	struct result r;
	json_t *doc, *c2;

	make();
	r = run(NULL, do_calls, "calls", S.path, "--pubkey", S.pub, "--json", NULL);
	ck_assert_msg(r.code == 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "calls")), 3);
	c2 = json_array_get(json_object_get(doc, "calls"), 1);
	ck_assert_str_eq(jstr(c2, "tool"), "fetch_url");
	ck_assert_str_eq(jstr(c2, "status"), "ok");
	ck_assert_str_eq(jstr(c2, "processes.0.exe"), "/bin/sh");
	ck_assert_str_eq(jstr(c2, "processes.0.binding"), "lineage");
	ck_assert_str_eq(jstr(c2, "effects.network.0.effect"), "connect 169.254.169.254:80");
	ck_assert_str_eq(jstr(c2, "effects.network.0.rules.0"), "lineage");
	ck_assert_str_eq(jstr(doc, "ambient.files.0.effect"), "openat /etc/hosts (read)");
	ck_assert_str_eq(jstr(doc, "startup.processes.0.effect"), "exec /usr/bin/node [\"node\" "
								  "\"server.js\"]");
	ck_assert_str_eq(jstr(doc, "channel_notes.0"),
			 "stdout offset 67: not JSON, skipped: \"debug: ready\"");
	ck_assert_str_eq(jstr(doc, "session.protocol"), "2025-06-18");
	json_decref(doc);
	result_free(&r);
}
END_TEST

START_TEST(calls_text_deterministic_and_stdin)
{
	struct result a, b, c;

	make();
	a = run(NULL, do_calls, "calls", S.path, "--pubkey", S.pub, NULL);
	b = run(NULL, do_calls, "calls", S.path, "--pubkey", S.pub, NULL);
	c = run(S.path, do_calls, "calls", "-", "--pubkey", S.pub, NULL);
	ck_assert_msg(a.code == 0, "%s", a.err);
	ck_assert_str_eq(a.out, b.out);
	ck_assert_str_eq(a.out, c.out);
	ck_assert_ptr_nonnull(strstr(a.out, "\n== call 2 tools/call fetch_url (id 2): ok ==\n"));
	ck_assert_ptr_nonnull(strstr(a.out, "    101 /bin/sh [\"/bin/sh\" \"-c\" \"curl "
					    "http://169.254.169.254/latest\"] lineage\n"));
	ck_assert_ptr_nonnull(strstr(a.out, "    connect 169.254.169.254:80 [lineage] pid 101"));
	result_free(&a);
	result_free(&b);
	result_free(&c);
}
END_TEST

START_TEST(analyze_names_the_call)
{
	struct result r;
	json_t *doc, *fs, *f = NULL;

	make();
	r = run(NULL, do_analyze, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--format",
		"json", NULL);
	ck_assert_msg(r.code == 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	fs = json_object_get(doc, "findings");
	for (size_t i = 0; i < json_array_size(fs); i++)
		if (!strcmp(jstr(json_array_get(fs, i), "rule"), "net.cloud-metadata"))
			f = json_array_get(fs, i);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(jstr(f, "call.rule"), "lineage");
	ck_assert_str_eq(jstr(f, "call.call.tool"), "fetch_url");
	ck_assert_str_eq(jstr(f, "call.call.id"), "2");
	ck_assert_str_eq(jstr(f, "call.call.method"), "tools/call");
	ck_assert_uint_eq(strlen(jstr(f, "call.call.arguments_digest")), 16);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "calls")), 3);
	json_decref(doc);
	result_free(&r);
	r = run(NULL, do_analyze, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_ptr_nonnull(strstr(r.out, "[critical] net.cloud-metadata: "));
	ck_assert_ptr_nonnull(
		strstr(r.out, "  call: call 2 tools/call fetch_url (id 2) by lineage\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "calls: 3, 0 incomplete; channel notes: 1\n"));
	result_free(&r);
}
END_TEST

static const char CALL_POLICY[] =
	"version: 1\n"
	"rules:\n"
	"  - {id: t.fetch-exec, description: d, severity: high, category: exec,\n"
	"     condition: {op: exec, tool: fetch_url, method: \"tools/*\", attribution: lineage}}\n"
	"  - {id: t.args, description: d, severity: low, category: net_connect,\n"
	"     condition: {op: connect, arguments: \"*169.254.169.254*\"}}\n"
	"  - {id: t.ambient, description: d, severity: info, category: x,\n"
	"     condition: {bucket: ambient}}\n"
	"  - {id: t.startup, description: d, severity: info, category: x,\n"
	"     condition: {bucket: startup, op: exec}}\n"
	"  - {id: t.echo, description: d, severity: info, category: x, condition: {tool: echo}}\n";

START_TEST(policy_call_fields)
{
	char path[128];
	struct result r;
	json_t *doc, *fs;
	const char *want[] = {"t.startup", "t.fetch-exec", "t.args", "t.ambient"};

	make();
	snprintf(path, sizeof(path), "%s/calls.yaml", S.dir);
	synth_spew(path, CALL_POLICY, strlen(CALL_POLICY));
	r = run(NULL, do_analyze, "analyze", S.path, "-p", path, "--pubkey", S.pub, "--format",
		"json", NULL);
	ck_assert_msg(r.code == 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	fs = json_object_get(doc, "findings");
	ck_assert_uint_eq(json_array_size(fs), 4);
	for (size_t i = 0; i < 4; i++) /* sorted by call: startup, call 2, then ambient */
		ck_assert_str_eq(jstr(json_array_get(fs, i), "rule"), want[i]);
	ck_assert_str_eq(jstr(json_array_get(fs, 3), "call.bucket"), "ambient");
	json_decref(doc);
	result_free(&r);
}
END_TEST

START_TEST(usage_errors)
{
	struct result r;

	make();
	r = run(NULL, do_calls, "calls", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err,
			 "mcpwitness: calls: missing TRACE; see 'mcpwitness calls --help'\n");
	result_free(&r);
	r = run(NULL, do_calls, "calls", S.path, "--cancel-grace", "soon", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: calls: bad --cancel-grace \"soon\" (milliseconds, "
				"0..86400000); see 'mcpwitness calls --help'\n");
	result_free(&r);
	r = run(NULL, do_calls, "calls", "/nonexistent.mcpt", "--no-verify", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: failed to open trace /nonexistent.mcpt: No such file "
				"or directory\n");
	result_free(&r);
	r = run(NULL, do_calls, "calls", S.path, "--pubkey", S.pub, "--cancel-grace", "250", NULL);
	ck_assert_int_eq(r.code, 0);
	result_free(&r);
}
END_TEST

/* Cuts the trace just before its FINAL seal (the last record): no torn frame, no FINAL seal. */
static void cut_before_final(const char *path)
{
	struct result r = run(NULL, do_dump, "dump", path, "--json", NULL);
	char *last = strrchr(r.out, '{'), *buf;
	json_t *o = last ? json_loads(last, 0, NULL) : NULL;
	size_t len;

	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "type")), "seal");
	buf = synth_slurp(path, &len);
	synth_spew(path, buf, (size_t)json_integer_value(json_object_get(o, "offset")));
	free(buf);
	json_decref(o);
	result_free(&r);
}

START_TEST(incomplete_and_not_a_trace)
{
	struct result r;
	char want[160];

	make();
	cut_before_final(S.path);
	for (int verify = 0; verify < 2; verify++) {
		r = run(NULL, do_calls, "calls", S.path, verify ? "--pubkey" : "--no-verify",
			verify ? S.pub : NULL, NULL);
		ck_assert_int_eq(r.code, 3);
		/* shown, then refused; verified, the calls after the last seal (here: all) are
		 * left out, and said to be */
		if (verify)
			ck_assert_ptr_nonnull(strstr(r.err, "calls after the last seal are left out"));
		ck_assert((strstr(r.out, "fetch_url") == NULL) == (verify == 1));
		ck_assert_ptr_nonnull(strstr(r.err, "calls.mcpt: trace incomplete: "));
		ck_assert_ptr_nonnull(strstr(r.err, "(--allow-incomplete accepts it)\n"));
		result_free(&r);
		r = run(NULL, do_calls, "calls", S.path, verify ? "--pubkey" : "--no-verify",
			verify ? S.pub : "--allow-incomplete", verify ? "--allow-incomplete" : NULL,
			NULL);
		ck_assert_msg(r.code == 0, "%s", r.err);
		result_free(&r);
	}
	synth_spew(S.path, "", 0);
	snprintf(want, sizeof(want),
		 "mcpwitness: failed to read trace %s: empty file: not a trace\n", S.path);
	for (int verify = 0; verify < 2; verify++) { /* an input error, not a verification */
		r = run(NULL, do_calls, "calls", S.path, verify ? "--pubkey" : "--no-verify",
			verify ? S.pub : NULL, NULL);
		ck_assert_int_eq(r.code, 2);
		ck_assert_str_eq(r.out, "");
		ck_assert_str_eq(r.err, want);
		result_free(&r);
	}
}
END_TEST

static void teardown(void)
{
	synth_cleanup(&S);
}

Suite *callscmd_suite(void);
Suite *callscmd_suite(void)
{
	Suite *s = suite_create("callscmd");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, calls_json);
	tcase_add_test(t, calls_text_deterministic_and_stdin);
	tcase_add_test(t, analyze_names_the_call);
	tcase_add_test(t, policy_call_fields);
	tcase_add_test(t, usage_errors);
	tcase_add_test(t, incomplete_and_not_a_trace);
	suite_add_tcase(s, t);
	return s;
}
