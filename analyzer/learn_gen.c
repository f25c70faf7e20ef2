/*
 * learn_gen.c - generalisation of paths, executables and argv into baseline patterns (see
 * learn_gen.h for the rules).
 */
#include <string.h>

#include "learn_gen.h"
#include "yamlw.h"

#define WORD_MAX 32

/* --- literal glob text ------------------------------------------------------------------- */

void gen_literal(struct strbuf *out, const uint8_t *p, size_t n, bool at_start)
{
	uint32_t cp;
	size_t len;

	for (size_t i = 0; i < n; i += len) {
		len = yamlw_utf8(p + i, n - i, &cp);
		if (!len) { /* not UTF-8: only the glob escape can name it in a YAML file */
			strbuf_printf(out, "\\x%02x", p[i]);
			len = 1;
			continue;
		}
		if (len == 1 &&
		    (strchr("*?[\\", p[i]) || (p[i] == '$' && i + 1 < n && p[i + 1] == '{') ||
		     (p[i] == '@' && i == 0 && at_start)))
			strbuf_putc(out, '\\');
		strbuf_put(out, p + i, len);
	}
}

/* --- path helpers ------------------------------------------------------------------------- */

struct span {
	const uint8_t *p;
	size_t n;
};

static size_t value_len(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	while (n > 1 && v[n - 1] == '/')
		n--;
	return n;
}

/* True when path is dir or below it; *rest gets what follows dir (with its leading '/'). */
static bool under(struct span path, const char *dir, size_t dlen, struct span *rest)
{
	if (!dir || !dlen || path.n < dlen || memcmp(path.p, dir, dlen))
		return false;
	if (path.n > dlen && path.p[dlen] != '/' && !(dlen == 1 && dir[0] == '/'))
		return false;
	rest->p = path.p + dlen;
	rest->n = path.n - dlen;
	return true;
}

static bool under_str(struct span path, const char *dir, struct span *rest)
{
	return under(path, dir, strlen(dir), rest);
}

/* Length of the first component of rest ("/a/b" -> 2 for "/a"), 0 when rest is empty. */
static size_t first_component(struct span rest)
{
	size_t i = 1;

	if (!rest.n)
		return 0;
	while (i < rest.n && rest.p[i] != '/')
		i++;
	return i;
}

bool gen_is_secret(const struct gen_ctx *g, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < g->n_secrets; i++)
		if (glob_match(g->secrets[i], p, n))
			return true;
	return false;
}

/* A prefix may be generalised unless it, or a file directly in it, is a secret. */
static bool prefix_safe(const struct gen_ctx *g, struct span prefix)
{
	struct strbuf sb = STRBUF_INIT;
	bool safe;

	strbuf_put(&sb, prefix.p, prefix.n);
	strbuf_puts(&sb, "/x");
	safe = strbuf_str(&sb) && !gen_is_secret(g, prefix.p, prefix.n) &&
	       !gen_is_secret(g, (const uint8_t *)sb.buf, sb.len);
	strbuf_fini(&sb);
	return safe;
}

/* Exactly, with the workspace, home or temp directory written as its variable. */
static enum gen_result put_exact(const struct gen_ctx *g, struct strbuf *out, struct span path)
{
	gen_exe(g, path.p, path.n, out);
	return GEN_EXACT;
}

/* Below the prefix (or the prefix alone when the path is the prefix), written with var. */
static enum gen_result put_prefix(const struct gen_ctx *g, struct strbuf *out, struct span path,
				  size_t plen, const char *var)
{
	struct span prefix = {path.p, plen};

	if (!prefix_safe(g, prefix))
		return put_exact(g, out, path);
	if (var)
		strbuf_printf(out, "${%s}", var);
	else
		gen_exe(g, prefix.p, prefix.n, out);
	if (path.n > plen)
		strbuf_puts(out, "/**");
	return GEN_PREFIX;
}

/* /proc and /dev: numeric components (pids, tids, fds, pty numbers) become '*'. */
static enum gen_result put_numeric(struct strbuf *out, struct span path)
{
	size_t i = 0, j;
	bool wild = false;

	while (i < path.n) {
		for (j = i + 1; j < path.n && path.p[j] != '/'; j++)
			;
		bool digits = j > i + 1;

		for (size_t k = i + 1; k < j && digits; k++)
			digits = path.p[k] >= '0' && path.p[k] <= '9';
		if (digits) {
			strbuf_puts(out, "/*");
			wild = true;
		} else {
			gen_literal(out, path.p + i, j - i, i == 0);
		}
		i = j;
	}
	return wild ? GEN_PREFIX : GEN_EXACT;
}

/* The first component named like a package directory: its end, or 0. */
static size_t package_tree(struct span path)
{
	static const char *const names[] = {"node_modules", "site-packages", "dist-packages", NULL};

	for (size_t i = 0; i < path.n; i++) {
		if (path.p[i] != '/')
			continue;
		for (size_t k = 0; names[k]; k++) {
			size_t l = strlen(names[k]);

			if (i + 1 + l <= path.n && !memcmp(path.p + i + 1, names[k], l) &&
			    (i + 1 + l == path.n || path.p[i + 1 + l] == '/'))
				return i + 1 + l;
		}
	}
	return 0;
}

