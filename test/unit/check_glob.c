/*
 * check_glob.c - the glob matcher: each wildcard, "**" as a component and inside one, classes,
 * escapes, variables inserted literally, trailing slashes of paths, compile errors with their
 * reasons, and the promise that no pattern backtracks exponentially.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "glob.h"
#include "glob_int.h"

struct kv {
	const char *name, *val;
};

static int var_cb(void *ctx, const char *name, const char **val, size_t *len)
{
	for (const struct kv *v = ctx; v->name; v++) {
		if (strcmp(v->name, name) == 0) {
			if (!v->val)
				return -ENODATA;
			*val = v->val;
			*len = strlen(v->val);
			return 0;
		}
	}
	return -ENOENT;
}

static const struct kv vars[] = {
	{"home", "/home/u"}, {"slash", "/home/u/"}, {"weird", "/h[o]me*"},
	{"root", "/"},	     {"unset", NULL},	    {NULL, NULL},
};

static bool m(const char *pat, unsigned flags, const char *s)
{
	char err[128];
	struct glob *g =
		glob_compile(pat, strlen(pat), flags, var_cb, (void *)vars, err, sizeof(err));
	bool r;

	ck_assert_msg(g, "compile \"%s\": %s", pat, err);
	r = glob_match(g, (const uint8_t *)s, strlen(s));
	glob_free(g);
	return r;
}

#define YES(p, s) ck_assert_msg(m(p, GLOB_PATH, s), "\"%s\" should match \"%s\"", p, s)
#define NO(p, s)  ck_assert_msg(!m(p, GLOB_PATH, s), "\"%s\" should not match \"%s\"", p, s)

START_TEST(literal)
{
	YES("/etc/passwd", "/etc/passwd");
	NO("/etc/passwd", "/etc/passwd2");
	NO("/etc/passwd", "/etc/passw");
	NO("/etc/passwd", "");
	YES("", "");
	NO("", "a");
	YES("/tmp/$x", "/tmp/$x");
	YES("/a\\*b", "/a*b");
	NO("/a\\*b", "/axb");
}
END_TEST

START_TEST(star_and_question)
{
	YES("/tmp/*.txt", "/tmp/a.txt");
	YES("/tmp/*.txt", "/tmp/.txt");
	NO("/tmp/*.txt", "/tmp/a/b.txt");
	YES("/tmp/*/b", "/tmp/a/b");
	NO("/tmp/*/b", "/tmp/b");
	YES("/tmp/?", "/tmp/a");
	NO("/tmp/?", "/tmp/");
	NO("/tmp/?", "/tmp/ab");
	NO("/tmp?x", "/tmp/x");
	YES("*", "abc");
	NO("*", "a/b");
	YES("/home/*/.bash_history*", "/home/bob/.bash_history");
	YES("/home/*/.bash_history*", "/home/bob/.bash_history-01234.tmp");
}
END_TEST

START_TEST(double_star)
{
	YES("**/.ssh/**", "/home/u/.ssh/id_rsa");
	YES("**/.ssh/**", ".ssh/id_rsa");
	YES("**/.ssh/**", "/.ssh/x");
	YES("**/.ssh/**", "/a/b/c/.ssh/d/e");
	NO("**/.ssh/**", "/home/u/.sshx/id");
	NO("**/.ssh/**", "/home/u/x.ssh/id");
	NO("**/.ssh/**", "/home/u/.ssh");
	YES("/a/**/b", "/a/b");
	YES("/a/**/b", "/a/x/b");
	YES("/a/**/b", "/a/x/y/b");
	NO("/a/**/b", "/a/xb");
	NO("/a/**/b", "/ab");
	NO("/a/**", "/a/"); /* /a itself, spelt with its trailing slash (see trailing_slashes) */
	YES("/a/**", "/a/x/y");
	NO("/a/**", "/a");
	NO("/a/**", "/ab");
	YES("/usr/lib/**.so", "/usr/lib/x/y.so");
	YES("a**b", "a/x/b");
	YES("**", "");
	YES("**", "/any/thing");
	YES("**/.env", "/srv/app/.env");
	YES("**/.env", ".env");
	NO("**/.env", "/srv/app/x.env");
	YES("/x/***/y", "/x/a/b/y"); /* runs of stars are one "**" */
}
END_TEST

/* Path mode: a path's trailing slashes do not count for a glob that does not end in '/', so
 * "dir/" "**" never matches dir and "/" stays "/"; a glob ending in '/' asks for the slash and
 * matches byte for byte (learn's literals). Text mode keeps every byte. */
