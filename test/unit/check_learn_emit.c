/*
 * check_learn_emit.c - a baseline model written as a policy (learn_emit.h), round trip: with
 * hostile tool names (quotes, newlines, '@', '*', '/', names that collide once made list
 * labels) and hostile learned values (wildcards, "${", spaces, invalid UTF-8 spelled as glob
 * escapes), the file compiles after the shipped default.yaml as analyze loads it, each learned
 * list reads back to exactly the values learned, labels never collide, and the same model
 * gives the same bytes.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "learn_base.h"
#include "learn_emit.h"
#include "policy.h"
#include "proctree.h"

static const char *const TOOLS[] = {
	"read_file", "a/b", "a-b", "evil\\\" name\\n- x: y", "@list", "*", "caf\xc3\xa9", NULL,
};
/* learned read globs, as learn_gen writes them (every one valid UTF-8) */
static const char *const READS[] = {
	"${workspace}/**",
	"/data/star\\*/q\\?/\\[x]/\\${home}",
	"/sp ace/\"q\"/#c",
	"/bad/\\xff\\xfe",
	NULL,
};

static struct policy *base;
static struct lbase lb;

static void setup(void)
{
	char *files[] = {MW_SOURCE_DIR "/policies/default.yaml"};

	ck_assert_int_eq(learn_base_load(&base, &lb, files, 1), 0);
}

static void teardown(void)
{
	learn_base_fini(base, &lb);
	base = NULL;
}

static struct lmodel *model(void)
{
	struct lmodel *m = lmodel__new(&lb, NULL);
	bool added;

	ck_assert_ptr_nonnull(m);
	for (size_t t = 0; TOOLS[t]; t++) {
		long s = lmodel__scope(m, LS_TOOL, TOOLS[t]);

		ck_assert_int_ge(s, 0);
		m->scopes[s].calls = t + 1;
		for (size_t r = 0; READS[r]; r++)
			ck_assert_ptr_nonnull(
				lmodel__add(m, (size_t)s, LK_READ, READS[r], "", &added));
		ck_assert_ptr_nonnull(
			lmodel__add(m, (size_t)s, LK_EXEC, "/bin/sh", "sh -c *", &added));
		ck_assert_ptr_nonnull(lmodel__add(m, (size_t)s, LK_CONNECT, "::1", "443", &added));
		ck_assert_ptr_nonnull(
			lmodel__add(m, (size_t)s, LK_DNS, "x\\*.example", "", &added));
		ck_assert_ptr_nonnull(
			lmodel__add(m, (size_t)s, LK_CHANGE, "rename", READS[0], &added));
	}
	ck_assert_int_eq(lmodel__sort(m), 0);
	return m;
}

static void emit(const struct lmodel *m, struct strbuf *sb)
{
	struct learn_out o = {.m = m, .base = base, .lb = &lb, .self = "bl.yaml"};

	ck_assert_int_eq(learn_emit(sb, &o), 0);
}

/* The text compiles after default.yaml; returns the policy. */
static struct policy *load(const struct strbuf *sb)
{
	char path[] = "/tmp/check_learn_emit.XXXXXX";
	int fd = mkstemp(path);
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, sb->buf, sb->len), (ssize_t)sb->len);
	close(fd);
	ck_assert_int_eq(policy__load_file(p, MW_SOURCE_DIR "/policies/default.yaml", &d), 0);
	ck_assert_msg(policy__load_file(p, path, &d) == 0, "%s\n%s", diag_first(&d), sb->buf);
	ck_assert_msg(policy__compile(p, vs, false, &d) == 0, "%s", diag_first(&d));
	unlink(path);
	diag_fini(&d);
	vars__free(vs);
	return p;
}

