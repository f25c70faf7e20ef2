/*
 * learn_emit.c - the lists and the list macros of a learned baseline (see learn_emit.h); the
 * header comment and the paired macros are in learn_values.c, the rules in learn_rules.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "learn_emit.h"
#include "learn_op.h"
#include "yamlw.h"

const char *const bl_macro_names[BM_COUNT] = {
	[BM_KNOWN] = "bl_known_process", [BM_EXEC] = "bl_exec",	    [BM_READ] = "bl_read",
	[BM_WRITE] = "bl_write",	 [BM_CHANGE] = "bl_change", [BM_CONNECT] = "bl_connect",
	[BM_LISTEN] = "bl_listen",	 [BM_OTHER] = "bl_other",   [BM_DNS] = "bl_dns",
};

/* --- names and provenance ----------------------------------------------------------------- */

void learn_prov(struct strbuf *sb, const struct litem *it, bool trace)
{
	if (trace)
		strbuf_printf(sb, "t%u", it->trace);
	if (it->call)
		strbuf_printf(sb, "%scall %zu", trace ? " " : "", it->call);
	if (it->call_id)
		strbuf_printf(sb, " (id %s)", it->call_id);
	strbuf_printf(sb, "%srecord %llu", trace || it->call ? ", " : "",
		      (unsigned long long)it->record);
	/* before the example, which a comment may cut */
	if (it->unproven)
		strbuf_puts(sb, " [unproven: after the last verified seal]");
	if (it->example && *it->example)
		strbuf_printf(sb, ": %s", it->example);
	if (it->names)
		strbuf_printf(sb, " (after DNS queries for %s)", it->names);
	if (it->count > 1)
		strbuf_printf(sb, " (%llu times)", (unsigned long long)it->count);
}

static void comment(struct emit *e, const char *s)
{
	strbuf_puts(e->sb, "  ");
	yamlw_comment(e->sb, (const uint8_t *)s, strlen(s), LEARN_COMMENT_MAX);
}

void emit_prov_comment(struct emit *e, const struct litem *it)
{
	struct strbuf p = STRBUF_INIT;

	learn_prov(&p, it, true);
	comment(e, strbuf_str(&p) ?: "");
	strbuf_fini(&p);
}

static bool safe_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* The list-name form of a tool or method name ('/' as '-'), or "" when it is not plain. */
static void plain_label(const char *name, char out[LEARN_LABEL_MAX + 1])
{
	size_t n = strlen(name);

	out[0] = '\0';
	if (!n || n > LEARN_LABEL_MAX)
		return;
	for (size_t k = 0; k < n; k++) {
		out[k] = name[k] == '/' ? '-' : name[k];
		if (!safe_char(out[k])) {
			out[0] = '\0';
			return;
		}
	}
	out[n] = '\0';
}

/* A tool or method: its plain name when no other of its kind has the same, else its ordinal. */
static void label_named(struct emit *e, size_t i, const char *kind, size_t ordinal)
{
	const struct lscope *s = &e->m->scopes[i];
	char mine[LEARN_LABEL_MAX + 1], other[LEARN_LABEL_MAX + 1];
	bool ok;

	plain_label(s->name, mine);
	ok = mine[0] != '\0';
	for (size_t j = 0; ok && j < e->m->n_scopes; j++) {
		if (j == i || e->m->scopes[j].kind != s->kind)
			continue;
		plain_label(e->m->scopes[j].name, other);
		ok = strcmp(mine, other) != 0;
	}
	if (ok)
		snprintf(e->labels[i], sizeof(e->labels[i]), "%s.%s", kind, mine);
	else
		snprintf(e->labels[i], sizeof(e->labels[i]), "%s.%zu", kind, ordinal);
}

static void make_labels(struct emit *e)
{
	size_t tools = 0, methods = 0;

	for (size_t i = 0; i < e->m->n_scopes; i++) {
		const struct lscope *s = &e->m->scopes[i];

		if (s->kind == LS_TOOL)
			label_named(e, i, "tool", ++tools);
		else if (s->kind == LS_METHOD)
			label_named(e, i, "method", ++methods);
		else
			snprintf(e->labels[i], sizeof(e->labels[i]), "%s", ls_kind_name(s->kind));
	}
}

void emit_value(struct emit *e, const char *s)
{
	if (yamlw_str(e->sb, s))
		e->err = -EINVAL; /* generated globs are valid UTF-8: a bug if not */
}

static void list_ref(struct emit *e, size_t scope, const char *suffix)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_printf(&n, "@bl.%s.%s", e->labels[scope], suffix);
	emit_value(e, strbuf_str(&n) ?: "");
	strbuf_fini(&n);
}

