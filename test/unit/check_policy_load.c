/*
 * check_policy_load.c - the policy loader on hostile bytes, names and misplaced overrides.
 *
 * encoding: a bad UTF-8 byte or a NUL deep in a file is reported at its own line and column
 * (libyaml's reader gives only a byte offset, not a line).
 * names: a key or a name-like value holding a NUL byte is refused, never read up to the NUL;
 * ids and categories over their length limits get a length message.
 * overrides: an override targets what an earlier file defined, never its own file; the same
 * path given twice is two files.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "policy_testlib.h"

/* Writes len bytes (NULs included) as p.yaml and loads and compiles it as policy check does.
 * Returns the first message, "" when it loads. */
static const char *load_bytes(const char *bytes, size_t len)
{
	static char first[512];
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	FILE *f = fopen("p.yaml", "wb");
	int err;

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	err = policy__load_file(p, "p.yaml", &d);
	if (!err)
		err = policy__compile(p, vs, false, &d);
	ck_assert_msg(err == 0 || err == -EINVAL, "load: %d", err);
	ck_assert_msg(!err == !d.errors, "err %d with %u errors", err, d.errors);
	snprintf(first, sizeof(first), "%s", diag_first(&d));
	diag_fini(&d);
	vars__free(vs);
	policy__free(p);
	return first;
}

#define LOAD(lit) load_bytes(lit, sizeof(lit) - 1)

/* --- duplicate keys ------------------------------------------------------------------------ */

/* A lists mapping of n keys l0 .. l<n-1> (line i + 3 holds l<i>) where key `again` is written
 * once more in place of key `at` (-1: none). */
static const char *dup_lists(int n, int again, int at)
{
	static char buf[64 * 1024];
	size_t k = (size_t)snprintf(buf, sizeof(buf), "version: 1\nlists:\n");

	for (int i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "  l%d: [x]\n", i == at ? again : i);
	ck_assert_uint_lt(k, sizeof(buf));
	return load_bytes(buf, k);
}

/* Small mappings are checked key by key, large ones sorted at their end: the same message for
 * the same file either way, the earliest repeat reported. */
START_TEST(duplicate_keys)
{
	in_tmpdir();
	ck_assert_str_eq(dup_lists(10, 3, 7),
			 "p.yaml:10:3: duplicate key \"l3\" (first at line 6)");
	ck_assert_str_eq(dup_lists(3000, 5, 2500),
			 "p.yaml:2503:3: duplicate key \"l5\" (first at line 8)");
	ck_assert_str_eq(dup_lists(3000, 2990, 2995),
			 "p.yaml:2998:3: duplicate key \"l2990\" (first at line 2993)");
	ck_assert_str_eq(dup_lists(3000, -1, -1), "");
	ck_assert_str_eq(dup_lists(17, 16, 16), ""); /* its own place: no repeat */
	ck_assert_str_eq(dup_lists(17, 0, 16), "p.yaml:19:3: duplicate key \"l0\" (first at line 3)");
}
END_TEST

/* --- encoding ----------------------------------------------------------------------------- */

/* A version line, 49 comment lines, line 51 holding prefix and the byte bad, a last line. */
static const char *line51(const char *prefix, char bad)
{
	char buf[512];
	size_t n = 0;

	n += (size_t)snprintf(buf, sizeof(buf), "version: 1\n");
	for (int i = 0; i < 49; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "# %d\n", i % 10);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", prefix);
	buf[n++] = bad;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n# end\n");
	return load_bytes(buf, n);
}

START_TEST(bad_byte_line)
{
	in_tmpdir();
	/* libyaml names the octet that breaks the sequence: here the newline after 0xe9 */
	ck_assert_str_eq(line51("", (char)0xe9), "p.yaml:51:2: invalid trailing UTF-8 octet");
	ck_assert_str_eq(line51("x: ", (char)0xe9), "p.yaml:51:5: invalid trailing UTF-8 octet");
	/* a two-byte character before it is one column */
	ck_assert_str_eq(line51("x: \xc3\xa9", (char)0xff),
			 "p.yaml:51:5: invalid leading UTF-8 octet");
	ck_assert_str_eq(LOAD("version: 1\nrules: []\nx: \xe9"),
			 "p.yaml:3:4: incomplete UTF-8 octet sequence");
}
END_TEST

