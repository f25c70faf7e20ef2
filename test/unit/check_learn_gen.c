/*
 * check_learn_gen.c - the generalisation rules of a baseline (learn_gen.h), one by one, and
 * the YAML writer (yamlw.h): whatever bytes a trace holds (quotes, newlines, wildcards, "${",
 * a leading '@', control bytes, C1 and line separators, invalid UTF-8), the scalar written
 * reads back through the policy's YAML reader and glob compiler as a pattern that matches
 * exactly those bytes and nothing else; comments never end early.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "learn_gen.h"
#include "yamlw.h"
#include "ytree.h"

static int var_cb(void *ctx, const char *name, const char **val, size_t *len)
{
	static const char *const names[] = {"home", "workspace", "tmp"};
	const char *const *vals = ctx;

	for (size_t i = 0; i < 3; i++)
		if (!strcmp(name, names[i])) {
			*val = vals[i];
			*len = strlen(vals[i]);
			return 0;
		}
	return -ENOENT;
}

static const char *const VALS[] = {"/home/u", "/work/proj", "/tmp"};

static struct glob *compile(const char *pat, size_t n, unsigned flags)
{
	char err[160];
	struct glob *g = glob_compile(pat, n, flags, var_cb, (void *)VALS, err, sizeof(err));

	ck_assert_msg(g, "compile \"%s\": %s", pat, err);
	return g;
}

static const char *const SECRETS[] = {"${home}/.ssh/**", "**/.ssh/**",	"**/.aws/credentials",
				      "**/.env",	 "/etc/shadow", NULL};
static struct glob *secrets[8];

static struct gen_ctx ctx(void)
{
	struct gen_ctx g = {.workspace = VALS[1], .home = VALS[0], .tmp = VALS[2]};
	size_t n = 0;

	for (; SECRETS[n]; n++)
		if (!secrets[n])
			secrets[n] = compile(SECRETS[n], strlen(SECRETS[n]), GLOB_PATH);
	g.secrets = secrets;
	g.n_secrets = n;
	gen_ctx_init(&g);
	return g;
}

static enum gen_result path_is(const struct gen_ctx *g, const char *path, const char *want,
			       unsigned want_flags)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned flags = 99;
	enum gen_result r = gen_path(g, (const uint8_t *)path, strlen(path), &sb, &flags);

	ck_assert_msg(!strcmp(strbuf_str(&sb), want), "%s: got \"%s\", want \"%s\"", path,
		      strbuf_str(&sb), want);
	if (r != GEN_SECRET && r != GEN_NONE)
		ck_assert_msg(flags == want_flags, "%s: flags %u", path, flags);
	strbuf_fini(&sb);
	return r;
}

#define RT GEN_F_RUNTIME

START_TEST(path_rules)
{
	struct gen_ctx g = ctx();

	ck_assert(g.workspace_ok);
	ck_assert_int_eq(path_is(&g, "/work/proj/src/a.c", "${workspace}/**", 0), GEN_PREFIX);
	ck_assert_int_eq(path_is(&g, "/work/proj", "${workspace}", 0), GEN_PREFIX);
	path_is(&g, "/work/project2/a", "/work/project2/a", 0); /* not below the workspace */
	path_is(&g, "/tmp/x/y", "${tmp}/**", 0);
	path_is(&g, "/var/tmp/y", "/var/tmp/**", 0);
	path_is(&g, "/work/proj/node_modules/x/i.js", "${workspace}/node_modules/**", RT);
	path_is(&g, "/opt/n/lib/node_modules/@a/b/index.js", "/opt/n/lib/node_modules/**", RT);
	path_is(&g, "/usr/lib/python3.11/json/decoder.py", "/usr/lib/python3.11/**", RT);
	path_is(&g, "/usr/lib/os-release", "/usr/lib/os-release", RT); /* directly in the tree */
	path_is(&g, "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/**", RT);
	path_is(&g, "/etc/hosts", "/etc/hosts", RT);
	path_is(&g, "/proc/1234/task/1235/stat", "/proc/*/task/*/stat", RT);
	path_is(&g, "/proc/self/fd/7", "/proc/self/fd/*", RT);
	path_is(&g, "/dev/pts/3", "/dev/pts/*", RT);
	path_is(&g, "/dev/null", "/dev/null", RT);
	path_is(&g, "/sys/fs/cgroup/memory/x/limit", "/sys/fs/cgroup/**", RT);
	path_is(&g, "/sys/devices/online", "/sys/devices/online", RT);
	path_is(&g, "/home/u/.config/app/settings.json", "${home}/.config/app/**", 0);
	path_is(&g, "/home/u/.local/share/app/db", "${home}/.local/share/app/**", 0);
	path_is(&g, "/home/u/docs/a/b.txt", "${home}/docs/**", 0);
	path_is(&g, "/home/u/.gitconfig", "${home}/.gitconfig", 0);
	path_is(&g, "/srv/data/x", "/srv/data/x", 0);
	path_is(&g, "rel/path", "rel/path", 0);
	ck_assert_int_eq(path_is(&g, "", "", 0), GEN_NONE);
}
END_TEST

