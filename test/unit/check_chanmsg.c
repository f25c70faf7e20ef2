/*
 * check_chanmsg.c - channel lines as rule subjects (analyzer/chanmsg.c) through the engine,
 * with a call model read from the same frames: a `kind` test sees each line's JSON-RPC kind, a
 * request and its response belong to their call, a notification outside every window to a
 * bucket, and a finding's detail names the kind, method and id, whether or not a rule read
 * the kind first (both are made on demand, once per line). A response whose bytes came partly in
 * a frame flagged TAMPERED or UNCHECKED is a message with those flags, which the default policy
 * reports as evasion.tampered-message / evasion.unchecked-message (not as a tampered argument).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribute.h"
#include "engine.h"
#include "events.h"
#include "policy_testlib.h"
#include "vars.h"

Suite *chanmsg_suite(void);

#define SERVER 42u

static const char *const lines[] = {
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
	"\"arguments\":{}}}\n",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
	"\"a secret\"}]}}\n",
};

#define FRAMES 4

/* The flags of the second frame of the response, which is written in two when not 0. */
static uint32_t split_flags;

/* Frame i of the conversation: the notification and the request read, the response written
 * (in one frame, or in two with split_flags: 20 bytes, then the rest so flagged); false when
 * there is no frame i. */
static bool frame(Mcpt__StdioFrame *f, size_t i, uint64_t off[2])
{
	bool read = i < 2;
	size_t n = i < 3 ? strlen(lines[i]) : 0, at = 0;

	if (i == 2 && split_flags)
		n = 20;
	else if (i == 3 && split_flags)
		at = 20, n = strlen(lines[2]) - 20;
	if (!n)
		return false;
	*f = (Mcpt__StdioFrame)MCPT__STDIO_FRAME__INIT;
	f->seq = i + 1;
	f->ts = 1000000 * (i + 1);
	f->pid = f->tid = SERVER;
	f->fd = read ? 0 : 1;
	f->dir = read ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	f->data = (ProtobufCBinaryData){n, (uint8_t *)lines[i < 3 ? i : 2] + at};
	f->stream_offset = off[!read];
	off[!read] += f->data.len;
	f->orig_len = (uint32_t)f->data.len;
	f->chunk = at ? 1 : 0;
	f->last = i == 3 || !split_flags || i < 2;
	f->flags = i == 3 ? split_flags : 0;
	return true;
}

/* The engine's findings on the conversation under policy p (the model read first). */
static void run_policy(struct policy *p, void (*check)(const struct findings *fs))
{
	struct callmodel *cm = callmodel__new(NULL);
	struct engine *e = engine__new(p, 0);
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	Mcpt__StdioFrame f;
	uint64_t off[2] = {0, 0};

	ck_assert_ptr_nonnull(cm);
	ck_assert_ptr_nonnull(e);
	t.pid = SERVER;
	t.pstart = 500;
	h.target = &t;
	ck_assert_int_eq(callmodel__header(cm, &h), 0);
	for (size_t i = 0; i < FRAMES; i++)
		if (frame(&f, i, off))
			ck_assert_int_eq(callmodel__stdio(cm, &f, 10 + i), 0);
	ck_assert_int_eq(callmodel__resolve(cm), 0);
	ck_assert_int_eq(engine__set_header(e, &h), 0);
	ck_assert_int_eq(engine__set_model(e, cm), 0);
	off[0] = off[1] = 0;
	for (size_t i = 0; i < FRAMES; i++)
		if (frame(&f, i, off))
			ck_assert_int_eq(engine__stdio(e, &f, 10 + i), 0);
	ck_assert_int_eq(engine__finish(e), 0);
	callmodel__finish(cm);
	findings_sort(engine__findings(e), ORDER_SEQUENCE);
	check(engine__findings(e));
	engine__free(e);
	callmodel__free(cm);
	policy__free(p);
}

static void run(const char *text, void (*check)(const struct findings *fs))
{
	run_policy(policy_from_text(text), check);
}

/* The shipped default policy, its variables unset. */
static struct policy *default_policy(void)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	ck_assert_int_eq(policy__load_file(p, MW_SOURCE_DIR "/policies/default.yaml", &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, false, &d), 0);
	diag_fini(&d);
	vars__free(vs);
	return p;
}

static const struct finding *by_rule(const struct findings *fs, const char *id)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i].rule->id, id))
			return &fs->v[i];
	ck_abort_msg("no finding of %s", id);
	return NULL;
}

