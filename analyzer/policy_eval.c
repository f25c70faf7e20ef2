/*
 * policy_eval.c - reading a field of a subject (an event, a channel message, a loss) and
 * testing it against the compiled values of a field test.
 *
 * A field the subject does not carry (a path on a connect, an address on an open, a DNS name
 * on anything but a query) makes the test false, so `not:` of it is true. Which families can
 * carry a field is the field table's (policy_field.c), checked first: a subject of any other
 * family never matches, so policy_reach.c's "can never match" warnings are exact (a message
 * or a Loss holds a result, "success", but `result` is the outcome of a system call).
 */
#include <string.h>

#include "attribute.h"
#include "events.h"
#include "glob.h"
#include "policy.h"
#include "policy_field.h"
#include "proctree.h"

static bool match_globs(const struct field_test *t, struct ev_bytes b)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].never && glob_match(t->v[i].glob, b.p, b.n))
			return true;
	return false;
}

/* A glob test's verdict, from its memo when the subject's string table holds the same bytes
 * under the generation the test last saw there. */
static bool match_bytes(const struct field_test *t, const struct eval_subject *s, struct ev_bytes b)
{
	const struct match_memo *m = t->memo;
	uint64_t gen, *row, *w;
	unsigned sh;
	bool hit;

	if (!b.n)
		return false;
	if (!m || !m->rows || !s->strs || b.n > MEMO_BYTES)
		return match_globs(t, b);
	row = &m->rows[str_memo_slot(s->strs, b, &gen) * m->words];
	if (row[0] != gen) { /* another string since: none of its verdicts holds */
		memset(row + 1, 0, (m->words - 1) * sizeof(*row));
		row[0] = gen;
	}
	w = &row[1 + t->memo_bit / MEMO_TESTS_PER_WORD];
	sh = t->memo_bit % MEMO_TESTS_PER_WORD * 2;
	if (*w >> sh & 2)
		return *w >> sh & 1;
	hit = match_globs(t, b);
	*w |= (uint64_t)(2 | hit) << sh;
	return hit;
}

static bool match_int(const struct field_test *t, int64_t x)
{
	for (size_t i = 0; i < t->n; i++)
		if (x >= t->v[i].lo && x <= t->v[i].hi)
			return true;
	return false;
}

bool field_match_int(const struct field_test *t, int64_t x)
{
	return match_int(t, x);
}

/* The IP address of a socket call (a listen's: the one it listens on), NULL when it has
 * none. */
static const struct mw_sockaddr *ip_of(const struct ev_view *ev)
{
	const struct mw_sockaddr *a = event_sock_addr(ev);

	return a && (a->kind == SA_INET || a->kind == SA_INET6) ? a : NULL;
}

static bool match_addr(const struct field_test *t, const struct ev_view *ev)
{
	const struct mw_sockaddr *a = ip_of(ev);

	if (!a)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (cidr_match(&t->v[i].cidr, &a->ip))
			return true;
	return false;
}

/* The unix socket a socket call concerns: the kernel's view after the call (the peer a connect
 * or a send reached, the name the listener bound: what a relative path or a symlink in the
 * name the process gave resolves to) when it has a name, else the address the process gave.
 * NULL for any other family, or an unnamed socket. */
static const struct mw_sockaddr *unix_of(const struct ev_view *ev)
{
	const struct mw_sockaddr *p = event_peer(ev), *a = event_addr(ev);

	if (p && p->kind == SA_UNIX && !p->unnamed)
		return p;
	return a && a->kind == SA_UNIX && !a->unnamed ? a : NULL;
}

/* socket_path: a unix socket's path, or "@" and its abstract name. */
static bool match_socket_path(const struct field_test *t, const struct eval_subject *s)
{
	const struct mw_sockaddr *u = unix_of(s->ev);
	uint8_t name[1 + MW_UNIX_PATH_MAX];

	if (!u)
		return false;
	if (!u->abstract)
		return match_bytes(t, s, (struct ev_bytes){u->unix_path, u->unix_len});
	name[0] = '@';
	memcpy(name + 1, u->unix_path, u->unix_len);
	return match_bytes(t, s, (struct ev_bytes){name, 1 + u->unix_len});
}