static bool noise(const char *path)
{
	return gen_is_runtime_noise((const uint8_t *)path, strlen(path));
}

/* The processor counts, exactly; nothing beside or below them. */
START_TEST(runtime_noise_exactly)
{
	for (size_t i = 0; gen_runtime_noise[i]; i++)
		ck_assert_msg(noise(gen_runtime_noise[i]), "%s", gen_runtime_noise[i]);
	ck_assert(noise("/sys/devices/system/cpu/online"));
	ck_assert(noise("/proc/stat"));
	ck_assert(!noise("/sys/devices/system/cpu/cpu0/online"));
	ck_assert(!noise("/sys/devices/system/cpu/onlinex"));
	ck_assert(!noise("/sys/devices/system/cpu/onlin"));
	ck_assert(!noise("/sys/devices/system/cpu/"));
	ck_assert(!noise("/proc/self/stat"));
	ck_assert(!noise("/proc/stat/x"));
	ck_assert(!noise("sys/devices/system/cpu/online"));
	ck_assert(!noise(""));
	/* a NUL inside the recorded bytes is not the file */
	ck_assert(!gen_is_runtime_noise((const uint8_t *)"/proc/stat\0x", 12));
}
END_TEST

START_TEST(secrets_never_learned)
{
	struct gen_ctx g = ctx();

	ck_assert_int_eq(path_is(&g, "/home/u/.ssh/id_rsa", "", 0), GEN_SECRET);
	ck_assert_int_eq(path_is(&g, "/work/proj/.env", "", 0), GEN_SECRET);
	ck_assert_int_eq(path_is(&g, "/etc/shadow", "", 0), GEN_SECRET);
	ck_assert_int_eq(path_is(&g, "/home/u/.ssh/sub/known_hosts", "", 0), GEN_SECRET);
	/* a prefix holding a secret file directly is never generalised over: the path exactly */
	g.secrets[g.n_secrets++] = compile("/home/u/docs/x", 14, GLOB_PATH);
	ck_assert_int_eq(path_is(&g, "/home/u/docs/a/b.txt", "${home}/docs/a/b.txt", 0), GEN_EXACT);
	glob_free(g.secrets[--g.n_secrets]);
	g.secrets[g.n_secrets] = NULL;
	/* ~/.aws/config is not a secret here: its directory is generalised, and the drift rules
	 * exclude ~/.aws/credentials from the allowance (learn_emit.c) */
	ck_assert_int_eq(path_is(&g, "/home/u/.aws/config", "${home}/.aws/**", 0), GEN_PREFIX);
	ck_assert(gen_is_secret(&g, (const uint8_t *)"/x/.ssh/k", 9));
}
END_TEST

START_TEST(workspace_not_generalised)
{
	static const char *const bad[] = {"/",	     "/tmp",  "/home", "/usr/src/app",
					  "/home/u", "/root", "rel",   NULL};
	struct gen_ctx g = ctx();

	for (size_t i = 0; bad[i]; i++) {
		g.workspace = bad[i];
		gen_ctx_init(&g);
		ck_assert_msg(!g.workspace_ok, "%s", bad[i]);
	}
	g.home = "/home/u/sub"; /* a workspace above the home */
	g.workspace = "/home/u";
	gen_ctx_init(&g);
	ck_assert(!g.workspace_ok);
	g.workspace = NULL;
	gen_ctx_init(&g);
	ck_assert(!g.workspace_ok);
}
END_TEST

static void argv_is(const char *argv, size_t n, bool cut, const char *want)
{
	struct gen_ctx g = ctx();
	struct strbuf sb = STRBUF_INIT;
	struct ev_bytes a = {(const uint8_t *)argv, n};

	gen_argv(&g, &a, cut, &sb);
	ck_assert_msg(!strcmp(strbuf_str(&sb), want), "got \"%s\", want \"%s\"", strbuf_str(&sb),
		      want);
	strbuf_fini(&sb);
}

#define A(s) s, sizeof(s) - 1

START_TEST(argv_shapes)
{
	argv_is(A("/bin/sh\0-c\0echo hi"), false, "/bin/sh -c *");
	argv_is(A("git\0-C\0/work/proj/repo\0status\0--short"), false,
		"git -C ${workspace}/** status --short");
	argv_is(A("curl\0--max-time=10\0https://x.example/a?b"), false, "curl --max-time=* *");
	argv_is(A("node\0--require=/usr/lib/node_modules/x/r.js\0main.js"), false,
		"node --require=/usr/lib/node_modules/** main.js");
	argv_is(A("cat\0/home/u/.ssh/id_rsa"), false, "cat /home/u/.ssh/id_rsa");
	argv_is(A("x*y\0a[1]\0-[z]"), false, "x\\*y * -\\[z]");
	argv_is(A("@evil\0ok"), true, "\\@evil ok *");
	argv_is("", 0, true, "*");
}
END_TEST

