/*
 * outlived.c - the processes still running when recording stopped, for the reports (see
 * outlived.h).
 */
#include <jansson.h>

#include "analyze.h"
#include "outlived.h"
#include "traceinfo.h"

size_t outlived_count(const struct callmodel *cm)
{
	const struct procbind *pb = callmodel__procs(cm);
	const struct pb_proc *p;
	size_t n = 0;

	for (size_t i = 0; (p = procbind__at(pb, i)); i++)
		n += procbind_outlived(p);
	return n;
}

bool outlived_all_killed(const struct callmodel *cm)
{
	const struct procbind *pb = callmodel__procs(cm);
	const struct pb_proc *p;

	for (size_t i = 0; (p = procbind__at(pb, i)); i++)
		if (procbind_outlived(p) && !p->killed_at_end)
			return false;
	return true;
}

const char *outlived_heading(const struct callmodel *cm)
{
	return outlived_all_killed(cm)
		       ? "still running after the server exited, killed by the collector when the "
			 "linger ran out"
		       : "still running after the server exited, not recorded from the end of the "
			 "trace on";
}

bool outlived_server_gone(const struct callmodel *cm)
{
	return !procbind__server_alive(callmodel__procs(cm));
}

static void text_call_of(struct strbuf *sb, const struct callset *cs, const struct pb_proc *p)
{
	switch (p->bind) {
	case BIND_LINEAGE:
	case BIND_EVIDENCE:
		strbuf_puts(sb, ", ");
		callinfo_name(sb, callset__get(cs, p->call));
		strbuf_printf(sb, " (%s)", procbind_bind_name(p->bind));
		break;
	case BIND_AMBIGUOUS:
		strbuf_puts(sb, ", one of ");
		for (size_t i = 0; i < p->n_cand; i++) {
			strbuf_puts(sb, i ? ", " : "");
			callinfo_name(sb, callset__get(cs, p->cand[i]));
		}
		strbuf_puts(sb, " (ambiguous)");
		break;
	default:
		strbuf_puts(sb, ", not started by a call");
	}
}

void outlived_text(struct strbuf *sb, const struct callmodel *cm, const char *indent)
{
	const struct callset *cs = callmodel__calls(cm);
	const struct procbind *pb = callmodel__procs(cm);
	const struct pb_proc *p;
	size_t shown = 0, more = 0;

	for (size_t i = 0; (p = procbind__at(pb, i)); i++) {
		if (!procbind_outlived(p))
			continue;
		if (shown == OUTLIVED_LINES) {
			more++;
			continue;
		}
		shown++;
		strbuf_printf(sb, "%spid %u ", indent, p->pid);
		procbind_exe_text(sb, p, NULL);
		text_call_of(sb, cs, p);
		if (p->killed_at_end)
			strbuf_puts(sb, ", killed");
		strbuf_putc(sb, '\n');
	}
	if (more)
		strbuf_printf(sb, "%s... and %zu more\n", indent, more);
}

static json_t *proc_json(const struct callset *cs, const struct pb_proc *p)
{
	struct ev_bytes all = {p->argv, p->argv_len}, a;
	json_t *o = json_object(), *argv = json_array(), *cand = json_array();
	size_t pos = 0;
	int err = o && argv && cand ? 0 : -1;

	while (!err && event_argv_next(&all, &pos, &a))
		err = json_array_append_new(argv, json_bytes(a.p, a.n));
	for (size_t i = 0; !err && p->bind == BIND_AMBIGUOUS && i < p->n_cand; i++)
		err = json_array_append_new(cand, callinfo_ref_json(callset__get(cs, p->cand[i])));
	err = err ?: json_object_set_new(o, "pid", json_integer(p->pid));
	err = err ?: json_object_set_new(o, "killed", json_boolean(p->killed_at_end));
	err = err ?: json_object_set_new(o, "pstart", json_integer((json_int_t)p->pstart));
	err = err
		      ?: json_object_set_new(o, "exe",
					     p->exe_len ? json_bytes(p->exe, p->exe_len)
							: json_null());
	if (!err) {
		err = json_object_set_new(o, "argv", argv);
		argv = NULL;
	}
	err = err ?: json_object_set_new(o, "binding", json_string(procbind_bind_name(p->bind)));
	err = err
		      ?: json_object_set_new(o, "call",
					     p->bind == BIND_LINEAGE || p->bind == BIND_EVIDENCE
						     ? callinfo_ref_json(callset__get(cs, p->call))
						     : json_null());
	if (!err) {
		err = json_object_set_new(o, "candidates", cand);
		cand = NULL;
	}
	json_decref(argv);
	json_decref(cand);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *outlived_json(const struct callmodel *cm)
{
	const struct callset *cs = callmodel__calls(cm);
	const struct procbind *pb = callmodel__procs(cm);
	const struct pb_proc *p;
	json_t *arr = json_array();

	for (size_t i = 0; arr && (p = procbind__at(pb, i)); i++)
		if (procbind_outlived(p) && json_array_append_new(arr, proc_json(cs, p))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}