static int af_of(const struct mw_sockaddr *a)
{
	switch (a->kind) {
	case SA_INET:
	case SA_INET6:
	case SA_UNIX:
	case SA_UNSPEC:
		return a->kind;
	default:
		return SA_OTHER;
	}
}

/* A text of the call(s) an event belongs to: an ambiguous event matches only when every
 * candidate does (the value is then certain); an event outside every call never matches. */
static const char *call_text(const struct call *c, enum field_id id)
{
	if (!c)
		return NULL;
	if (id == F_TOOL)
		return c->tool;
	if (id == F_METHOD)
		return c->method;
	return c->args_full;
}

static bool match_text(const struct field_test *t, const struct eval_subject *s, const char *x)
{
	return x && match_bytes(t, s, (struct ev_bytes){(const uint8_t *)x, strlen(x)});
}

const struct attribution *eval_subject_attr(const struct eval_subject *s)
{
	return s->attr ? s->attr : s->attr_get ? s->attr_get(s->attr_ctx) : NULL;
}

static bool match_call(const struct field_test *t, const struct eval_subject *s)
{
	const struct attribution *a = eval_subject_attr(s);

	if (!a || !s->calls)
		return false;
	if (a->rule == ATTR_AMBIGUOUS) {
		if (a->n_cand < a->n_cand_total || !a->n_cand)
			return false;
		for (size_t i = 0; i < a->n_cand; i++)
			if (!match_text(t, s,
					call_text(callset__get(s->calls, a->cand[i]), t->f->id)))
				return false;
		return true;
	}
	return a->call && match_text(t, s, call_text(callset__get(s->calls, a->call), t->f->id));
}

/* The parent (the first ancestor) or any ancestor of the subject's process, up to the
 * server, matches. */
static bool match_ancestors(const struct field_test *t, const struct eval_subject *s, bool any)
{
	struct lineage_ent ents[LINEAGE_MAX];
	bool trunc;
	size_t n;

	if (!s->pt || !s->proc)
		return false;
	n = proctree__lineage(s->pt, s->proc, ents, LINEAGE_MAX, &trunc);
	for (size_t i = 1; i < n; i++) {
		const struct proc *a = ents[i].proc;

		if (match_bytes(t, s, (struct ev_bytes){a->exe, a->exe_len}))
			return true;
		if (!any)
			break;
	}
	return false;
}

/* exit_code, exit_signal: how a process ended, on its group's exit record only. */
static bool match_exit(const struct field_test *t, const struct ev_view *ev)
{
	int code = event_exit_code(ev->exit_status);

	if (ev->op != MCPT__OP__OP_EXIT || !ev->group_dead)
		return false;
	if (t->f->id == F_EXIT_CODE)
		return code >= 0 && match_int(t, code);
	return code < 0 && match_int(t, ev->exit_status & 0x7f);
}

static bool match_dns(const struct field_test *t, const struct eval_subject *s)
{
	const struct dns_query *q = event_dns(s->ev);

	return q && match_bytes(t, s, (struct ev_bytes){(const uint8_t *)q->name, q->name_len});
}

/* Is the number of n bytes at p the process's own pid or the calling thread's id? */
static bool own_id(const struct ev_view *ev, const uint8_t *p, size_t n)
{
	uint64_t id = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		id = id * 10 + (p[i] - '0');
	}
	return id == ev->pid || id == ev->tid;
}

/* proc_self: the file (the one opened, else the path) is in the process's own directory of
 * /proc: /proc/self, /proc/thread-self, or /proc/N with N its pid or the thread's id. */
static bool proc_self(const struct ev_view *ev)
{
	static const char pfx[] = "/proc/";
	struct ev_bytes b = ev->opened.n ? ev->opened : ev->subject;
	const uint8_t *c, *end;

	if (b.n <= sizeof(pfx) - 1 || memcmp(b.p, pfx, sizeof(pfx) - 1))
		return false;
	c = b.p + sizeof(pfx) - 1;
	end = memchr(c, '/', b.n - (size_t)(c - b.p));
	if (!end)
		end = b.p + b.n;
	if ((end - c == 4 && !memcmp(c, "self", 4)) ||
	    (end - c == 11 && !memcmp(c, "thread-self", 11)))
		return true;
	return own_id(ev, c, (size_t)(end - c));
}

