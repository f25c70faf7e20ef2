/*
 * learn_rules.c - the rules of a learned baseline (see learn_emit.h): the base policy's rules
 * that drift replaces switched off, then one drift rule per class of operation (learn_op.h).
 *
 * Which base rules drift replaces: the enabled ones below critical whose category is one the
 * drift rules judge by what was seen (programs, files, network, privilege). Critical rules
 * (secrets, cloud metadata, ptrace...) always stay: a baseline never makes them normal.
 * Rules about how the trace was recorded rather than what the server did (evasion: a rewritten
 * argument; coverage: lost events) stay too.
 */
#include <string.h>

#include "learn_emit.h"
#include "yamlw.h"

static const char *const covered[] = {
	"exec",	   "fs_write",	 "fs_delete", "fs_chmod",	"net_connect",
	"net_dns", "net_listen", "privilege", "sensitive_read", NULL,
};

static bool is_covered(const struct pol_rule *r)
{
	if (!r->enabled || r->severity >= SEV_CRITICAL)
		return false;
	for (size_t i = 0; covered[i]; i++)
		if (!strcmp(r->category, covered[i]))
			return true;
	return false;
}

static void emit_overrides(struct emit *e)
{
	const struct policy *b = e->o->base;
	bool any = false;

	for (size_t i = 0; b && i < b->n_rules; i++) {
		const struct pol_rule *r = b->rules[i];

		if (!is_covered(r))
			continue;
		if (!any)
			strbuf_puts(e->sb, "  # the base's rules below critical that drift judges "
					   "instead: what the baseline saw is normal,\n"
					   "  # anything else is a drift finding\n");
		any = true;
		strbuf_puts(e->sb, "  - id: ");
		emit_value(e, r->id);
		strbuf_puts(e->sb, "\n    override: append\n    enabled: false   # ");
		strbuf_puts(e->sb, r->category); /* lower case, digits and '_' (checked) */
		strbuf_puts(e->sb, "\n");
	}
}

/* One drift rule. cond: the lines of its condition (each "      key: value\n"); bm: the macro
 * of what the baseline allows (its "not" is omitted when the baseline saw nothing of it, so
 * every such event is drift); known: only in processes the baseline knows. */
struct drift_rule {
	const char *id, *description, *message, *severity;
	const char *cond;
	enum bl_macro bm;
	bool known;
};

static const struct drift_rule drift_rules[] = {
	{"drift.exec", "a program or argv shape the baseline never saw in this scope was executed",
	 "executed {path}: {argv}", "high", "      op: exec\n", BM_EXEC, false},
	{"drift.read", "a file the baseline never saw read in this scope was opened for reading",
	 "read {path} ({result})", "medium", "      op: \"@bl.ops.open\"\n      write: false\n",
	 BM_READ, true},
	{"drift.write",
	 "a file the baseline never saw written in this scope was opened for writing",
	 "opened {path} for writing ({result})", "high",
	 "      op: \"@bl.ops.open\"\n      write: true\n", BM_WRITE, false},
	{"drift.change",
	 "a file operation (delete, rename, link, chmod...) the baseline never saw in this scope",
	 "{op} {path} ({result})", "high", "      op: \"@bl.ops.change\"\n", BM_CHANGE, false},
	{"drift.connect", "a destination the baseline never saw in this scope was contacted",
	 "{op} {addr} ({result})", "medium",
	 "      op: \"@bl.ops.net\"\n      af: [inet, inet6, unix]\n      not: {dns: \"*\"}\n",
	 BM_CONNECT, false},
	{"drift.dns", "a name the baseline never saw looked up in this scope was looked up",
	 "DNS lookup of {dns}", "low", "      op: \"@bl.ops.net\"\n      dns: \"*\"\n", BM_DNS,
	 false},
	{"drift.listen", "a port the baseline never saw bound in this scope was bound",
	 "{op} {addr} ({result})", "medium", "      op: bind\n      af: [inet, inet6]\n", BM_LISTEN,
	 false},
	{"drift.other",
	 "an operation (privilege, evasion, process state...) the baseline never saw in this scope",
	 "{op} ({result})", "medium",
	 "      family: [process, file, network, privilege, evasion]\n"
	 "      not: {op: \"@bl.ops.not_other\"}\n",
	 BM_OTHER, true},
};

static void emit_drift(struct emit *e, const struct drift_rule *d)
{
	strbuf_printf(e->sb,
		      "  - id: %s\n    description: \"%s\"\n    message: \"%s\"\n"
		      "    severity: %s\n    category: drift\n    tags: [drift]\n"
		      "    condition:\n      launch: false\n%s",
		      d->id, d->description, d->message, d->severity, d->cond);
	if (d->known)
		strbuf_puts(e->sb,
			    "      macro: bl_known_process   # a new program is one finding, "
			    "its exec\n");
	if (e->have[d->bm])
		strbuf_printf(e->sb, "      all: [{not: {macro: %s}}]\n", bl_macro_names[d->bm]);
	else
		strbuf_puts(e->sb, "      # the baseline saw none: every one is drift\n");
}

void learn_emit_rules(struct emit *e)
{
	strbuf_puts(e->sb, "rules:\n");
	emit_overrides(e);
	strbuf_puts(e->sb, "\n  # drift: what the baseline never saw (category drift)\n");
	for (size_t i = 0; i < sizeof(drift_rules) / sizeof(drift_rules[0]); i++) {
		if (i)
			strbuf_putc(e->sb, '\n');
		emit_drift(e, &drift_rules[i]);
	}
}
