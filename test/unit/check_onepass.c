/*
 * check_onepass.c - analyze's one read (analyze.h, attr_later.h): when no rule reads a call,
 * the trace is read once and the findings are attributed after it. Each case runs the same
 * analysis once that way and once with two reads forced (analyze_opts.two_reads), and asks for
 * byte-identical reports, text and JSON, with every attribution rule and bucket among the
 * findings; and for two reads where one would not do: a rule, or only an exception, that reads
 * a call; the HTML timeline; segments held back; a Loss record met during the read.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "events.h"
#include "synth_trace.h"

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"

static struct synth S;
static char extra[128]; /* a policy file of the case, in S.dir */

static void teardown(void)
{
	if (extra[0])
		unlink(extra);
	extra[0] = 0;
	synth_cleanup(&S);
}

static void write_policy(const char *yaml)
{
	snprintf(extra, sizeof(extra), "%s/extra.yaml", S.dir);
	synth_spew(extra, yaml, strlen(yaml));
}

/* Every subject a finding: each attribution rule and bucket has something to show. */
static const char every_subject[] = "version: 1\n"
				    "rules:\n"
				    "  - id: t.open\n"
				    "    description: an open\n"
				    "    severity: low\n"
				    "    category: t\n"
				    "    condition: {op: open}\n"
				    "  - id: t.exec\n"
				    "    description: an exec\n"
				    "    severity: low\n"
				    "    category: t\n"
				    "    condition: {op: exec}\n"
				    "  - id: t.connect\n"
				    "    description: a connect\n"
				    "    severity: low\n"
				    "    category: t\n"
				    "    condition: {op: connect}\n"
				    "  - id: t.message\n"
				    "    description: a message\n"
				    "    message: \"{detail}\"\n"
				    "    severity: info\n"
				    "    category: t\n"
				    "    condition: {family: channel}\n";

static const uint8_t sa_metadata[16] = {2, 0, 0, 80, 169, 254, 169, 254};

static void request(uint64_t *off, const char *line)
{
	synth_stdio(&S, 1, *off, line, 0);
	*off += strlen(line);
}

static void respond(uint64_t *off, const char *line)
{
	synth_stdio(&S, 0, *off, line, 0);
	*off += strlen(line);
}

/* Startup, one call with a child (lineage), two calls at once (evidence, ambiguous), a
 * notification, ambient time, a PATH search, an entry record never completed, a private key
 * in a response, then the shutdown. */
