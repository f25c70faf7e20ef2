/*
 * learn_values.c - the parts of a learned baseline that are not lists of one value (see
 * learn_emit.h): the header comment that says where the baseline comes from and how to use it,
 * and the macros whose entries pair values: bl_exec (program and argv shape), bl_connect
 * (address and port, or unix), bl_listen (port), bl_dns (name asked).
 */
#include <string.h>

#include "identity.h"
#include "learn_emit.h"
#include "yamlw.h"

/* "# " + one line of text made printable; lines are split at '\n' so none can end early. */
static void head_lines(struct emit *e, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);

		yamlw_comment(e->sb, (const uint8_t *)text, n, LEARN_COMMENT_MAX);
		strbuf_putc(e->sb, '\n');
		text += n + (nl != NULL);
	}
}

static void head_trace(struct emit *e, size_t i)
{
	const struct obs_trace *t = e->o->traces[i];
	const Mcpt__Header *h = replay__header(t->rp);
	struct strbuf sb = STRBUF_INIT;

	strbuf_printf(&sb, "t%zu: trace %s, %s, %zu calls, %llu events\n", i + 1, t->id,
		      obs_verdict(t), callset__count(callmodel__calls(t->cm)),
		      (unsigned long long)t->events);
	identity_text(&sb, h, callmodel__calls(t->cm), "    ");
	head_lines(e, strbuf_str(&sb) ?: "");
	strbuf_fini(&sb);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void learn_emit_head(struct emit *e)
{
	const struct policy *b = e->o->base;
	struct strbuf sb = STRBUF_INIT;

	strbuf_puts(&sb,
		    "baseline learned by `mcpwitness policy learn`: what the server was seen "
		    "doing, per tool,\n"
		    "per method, at startup, between calls (ambient) and at shutdown. Anything "
		    "else it does is a\n"
		    "finding of category drift; the base policy's critical rules still apply.\n"
		    "Use it after the policy it was learned against:\n");
	strbuf_puts(&sb, "  mcpwitness analyze TRACE");
	for (size_t i = 0; b && i < b->n_files; i++)
		strbuf_printf(&sb, " -p %s", base_name(b->files[i].path));
	strbuf_printf(&sb, " -p %s\n", e->o->self ? base_name(e->o->self) : "BASELINE");
	strbuf_puts(&sb,
		    "Each entry names where it was first seen: tN (trace), call (and request id),"
		    " record\n(mcpwitness dump shows it), the value seen, and how often; "
		    "[unproven] when no verified seal\ncovers a record it was seen in "
		    "(--allow-incomplete).\n");
	for (size_t i = 0; b && i < b->n_files; i++) {
		strbuf_printf(&sb, "base policy %s, blake2b-256 ", base_name(b->files[i].path));
		strbuf_hex(&sb, b->files[i].digest, sizeof(b->files[i].digest));
		strbuf_putc(&sb, '\n');
	}
	head_lines(e, strbuf_str(&sb) ?: "");
	strbuf_fini(&sb);
	for (size_t i = 0; i < e->o->n_traces; i++)
		head_trace(e, i);
	strbuf_putc(e->sb, '\n');
}

/* --- paired values ------------------------------------------------------------------------ */

/* The fields of a paired item ("exe: X, argv: Y"). */
static void pair_fields(struct emit *e, const struct litem *it)
{
	switch (it->kind) {
	case LK_EXEC:
		strbuf_puts(e->sb, "exe: ");
		emit_value(e, it->f1);
		strbuf_puts(e->sb, ", argv: ");
		emit_value(e, it->f2);
		break;
	case LK_CONNECT:
		if (!strcmp(it->f1, "unix")) {
			strbuf_puts(e->sb, "af: unix");
			break;
		}
		strbuf_puts(e->sb, "addr: ");
		emit_value(e, it->f1);
		strbuf_printf(e->sb, ", port: %s", it->f2);
		break;
	case LK_LISTEN:
		strbuf_printf(e->sb, "af: [inet, inet6], port: %s", it->f2);
		break;
	case LK_DNS:
		strbuf_puts(e->sb, "dns: ");
		emit_value(e, it->f1);
		break;
	default:
		break;
	}
}

static bool call_item(const struct emit *e, const struct litem *it, enum lk_kind k)
{
	return it->kind == k && emit_call_scope(&e->m->scopes[it->scope]);
}

/* An earlier item of a call scope has the same value: its ambiguous entry is written. */
static bool seen_value(const struct emit *e, size_t i, enum lk_kind k)
{
	const struct litem *it = &e->m->items[i];

	for (size_t j = 0; j < i; j++)
		if (call_item(e, &e->m->items[j], k) && !strcmp(e->m->items[j].f1, it->f1) &&
		    !strcmp(e->m->items[j].f2, it->f2))
			return true;
	return false;
}

/* The macro of one kind: an entry "{scope, fields}" per item, then one "{attribution:
 * ambiguous, fields}" per distinct value a call scope saw (an ambiguous event is allowed when
 * any of the calls it may belong to was seen doing it). */
static void pair_macro(struct emit *e, enum bl_macro bm, enum lk_kind k)
{
	bool any = false;

	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];

		if (it->kind != k || e->m->scopes[it->scope].kind == LS_SERVER)
			continue;
		if (!any)
			strbuf_printf(e->sb, "  %s:\n    any:\n", bl_macro_names[bm]);
		any = true;
		strbuf_puts(e->sb, "      - {");
		emit_scope_cond(e, it->scope);
		pair_fields(e, it);
		strbuf_putc(e->sb, '}');
		emit_prov_comment(e, it);
		strbuf_putc(e->sb, '\n');
	}
	for (size_t i = 0; i < e->m->n_items; i++) {
		const struct litem *it = &e->m->items[i];

		if (!call_item(e, it, k) || seen_value(e, i, k))
			continue;
		strbuf_puts(e->sb, "      - {attribution: ambiguous, ");
		pair_fields(e, it);
		strbuf_puts(e->sb, "}\n");
	}
	e->have[bm] = any;
}

void learn_emit_values(struct emit *e)
{
	pair_macro(e, BM_EXEC, LK_EXEC);
	pair_macro(e, BM_CONNECT, LK_CONNECT);
	pair_macro(e, BM_LISTEN, LK_LISTEN);
	pair_macro(e, BM_DNS, LK_DNS);
}