static const char *const system_trees[] = {
	"/usr/lib",	    "/usr/lib64",     "/usr/lib32",
	"/usr/libexec",	    "/usr/local/lib", "/usr/share",
	"/usr/local/share", "/usr/include",   "/lib",
	"/lib64",	    "/lib32",	      "/opt",
	"/nix/store",	    "/snap",	      NULL,
};

static const char *const system_dirs[] = {"/usr",   "/etc",   "/bin",  "/sbin", "/lib",
					  "/lib64", "/lib32", "/proc", "/sys",	"/dev",
					  "/opt",   "/nix",   "/snap", NULL};

static bool in_system(struct span path)
{
	struct span rest;

	for (size_t i = 0; system_dirs[i]; i++)
		if (under_str(path, system_dirs[i], &rest))
			return true;
	return false;
}

/* /usr/lib/python3.11/json/x.py -> /usr/lib/python3.11/ (end offset), or 0. */
static size_t system_tree(struct span path)
{
	struct span rest;
	size_t c;

	for (size_t i = 0; system_trees[i]; i++) {
		if (!under_str(path, system_trees[i], &rest))
			continue;
		c = first_component(rest);
		return c && c < rest.n ? strlen(system_trees[i]) + c : 0;
	}
	return 0;
}

/* Under the home: through the directories that only hold other programs' directories. */
static size_t home_prefix(struct span rest)
{
	static const char *const containers[] = {"/.config",	"/.local/share", "/.local/state",
						 "/.local/lib", "/.local",	 "/.cache",
						 NULL};
	struct span sub;
	size_t skip = 0, c;

	for (size_t i = 0; containers[i]; i++)
		if (under_str(rest, containers[i], &sub)) {
			skip = strlen(containers[i]);
			break;
		}
	sub = (struct span){rest.p + skip, rest.n - skip};
	c = first_component(sub);
	return c && c < sub.n ? skip + c : 0;
}

static enum gen_result gen_tmp(const struct gen_ctx *g, struct strbuf *out, struct span path)
{
	static const char *const tmps[] = {"/tmp", "/var/tmp", "/dev/shm", NULL};
	size_t tl = value_len(g->tmp);
	struct span rest;

	if (tl > 1 && under(path, g->tmp, tl, &rest))
		return put_prefix(g, out, path, tl, "tmp");
	for (size_t i = 0; tmps[i]; i++)
		if (under_str(path, tmps[i], &rest))
			return put_prefix(g, out, path, strlen(tmps[i]), NULL);
	return GEN_NONE;
}

static enum gen_result gen_home(const struct gen_ctx *g, struct strbuf *out, struct span path)
{
	size_t hl = value_len(g->home), c;
	struct span rest;

	if (hl <= 1 || !under(path, g->home, hl, &rest) || !rest.n)
		return GEN_NONE;
	c = home_prefix(rest);
	if (!c || !prefix_safe(g, (struct span){path.p, hl + c})) {
		strbuf_puts(out, "${home}");
		gen_literal(out, rest.p, rest.n, false);
		return GEN_EXACT;
	}
	strbuf_puts(out, "${home}");
	gen_literal(out, rest.p, c, false);
	strbuf_puts(out, "/**");
	return GEN_PREFIX;
}

const char *const gen_runtime_noise[] = {
	"/sys/devices/system/cpu",
	"/sys/devices/system/cpu/online",
	"/sys/devices/system/cpu/possible",
	"/sys/devices/system/cpu/present",
	"/proc/stat",
	NULL,
};

bool gen_is_runtime_noise(const uint8_t *p, size_t n)
{
	for (size_t i = 0; gen_runtime_noise[i]; i++)
		if (strlen(gen_runtime_noise[i]) == n && !memcmp(gen_runtime_noise[i], p, n))
			return true;
	return false;
}

static enum gen_result gen_runtime(const struct gen_ctx *g, struct strbuf *out, struct span path,
				   unsigned *flags)
{
	struct span rest;

	if (under_str(path, "/proc", &rest) || under_str(path, "/dev", &rest)) {
		*flags |= GEN_F_RUNTIME;
		return put_numeric(out, path);
	}
	if (under_str(path, "/sys", &rest)) {
		size_t c1 = first_component(rest), c2;
		struct span r2 = {rest.p + c1, rest.n - c1};

		c2 = first_component(r2);
		*flags |= GEN_F_RUNTIME;
		if (c1 && c2 && 4 + c1 + c2 < path.n)
			return put_prefix(g, out, path, 4 + c1 + c2, NULL);
		return put_exact(g, out, path);
	}
	return GEN_NONE;
}