START_TEST(trailing_slashes)
{
	NO("/w/sub/**", "/w/sub/");
	NO("/w/sub/**", "/w/sub//");
	NO("/w/sub/*", "/w/sub/");
	YES("/w/sub/**", "/w/sub/x/");
	YES("/w/sub/*", "/w/sub/x/");
	YES("/w/sub", "/w/sub/");
	YES("/w/sub", "/w/sub//");
	YES("/w/*", "/w/sub/");
	YES("/", "/");
	NO("/", "//"); /* "/" ends in '/': byte for byte, like every glob that does */
	NO("/", "");
	YES("/w/sub/", "/w/sub/");
	NO("/w/sub/", "/w/sub");
	NO("/w/sub/", "/w/sub//");
	YES("${slash}", "/home/u/");
	NO("${slash}", "/home/u");
	YES("/w/**/", "/w/x/y/");
	YES("/w/**/", "/w/");
	ck_assert(m("/w/sub/**", 0, "/w/sub/")); /* text mode: bytes as they are */
	ck_assert(!m("/w/sub", 0, "/w/sub/"));
}
END_TEST

START_TEST(classes)
{
	YES("/[abc]", "/b");
	NO("/[abc]", "/d");
	YES("/[a-c]x", "/cx");
	YES("/[!a-c]", "/d");
	NO("/[!a-c]", "/a");
	YES("/[^a-c]", "/z");
	YES("/[]]", "/]");
	YES("/[!]]", "/a");
	NO("/[!]]", "/]");
	YES("/[a-]", "/-");
	YES("/[\\]]", "/]");
	NO("/a[/]b", "/a/b"); /* a class never matches '/' in path mode */
	NO("/a[!x]b", "/a/b");
	ck_assert(m("a[/]b", 0, "a/b")); /* but does in text mode */
}
END_TEST

START_TEST(text_mode)
{
	ck_assert(m("curl *169.254.169.254*", 0, "curl -s http://169.254.169.254/latest/"));
	ck_assert(m("*", 0, "a/b/c"));
	ck_assert(m("sh -c *", 0, "sh -c rm -rf /"));
	ck_assert(!m("sh -c *", 0, "bash -c x"));
	ck_assert(m("?", 0, "/"));
}
END_TEST

START_TEST(variables)
{
	YES("${home}/.ssh/**", "/home/u/.ssh/id");
	NO("${home}/.ssh/**", "/home/v/.ssh/id");
	YES("${slash}/.ssh/**", "/home/u/.ssh/id"); /* a trailing '/' of the value is merged */
	YES("${root}/.ssh/**", "/.ssh/id");
	YES("${weird}/x", "/h[o]me*/x"); /* values are literal, never wildcards */
	NO("${weird}/x", "/home*/x");
	NO("${weird}/x", "/h[o]meABC/x");
	YES("${home}", "/home/u");
}
END_TEST

static const char *cerr(const char *pat, int *e)
{
	static char err[160];
	struct glob *g =
		glob_compile(pat, strlen(pat), GLOB_PATH, var_cb, (void *)vars, err, sizeof(err));

	ck_assert_msg(!g, "\"%s\" should not compile", pat);
	*e = errno;
	return err;
}

START_TEST(errors)
{
	int e;

	ck_assert_str_eq(cerr("/a[bc", &e), "unterminated character class at offset 2");
	ck_assert_int_eq(e, EINVAL);
	ck_assert_str_eq(cerr("/a[", &e), "unterminated character class at offset 2");
	ck_assert_str_eq(cerr("/a[!", &e), "unterminated character class at offset 2");
	ck_assert_str_eq(cerr("/a[\\", &e), "unterminated character class at offset 2");
	ck_assert_str_eq(cerr("/a\\", &e), "trailing backslash at offset 2");
	ck_assert_str_eq(cerr("/[z-a]", &e), "reversed range in character class at offset 1");
	ck_assert_str_eq(cerr("${home", &e), "unterminated ${ at offset 0");
	ck_assert_str_eq(cerr("/${ho-me}", &e), "bad variable name at offset 1");
	ck_assert_str_eq(cerr("/${}", &e), "bad variable name at offset 1");
	ck_assert_str_eq(cerr("${nope}/x", &e), "unknown variable ${nope}");
	ck_assert_int_eq(e, ENOENT);
	ck_assert_str_eq(cerr("${unset}/x", &e), "variable ${unset} has no value");
	ck_assert_int_eq(e, ENODATA);
}
END_TEST

START_TEST(no_variables_allowed)
{
	char err[128];
	struct glob *g = glob_compile("${home}", 7, GLOB_PATH, NULL, NULL, err, sizeof(err));

	ck_assert_ptr_null(g);
	ck_assert_str_eq(err, "variables are not allowed here (offset 0)");
}
END_TEST