START_TEST(nul_byte_line)
{
	in_tmpdir();
	ck_assert_str_eq(line51("# a ", '\0'), "p.yaml:51:5: control characters are not allowed");
	ck_assert_str_eq(LOAD("version: 1\n# a\n# b \0\n"),
			 "p.yaml:3:5: control characters are not allowed");
	ck_assert_str_eq(LOAD("\0"), "p.yaml:1:1: control characters are not allowed");
}
END_TEST

/* --- names -------------------------------------------------------------------------------- */

#define RULE_HEAD                                                                                  \
	HDR "rules:\n- id: a\n  description: d\n  severity: high\n  category: c\n"                 \
	    "  condition: {op: exec}\n"

/* Name-like scalars with a NUL byte: keys anywhere (refused by the YAML tree, so no consumer
 * reads "severity\0junk" as "severity"), and values compared as words. */
struct bad_name {
	const char *yaml;
	size_t len; /* the literal's, NULs included */
	const char *msg;
};

#define BAD(lit, msg)                                                                              \
	{                                                                                          \
		lit, sizeof(lit) - 1, msg                                                          \
	}

static const struct bad_name bad_names[] = {
	BAD(RULE_HEAD "  \"severity\\0junk\": low\n",
	    "p.yaml:8:3: key \"severity\\x00junk\" holds a NUL byte"),
	BAD(RULE_HEAD "  \"enabled\\0\": false\n",
	    "p.yaml:8:3: key \"enabled\\x00\" holds a NUL byte"),
	BAD("\"version\\0\": 1\n", "p.yaml:1:1: key \"version\\x00\" holds a NUL byte"),
	BAD(RULE("{\"all\\0x\": [{op: exec}]}"), "p.yaml:7:15: key \"all\\x00x\" holds a NUL byte"),
	BAD(HDR "lists:\n  \"l\\0x\": [a]\n", "p.yaml:3:3: key \"l\\x00x\" holds a NUL byte"),
	BAD(HDR "macros:\n  \"m\\0\": {op: exec}\n", "p.yaml:3:3: key \"m\\x00\" holds a NUL byte"),
	BAD(HDR "rules:\n- {id: \"a\\0b\", description: d, severity: high, category: c, "
		"condition: {op: exec}}\n",
	    "p.yaml:3:8: bad rule id (letters, digits, '_', '-', '.', ':')"),
	BAD(HDR "rules:\n- {id: a, description: d, severity: \"high\\0x\", category: c, "
		"condition: {op: exec}}\n",
	    "p.yaml:3:37: \"severity\" is one of info, low, medium, high, critical"),
	BAD(HDR "lists:\n  l: {items: [a], override: \"append\\0\"}\n",
	    "p.yaml:3:29: \"override\" is append or replace"),
	BAD(RULE_HEAD "- {id: a, override: \"replace\\0x\"}\n",
	    "p.yaml:8:21: \"override\" is append or replace"),
	/* the character sets keep their own messages */
	BAD(HDR "rules:\n- id: -a\n",
	    "p.yaml:3:7: bad rule id (letters, digits, '_', '-', '.', ':')"),
	BAD(HDR "rules:\n- {id: a, description: d, severity: high, category: C, "
		"condition: {op: exec}}\n",
	    "p.yaml:3:53: \"category\" takes lower-case letters, digits and '_'"),
};

START_TEST(names_refused)
{
	const struct bad_name *b = &bad_names[_i];

	in_tmpdir();
	ck_assert_str_eq(load_bytes(b->yaml, b->len), b->msg);
}
END_TEST

/* Loads a rule whose id is n bytes of 'a' and whose category is m bytes of 'c'. */
static const char *id_cat(size_t n, size_t m)
{
	char id[256], cat[256], buf[1024];
	int len;

	ck_assert_uint_lt(n, sizeof(id));
	ck_assert_uint_lt(m, sizeof(cat));
	memset(id, 'a', n);
	id[n] = '\0';
	memset(cat, 'c', m);
	cat[m] = '\0';
	len = snprintf(buf, sizeof(buf),
		       HDR "rules:\n- id: %s\n  description: d\n  severity: high\n"
			   "  category: %s\n  condition: {op: exec}\n",
		       id, cat);
	ck_assert_int_lt(len, (int)sizeof(buf));
	return load_bytes(buf, (size_t)len);
}

