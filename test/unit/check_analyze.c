/*
 * check_analyze.c - the analyzer end to end on small signed traces written with the real trace
 * library (synth_trace.c, analyze_fixture.c), through the same do_<verb> functions the binary
 * runs. Bad inputs and usage errors: check_analyze_inputs.c.
 *
 * findings: a scenario trace gives exactly the expected findings (rule, severity, pid, path,
 * argv, lineage up to the server), and its benign events (runtime libraries, /dev/null,
 * /proc/self, workspace and temp writes, DNS to the local stub, the server's own launch) none;
 * a write through a symlink, a metadata address without a connect, the default rules and
 * --set variables. determinism: two runs give byte-identical text and JSON. --fail-on and its
 * exit codes; stdin input; dump and verify on the same traces; entry-time records merged with
 * their completion; a syscall of another ABI; keygen.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_fixture.h"
#include "events.h"

static const uint8_t sun_rel[] = {1, 0, 'd', 'o', 'c', 'k', 'e', 'r', '.', 's', 'o', 'c', 'k', 0};
static const uint8_t sun_docker[] = {1, 0, '/', 'v', 'a', 'r', '/', 'r', 'u', 'n', '/', 'd',
				     'o', 'c', 'k', 'e', 'r', '.', 's', 'o', 'c', 'k', 0};

/* --- findings ------------------------------------------------------------------------------- */

struct want {
	const char *rule, *severity;
	int pid;
	const char *path, *addr, *exe;
	int lineage; /* processes from this one up to the server */
};

static const struct want scenario_findings[] = {
	{"net.connect-loopback", "low", 100, NULL, "127.0.0.1:8080", "/usr/bin/node", 1},
	{"exec.unexpected", "high", 101, NULL, NULL, "/bin/sh", 2},
	{"exec.unexpected", "high", 102, NULL, NULL, "/usr/bin/cat", 3},
	{"file.sensitive-read", "critical", 102, "/home/u/.ssh/id_rsa", NULL, "/usr/bin/cat", 3},
	{"file.sensitive-read-attempt", "low", 102, "/home/u/.aws/credentials", NULL,
	 "/usr/bin/cat", 3},
	{"net.cloud-metadata", "critical", 101, NULL, "169.254.169.254:80", "/bin/sh", 2},
	{"net.connect-unexpected", "medium", 101, NULL, "93.184.216.34:443", "/bin/sh", 2},
	{"file.persistence-write", "high", 101, "/etc/cron.d/x", NULL, "/bin/sh", 2},
};

static void check_finding(json_t *f, const struct want *w, int i)
{
	json_t *proc = json_object_get(f, "process"), *lin = json_object_get(proc, "lineage");

	ck_assert_msg(!strcmp(jstr(f, "rule"), w->rule), "finding %d: %s", i, jstr(f, "rule"));
	ck_assert_str_eq(jstr(f, "severity"), w->severity);
	ck_assert_int_eq(json_integer_value(json_object_get(proc, "pid")), w->pid);
	ck_assert_str_eq(jstr(proc, "exe"), w->exe);
	if (w->path)
		ck_assert_str_eq(jstr(f, "evidence.path"), w->path);
	if (w->addr)
		ck_assert_str_eq(jstr(f, "evidence.addr"), w->addr);
	ck_assert_int_eq(json_array_size(lin), w->lineage);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_array_get(lin, w->lineage - 1), "pid")),
		SYNTH_PID);
	ck_assert(json_is_true(json_object_get(proc, "lineage_complete")));
	ck_assert(json_is_false(json_object_get(f, "unproven")));
	ck_assert_ptr_nonnull(jstr(f, "time"));
}