START_TEST(limits)
{
	static char pat[GLOB_MAX_TOKENS + 2], subj[65536];
	char err[128];
	struct glob *g;
	clock_t t0;

	memset(pat, 'a', GLOB_MAX_TOKENS + 1);
	g = glob_compile(pat, GLOB_MAX_TOKENS + 1, GLOB_PATH, NULL, NULL, err, sizeof(err));
	ck_assert_ptr_null(g);
	ck_assert_str_eq(err, "pattern longer than the limit (4096 tokens)");

	/* a pattern that makes backtracking matchers exponential */
	memset(subj, 'a', sizeof(subj));
	t0 = clock();
	g = glob_compile("*a*a*a*a*a*a*a*a*a*a*a*b", 24, 0, NULL, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(g);
	ck_assert(!glob_match(g, (const uint8_t *)subj, sizeof(subj)));
	glob_free(g);
	ck_assert_msg(clock() - t0 < 2 * CLOCKS_PER_SEC, "matching took too long");
}
END_TEST

START_TEST(bytes)
{
	struct glob *g = glob_compile("/a*", 3, GLOB_PATH, NULL, NULL, NULL, 0);
	const uint8_t s1[] = {'/', 'a', 0, 'b'}, s2[] = {'/', 'a', 0xff, 0xfe};

	ck_assert_ptr_nonnull(g);
	ck_assert(glob_match(g, s1, sizeof(s1)));
	ck_assert(glob_match(g, s2, sizeof(s2)));
	ck_assert(!glob_is_literal(g));
	glob_free(g);
	g = glob_compile("/x", 2, GLOB_PATH, NULL, NULL, NULL, 0);
	ck_assert(glob_is_literal(g));
	glob_free(g);
	glob_free(NULL);
}
END_TEST

/* "\xHH" names a byte (one a YAML file cannot hold); "\x" without two hex digits is 'x'. */
START_TEST(hex_escape)
{
	YES("/\\x41", "/A");
	YES("/a\\xff\\xC3(", "/a\xff\xc3(");
	YES("/\\xg1", "/xg1");
	YES("/\\x4", "/x4");
	YES("/[\\x30-\\x39]", "/5");
	NO("/[\\x30-\\x39]", "/a");
	YES("/\\x2a", "/*");
	NO("/\\x2a", "/b");
}
END_TEST

/* The bit-parallel matcher and the byte-array one agree on random patterns and subjects
 * (a tiny alphabet makes every wildcard matter), and long patterns use the slow one. */
START_TEST(fast_equals_slow)
{
	static const char *const atoms[] = {"a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "**/"};
	uint32_t seed = 12345;
	char pat[64], subj[32];

	for (int iter = 0; iter < 20000; iter++) {
		size_t pl = 0, sl;
		unsigned flags = iter & 1 ? GLOB_PATH : 0;
		struct glob *g;
		struct glob_tables *tb;

		for (int k = (int)((seed = seed * 1103515245 + 12345) >> 16) % 7; k >= 0; k--) {
			const char *a = atoms[((seed = seed * 1103515245 + 12345) >> 16) % 9];

			memcpy(pat + pl, a, strlen(a));
			pl += strlen(a);
		}
		sl = ((seed = seed * 1103515245 + 12345) >> 16) % 12;
		for (size_t i = 0; i < sl; i++)
			subj[i] = "ab/"[((seed = seed * 1103515245 + 12345) >> 16) % 3];
		g = glob_compile(pat, pl, flags, NULL, NULL, NULL, 0);
		ck_assert_ptr_nonnull(g);
		ck_assert(g->literal || g->tables);
		bool fast = glob_match(g, (const uint8_t *)subj, sl);
		tb = g->tables;
		g->tables = NULL;
		ck_assert_msg(glob_match(g, (const uint8_t *)subj, sl) == fast,
			      "\"%.*s\" on \"%.*s\"", (int)pl, pat, (int)sl, subj);
		g->tables = tb;
		glob_free(g);
	}
}
END_TEST

/* The tables hold one row per class of bytes the pattern tells apart, not one per byte, and a
 * literal pattern has none; every byte value still matches as the byte-array matcher says. */
START_TEST(byte_classes)
{
	static const char *const pats[] = {
		"/home/*/.ssh/**", "[a-c]x*", "?",	  "*/*",
		"**/[!.]*",	   "\\xff*",  "a[^/]b**", "**/id_[rd]sa*",
	};
	struct glob *g;
	uint8_t subj[3];

	for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
		struct glob_tables *tb;

		g = glob_compile(pats[k], strlen(pats[k]), GLOB_PATH, NULL, NULL, NULL, 0);
		ck_assert_ptr_nonnull(g);
		ck_assert_ptr_nonnull(g->tables);
		/* these patterns: their bytes, '/', the rest */
		ck_assert_uint_le(g->tables->n_cls, g->n + 2);
		for (unsigned b = 0; b < 256; b++) {
			for (size_t n = 1; n <= 3; n++) {
				bool fast;

				subj[0] = n == 2 ? 'a' : (uint8_t)b;
				subj[1] = n == 2 ? (uint8_t)b : 'x';
				subj[2] = (uint8_t)b;
				fast = glob_match(g, subj, n);
				tb = g->tables;
				g->tables = NULL;
				ck_assert_msg(glob_match(g, subj, n) == fast,
					      "\"%s\" byte %u len %zu", pats[k], b, n);
				g->tables = tb;
			}
		}
		glob_free(g);
	}
	g = glob_compile("/etc/shadow", 11, GLOB_PATH, NULL, NULL, NULL, 0);
	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_null(g->tables);
	ck_assert(glob_match(g, (const uint8_t *)"/etc/shadow", 11));
	glob_free(g);
}
END_TEST

/* The required literal run ("*LIT*" has nothing else) is searched by hand up to 16 bytes and by
 * memmem beyond: both agree with memmem on subjects made to hold near misses. */
START_TEST(required_literal)
{
	uint32_t seed = 777;
	char pat[32], lit[24], subj[48];

	for (int iter = 0; iter < 40000; iter++) {
		size_t ll = 1 + ((seed = seed * 1103515245 + 12345) >> 16) % 20, sl;
		struct glob *g;

		for (size_t i = 0; i < ll; i++)
			lit[i] = "ab"[((seed = seed * 1103515245 + 12345) >> 16) % 2];
		sl = ((seed = seed * 1103515245 + 12345) >> 16) % sizeof(subj);
		for (size_t i = 0; i < sl; i++)
			subj[i] = "ab"[((seed = seed * 1103515245 + 12345) >> 16) % 2];
		if (sl >= ll && iter % 3 == 0) /* plant it a third of the time, half of those at the very end */
			memcpy(subj + (iter % 2 ? sl - ll : ((seed >> 16) % (sl - ll + 1))), lit, ll);
		pat[0] = '*';
		memcpy(pat + 1, lit, ll);
		pat[ll + 1] = '*';
		g = glob_compile(pat, ll + 2, 0, NULL, NULL, NULL, 0);
		ck_assert_ptr_nonnull(g);
		ck_assert_uint_eq(g->req_len, ll);
		ck_assert_msg(glob_match(g, (const uint8_t *)subj, sl) ==
				      (memmem(subj, sl, lit, ll) != NULL),
			      "\"%.*s\" on \"%.*s\"", (int)ll + 2, pat, (int)sl, subj);
		glob_free(g);
	}
}
END_TEST

START_TEST(long_patterns)
{
	char pat[300], subj[300];
	struct glob *g;

	memset(pat, 'x', 100);
	memcpy(pat + 100, "/**/y*z", 8);
	g = glob_compile(pat, strlen(pat), GLOB_PATH, NULL, NULL, NULL, 0);
	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_null(g->tables); /* beyond 63 tokens */
	memset(subj, 'x', 100);
	strcpy(subj + 100, "/d/e/yQz");
	ck_assert(glob_match(g, (const uint8_t *)subj, strlen(subj)));
	strcpy(subj + 100, "/yz");
	ck_assert(glob_match(g, (const uint8_t *)subj, strlen(subj)));
	strcpy(subj + 100, "/d/yQ/z");
	ck_assert(!glob_match(g, (const uint8_t *)subj, strlen(subj)));
	glob_free(g);
}
END_TEST

Suite *glob_suite(void);

Suite *glob_suite(void)
{
	Suite *s = suite_create("glob");
	TCase *core = tcase_create("core"), *errs = tcase_create("errors");

	tcase_add_test(core, literal);
	tcase_add_test(core, star_and_question);
	tcase_add_test(core, double_star);
	tcase_add_test(core, trailing_slashes);
	tcase_add_test(core, classes);
	tcase_add_test(core, text_mode);
	tcase_add_test(core, variables);
	tcase_add_test(core, bytes);
	tcase_add_test(core, hex_escape);
	tcase_add_test(core, fast_equals_slow);
	tcase_add_test(core, byte_classes);
	tcase_add_test(core, required_literal);
	tcase_add_test(core, long_patterns);
	tcase_add_test(errs, errors);
	tcase_add_test(errs, no_variables_allowed);
	tcase_add_test(errs, limits);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errs);
	return s;
}