START_TEST(length_limits)
{
	in_tmpdir();
	ck_assert_str_eq(id_cat(128, 64), "");
	ck_assert_str_eq(id_cat(129, 64),
			 "p.yaml:3:7: rule id is 129 characters long (at most 128)");
	ck_assert_str_eq(id_cat(200, 1),
			 "p.yaml:3:7: rule id is 200 characters long (at most 128)");
	ck_assert_str_eq(id_cat(1, 65),
			 "p.yaml:6:13: \"category\" is 65 characters long (at most 64)");
}
END_TEST

/* List and macro names have the rule id's limit and message. */
START_TEST(name_length_limits)
{
	char name[140], buf[512];
	int len;

	in_tmpdir();
	memset(name, 'n', 129);
	name[129] = '\0';
	len = snprintf(buf, sizeof(buf), "version: 1\nlists:\n  %s: [x]\n", name);
	ck_assert_str_eq(load_bytes(buf, (size_t)len),
			 "p.yaml:3:3: list name is 129 characters long (at most 128)");
	len = snprintf(buf, sizeof(buf), "version: 1\nmacros:\n  %s: {op: exec}\n", name);
	ck_assert_str_eq(load_bytes(buf, (size_t)len),
			 "p.yaml:3:3: macro name is 129 characters long (at most 128)");
	name[128] = '\0';
	len = snprintf(buf, sizeof(buf), "version: 1\nmacros:\n  %s: {op: exec}\n", name);
	ck_assert_str_eq(load_bytes(buf, (size_t)len), "");
}
END_TEST

/* A version that is no integer is quoted as written. */
START_TEST(version_messages)
{
	in_tmpdir();
	ck_assert_str_eq(LOAD("version: 1.0\n"),
			 "p.yaml:1:10: \"version\" takes an integer, not \"1.0\"");
	ck_assert_str_eq(LOAD("version: \"1\"\n"),
			 "p.yaml:1:10: \"version\" takes an integer, not the string \"1\"");
	ck_assert_str_eq(LOAD("version: [1]\n"),
			 "p.yaml:1:10: \"version\" takes an integer, not a sequence");
}
END_TEST

/* An unknown top-level key is one error: the sections are checked all the same, and each of
 * their errors reported too ("every error is reported", policy check). */
