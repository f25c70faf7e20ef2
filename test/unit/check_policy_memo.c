/*
 * check_policy_memo.c - the glob verdict memo (policy_memo.c and match_bytes in policy_eval.c):
 * conditions evaluated with a string table give the verdicts they give without one, over many
 * more strings than the table has slots (so slots are taken over, also between two fields of
 * one subject), strings one byte apart, the same buffer reused for another string between
 * subjects, strings longer than the memo keeps, two policies sharing one table, and one
 * policy with more glob tests than a word of its verdicts holds.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "policy_field.h"
#include "strbuf.h"
#include "policy_testlib.h"

#define LISTS "lists:\n  s: [\"**/.ssh/**\", \"/etc/shadow\", \"**/.env\", \"/home/u/p[0-4]*\"]\n"

static const char *const conds[] = {
	"{path: \"@s\"}",
	"{any: [{path: \"@s\"}, {opened_path: \"@s\"}]}",
	"{not: {path: [/tmp/**, \"/home/u/p1*\"]}, opened_path: \"**/.env\"}",
	"{path: \"/home/u/p?7*\"}",
};

/* The i-th test path: some in the lists, most not; some too long for the memo. */
static size_t make_path(char *buf, size_t cap, unsigned i)
{
	int n;

	switch (i % 5) {
	case 0:
		n = snprintf(buf, cap, "/home/u/p%u/x", i);
		break;
	case 1:
		n = snprintf(buf, cap, "/home/u/.ssh/k%u", i);
		break;
	case 2:
		n = snprintf(buf, cap, "/w/%u/.env", i);
		break;
	case 3:
		n = snprintf(buf, cap, "/home/u/p%u", i);
		break;
	default:
		n = i % 10 == 4 ? snprintf(buf, cap, "/etc/shadow")
				: snprintf(buf, cap, "/home/u/.ssh/%u/", i);
		break;
	}
	if (i % 10 == 9) { /* past MEMO_BYTES */
		memset(buf + n, 'z', MEMO_BYTES + 8);
		n += MEMO_BYTES + 8;
		buf[n] = '\0';
	}
	return (size_t)n;
}

struct two {
	struct policy *p;
	uint8_t memo[8];
};

/* Evaluates rule 0 of each policy on an open of path (and opened), with table sm or none. */
static unsigned verdicts(struct two *ps, size_t np, const char *path, size_t n, const char *opened,
			 size_t on, struct str_memo *sm)
{
	struct evx x;
	unsigned bits = 0;

	ev_open(&x, "rel", NULL, 0, 3);
	x.v.subject = (struct ev_bytes){(const uint8_t *)path, n};
	x.v.opened = (struct ev_bytes){(const uint8_t *)opened, on};
	x.s.strs = sm;
	str_memo__reset(sm);
	for (size_t i = 0; i < np; i++) {
		x.s.macro_memo = ps[i].memo;
		if (cond_eval(ps[i].p->rules[0]->cond, &x.s))
			bits |= 1u << i;
	}
	return bits;
}

#define NCOND  (sizeof(conds) / sizeof(conds[0]))
#define ROUNDS 20000 /* strings, several times the table's slots */

START_TEST(same_verdicts)
{
	struct str_memo *sm = str_memo__new();
	struct two ps[NCOND];
	char *path = malloc(512), *opened = malloc(512);
	unsigned hits = 0;

	ck_assert_ptr_nonnull(sm);
	in_tmpdir();
	for (size_t i = 0; i < NCOND; i++)
		ps[i].p = compile_cond(LISTS, conds[i]);
	for (unsigned pass = 0; pass < 3; pass++) { /* later passes answer from the memo */
		for (unsigned i = 0; i < ROUNDS; i++) {
			unsigned k = (i * 7919u + pass) % ROUNDS;
			size_t n = make_path(path, 512, k), on = make_path(opened, 512, k / 3);
			unsigned want = verdicts(ps, NCOND, path, n, opened, on, NULL);
			unsigned got = verdicts(ps, NCOND, path, n, opened, on, sm);

			ck_assert_msg(got == want, "%s / %s: %x with the memo, %x without", path,
				      opened, got, want);
			/* the same buffers, one byte changed: another string */
			path[n - 1] ^= 1;
			want = verdicts(ps, NCOND, path, n, path, n, NULL);
			got = verdicts(ps, NCOND, path, n, path, n, sm);
			ck_assert_msg(got == want, "%s: %x with the memo, %x without", path, got,
				      want);
			hits += got != 0;
		}
	}
	ck_assert_uint_gt(hits, ROUNDS / 10); /* the conditions do match some */
	for (size_t i = 0; i < NCOND; i++)
		policy__free(ps[i].p);
	str_memo__free(sm);
	free(path);
	free(opened);
}
END_TEST

/* One policy's verdicts lie side by side per string, two bits per glob test: a condition of
 * more tests than one word holds, each test read on its own, gives every test's verdict
 * without the table, whatever the others said of the same string before. */
#define NKIDS 66

START_TEST(many_tests_of_one_policy)
{
	struct str_memo *sm = str_memo__new();
	struct strbuf cond = STRBUF_INIT;
	struct policy *p;
	const struct cond *any;
	char path[64];
	unsigned hits;
	struct evx x;

	ck_assert_ptr_nonnull(sm);
	in_tmpdir();
	strbuf_puts(&cond, "{any: [");
	for (unsigned i = 0; i < NKIDS; i++)
		strbuf_printf(&cond, "%s{%s: /p%u*}", i ? "," : "",
			      i % 3 ? "path" : "opened_path", i);
	strbuf_puts(&cond, "]}");
	p = compile_cond("", strbuf_str(&cond));
	any = p->rules[0]->cond;
	ck_assert_uint_eq(any->n, NKIDS);
	ck_assert_ptr_nonnull(p->memo); /* the memo is in use, over three words of bits */
	ck_assert_uint_eq(p->memo->words, 1 + (NKIDS + 31) / 32);
	hits = 0;
	for (unsigned pass = 0; pass < 3; pass++) {
		for (unsigned k = 0; k < 2 * MEMO_SLOTS; k++) {
			size_t n = (size_t)snprintf(path, sizeof(path), "/p%u",
						    (k * 7919u + pass) % (MEMO_SLOTS * 2));

			ev_open(&x, "rel", NULL, 0, 3);
			x.v.subject = x.v.opened = (struct ev_bytes){(const uint8_t *)path, n};
			for (unsigned i = 0; i < NKIDS; i++) {
				unsigned j = (i * 31 + k) % NKIDS; /* each string its own order */
				bool want, got;

				x.s.strs = NULL;
				want = cond_eval(any->kids[j], &x.s);
				x.s.strs = sm;
				str_memo__reset(sm);
				got = cond_eval(any->kids[j], &x.s);
				ck_assert_msg(got == want, "%s, test %u: %d with the memo", path, j,
					      got);
				hits += got;
			}
		}
	}
	ck_assert_uint_gt(hits, 3 * MEMO_SLOTS); /* each string matches a few tests */
	policy__free(p);
	strbuf_fini(&cond);
	str_memo__free(sm);
}
END_TEST

Suite *policy_memo_suite(void);

Suite *policy_memo_suite(void)
{
	Suite *s = suite_create("policy_memo");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, leave_tmpdir);
	tcase_add_test(tc, same_verdicts);
	tcase_add_test(tc, many_tests_of_one_policy);
	suite_add_tcase(s, tc);
	return s;
}