START_TEST(exe_with_variables)
{
	struct gen_ctx g = ctx();
	struct strbuf sb = STRBUF_INIT;

	gen_exe(&g, (const uint8_t *)"/work/proj/bin/run", 18, &sb);
	ck_assert_str_eq(strbuf_str(&sb), "${workspace}/bin/run");
	strbuf_reset(&sb);
	gen_exe(&g, (const uint8_t *)"/usr/bin/git", 12, &sb);
	ck_assert_str_eq(strbuf_str(&sb), "/usr/bin/git");
	strbuf_fini(&sb);
}
END_TEST

/* --- the YAML writer ---------------------------------------------------------------------- */

/* Writes bytes as a glob in a YAML list, reads it back: the glob must be literal and match
 * exactly the bytes (and not the bytes with one more or one less). */
static void roundtrip(const uint8_t *p, size_t n)
{
	struct strbuf lit = STRBUF_INIT, doc = STRBUF_INIT;
	struct diag d = {0};
	struct ynode *root;
	const struct ynode *item;
	struct glob *g;

	gen_literal(&lit, p, n, true);
	ck_assert(strbuf_str(&lit));
	strbuf_puts(&doc, "x:\n  - ");
	ck_assert_int_eq(yamlw_scalar(&doc, (const uint8_t *)lit.buf, lit.len), 0);
	strbuf_puts(&doc, "   ");
	yamlw_comment(&doc, p, n, 64);
	strbuf_puts(&doc, "\ny: 1\n");
	root = ytree_parse("t.yaml", (const uint8_t *)doc.buf, doc.len, &d);
	ck_assert_msg(root, "%s: %s", doc.buf, diag_first(&d));
	ck_assert_uint_eq(root->n, 4); /* the comment did not swallow "y" */
	item = ynode_get(root, "x")->kids[0];
	ck_assert_uint_eq(item->len, lit.len);
	ck_assert(!lit.len || !memcmp(item->str, lit.buf, lit.len)); /* buf is NULL when empty */
	g = compile(item->str, item->len, GLOB_PATH);
	ck_assert(glob_is_literal(g));
	ck_assert_msg(glob_match(g, p, n), "%s", doc.buf);
	if (n)
		ck_assert(!glob_match(g, p, n - 1));
	glob_free(g);
	ynode_free(root);
	diag_fini(&d);
	strbuf_fini(&lit);
	strbuf_fini(&doc);
}

START_TEST(hostile_values)
{
	static const char *const v[] = {
		"/a/b",
		"/with space/and \"quotes\" and 'single'",
		"/new\nline/# not a comment: [x] {y}",
		"/star*/q?/[set]/back\\slash/${home}/$dollar",
		"@list",
		"- dash",
		"true",
		"null",
		"~",
		"1e3",
		"0x10",
		"\t\r\x01\x1f\x7f",
		"/utf8/\xc3\xa9t\xc3\xa9/\xe2\x80\xa8sep/\xc2\x85nel/\xef\xbb\xbf"
		"bom",
		"/bidi/\xe2\x80\xae"
		"txt",
		"/bad/\xff\xfe/\xc3(/\xed\xa0\x80/\xf4\x90\x80\x80/\xc0\xaf",
		"",
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		roundtrip((const uint8_t *)v[i], strlen(v[i]));
}
END_TEST

START_TEST(random_bytes)
{
	uint8_t buf[48];
	unsigned seed = 12345;

	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(buf));

		for (size_t i = 0; i < n; i++) {
			buf[i] = (uint8_t)rand_r(&seed);
			if (!buf[i])
				buf[i] = '/'; /* paths and argv entries hold no NUL */
		}
		roundtrip(buf, n);
	}
}
END_TEST

START_TEST(scalar_styles)
{
	struct strbuf sb = STRBUF_INIT;

	yamlw_str(&sb, "/usr/bin/sh");
	strbuf_putc(&sb, ' ');
	yamlw_str(&sb, "read_file");
	strbuf_putc(&sb, ' ');
	yamlw_str(&sb, "443");
	strbuf_putc(&sb, ' ');
	yamlw_str(&sb, "${workspace}/**");
	strbuf_putc(&sb, ' ');
	yamlw_str(&sb, "Off");
	ck_assert_str_eq(strbuf_str(&sb), "/usr/bin/sh read_file 443 \"${workspace}/**\" \"Off\"");
	ck_assert_int_eq(yamlw_scalar(&sb, (const uint8_t *)"\xff", 1), -EINVAL);
	strbuf_fini(&sb);
}
END_TEST

Suite *learn_gen_suite(void);
Suite *learn_gen_suite(void)
{
	Suite *s = suite_create("learn_gen");
	TCase *core = tcase_create("core"), *yaml = tcase_create("yaml"),
	      *bad = tcase_create("errors");

	tcase_add_test(core, path_rules);
	tcase_add_test(core, runtime_noise_exactly);
	tcase_add_test(core, workspace_not_generalised);
	tcase_add_test(core, argv_shapes);
	tcase_add_test(core, exe_with_variables);
	tcase_add_test(bad, secrets_never_learned);
	tcase_add_test(yaml, hostile_values);
	tcase_add_test(yaml, random_bytes);
	tcase_add_test(yaml, scalar_styles);
	suite_add_tcase(s, core);
	suite_add_tcase(s, yaml);
	suite_add_tcase(s, bad);
	return s;
}