static void check_kinds(const struct findings *fs)
{
	const struct finding *f;

	ck_assert_uint_eq(fs->n, 3);
	f = by_rule(fs, "m.request");
	ck_assert_uint_eq(f->index, 11);
	ck_assert(f->has_attr);
	ck_assert_int_eq(f->attr.rule, ATTR_WINDOW);
	ck_assert_uint_eq(f->attr.call, 1);
	ck_assert_str_eq(f->message, "request read from the client tools/call (id 1), 83 bytes at "
				     "stdin offset 55");
	f = by_rule(fs, "m.notification");
	ck_assert_uint_eq(f->index, 10);
	ck_assert_int_eq(f->attr.rule, ATTR_BUCKET);
	ck_assert_int_eq(f->attr.bucket, BUCKET_STARTUP);
	f = by_rule(fs, "m.response");
	ck_assert_uint_eq(f->index, 12);
	ck_assert_int_eq(f->attr.rule, ATTR_WINDOW);
	ck_assert_uint_eq(f->attr.call, 1);
}

START_TEST(test_kind_rules)
{
	run("version: 1\nrules:\n"
	    "- {id: m.request, description: d, severity: low, category: c, message: \"{detail}\","
	    " condition: {family: channel, kind: request}}\n"
	    "- {id: m.notification, description: d, severity: low, category: c,"
	    " condition: {family: channel, kind: notification}}\n"
	    "- {id: m.response, description: d, severity: low, category: c,"
	    " condition: {family: channel, kind: response, direction: out}}\n",
	    check_kinds);
}
END_TEST

static void check_unread_kind(const struct findings *fs)
{
	const struct finding *f;

	ck_assert_uint_eq(fs->n, 1);
	f = by_rule(fs, "m.secret");
	ck_assert_uint_eq(f->index, 12);
	ck_assert_int_eq(f->attr.rule, ATTR_WINDOW);
	ck_assert_uint_eq(f->attr.call, 1);
	ck_assert_str_eq(f->message, "response written to the client (id 1), 81 bytes at stdout "
				     "offset 0");
}

/* No rule reads the kind: the finding's detail and attribution classify the line anyway. */
START_TEST(test_kind_unread)
{
	run("version: 1\nrules:\n"
	    "- {id: m.secret, description: d, severity: low, category: c, message: \"{detail}\","
	    " condition: {family: channel, direction: out, message: \"*secret*\"}}\n",
	    check_unread_kind);
}
END_TEST

static void check_tampered(const struct findings *fs)
{
	const struct finding *f;

	ck_assert_uint_eq(fs->n, 1);
	f = by_rule(fs, "evasion.tampered-message");
	ck_assert_uint_eq(f->index, 13); /* the frame that completed the line */
	ck_assert_int_eq(f->attr.rule, ATTR_WINDOW);
	ck_assert_uint_eq(f->attr.call, 1);
	ck_assert_str_eq(f->message, "response written to the client (id 1), 81 bytes at stdout "
				     "offset 0");
}

static void check_unchecked(const struct findings *fs)
{
	ck_assert_uint_eq(fs->n, 1);
	ck_assert_str_eq(fs->v[0].rule->id, "evasion.unchecked-message");
	ck_assert_str_eq(severity_name(fs->v[0].rule->severity), "medium");
}

static void check_clean(const struct findings *fs)
{
	ck_assert_uint_eq(fs->n, 0);
}

/* The default policy on the conversation: nothing; with the response's second frame flagged
 * TAMPERED, one high finding on the response (the line, not the frame, and no
 * evasion.tampered-argument); UNCHECKED, one medium. */
START_TEST(test_tampered_message)
{
	split_flags = 0;
	run_policy(default_policy(), check_clean);
	split_flags = MW_F_TAMPERED;
	run_policy(default_policy(), check_tampered);
	split_flags = MW_F_UNCHECKED;
	run_policy(default_policy(), check_unchecked);
	split_flags = 0;
}
END_TEST

Suite *chanmsg_suite(void)
{
	Suite *s = suite_create("chanmsg");
	TCase *tc = tcase_create("engine");

	tcase_add_test(tc, test_kind_rules);
	tcase_add_test(tc, test_kind_unread);
	tcase_add_test(tc, test_tampered_message);
	suite_add_tcase(s, tc);
	return s;
}