START_TEST(scenario_findings_json)
{
	struct cli_result r;
	json_t *doc, *fs, *f;
	json_error_t je;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--format", "json",
		    NULL);
	ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
	ck_assert_str_eq(r.err, "");
	doc = json_loads(r.out, 0, &je);
	ck_assert_msg(doc, "%s", je.text);
	ck_assert_str_eq(jstr(doc, "trace.verdict"), "VALID_COMPLETE");
	ck_assert_str_eq(jstr(doc, "trace.id"), "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
	ck_assert_str_eq(jstr(doc, "analyzer.name"), "mcpwitness");
	ck_assert_str_eq(jstr(doc, "variables.home"), "/home/u");
	ck_assert_str_eq(jstr(doc, "variables.workspace"), "/work");
	ck_assert_uint_eq(
		strlen(jstr(json_array_get(json_object_get(doc, "policies"), 0), "blake2b_256")),
		64);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 8);
	for (size_t i = 0; i < 8; i++)
		check_finding(json_array_get(fs, i), &scenario_findings[i], (int)i);
	f = json_array_get(fs, 2); /* cat's exec: argv and lineage exe names */
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(f, "process"), "argv"), 1)),
			 ".ssh/id_rsa");
	ck_assert_str_eq(jstr(f, "message"), "executed /usr/bin/cat");
	f = json_array_get(fs, 3);
	ck_assert_str_eq(jstr(f, "evidence.path_arg"), ".ssh/id_rsa");
	ck_assert_str_eq(jstr(f, "message"), "read /home/u/.ssh/id_rsa");
	ck_assert_str_eq(jstr(json_array_get(fs, 4), "evidence.errno"), "ENOENT");
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(doc, "summary"), "critical")),
		2);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(doc, "summary"), "total")), 8);
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

START_TEST(scenario_text)
{
	struct cli_result r;
	const char *p;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(!strncmp(r.out, "verification: VALID_COMPLETE: ", 30)); /* the verdict first */
	ck_assert_ptr_nonnull(strstr(r.out, "\ntrace: 0f1e2d3c4b5a69788796a5b4c3d2e1f0 analyzed by "
					    "mcpwitness " MW_VERSION "\n"));
	p = strstr(r.out, "\n[");
	ck_assert_ptr_nonnull(p);
	ck_assert(!strncmp(p, "\n[critical] file.sensitive-read: read /home/u/.ssh/id_rsa\n", 58));
	ck_assert_ptr_nonnull(strstr(r.out, "  lineage: 102 /usr/bin/cat < 101 /bin/sh < 100 "
					    "/usr/bin/node (server)\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "(as passed \".ssh/id_rsa\")"));
	ck_assert_ptr_nonnull(strstr(r.out, "2023-11-14T22:13:20.0000"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n8 findings: 2 critical, 3 high, 1 medium, 2 low, "
					    "0 info\n"));
	cli_result_free(&r);
}
END_TEST

START_TEST(benign_is_quiet)
{
	struct cli_result r;

	make_trace(&S, "b.mcpt", benign_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on", "info",
		    NULL);
	ck_assert_msg(r.code == 0, "exit %d:\n%s", r.code, r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\n0 findings: 0 critical, 0 high, 0 medium, 0 low, "
					    "0 info\n"));
	ck_assert_ptr_null(strstr(r.out, "\n["));
	cli_result_free(&r);
}
END_TEST

START_TEST(deterministic)
{
	static const char *const formats[] = {"text", "json"};

	make_trace(&S, "t.mcpt", scenario_events);
	for (int i = 0; i < 2; i++) {
		struct cli_result a, b;

		a = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f",
			    formats[i], NULL);
		/* the analyst's environment never enters the analysis */
		setenv("HOME", "/root-of-someone-else", 1);
		setenv("USER", "mallory", 1);
		setenv("TMPDIR", "/var/elsewhere", 1);
		setenv("TZ", "Asia/Tokyo", 1);
		b = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f",
			    formats[i], NULL);

		ck_assert_int_eq(a.code, b.code);
		ck_assert_str_eq(a.out, b.out);
		cli_result_free(&a);
		cli_result_free(&b);
	}
}
END_TEST

START_TEST(fail_on)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on",
		    "critical", NULL);
	ck_assert_int_eq(r.code, 1);
	cli_result_free(&r);
	make_trace(&S, "b.mcpt", benign_events);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "--fail-on", "low",
		    NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "--fail-on", "severe", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_str_eq(r.err, "mcpwitness: analyze: unknown severity \"severe\" (info, low, "
				"medium, high, critical); see 'mcpwitness analyze --help'\n");
	cli_result_free(&r);
}
END_TEST

/* --- single events ----------------------------------------------------------------------- */

/* A trace of the server's one event e (pid, tid and pstart set here), analyzed with the
 * default policy as JSON: the parsed report (r keeps the run). */
static json_t *analyze_one(Mcpt__Event *e, struct cli_result *r)
{
	json_t *doc;

	synth_begin(&S, "t.mcpt");
	e->pid = e->tid = SYNTH_PID;
	e->pstart = SYNTH_PSTART;
	synth_event(&S, e);
	synth_finish(&S);
	*r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f", "json", NULL);
	doc = json_loads(r->out, 0, NULL);
	ck_assert_msg(doc, "%s", r->err);
	return doc;
}