START_TEST(unknown_top_key_and_more)
{
	static const char text[] = "version: 1\n"
				   "rulez: 1\n"
				   "rules:\n"
				   "  - id: a.b\n"
				   "    message: m\n"
				   "    severity: sometimes\n"
				   "    category: c\n"
				   "    condition: {op: exec}\n";
	struct policy *p = policy__new();
	struct diag d = {0};
	FILE *f;

	in_tmpdir();
	f = fopen("p.yaml", "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), -EINVAL);
	ck_assert_uint_eq(d.errors, 2);
	ck_assert_str_eq(diag_first(&d), "p.yaml:2:1: unknown top-level key \"rulez\" (did you "
					 "mean \"rules\"?)");
	diag_fini(&d);
	policy__free(p);
}
END_TEST

/* A macro reference holding a NUL names no macro, not the one before the NUL. */
START_TEST(macro_ref_nul)
{
	in_tmpdir();
	ck_assert_str_eq(LOAD(HDR "macros:\n  m: {op: exec}\nrules:\n- id: r\n  description: d\n"
				  "  severity: high\n  category: c\n  condition: {macro: \"m\\0x\"}\n"),
			 "p.yaml:9:22: unknown macro \"m\\x00x\" (macros must be defined before "
			 "use)");
}
END_TEST

/* A policy from a pipe (-p <(...)) or a file of no size (/proc) is read to its end; a device
 * is refused by name. */
START_TEST(pipe_and_device)
{
	static const char text[] = "version: 1\nrules:\n- id: r\n  description: d\n"
				   "  severity: high\n  category: c\n  condition: {op: exec}\n";
	struct policy *p = policy__new();
	struct diag d = {0};
	char path[32];
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(write(fds[1], text, sizeof(text) - 1), (int)sizeof(text) - 1);
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	ck_assert_msg(policy__load_file(p, path, &d) == 0, "%s", diag_first(&d));
	ck_assert_uint_eq(p->n_rules, 1);
	ck_assert_uint_eq(p->files[0].size, sizeof(text) - 1);
	close(fds[0]);
	ck_assert_int_eq(policy__load_file(p, "/dev/null", &d), -ENOTSUP);
	ck_assert_str_eq(diag_first(&d), "/dev/null: failed to read policy: not a regular file or "
					  "a pipe");
	diag_fini(&d);
	/* a file that tells no size (/proc): read to its end, its bytes judged, not "empty" */
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(policy__load_file(p, "/proc/self/status", &d), -EINVAL);
	ck_assert_str_eq(diag_first(&d), "/proc/self/status:1:1: unknown top-level key \"Name\"");
	diag_fini(&d);
	policy__free(p);
}
END_TEST

/* --- overrides ---------------------------------------------------------------------------- */

START_TEST(same_file_override)
{
	in_tmpdir();
	ck_assert_str_eq(
		LOAD(RULE_HEAD "- {id: a, override: append, enabled: false}\n"),
		"p.yaml:8:21: override of rule \"a\", defined in this same file at 3:7 (an "
		"override changes only what an earlier file defines)");
	ck_assert_str_eq(
		LOAD(RULE_HEAD "- id: a\n  override: replace\n  description: d2\n"
			       "  severity: low\n  category: c\n  condition: {op: fork}\n"),
		"p.yaml:9:13: override of rule \"a\", defined in this same file at 3:7 (an "
		"override changes only what an earlier file defines)");
	/* lists and macros cannot even be named twice in one file: mapping keys are unique */
	ck_assert_str_eq(LOAD(HDR "lists:\n  l: [a]\n  l: {items: [b], override: append}\n"),
			 "p.yaml:4:3: duplicate key \"l\" (first at line 3)");
}
END_TEST

static int load_path(struct policy *p, const char *path, struct diag *d)
{
	int err = policy__load_file(p, path, d);

	ck_assert_msg(err == 0 || err == -EINVAL, "%s: %d", path, err);
	return err;
}

START_TEST(override_across_files)
{
	struct policy *p = policy__new();
	struct diag d = {0};

	in_tmpdir();
	write_file("a.yaml", RULE_HEAD);
	write_file("b.yaml", HDR "rules:\n- {id: a, override: append, enabled: false}\n"
				 "- {id: a, override: append, tags: [t]}\n");
	write_file("c.yaml", HDR "rules:\n- {id: a, override: replace, description: d3, "
				 "severity: low, category: c, condition: {op: fork}}\n");
	ck_assert_int_eq(load_path(p, "a.yaml", &d), 0);
	ck_assert_int_eq(load_path(p, "b.yaml", &d), 0); /* twice in b: both target a.yaml's */
	ck_assert_int_eq(load_path(p, "c.yaml", &d), 0);
	ck_assert_int_eq(load_path(p, "c.yaml", &d), 0); /* the same path again: another file */
	ck_assert_msg(d.n == 0, "%s", diag_first(&d));
	ck_assert_str_eq(policy_find_rule(p, "a")->description, "d3");
	ck_assert_int_eq(load_path(p, "a.yaml", &d), -EINVAL); /* no override: a redefinition */
	ck_assert_str_eq(diag_first(&d), "a.yaml:3:7: rule \"a\" is already defined at "
					 "c.yaml:3:8 (use override: append or replace)");
	diag_fini(&d);
	policy__free(p);
}
END_TEST

Suite *policy_load_suite(void);

Suite *policy_load_suite(void)
{
	Suite *s = suite_create("policy_load");
	TCase *enc = tcase_create("encoding"), *names = tcase_create("names"),
	      *ov = tcase_create("overrides");

	tcase_add_checked_fixture(enc, NULL, leave_tmpdir);
	tcase_add_checked_fixture(names, NULL, leave_tmpdir);
	tcase_add_checked_fixture(ov, NULL, leave_tmpdir);
	tcase_add_test(enc, duplicate_keys);
	tcase_add_test(enc, bad_byte_line);
	tcase_add_test(enc, nul_byte_line);
	tcase_add_loop_test(names, names_refused, 0, sizeof(bad_names) / sizeof(bad_names[0]));
	tcase_add_test(names, length_limits);
	tcase_add_test(names, name_length_limits);
	tcase_add_test(names, version_messages);
	tcase_add_test(names, unknown_top_key_and_more);
	tcase_add_test(names, macro_ref_nul);
	tcase_add_test(names, pipe_and_device);
	tcase_add_test(ov, same_file_override);
	tcase_add_test(ov, override_across_files);
	suite_add_tcase(s, enc);
	suite_add_tcase(s, names);
	suite_add_tcase(s, ov);
	return s;
}
