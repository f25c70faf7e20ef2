/*
 * learn_gen.h - how `mcpwitness policy learn` and `mcpwitness diff` generalise what a trace
 * shows into the patterns of a baseline: a seen path into a path glob, a seen argv into an
 * argv shape, an executable into a path with the trace's variables. Pure functions over bytes,
 * unit-tested rule by rule (test/unit/check_learn_gen.c).
 *
 * Paths (the first rule that applies; "below D" is the glob D followed by a slash and "**"):
 *   secret           a path the base policy lists as sensitive (its sensitive_paths) is never
 *                    learned: GEN_SECRET
 *   relative         (unresolved) kept exactly
 *   /proc, /dev      numeric components (pids, fds, ttys) become the wildcard '*'
 *   /sys             below its first three components (/sys/fs/cgroup)
 *   package trees    below the first node_modules, site-packages or dist-packages component
 *                    (the runtime's code, even inside the workspace)
 *   workspace        below ${workspace} (when the workspace is a real project directory: not
 *                    /, not a top-level or system directory, not the home or above it)
 *   temp             below ${tmp}, /tmp, /var/tmp or /dev/shm
 *   system trees     below the first level of /usr/lib, /usr/share, /lib, /opt...
 *                    (/usr/lib/python3.11)
 *   home             below ${home}/<first component> (through .config, .local/share,
 *                    .cache...); a file directly in the home exactly: ${home}/.gitconfig
 *   anything else    kept exactly (/etc/hosts, /srv/data/x)
 * Every pattern, exact or not, names the workspace, home or temp directory by its variable
 * (${workspace}/notes.txt), so a baseline holds for sessions recorded in other directories.
 * A generalised prefix is refused (the path is kept exactly) when the base policy calls the
 * prefix itself, or any file directly in it ("x"), a secret: a secret directory (~/.ssh) is never
 * generalised over. A prefix may still hold secret files among others (~/.aws holds
 * credentials): the drift rules exclude every secret from every allowance (learn_emit.c), so a
 * baseline never allows reading one.
 * GEN_F_RUNTIME marks the system and runtime locations (/usr, /lib, /etc, /proc, /sys, /dev,
 * package trees): the server reads those from whichever call happens to load something first,
 * so a baseline allows them server-wide rather than per tool.
 *
 * Argv shapes: argv[0] exactly; an option ("-x", "--flag") exactly, "--opt=VALUE" as
 * "--opt=" and the value's shape; an absolute path generalised as above (a secret one exactly);
 * a plain word (a subcommand: letters, digits, ".", "_", "+", "-", at most 32 bytes) exactly;
 * anything else (text, numbers, URLs) as "*". Entries are joined by single spaces, as the
 * policy field argv matches them; a cut argv ends in " *".
 *
 * Everything written is a glob (glob.h) with its literal bytes escaped: '*', '?', '[', '\\',
 * "${", a leading '@', and every byte that is not valid UTF-8 as "\xHH", so the glob matches
 * exactly the bytes seen wherever it is not generalised.
 */
#ifndef MW_LEARN_GEN_H
#define MW_LEARN_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "glob.h"
#include "strbuf.h"

enum gen_result {
	GEN_NONE = 0, /* nothing to learn (empty) */
	GEN_EXACT,    /* the path itself */
	GEN_PREFIX,   /* a generalised pattern */
	GEN_SECRET,   /* a secret: not learned */
};

#define GEN_F_RUNTIME 1u

struct gen_ctx {
	/* the trace's variables (NULL when the trace does not record one) */
	const char *workspace, *home, *tmp;
	bool workspace_ok; /* set by gen_ctx_init */
	/* secret matcher: path globs compiled with the trace's variables */
	struct glob **secrets;
	size_t n_secrets;
};

/* Decides whether the workspace can be generalised. */
void gen_ctx_init(struct gen_ctx *g);

/* True when a path is a secret for the base policy. */
bool gen_is_secret(const struct gen_ctx *g, const uint8_t *p, size_t n);

/* The pseudo-files the C library reads to count processors (sysconf, get_nprocs): a runtime
 * reads them whenever it sizes a thread pool or a malloc arena (node's threads, mid-call or not,
 * in one session and not the next), and they say nothing worth guarding. They are never learned
 * (so never new or gone in diff), and every baseline allows them, seen in its traces or not. */
extern const char *const gen_runtime_noise[]; /* NULL-terminated */
bool gen_is_runtime_noise(const uint8_t *p, size_t n);

/* The glob of a seen path into out (appended); *flags gets GEN_F_*. */
enum gen_result gen_path(const struct gen_ctx *g, const uint8_t *p, size_t n, struct strbuf *out,
			 unsigned *flags);

/* An executable: exactly, with the workspace, home or temp directory written as a variable. */
void gen_exe(const struct gen_ctx *g, const uint8_t *p, size_t n, struct strbuf *out);

/* The shape of an argv (NUL-separated, as recorded); cut: the collector cut it. */
void gen_argv(const struct gen_ctx *g, const struct ev_bytes *argv, bool cut, struct strbuf *out);

/* Appends p[0..n) as literal glob text (escapes as above); at_start: a leading '@' is escaped. */
void gen_literal(struct strbuf *out, const uint8_t *p, size_t n, bool at_start);

#endif /* MW_LEARN_GEN_H */