/* A write that lands on a persistence file through a symlink (path in the workspace, opened
 * path ~/.bashrc) is the persistence write it is. */
START_TEST(persistence_through_a_symlink)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[3] = {-100, 01101, 0644}; /* O_WRONLY | O_CREAT | O_TRUNC */
	struct cli_result r;
	json_t *doc, *f;

	e.op = MCPT__OP__OP_OPENAT;
	e.ret = 3;
	e.path = (ProtobufCBinaryData){9, (uint8_t *)"cache.tmp"};
	e.abs_path = (ProtobufCBinaryData){15, (uint8_t *)"/work/cache.tmp"};
	e.opened_path = (ProtobufCBinaryData){15, (uint8_t *)"/home/u/.bashrc"};
	e.args = args;
	e.n_args = 3;
	doc = analyze_one(&e, &r);
	ck_assert_int_eq(json_array_size(json_object_get(doc, "findings")), 1);
	f = json_array_get(json_object_get(doc, "findings"), 0);
	ck_assert_str_eq(jstr(f, "rule"), "file.persistence-write");
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* A datagram (or a TCP fast open) sent to the metadata address needs no connect: the same
 * critical finding. */
START_TEST(metadata_without_connect)
{
	static const uint8_t sa[16] = {2, 0, 0, 80, 169, 254, 169, 254}; /* AF_INET, port 80 */
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[4] = {5, 3, 0x20000000 /* MSG_FASTOPEN */, sizeof(sa)};
	struct cli_result r;
	json_t *doc, *f;

	e.op = MCPT__OP__OP_SENDTO;
	e.ret = 3;
	e.data = (ProtobufCBinaryData){sizeof(sa), (uint8_t *)sa};
	e.args = args;
	e.n_args = 4;
	doc = analyze_one(&e, &r);
	ck_assert_int_ge(json_array_size(json_object_get(doc, "findings")), 1);
	f = json_array_get(json_object_get(doc, "findings"), 0);
	ck_assert_str_eq(jstr(f, "rule"), "net.cloud-metadata");
	ck_assert_str_eq(jstr(f, "message"), "sendto to 169.254.169.254:80");
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

START_TEST(from_stdin)
{
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(S.path, "analyze", "-", "-p", POLICY, "--pubkey", S.pub, "--fail-on", "high",
		    NULL);
	ck_assert_int_eq(r.code, 1);
	ck_assert_ptr_nonnull(strstr(r.out, "\n8 findings:"));
	cli_result_free(&r);
	r = cli_run(S.path, "dump", "-", "--json", NULL);
	ck_assert_int_eq(r.code, 0);
	cli_result_free(&r);
}
END_TEST

/* Every rule of the default policy not in the scenario, and what launching looks like. */
static void more_events(struct synth *s)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t uid[3] = {1000, 1000, 1000}, creat_mode[1] = {0600}, open_flags[2] = {0, 0};
	int64_t uring_connect[2] = {16 /* IORING_OP_CONNECT */, 5};

	e.op = MCPT__OP__OP_SETRESUID; /* the collector dropping privileges before the exec */
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.args = uid, e.n_args = 3;
	synth_event(s, &e);
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/env", "env\0node", 9); /* launch */
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node", 5);	/* launch */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_OPEN; /* legacy open(2): flags first */
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART, e.ret = 3;
	e.path = (ProtobufCBinaryData){24, (uint8_t *)"/home/u/.aws/credentials"};
	e.args = open_flags, e.n_args = 2;
	synth_event(s, &e);
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_CREAT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART, e.ret = 4;
	e.path = (ProtobufCBinaryData){28, (uint8_t *)"/home/u/.ssh/authorized_keys"};
	e.args = creat_mode, e.n_args = 1;
	synth_event(s, &e);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, 0, MW_F_TAMPERED);
	/* the docker socket through a relative name: the peer the kernel holds names it */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_CONNECT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.data = (ProtobufCBinaryData){sizeof(sun_rel), (uint8_t *)sun_rel};
	e.data2 = (ProtobufCBinaryData){sizeof(sun_docker), (uint8_t *)sun_docker};
	synth_event(s, &e);
	/* an io_uring connect whose address the collector could not read (its page not mapped
	 * when the request was submitted, on a kernel that copies it only when it runs) */
	e = (Mcpt__Event)MCPT__EVENT__INIT;
	e.op = MCPT__OP__OP_IO_URING_SUBMIT;
	e.pid = e.tid = SYNTH_PID, e.pstart = SYNTH_PSTART;
	e.args = uring_connect, e.n_args = 2;
	e.flags = MW_F_UNCHECKED | MW_F_FAULT;
	synth_event(s, &e);
}

