/*
 * analyze_fixture.c - the traces and runs check_analyze.c and check_analyze_inputs.c share
 * (analyze_fixture.h).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "analyze_fixture.h"

static const uint8_t sa_lo_dns[16] = {2, 0, 0, 53, 127, 0, 0, 53};
static const uint8_t sa_lo_8080[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
const uint8_t sa_metadata[16] = {2, 0, 0, 80, 169, 254, 169, 254};
const uint8_t sa_web[16] = {2, 0, 0x01, 0xbb, 93, 184, 216, 34};

/* What benign servers do all day: none of it is a finding. */
void benign_events(struct synth *s)
{
	synth_exec(s, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/etc/ld.so.cache", NULL, 02000000, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/lib/x86_64-linux-gnu/libc.so.6",
		   "/lib/x86_64-linux-gnu/libc.so.6", 02000000, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/usr/lib/node_modules/x/index.js", NULL, 0, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/proc/self/maps", NULL, 0, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/dev/null", NULL, 02, 3);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "out.txt", "/work/out.txt", O_WR_CREAT, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/tmp/x.tmp", NULL, 02 | 0100, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/work/missing", NULL, 0, -2);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_lo_dns, 16, 0, 0);
}

/* The scenario: a tool call that makes a shell read a key and phone home. */
void scenario_events(struct synth *s)
{
	benign_events(s);
	synth_connect(s, SYNTH_PID, SYNTH_PSTART, sa_lo_8080, 16, 0, 0); /* loopback, low */
	ck_assert_int_eq(mcpt_writer__seal(s->w, 0), 0); /* what follows is another segment */
	synth_fork(s, SYNTH_PID, SYNTH_PSTART, 101, 2000);
	synth_exec(s, 101, 2000, "/bin/sh", "sh\0-c\0cat .ssh/id_rsa", 21); /* high */
	synth_fork(s, 101, 2000, 102, 3000);
	synth_exec(s, 102, 3000, "/usr/bin/cat", "cat\0.ssh/id_rsa", 16);     /* high */
	synth_open(s, 102, 3000, ".ssh/id_rsa", "/home/u/.ssh/id_rsa", 0, 3); /* critical */
	synth_open(s, 102, 3000, ".aws/credentials", "/home/u/.aws/credentials", 0, -2); /* low */
	synth_exit(s, 102, 3000, 0);
	synth_connect(s, 101, 2000, sa_metadata, 16, -111, 0);		/* critical */
	synth_connect(s, 101, 2000, sa_web, 16, 0, 0);			/* medium */
	synth_open(s, 101, 2000, "/etc/cron.d/x", NULL, O_WR_CREAT, 3); /* high */
	synth_exit(s, 101, 2000, 0);
}

void make_trace(struct synth *s, const char *name, void (*events)(struct synth *))
{
	synth_begin(s, name);
	events(s);
	synth_finish(s);
}

struct synth S;

/* The trace `name` of events, analyzed with the default policy as JSON: exit 0, the parsed
 * report (r keeps the run). */
json_t *analyze_json(const char *name, void (*events)(struct synth *), struct cli_result *r)
{
	json_t *doc;

	make_trace(&S, name, events);
	*r = cli_run(NULL, "analyze", S.path, "-p", POLICY, "--pubkey", S.pub, "-f", "json", NULL);
	ck_assert_int_eq(r->code, 0);
	doc = json_loads(r->out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	return doc;
}

void analyze_teardown(void)
{
	synth_cleanup(&S);
}

const char *jstr(json_t *o, const char *path)
{
	json_t *v = o;
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	return json_is_string(v) ? json_string_value(v) : NULL;
}
