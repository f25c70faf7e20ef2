/*
 * check_baseline.c - `mcpwitness diff` and the drift rules of `policy learn` on small signed
 * traces (synth_trace.c), through the do_<verb> functions the binary runs: a trace never
 * differs from itself; a read seen only in the trace is new, one seen only in the baseline
 * gone; the processor counts a runtime reads at any time are neither; a process whose program
 * the trace does not hold (its fork and exec lost) has its effects listed by diff and checked
 * by the drift rules like any other, not dropped and not a crash.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "synth_trace.h"

#define POLICY MW_SOURCE_DIR "/policies/default.yaml"

static struct synth S;
#define TRACE_PATH_MAX sizeof(S.path)

static char base[TRACE_PATH_MAX], cur[TRACE_PATH_MAX];

static void teardown(void)
{
	synth_cleanup(&S);
}

/* The server starts and reads its workspace file; then whatever extra() adds. The trace's
 * path is copied into out. */
static void make(char *out, const char *name, void (*extra)(struct synth *))
{
	synth_begin(&S, name);
	synth_exec(&S, SYNTH_PID, SYNTH_PSTART, "/usr/bin/node", "node\0server.js", 15);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/work/data.txt", NULL, 0, 3);
	if (extra)
		extra(&S);
	synth_finish(&S);
	snprintf(out, TRACE_PATH_MAX, "%s", S.path);
}

/* diff --json of the baseline b and the trace t: its exit code, and the texts of the new and
 * of the gone items, each ending in "\n", in the order printed. */
static int diff(const char *b, const char *t, char *news, char *gones, size_t cap)
{
	struct cli_result r =
		cli_run(NULL, "diff", "--json", "-p", POLICY, "--pubkey", S.pub, b, "--", t, NULL);
	json_t *doc = json_loads(r.out, 0, NULL), *scope, *item;
	size_t i, j;
	int code = r.code;

	ck_assert_msg(doc, "diff printed no JSON (exit %d): %s", r.code, r.err);
	news[0] = gones[0] = 0;
	json_array_foreach(json_object_get(doc, "scopes"), i, scope)
	{
		json_array_foreach(json_object_get(scope, "new"), j, item)
		{
			strncat(news, json_string_value(json_object_get(item, "text")),
				cap - strlen(news) - 2);
			strcat(news, "\n");
		}
		json_array_foreach(json_object_get(scope, "gone"), j, item)
		{
			strncat(gones, json_string_value(json_object_get(item, "text")),
				cap - strlen(gones) - 2);
			strcat(gones, "\n");
		}
	}
	json_decref(doc);
	cli_result_free(&r);
	return code;
}

/* diff's exit code, and its new and gone items as diff() lists them. */
static void expect(const char *b, const char *t, int code, const char *news, const char *gones)
{
	char n[512], g[512];

	ck_assert_int_eq(diff(b, t, n, g, sizeof(n)), code);
	ck_assert_str_eq(n, news);
	ck_assert_str_eq(g, gones);
}

static void reads_srv_a(struct synth *s)
{
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/srv/a", NULL, 0, 4);
}

static void reads_srv_b(struct synth *s)
{
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/srv/b", NULL, 0, 4);
}

START_TEST(itself_nothing)
{
	make(base, "base.mcpt", reads_srv_a);
	expect(base, base, 0, "", "");
}
END_TEST

START_TEST(new_and_gone)
{
	make(base, "base.mcpt", reads_srv_a);
	make(cur, "cur.mcpt", reads_srv_b);
	expect(base, cur, 1, "read /srv/b\n", "read /srv/a\n");
}
END_TEST

static void reads_processor_counts(struct synth *s)
{
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/sys/devices/system/cpu/online", NULL, 0, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/sys/devices/system/cpu/possible", NULL, 0, 4);
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/proc/stat", NULL, 0, 4);
}