START_TEST(default_rules)
{
	static const char *const want[] = {
		"file.sensitive-read",	  "file.sensitive-write",  "evasion.tampered-argument",
		"net.connect-unexpected", "net.privileged-socket", "evasion.io-uring-unchecked"};
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("m.mcpt", more_events, &r);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 6);
	for (size_t i = 0; i < 6; i++)
		ck_assert_str_eq(jstr(json_array_get(fs, i), "rule"), want[i]);
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* --set overrides the header's variables; several -p files merge; the fixture's shell rule uses
 * launch. */
START_TEST(set_variables)
{
	static const char *fixture = MW_SOURCE_DIR "/test/fixtures/policies/all-forms.yaml";
	struct cli_result r;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "analyze", S.path, "-p", fixture, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_nonnull(
		strstr(r.out, "[critical] t.secret-read: secret /home/u/.ssh/id_rsa"));
	ck_assert_ptr_nonnull(strstr(r.out, "[high] t.shell: a shell was executed"));
	ck_assert_ptr_nonnull(strstr(r.out, "[medium] t.connect: connection outside loopback"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", fixture, "--pubkey", S.pub, "--set",
		    "home=/else", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "secret /home/u/.ssh/id_rsa"));
	ck_assert_ptr_nonnull(strstr(r.out, "secret /home/u/.aws/credentials"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "-p",
		    MW_SOURCE_DIR "/test/fixtures/policies/site-example.yaml", "--pubkey", S.pub,
		    "-f", "json", NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_ptr_null(strstr(r.out, "net.connect-loopback")); /* disabled by the site */
	ck_assert_ptr_nonnull(strstr(r.out, "site-example.yaml"));
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--set", "bad-name=1", NULL);
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
}
END_TEST

/* --- dump, entry records, keygen ------------------------------------------------------------ */

START_TEST(dump_text_and_json)
{
	struct cli_result r;
	char *line, *save = NULL;
	int n = 0;

	make_trace(&S, "t.mcpt", scenario_events);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert(
		!strncmp(r.out, "0 header trace=0f1e2d3c4b5a69788796a5b4c3d2e1f0 format=1.0 ", 58));
	ck_assert_ptr_nonnull(strstr(r.out, "\n  target pid=100 uid=1000 gid=1000 user=\"u\" "
					    "home=\"/home/u\" cwd=\"/work\""));
	ck_assert_ptr_nonnull(strstr(r.out, " 102/102 openat ret=3 path=\".ssh/id_rsa\" "
					    "abs=\"/home/u/.ssh/id_rsa\""));
	ck_assert_ptr_nonnull(strstr(r.out, " 101/101 exec path=\"/bin/sh\" argv=[\"sh\" \"-c\" "
					    "\"cat .ssh/id_rsa\"]"));
	ck_assert_ptr_nonnull(strstr(r.out, " 101/101 connect ret=-111 ECONNREFUSED fd=5 "
					    "addr=169.254.169.254:80"));
	ck_assert_ptr_nonnull(strstr(r.out, " seal #1 records="));
	ck_assert_ptr_nonnull(strstr(r.out, " final end=END_CLEAN"));
	cli_result_free(&r);

	r = cli_run(NULL, "dump", S.path, "--json", "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_msg(o, "not JSON: %s", line);
		ck_assert_int_eq(json_integer_value(json_object_get(o, "index")), n++);
		json_decref(o);
	}
	ck_assert_int_eq(n, 25); /* the header, 22 events, 2 seals */
	cli_result_free(&r);
}
END_TEST

static void entry_events(struct synth *s)
{
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, 0, MW_F_ENTRY);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_web, 16, -110, 0); /* its completion */
	synth_connect(s, 7, 70, sa_metadata, 16, 0, MW_F_ENTRY);	/* never completes */
	synth_exit(s, SYNTH_PID, SYNTH_PSTART, 0);
}