enum gen_result gen_path(const struct gen_ctx *g, const uint8_t *p, size_t n, struct strbuf *out,
			 unsigned *flags)
{
	struct span path = {p, n}, rest;
	size_t wl = value_len(g->workspace), end;
	enum gen_result r;

	*flags = 0;
	if (!n)
		return GEN_NONE;
	if (gen_is_secret(g, p, n))
		return GEN_SECRET;
	if (p[0] != '/')
		return put_exact(g, out, path);
	if ((r = gen_runtime(g, out, path, flags)) != GEN_NONE)
		return r;
	if ((end = package_tree(path))) { /* the runtime's code, wherever it is installed */
		*flags |= GEN_F_RUNTIME;
		return put_prefix(g, out, path, end, NULL);
	}
	if (g->workspace_ok && under(path, g->workspace, wl, &rest))
		return put_prefix(g, out, path, wl, "workspace");
	if ((r = gen_tmp(g, out, path)) != GEN_NONE)
		return r;
	if (in_system(path))
		*flags |= GEN_F_RUNTIME;
	if ((end = system_tree(path)))
		return put_prefix(g, out, path, end, NULL);
	if ((r = gen_home(g, out, path)) != GEN_NONE)
		return r;
	return put_exact(g, out, path);
}

void gen_ctx_init(struct gen_ctx *g)
{
	static const char *const shallow[] = {"/home", "/root",	 "/tmp", "/var", "/srv",
					      "/mnt",  "/media", "/run", NULL};
	size_t wl = value_len(g->workspace), hl = value_len(g->home);
	struct span ws = {(const uint8_t *)g->workspace, wl}, rest;

	g->workspace_ok = false;
	if (wl <= 1 || g->workspace[0] != '/' || in_system(ws))
		return;
	for (size_t i = 0; shallow[i]; i++)
		if (wl == strlen(shallow[i]) && !memcmp(g->workspace, shallow[i], wl))
			return;
	/* the home itself, or a directory above it, is not a project */
	if (hl && under((struct span){(const uint8_t *)g->home, hl}, g->workspace, wl, &rest))
		return;
	g->workspace_ok = true;
}

/* --- executables and argv ----------------------------------------------------------------- */

/* The longest of workspace, home and temp directory that holds the path, as "${name}". */
void gen_exe(const struct gen_ctx *g, const uint8_t *p, size_t n, struct strbuf *out)
{
	const char *names[] = {"workspace", "home", "tmp"};
	const char *vals[] = {g->workspace_ok ? g->workspace : NULL, g->home, g->tmp};
	struct span path = {p, n}, rest, best = {NULL, 0};
	const char *var = NULL;

	for (size_t i = 0; i < 3; i++) {
		size_t l = value_len(vals[i]);

		if (l > 1 && under(path, vals[i], l, &rest) && (!var || rest.n < best.n)) {
			var = names[i];
			best = rest;
		}
	}
	if (!var) {
		gen_literal(out, p, n, true);
		return;
	}
	strbuf_printf(out, "${%s}", var);
	gen_literal(out, best.p, best.n, false);
}

static bool plain_word(struct span a)
{
	if (!a.n || a.n > WORD_MAX)
		return false;
	if (!((a.p[0] >= 'a' && a.p[0] <= 'z') || (a.p[0] >= 'A' && a.p[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < a.n; i++) {
		uint8_t c = a.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

static void argv_value(const struct gen_ctx *g, struct span a, struct strbuf *out)
{
	unsigned flags;

	if (a.n && a.p[0] == '/') {
		if (gen_path(g, a.p, a.n, out, &flags) == GEN_SECRET)
			gen_literal(out, a.p, a.n, false);
	} else if (plain_word(a)) {
		gen_literal(out, a.p, a.n, false);
	} else {
		strbuf_putc(out, '*');
	}
}

static void argv_entry(const struct gen_ctx *g, struct span a, bool first, struct strbuf *out)
{
	const uint8_t *eq;

	if (first) {
		gen_literal(out, a.p, a.n, true);
	} else if (a.n > 1 && a.p[0] == '-') {
		eq = memchr(a.p, '=', a.n);
		if (!eq) {
			gen_literal(out, a.p, a.n, false);
			return;
		}
		gen_literal(out, a.p, (size_t)(eq - a.p) + 1, false);
		argv_value(g, (struct span){eq + 1, a.n - (size_t)(eq - a.p) - 1}, out);
	} else {
		argv_value(g, a, out);
	}
}

void gen_argv(const struct gen_ctx *g, const struct ev_bytes *argv, bool cut, struct strbuf *out)
{
	struct ev_bytes a;
	size_t pos = 0;
	bool first = true;

	while (event_argv_next(argv, &pos, &a)) {
		if (!first)
			strbuf_putc(out, ' ');
		argv_entry(g, (struct span){a.p, a.n}, first, out);
		first = false;
	}
	if (cut)
		strbuf_puts(out, first ? "*" : " *");
}