/* "@name" of a list of the base policy. */
static void list_ref_raw(struct emit *e, const char *name)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_printf(&n, "@%s", name);
	emit_value(e, strbuf_str(&n) ?: "");
	strbuf_fini(&n);
}

/* "tool: X" (no braces) of a scope; nothing for server-wide scopes. */
void emit_scope_cond(struct emit *e, size_t scope)
{
	const struct lscope *s = &e->m->scopes[scope];
	struct strbuf g = STRBUF_INIT;

	switch (s->kind) {
	case LS_TOOL:
	case LS_METHOD:
		gen_literal(&g, (const uint8_t *)s->name, strlen(s->name), true);
		strbuf_puts(e->sb, s->kind == LS_TOOL ? "tool: " : "method: ");
		emit_value(e, strbuf_str(&g) ?: "");
		if (s->kind == LS_METHOD && !strcmp(s->name, "tools/call"))
			strbuf_puts(e->sb, ", not: {tool: \"*\"}");
		strbuf_puts(e->sb, ", ");
		break;
	case LS_STARTUP:
	case LS_AMBIENT:
	case LS_SHUTDOWN:
		strbuf_printf(e->sb, "bucket: %s, ", ls_kind_name(s->kind));
		break;
	default:
		break;
	}
	strbuf_fini(&g);
}

bool emit_call_scope(const struct lscope *s)
{
	return s->kind == LS_TOOL || s->kind == LS_METHOD;
}

/* --- item ranges -------------------------------------------------------------------------- */

static bool match(const struct litem *it, size_t scope, enum lk_kind k, const char *op, int opened)
{
	return it->scope == scope && it->kind == k && (!op || !strcmp(it->f1, op)) &&
	       (opened < 0 || it->opened == (opened != 0));
}

static bool any_of(const struct emit *e, size_t scope, enum lk_kind k, const char *op, int opened)
{
	for (size_t i = 0; i < e->m->n_items; i++)
		if (match(&e->m->items[i], scope, k, op, opened))
			return true;
	return false;
}

/* --- lists -------------------------------------------------------------------------------- */

static void emit_list(struct emit *e, size_t scope, enum lk_kind k, const char *suffix,
		      const char *op, int opened)
{
	strbuf_printf(e->sb, "  bl.%s.%s:\n", e->labels[scope], suffix);
	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];

		if (!match(it, scope, k, op, opened))
			continue;
		strbuf_puts(e->sb, "    - ");
		emit_value(e, k == LK_CHANGE ? it->f2 : it->f1);
		emit_prov_comment(e, it);
		strbuf_putc(e->sb, '\n');
	}
}

/* The change lists of a scope: one per (operation, fd or path). */
static void emit_change_lists(struct emit *e, size_t scope)
{
	const char *last = NULL;
	bool last_opened = false;

	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];
		char suffix[64];

		if (!match(it, scope, LK_CHANGE, NULL, -1) ||
		    (last && !strcmp(last, it->f1) && last_opened == it->opened))
			continue;
		last = it->f1;
		last_opened = it->opened;
		snprintf(suffix, sizeof(suffix), "change.%s%s", it->f1, it->opened ? ".fd" : "");
		emit_list(e, scope, LK_CHANGE, suffix, it->f1, it->opened);
	}
}

/* What the rules cannot test yet, and what is never allowed, as comments. */
static void emit_notes(struct emit *e, size_t scope)
{
	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];
		struct strbuf c = STRBUF_INIT;

		if (it->scope != scope || it->kind != LK_SECRET)
			continue;
		strbuf_puts(&c, "secret seen, never allowed: ");
		strbuf_puts(&c, it->f1);
		strbuf_puts(&c, " - ");
		learn_prov(&c, it, true);
		strbuf_puts(e->sb, "  ");
		yamlw_comment(e->sb, (const uint8_t *)(strbuf_str(&c) ?: ""), c.len,
			      LEARN_COMMENT_MAX);
		strbuf_putc(e->sb, '\n');
		strbuf_fini(&c);
	}
}

static void scope_title(struct emit *e, size_t scope)
{
	const struct lscope *s = &e->m->scopes[scope];
	struct strbuf t = STRBUF_INIT;

	strbuf_printf(&t, "--- %s", ls_kind_name(s->kind));
	if (s->name)
		strbuf_printf(&t, " \"%s\"", s->name);
	if (emit_call_scope(s))
		strbuf_printf(&t, ": %llu call%s", (unsigned long long)s->calls,
			      s->calls == 1 ? "" : "s");
	strbuf_puts(&t, " ---");
	strbuf_puts(e->sb, "\n  ");
	yamlw_comment(e->sb, (const uint8_t *)(strbuf_str(&t) ?: ""), t.len, LEARN_COMMENT_MAX);
	strbuf_putc(e->sb, '\n');
	strbuf_fini(&t);
}