/* Read in one session and not the next: neither new nor gone, either way round. */
START_TEST(processor_counts_neither)
{
	make(base, "base.mcpt", NULL);
	make(cur, "cur.mcpt", reads_processor_counts);
	expect(base, cur, 0, "", "");
	expect(cur, base, 0, "", "");
}
END_TEST

/* A sibling of the processor counts is an ordinary file of /sys, and the counts in the
 * baseline do not make it known. */
static void reads_cpu0(struct synth *s)
{
	synth_open(s, SYNTH_PID, SYNTH_PSTART, "/sys/devices/system/cpu/cpu0/online", NULL, 0, 4);
}

START_TEST(beside_processor_counts_new)
{
	make(base, "base.mcpt", reads_processor_counts);
	make(cur, "cur.mcpt", reads_cpu0);
	expect(base, cur, 1, "read /sys/devices/system/**\n", "");
}
END_TEST

/* pid 150 has neither fork nor exec in the trace (lost records, say): its program is unknown,
 * so no new exec can stand for its reads; they are listed themselves. */
static void unknown_process_reads(struct synth *s)
{
	synth_open(s, 150, 5000, "/srv/c", NULL, 0, 3);
}

START_TEST(unknown_program_listed)
{
	make(base, "base.mcpt", NULL);
	make(cur, "cur.mcpt", unknown_process_reads);
	expect(base, cur, 1, "read /srv/c\n", "");
	expect(cur, cur, 0, "", "");
}
END_TEST

/* The drift findings of analyze with the default policy and the baseline learned from b, on
 * t: "rule path" lines. */
static void drifts(const char *b, const char *t, char *out, size_t cap)
{
	char bl[128];
	struct cli_result r;
	json_t *doc, *f;
	size_t i;

	snprintf(bl, sizeof(bl), "%s.yaml", b);
	r = cli_run(NULL, "policy", "learn", b, "-o", bl, "-p", POLICY, "--pubkey", S.pub, NULL);
	ck_assert_msg(r.code == 0, "learn: %s", r.err);
	cli_result_free(&r);
	r = cli_run(NULL, "analyze", t, "-p", POLICY, "-p", bl, "--pubkey", S.pub, "-f", "json",
		    NULL);
	ck_assert_msg(r.code == 0, "analyze: %s", r.err);
	doc = json_loads(r.out, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	out[0] = 0;
	json_array_foreach(json_object_get(doc, "findings"), i, f)
	{
		const char *cat = json_string_value(json_object_get(f, "category"));
		json_t *path = json_object_get(json_object_get(f, "evidence"), "path");

		if (!cat || strcmp(cat, "drift"))
			continue;
		snprintf(out + strlen(out), cap - strlen(out), "%s %s\n",
			 json_string_value(json_object_get(f, "rule")),
			 json_is_string(path) ? json_string_value(path) : "-");
	}
	json_decref(doc);
	cli_result_free(&r);
	unlink(bl);
}

/* The drift rules check what such a process does (a program the baseline never ran is one
 * drift finding, its exec; with no exec in the trace there is none to stand for its effects). */
START_TEST(unknown_program_drifts)
{
	char got[512];

	make(base, "base.mcpt", NULL);
	make(cur, "cur.mcpt", unknown_process_reads);
	drifts(base, cur, got, sizeof(got));
	ck_assert_str_eq(got, "drift.read /srv/c\n");
	drifts(base, base, got, sizeof(got));
	ck_assert_str_eq(got, "");
}
END_TEST

Suite *baseline_suite(void);
Suite *baseline_suite(void)
{
	Suite *s = suite_create("baseline");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, itself_nothing);
	tcase_add_test(tc, new_and_gone);
	tcase_add_test(tc, processor_counts_neither);
	tcase_add_test(tc, beside_processor_counts_new);
	tcase_add_test(tc, unknown_program_listed);
	tcase_add_test(tc, unknown_program_drifts);
	suite_add_tcase(s, tc);
	return s;
}