static void scenario(void)
{
	uint64_t in = 0, out = 0;
	Mcpt__Event e = MCPT__EVENT__INIT;

	synth_begin(&S, "t.mcpt");
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/home/u/.ssh/config", NULL, 0, 3); /* startup */
	request(&in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"run\",\"arguments\":{\"cmd\":\"cat /home/u/.ssh/id_rsa\"}}}\n");
	synth_fork(&S, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	synth_exec(&S, 101, 2000, "/bin/sh", "sh\0-c\0cat /home/u/.ssh/id_rsa", 30);
	synth_open(&S, 101, 2000, "/home/u/.ssh/id_rsa", NULL, 0, 3);
	synth_exit(&S, 101, 2000, 0);
	respond(&out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
		      "\"text\":\"-----BEGIN OPENSSH PRIVATE KEY-----\"}]}}\n");
	request(&in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"read_file\",\"arguments\":{\"path\":\"/home/u/.aws/"
		     "credentials\"}}}\n");
	request(&in, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\",\"params\":"
		     "{\"name\":\"fetch\",\"arguments\":{\"url\":\"http://example.org/\"}}}\n");
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/home/u/.aws/credentials", NULL, 0, 3);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/etc/passwd", NULL, 0, 3); /* ambiguous */
	synth_connect(&S, SYNTH_PID, SYNTH_PSTART, sa_metadata, 16, -111, 0);
	respond(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n");
	respond(&out, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
	respond(&out, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{}}\n");
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/home/u/.netrc", NULL, 0, 3); /* ambient */
	synth_fork(&S, SYNTH_PID, SYNTH_PSTART, 102, 3000);
	synth_exit(&S, 101, 2000, 0);
	e.op = MCPT__OP__OP_EXEC_FAILED;
	e.pid = e.tid = 102;
	e.pstart = 3000;
	e.path = (ProtobufCBinaryData){13, (uint8_t *)"/usr/sbin/foo"};
	e.ret = -2;
	synth_event(&S, &e);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_OPEN;
	e.pid = e.tid = SYNTH_PID;
	e.pstart = SYNTH_PSTART;
	e.path = (ProtobufCBinaryData){9, (uint8_t *)"/tmp/fifo"};
	e.flags = MW_F_ENTRY;
	synth_event(&S, &e);
	synth_mark(&S, "{\"op\":\"shutdown\"}", 0);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/home/u/.ssh/known_hosts", NULL, 0, 3);
}

struct outcome {
	int code;
	unsigned reads;
	char *out;
	size_t len;
};

static struct outcome run(const char *trace, const char *policy2, enum report_format fmt, bool two,
			  bool hold, size_t max_per_rule)
{
	const char *pols[2] = {POLICY, policy2};
	struct analyze_opts o = {
		.trace = trace,
		.policies = pols,
		.n_policies = policy2 ? 2 : 1,
		.pubkey = S.pub,
		.format = fmt,
		.fail_on = -1,
		.max_per_rule = max_per_rule,
		.two_reads = two,
		.verify_before_release = hold,
	};
	struct outcome r = {0};
	FILE *f = open_memstream(&r.out, &r.len);

	ck_assert_ptr_nonnull(f);
	r.code = analyze_run_reads(&o, f, &r.reads);
	ck_assert_int_eq(fclose(f), 0);
	return r;
}

/* The one read and the forced two give the same report; returns how many reads it took. */
static unsigned same_both_ways(const char *policy2, enum report_format fmt, size_t max_per_rule,
			       char **report)
{
	struct outcome one = run(S.path, policy2, fmt, false, false, max_per_rule);
	struct outcome two = run(S.path, policy2, fmt, true, false, max_per_rule);

	size_t d = 0, from;

	ck_assert_int_eq(two.reads, 2);
	ck_assert_int_eq(one.code, two.code);
	while (d < one.len && d < two.len && one.out[d] == two.out[d])
		d++;
	from = d > 80 ? d - 80 : 0;
	ck_assert_msg(d == one.len && d == two.len,
		      "the reports differ at byte %zu:\none read: %.200s\ntwo reads: %.200s", d,
		      one.out + from, two.out + from);
	free(two.out);
	if (report)
		*report = one.out;
	else
		free(one.out);
	return one.reads;
}

/* The attributions of the findings of a JSON report, as "rule/bucket" words in one string. */
static void attributions(const char *report, char *buf, size_t len)
{
	json_error_t je;
	json_t *doc = json_loads(report, 0, &je), *fs, *f, *call;
	size_t i;

	ck_assert_msg(doc, "%s", je.text);
	buf[0] = 0;
	fs = json_object_get(doc, "findings");
	json_array_foreach(fs, i, f) {
		call = json_object_get(f, "call");
		ck_assert(json_is_object(call));
		snprintf(buf + strlen(buf), len - strlen(buf), " %s/%s",
			 json_string_value(json_object_get(call, "rule")),
			 json_is_string(json_object_get(call, "bucket"))
				 ? json_string_value(json_object_get(call, "bucket"))
				 : "-");
	}
	json_decref(doc);
}

START_TEST(default_policy_once_same_report)
{
	char *report, seen[4096];

	scenario();
	synth_finish(&S);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_TEXT, 0, NULL), 1);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_SARIF, 0, NULL), 1);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_JSON, 0, &report), 1);
	attributions(report, seen, sizeof(seen));
	free(report);
	/* the shell of call 1, the key in its response, a read by evidence, the metadata address
	 * in both concurrent calls, a read at startup, one in ambient time, one after shutdown */
	ck_assert_msg(strstr(seen, " lineage/-") && strstr(seen, " window/-") &&
			      strstr(seen, " evidence/-") && strstr(seen, " ambiguous/-") &&
			      strstr(seen, " bucket/startup") && strstr(seen, " bucket/ambient") &&
			      strstr(seen, " bucket/shutdown"),
		      "attributions:%s", seen);
}
END_TEST

START_TEST(every_subject_same_attribution)
{
	char *report, seen[8192];
	unsigned n = 0;

	scenario();
	synth_finish(&S);
	write_policy(every_subject);
	ck_assert_uint_eq(same_both_ways(extra, FORMAT_TEXT, 0, NULL), 1);
	ck_assert_uint_eq(same_both_ways(extra, FORMAT_JSON, 0, &report), 1);
	attributions(report, seen, sizeof(seen));
	free(report);
	for (const char *p = seen; (p = strchr(p, '/')); p++)
		n++;
	ck_assert_uint_ge(n, 15); /* opens, the exec, the connect, the messages */
	/* at most one finding kept per rule: the kept ones still get their own attribution */
	ck_assert_uint_eq(same_both_ways(extra, FORMAT_JSON, 1, NULL), 1);
}
END_TEST

START_TEST(a_loss_reads_twice)
{
	Mcpt__Loss l = MCPT__LOSS__INIT;

	scenario();
	l.ts = 5000;
	l.src = MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL;
	l.delta = 3;
	l.first_seq = 4;
	l.last_seq = 6;
	ck_assert_int_eq(mcpt_writer__append(S.w, MCPT_T_LOSS, &l.base, l.ts), 0);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/home/u/.ssh/id_ed25519", NULL, 0, 3);
	synth_finish(&S);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_TEXT, 0, NULL), 2);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_JSON, 0, NULL), 2);
}
END_TEST