START_TEST(entry_records)
{
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("e.mcpt", entry_events, &r);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 2);
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "rule"), "net.connect-unexpected");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "evidence.errno"), "ETIMEDOUT");
	ck_assert_str_eq(jstr(json_array_get(fs, 1), "rule"), "net.cloud-metadata");
	ck_assert_str_eq(jstr(json_array_get(fs, 1), "evidence.result"), "pending");
	/* pid 7 never forked from the server: its lineage cannot reach it */
	ck_assert(json_is_false(json_object_get(json_object_get(json_array_get(fs, 1), "process"),
						"lineage_complete")));
	json_decref(doc);
	cli_result_free(&r);
}
END_TEST

/* An attached server's child made a syscall of the x32 ABI (a foreign_abi record, made at
 * entry by the collector's foreign-ABI recorder): dump shows no result, the default policy
 * reports it high with its name, calls lists it. */
static void foreign_abi_events(struct synth *s)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {39, MW_ABI_X32};

	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	e.op = MCPT__OP__OP_FOREIGN_ABI;
	e.pid = e.tid = 101;
	e.pstart = 2000;
	e.args = args;
	e.n_args = 2;
	synth_event(s, &e);
	synth_exit(s, 101, 2000, 0);
}

START_TEST(foreign_abi_record)
{
	struct cli_result r;
	json_t *doc, *fs;

	doc = analyze_json("f.mcpt", foreign_abi_events, &r);
	cli_result_free(&r);
	r = cli_run(NULL, "dump", S.path, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, " 101/101 foreign_abi args=39,2 seq="), "%s", r.out);
	fs = json_object_get(doc, "findings");
	ck_assert_int_eq(json_array_size(fs), 1);
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "rule"), "evasion.foreign-abi");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "severity"), "high");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "message"),
			 "syscall 39 (getpid) of the x32 ABI, not recorded");
	ck_assert_str_eq(jstr(json_array_get(fs, 0), "evidence.result"), "pending");
	json_decref(doc);
	cli_result_free(&r);

	r = cli_run(NULL, "calls", S.path, "--pubkey", S.pub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_msg(strstr(r.out, "    foreign_abi: syscall 39 (getpid) of the x32 ABI, not "
				    "recorded [bucket] pid 101 record "),
		      "%s", r.out);
	cli_result_free(&r);
}
END_TEST

START_TEST(keygen)
{
	struct cli_result r;
	char dir[64] = "/tmp/mw-keygen-XXXXXX", sub[96], cmd[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/keys", dir);
	r = cli_run(NULL, "keygen", "-o", sub, NULL);
	ck_assert_int_eq(r.code, 0);
	ck_assert_uint_eq(strlen(r.out), 17);
	ck_assert_uint_eq(strspn(r.out, "0123456789abcdef"), 16);
	cli_result_free(&r);
	r = cli_run(NULL, "keygen", "-o", sub, NULL); /* never overwrites */
	ck_assert_int_eq(r.code, 2);
	ck_assert_int_eq(cli_lines(r.err), 1);
	cli_result_free(&r);
	r = cli_run(NULL, "keygen", NULL);
	ck_assert_int_eq(r.code, 2);
	cli_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *analyze_suite(void);

Suite *analyze_suite(void)
{
	Suite *s = suite_create("analyze");
	TCase *fnd = tcase_create("findings"), *oth = tcase_create("other");

	tcase_add_checked_fixture(fnd, NULL, analyze_teardown);
	tcase_add_checked_fixture(oth, NULL, analyze_teardown);
	tcase_add_test(fnd, scenario_findings_json);
	tcase_add_test(fnd, scenario_text);
	tcase_add_test(fnd, benign_is_quiet);
	tcase_add_test(fnd, deterministic);
	tcase_add_test(fnd, fail_on);
	tcase_add_test(fnd, entry_records);
	tcase_add_test(fnd, foreign_abi_record);
	tcase_add_test(fnd, default_rules);
	tcase_add_test(fnd, set_variables);
	tcase_add_test(fnd, persistence_through_a_symlink);
	tcase_add_test(fnd, metadata_without_connect);
	tcase_add_test(oth, from_stdin);
	tcase_add_test(oth, dump_text_and_json);
	tcase_add_test(oth, keygen);
	suite_add_tcase(s, fnd);
	suite_add_tcase(s, oth);
	return s;
}