START_TEST(compiles_and_reads_back)
{
	struct lmodel *m = model();
	struct strbuf sb = STRBUF_INIT;
	struct policy *p;
	size_t lists = 0;

	emit(m, &sb);
	p = load(&sb);
	for (size_t i = 0; i < p->n_lists; i++) {
		const struct pol_list *l = p->lists[i];
		size_t n = strlen(l->name);

		if (strncmp(l->name, "bl.tool.", 8) || n < 5 || strcmp(l->name + n - 5, ".read"))
			continue;
		lists++;
		ck_assert_uint_eq(l->n, 4);
		for (size_t k = 0; k < l->n; k++) {
			bool found = false;

			for (size_t r = 0; READS[r]; r++)
				found |= strlen(READS[r]) == l->items[k].len &&
					 !memcmp(READS[r], l->items[k].str, l->items[k].len);
			ck_assert_msg(found, "%s: %s", l->name, l->items[k].str);
		}
	}
	ck_assert_uint_eq(lists, 7); /* one per tool: no two labels collided */
	ck_assert_ptr_nonnull(policy_find_rule(p, "drift.read"));
	ck_assert(!policy_find_rule(p, "exec.unexpected")->enabled);
	ck_assert(policy_find_rule(p, "file.sensitive-read")->enabled); /* critical stays */
	ck_assert_ptr_null(strstr(sb.buf, "\n- x: y"));			/* no name ends a line */
	policy__free(p);
	strbuf_fini(&sb);
	lmodel__free(m);
}
END_TEST

START_TEST(same_model_same_bytes)
{
	struct lmodel *a = model(), *b = model();
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;

	emit(a, &x);
	emit(b, &y);
	ck_assert_uint_eq(x.len, y.len);
	ck_assert(!memcmp(x.buf, y.buf, x.len));
	strbuf_fini(&x);
	strbuf_fini(&y);
	lmodel__free(a);
	lmodel__free(b);
}
END_TEST

/* Whether drift.read reports a read-only openat of path by the server process itself. */
static bool server_read_drifts(const struct policy *p, const char *path)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	int64_t args[2] = {-100, 0}; /* AT_FDCWD, O_RDONLY */
	struct proc proc = {.pid = 10, .is_target = true};
	struct ev_view v;
	struct eval_subject s = {.ev = &v, .proc = &proc};
	const struct pol_rule *r = policy_find_rule(p, "drift.read");
	int exc;

	e.op = MCPT__OP__OP_OPENAT;
	e.pid = e.tid = 10;
	e.ret = 3;
	e.args = args;
	e.n_args = 2;
	e.path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	event_decode(&v, &e);
	ck_assert_ptr_nonnull(r);
	return policy_rule_match(r, &s, 0, &exc);
}

START_TEST(empty_model)
{
	struct lmodel *m = lmodel__new(&lb, NULL);
	struct strbuf sb = STRBUF_INIT;
	struct policy *p;

	ck_assert_int_eq(lmodel__sort(m), 0);
	emit(m, &sb);
	p = load(&sb); /* nothing seen: every drift rule reports everything, and compiles */
	ck_assert_ptr_nonnull(strstr(sb.buf, "the baseline saw none: every one is drift"));
	/* but the processor counts a runtime reads at any time are never drift */
	ck_assert(!server_read_drifts(p, "/sys/devices/system/cpu/online"));
	ck_assert(!server_read_drifts(p, "/proc/stat"));
	ck_assert(server_read_drifts(p, "/etc/hostname"));
	ck_assert(server_read_drifts(p, "/sys/devices/system/cpu/cpu0/online"));
	policy__free(p);
	strbuf_fini(&sb);
	lmodel__free(m);
}
END_TEST

Suite *learn_emit_suite(void);
Suite *learn_emit_suite(void)
{
	Suite *s = suite_create("learn_emit");
	TCase *core = tcase_create("core");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_test(core, compiles_and_reads_back);
	tcase_add_test(core, same_model_same_bytes);
	tcase_add_test(core, empty_model);
	suite_add_tcase(s, core);
	return s;
}