static void alive_at_end(uint32_t pid, uint64_t pstart)
{
	Mcpt__ProcInfo pi = MCPT__PROC_INFO__INIT;

	pi.ts = 90000;
	pi.kind = MCPT__PROC_INFO__KIND__ALIVE_AT_END;
	pi.pid = pid;
	pi.pstart = pstart;
	ck_assert_int_eq(mcpt_writer__append(S.w, MCPT_T_PROC, &pi.base, pi.ts), 0);
}

/* The attributions of the default policy's coverage.outlived-server findings, in report order. */
static void outlived_attributions(const char *report, char *buf, size_t len)
{
	json_error_t je;
	json_t *doc = json_loads(report, 0, &je), *f;
	size_t i;

	ck_assert_msg(doc, "%s", je.text);
	buf[0] = 0;
	json_array_foreach(json_object_get(doc, "findings"), i, f) {
		json_t *call = json_object_get(f, "call");

		if (strcmp(json_string_value(json_object_get(f, "rule")), "coverage.outlived-server"))
			continue;
		snprintf(buf + strlen(buf), len - strlen(buf), " %s:%lld",
			 json_string_value(json_object_get(call, "rule")),
			 json_integer_value(json_object_get(json_object_get(f, "process"), "pid")));
	}
	json_decref(doc);
}

/* Processes left running after the server exited: a child of call 1's shell (lineage) and one
 * forked in ambient time (a bucket) are findings of their own, the same read once or twice (the
 * one read attributes them after it, from their process); with the server itself still running
 * at the end, none. */
START_TEST(processes_left_running_same_both_ways)
{
	char *report, seen[256];

	scenario();
	synth_fork(&S, 101, 2000, 103, 4000); /* forked by call 1's shell, before its exit */
	alive_at_end(103, 4000);
	alive_at_end(102, 3000);
	synth_finish(&S);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_TEXT, 0, NULL), 1);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_JSON, 0, &report), 1);
	outlived_attributions(report, seen, sizeof(seen));
	ck_assert_str_eq(seen, " bucket:102 lineage:103"); /* in trace order: by call */
	free(report);
	synth_cleanup(&S);

	scenario();
	alive_at_end(102, 3000);
	alive_at_end(SYNTH_PID, SYNTH_PSTART);
	synth_finish(&S);
	ck_assert_uint_eq(same_both_ways(NULL, FORMAT_JSON, 0, &report), 1);
	outlived_attributions(report, seen, sizeof(seen));
	ck_assert_str_eq(seen, "");
	free(report);
}
END_TEST

static unsigned reads_with(const char *yaml, enum report_format fmt, bool hold)
{
	struct outcome r;

	if (yaml)
		write_policy(yaml);
	r = run(S.path, yaml ? extra : NULL, fmt, false, hold, 0);
	ck_assert_msg(r.code == 0, "exit %d", r.code);
	free(r.out);
	return r.reads;
}

#define RULE_HEAD                                                                                  \
	"version: 1\nrules:\n  - id: t.r\n    description: d\n    severity: low\n"                 \
	"    category: t\n"

START_TEST(what_needs_two_reads)
{
	scenario();
	synth_finish(&S);
	ck_assert_uint_eq(reads_with(NULL, FORMAT_TEXT, false), 1);
	ck_assert_uint_eq(reads_with(NULL, FORMAT_HTML, false), 2);
	ck_assert_uint_eq(reads_with(NULL, FORMAT_TEXT, true), 2);
	ck_assert_uint_eq(reads_with(RULE_HEAD "    condition: {op: open, tool: read_file}\n",
				     FORMAT_TEXT, false),
			  2);
	ck_assert_uint_eq(reads_with(RULE_HEAD "    condition: {op: open}\n"
					       "    exceptions:\n"
					       "      - name: at startup\n"
					       "        condition: {bucket: startup}\n",
				     FORMAT_TEXT, false),
			  2);
	ck_assert_uint_eq(reads_with(RULE_HEAD "    condition: {any: [{method: x}, {op: open}]}\n",
				     FORMAT_TEXT, false),
			  2);
	ck_assert_uint_eq(reads_with(RULE_HEAD "    enabled: false\n"
					       "    condition: {attribution: ambiguous}\n",
				     FORMAT_TEXT, false),
			  1);
}
END_TEST

Suite *onepass_suite(void);

Suite *onepass_suite(void)
{
	Suite *s = suite_create("onepass");
	TCase *tc = tcase_create("onepass");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, default_policy_once_same_report);
	tcase_add_test(tc, every_subject_same_attribution);
	tcase_add_test(tc, a_loss_reads_twice);
	tcase_add_test(tc, processes_left_running_same_both_ways);
	tcase_add_test(tc, what_needs_two_reads);
	suite_add_tcase(s, tc);
	return s;
}