static void emit_op_lists(struct emit *e)
{
	static const struct {
		const char *name;
		enum lop_class c;
	} sets[] = {{"open", LOP_OPEN}, {"change", LOP_CHANGE}, {"net", LOP_NET}};
	const char *op;

	strbuf_puts(e->sb, "  # the operations each drift rule looks at (learn_op.h)\n");
	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		strbuf_printf(e->sb, "  bl.ops.%s: [", sets[k].name);
		for (size_t i = 0, n = 0; (op = event_op_name_at(i)); i++)
			if (learn_op_class(event_op_by_name(op)) == sets[k].c)
				strbuf_printf(e->sb, "%s%s", n++ ? ", " : "", op);
		strbuf_puts(e->sb, "]\n");
	}
	strbuf_puts(e->sb, "  # ...and those drift.other leaves to the rules above, or to none\n"
			   "  bl.ops.not_other: [");
	for (size_t i = 0, n = 0; (op = event_op_name_at(i)); i++)
		if (learn_op_class(event_op_by_name(op)) != LOP_OTHER)
			strbuf_printf(e->sb, "%s%s", n++ ? ", " : "", op);
	strbuf_puts(e->sb, "]\n");
}

static void emit_lists(struct emit *e)
{
	strbuf_puts(e->sb, "lists:\n");
	emit_op_lists(e);
	for (size_t s = 0; s < e->m->n_scopes; s++) {
		enum ls_kind k = e->m->scopes[s].kind;

		if (k == LS_GRAPH)
			continue;
		scope_title(e, s);
		if (k == LS_SERVER)
			strbuf_puts(e->sb,
				    "  # the server's own executables (its process and threads)\n");
		if (k == LS_RUNTIME)
			strbuf_puts(e->sb,
				    "  # system and runtime files, allowed in every scope\n");
		if (any_of(e, s, LK_PROC, NULL, -1))
			emit_list(e, s, LK_PROC, "procs", NULL, -1);
		if (any_of(e, s, LK_READ, NULL, -1))
			emit_list(e, s, LK_READ, "read", NULL, -1);
		if (any_of(e, s, LK_WRITE, NULL, -1))
			emit_list(e, s, LK_WRITE, "write", NULL, -1);
		emit_change_lists(e, s);
		if (any_of(e, s, LK_OTHER, NULL, -1))
			emit_list(e, s, LK_OTHER, "ops", NULL, -1);
		emit_notes(e, s);
	}
}

/* --- macros of lists ---------------------------------------------------------------------- */

struct mentry {
	const char *indent;
	bool any; /* wrote at least one entry */
};

static void entry_start(struct emit *e, struct mentry *me)
{
	strbuf_printf(e->sb, "%s- {", me->indent);
	me->any = true;
}

/* Entries "{scope, field: @list}" of every scope having the list, then the ambiguous one. */
static void list_entries(struct emit *e, struct mentry *me, enum lk_kind k, const char *field,
			 const char *suffix, const char *op, int opened)
{
	bool amb = false;

	for (size_t s = 0; s < e->m->n_scopes; s++) {
		if (!any_of(e, s, k, op, opened) || e->m->scopes[s].kind == LS_SERVER)
			continue;
		entry_start(e, me);
		if (op)
			strbuf_printf(e->sb, "op: %s, ", op);
		emit_scope_cond(e, s);
		strbuf_printf(e->sb, "%s: ", field);
		list_ref(e, s, suffix);
		strbuf_puts(e->sb, "}\n");
		amb |= emit_call_scope(&e->m->scopes[s]);
	}
	if (!amb)
		return;
	entry_start(e, me);
	if (op)
		strbuf_printf(e->sb, "op: %s, ", op);
	strbuf_printf(e->sb, "attribution: ambiguous, %s: [", field);
	for (size_t s = 0, n = 0; s < e->m->n_scopes; s++) {
		if (!emit_call_scope(&e->m->scopes[s]) || !any_of(e, s, k, op, opened))
			continue;
		strbuf_puts(e->sb, n++ ? ", " : "");
		list_ref(e, s, suffix);
	}
	strbuf_puts(e->sb, "]}\n");
}

