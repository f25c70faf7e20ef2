/*
 * diag.c - the list of file:line:column diagnostics (see diag.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "strbuf.h"

static void diag_add(struct diag *d, const struct srcpos *pos, const char *kind, const char *fmt,
		     va_list ap) __attribute__((format(printf, 4, 0)));

static void diag_add(struct diag *d, const struct srcpos *pos, const char *kind, const char *fmt,
		     va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	char **v;

	if (d->n >= DIAG_MAX) {
		d->dropped++;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;

		v = realloc(d->msgs, cap * sizeof(*v));
		if (!v) {
			d->dropped++;
			return;
		}
		d->msgs = v;
		d->cap = cap;
	}
	if (pos && pos->file)
		strbuf_puts(&sb, pos->file);
	if (pos && pos->line)
		strbuf_printf(&sb, ":%u:%u", pos->line, pos->col);
	if (pos && pos->file)
		strbuf_puts(&sb, ": ");
	strbuf_puts(&sb, kind);
	strbuf_vprintf(&sb, fmt, ap);
	for (size_t i = 0; i < d->n && strbuf_str(&sb); i++) {
		if (strcmp(d->msgs[i], strbuf_str(&sb)) == 0) { /* a list used by several rules */
			strbuf_fini(&sb);
			return;
		}
	}
	d->msgs[d->n] = strbuf_detach(&sb);
	if (d->msgs[d->n])
		d->n++;
	else
		d->dropped++;
}

void diag_error(struct diag *d, const struct srcpos *pos, const char *fmt, ...)
{
	va_list ap;

	d->errors++;
	va_start(ap, fmt);
	diag_add(d, pos, "", fmt, ap);
	va_end(ap);
}

void diag_warn(struct diag *d, const struct srcpos *pos, const char *fmt, ...)
{
	va_list ap;

	d->warnings++;
	va_start(ap, fmt);
	diag_add(d, pos, "warning: ", fmt, ap);
	va_end(ap);
}

const char *diag_first(const struct diag *d)
{
	return d->n ? d->msgs[0] : "";
}

void diag_print(const struct diag *d, FILE *out, const char *prog)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(out, "%s%s\n", prog ? prog : "", d->msgs[i]);
	if (d->dropped)
		fprintf(out, "%s%u more messages not shown\n", prog ? prog : "", d->dropped);
}

void diag_fini(struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	d->msgs = NULL;
	d->n = d->cap = 0;
	d->errors = d->warnings = d->dropped = 0;
}