static bool is_channel(const struct ev_view *ev)
{
	return ev->op == EV_OP_MESSAGE;
}

#define TRUNC_BITS ((1u << MW_SLOTS) - 1)
#define UNRES_BITS (TRUNC_BITS << 8)

bool field_test_eval(const struct field_test *t, const struct eval_subject *s)
{
	const struct ev_view *ev = s->ev;
	const struct attribution *a;

	if (!(t->f->fams & FAM_BIT(ev->family)))
		return false;
	switch (t->f->id) {
	case F_FAMILY:
		return match_int(t, ev->family);
	case F_OP:
		return match_int(t, ev->op);
	case F_PATH:
		return match_bytes(t, s, ev->subject);
	case F_PATH_ARG:
		return match_bytes(t, s, ev->path);
	case F_OPENED_PATH:
		return match_bytes(t, s, ev->opened);
	case F_EXE:
		return match_bytes(t, s, s->exe);
	case F_ARGV:
		return match_bytes(t, s, s->argv);
	case F_ADDR:
		return match_addr(t, ev);
	case F_PORT:
		return ip_of(ev) && match_int(t, ip_of(ev)->port);
	case F_AF:
		return event_sock_addr(ev) && match_int(t, af_of(event_sock_addr(ev)));
	case F_RESULT:
		return match_int(t, ev->result);
	case F_ERRNO:
		return ev->result == RES_FAILURE && match_int(t, ev->err);
	case F_WRITE:
		return ev->has_write && match_int(t, ev->write_intent);
	case F_LAUNCH:
		return match_int(t, s->launch);
	case F_TRUNCATED:
		return match_int(t, (ev->flags & (TRUNC_BITS | MW_F_ARGV_ENTRIES | MW_F_MORE)) != 0);
	case F_UNRESOLVED:
		return match_int(t, (ev->flags & UNRES_BITS) != 0);
	case F_TAMPERED:
		return match_int(t, (ev->flags & MW_F_TAMPERED) != 0);
	case F_UNCHECKED:
		return match_int(t, (ev->flags & MW_F_UNCHECKED) != 0);
	case F_FOREIGN:
		return match_int(t, (ev->flags & MW_F_FOREIGN) != 0);
	case F_NEW_NAMESPACES:
		return ev->op == MCPT__OP__OP_FORK && match_int(t, (ev->flags & MW_F_NEWNS) != 0);
	case F_EXIT_CODE:
	case F_EXIT_SIGNAL:
		return match_exit(t, ev);
	case F_PROC_SELF:
		return (ev->opened.n || ev->subject.n) && match_int(t, proc_self(ev));
	case F_DIFFERS:
		return match_int(t, event_differs(ev));
	case F_TARGET:
		return match_bytes(t, s, ev->abs2.n ? ev->abs2 : ev->path2);
	case F_EXEC_BITS:
		return ev->has_mode && match_int(t, (ev->mode & 0111) != 0);
	case F_DEV:
		return ev->ino && match_int(t, (int64_t)ev->dev);
	case F_INO:
		return ev->ino && ev->ino <= INT64_MAX && match_int(t, (int64_t)ev->ino);
	case F_DNS:
		return match_dns(t, s);
	case F_SOCKET_PATH:
		return match_socket_path(t, s);
	case F_UID:
		return match_int(t, ev->uid);
	case F_PARENT_EXE:
		return match_ancestors(t, s, false);
	case F_ANCESTOR_EXE:
		return match_ancestors(t, s, true);
	case F_SERVER:
		return s->proc && match_int(t, s->proc->is_target);
	case F_MESSAGE:
		return is_channel(ev) && match_bytes(t, s, ev->message);
	case F_DIRECTION:
		return is_channel(ev) && match_int(t, ev->msg_dir);
	case F_KIND:
		return is_channel(ev) && match_int(t, event_msg_kind(ev));
	case F_TOOL:
	case F_METHOD:
	case F_ARGUMENTS:
		return match_call(t, s);
	case F_BUCKET:
		return (a = eval_subject_attr(s)) && a->rule == ATTR_BUCKET &&
		       match_int(t, a->bucket);
	case F_ATTRIBUTION:
		return (a = eval_subject_attr(s)) && match_int(t, a->rule);
	}
	return false;
}