static void change_entries(struct emit *e, struct mentry *me)
{
	const char *seen[64];
	size_t n_seen = 0;

	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];
		char suffix[64];
		bool dup = false;

		if (it->kind != LK_CHANGE)
			continue;
		for (size_t j = 0; j < n_seen && !dup; j++)
			dup = !strcmp(seen[j], it->f1);
		if (dup || n_seen == 64)
			continue;
		seen[n_seen++] = it->f1;
		for (int fd = 0; fd < 2; fd++) {
			snprintf(suffix, sizeof(suffix), "change.%s%s", it->f1, fd ? ".fd" : "");
			list_entries(e, me, LK_CHANGE, fd ? "opened_path" : "path", suffix, it->f1,
				     fd);
		}
	}
}

/* A macro: "name:" then, when secrets exist, all: [not secret, any: [...]], else any: [...].
 * Nothing when it has no entry (e->have says so: its rule then reports every event). */
static void macro(struct emit *e, enum bl_macro bm, bool secrets,
		  void (*body)(struct emit *, struct mentry *, enum bl_macro))
{
	struct strbuf *saved = e->sb, tmp = STRBUF_INIT;
	struct mentry me = {.indent = secrets ? "          " : "      "};

	e->sb = &tmp;
	body(e, &me, bm);
	e->sb = saved;
	e->have[bm] = me.any;
	if (me.any) {
		strbuf_printf(e->sb, "  %s:\n", bl_macro_names[bm]);
		if (secrets)
			strbuf_puts(e->sb, "    all:\n      - not: {macro: bl_secret}   # never "
					   "a secret, whatever was seen\n      - any:\n");
		else
			strbuf_puts(e->sb, "    any:\n");
		strbuf_put(e->sb, tmp.buf, tmp.len);
	}
	if (strbuf_error(&tmp))
		e->err = -ENOMEM;
	strbuf_fini(&tmp);
}

static void body_lists(struct emit *e, struct mentry *me, enum bl_macro bm)
{
	switch (bm) {
	case BM_KNOWN:
		strbuf_printf(e->sb, "%s- server: true\n", me->indent);
		/* a process whose program the trace does not name (its fork and exec lost) has no
		 * exec to stand for its effects: they are checked one by one */
		strbuf_printf(e->sb, "%s- not: {exe: \"**\"}   # program unknown\n", me->indent);
		me->any = true;
		if (lmodel__find_scope(e->m, LS_SERVER, NULL) >= 0)
			strbuf_printf(e->sb, "%s- exe: \"@bl.server.procs\"\n", me->indent);
		list_entries(e, me, LK_PROC, "exe", "procs", NULL, -1);
		break;
	case BM_READ:
		strbuf_printf(e->sb, "%s- path: [", me->indent);
		for (size_t i = 0; gen_runtime_noise[i]; i++)
			strbuf_printf(e->sb, "%s%s", i ? ", " : "", gen_runtime_noise[i]);
		strbuf_puts(e->sb, "]   # processor counts, read at any time\n");
		me->any = true;
		list_entries(e, me, LK_READ, "path", "read", NULL, -1);
		break;
	case BM_WRITE:
		list_entries(e, me, LK_WRITE, "path", "write", NULL, -1);
		break;
	case BM_CHANGE:
		change_entries(e, me);
		break;
	case BM_OTHER:
		list_entries(e, me, LK_OTHER, "op", "ops", NULL, -1);
		break;
	default:
		break;
	}
}

int learn_emit(struct strbuf *sb, const struct learn_out *o)
{
	struct emit e = {.sb = sb, .o = o, .m = o->m};
	bool secrets = o->lb && o->lb->secret_list;

	e.labels = calloc(o->m->n_scopes ? o->m->n_scopes : 1, sizeof(*e.labels));
	if (!e.labels)
		return -ENOMEM;
	make_labels(&e);
	learn_emit_head(&e);
	strbuf_puts(sb, "version: 1\n\n");
	emit_lists(&e);
	strbuf_puts(sb, "\nmacros:\n");
	if (secrets) {
		strbuf_puts(sb, "  bl_secret:   # the base policy's secrets: never allowed\n"
				"    any:\n      - path: ");
		list_ref_raw(&e, o->lb->secret_list);
		strbuf_puts(sb, "\n      - opened_path: ");
		list_ref_raw(&e, o->lb->secret_list);
		strbuf_putc(sb, '\n');
	}
	macro(&e, BM_KNOWN, false, body_lists);
	learn_emit_values(&e);
	macro(&e, BM_READ, secrets, body_lists);
	macro(&e, BM_WRITE, secrets, body_lists);
	macro(&e, BM_CHANGE, secrets, body_lists);
	macro(&e, BM_OTHER, false, body_lists);
	strbuf_puts(sb, "\n");
	learn_emit_rules(&e);
	free(e.labels);
	return e.err ?: strbuf_error(sb);
}
