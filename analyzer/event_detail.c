/*
 * event_detail.c - the one-line detail of records whose subject is another process, the
 * process's namespaces or a syscall not recorded: whom a signal or a pidfd call aims at, which
 * namespaces a fork made, which syscall of another ABI a process made; and how a process
 * ended, from its wait status.
 * Made on demand (ev_view.describe), when a finding quotes {detail}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#include "abi_names.h"
#include "event.h"
#include "events.h"

/* kill(2)'s pid argument, as the caller named it (its pid namespace). */
static void put_kill_target(char *buf, size_t cap, int64_t sig, int64_t pid)
{
	if (pid > 0)
		snprintf(buf, cap, "signal %lld to pid %lld", (long long)sig, (long long)pid);
	else if (pid == 0)
		snprintf(buf, cap, "signal %lld to its own process group", (long long)sig);
	else if (pid == -1)
		snprintf(buf, cap, "signal %lld to every process it may signal", (long long)sig);
	else
		snprintf(buf, cap, "signal %lld to process group %lld", (long long)sig,
			 -(long long)pid);
}

static const struct {
	uint64_t bit;
	const char *name;
} ns_flags[] = {
	{0x10000000, "user"}, {0x00020000, "mount"}, {0x20000000, "pid"},    {0x40000000, "net"},
	{0x08000000, "ipc"},  {0x04000000, "uts"},   {0x02000000, "cgroup"}, {0x00000080, "time"},
};

/* The namespaces a fork's clone flags asked for ("user, mount"); the kernel's view is the
 * NEWNS flag, so with none asked for (a time namespace inherited from unshare) it says so. */
static void put_namespaces(char *buf, size_t cap, uint64_t clone_flags)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		if (!(clone_flags & ns_flags[i].bit) || n >= cap)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", ns_flags[i].name);
	}
	if (!buf[0])
		snprintf(buf, cap, "namespaces prepared by an earlier unshare");
}

/* enum mw_abi, as a foreign_abi record's detail names it. */
static const char *abi_name(int64_t abi)
{
	if (abi == MW_ABI_I386)
		return "i386";
	return abi == MW_ABI_X32 ? "x32" : "unknown";
}

static const char *describe_target(void *ctx)
{
	struct ev_view *v = ctx;
	const Mcpt__Event *e = v->raw;
	int64_t a[4] = {0};
	char *buf = v->detail_buf;
	size_t cap = sizeof(v->detail_buf);

	for (size_t i = 0; i < 4 && i < e->n_args; i++)
		a[i] = e->args[i];
	switch (v->op) {
	case MCPT__OP__OP_KILL:
		put_kill_target(buf, cap, a[1], a[0]);
		break;
	case MCPT__OP__OP_RT_SIGQUEUEINFO:
		snprintf(buf, cap, "signal %lld to pid %lld", (long long)a[1], (long long)a[0]);
		break;
	case MCPT__OP__OP_TKILL:
		snprintf(buf, cap, "signal %lld to thread %lld", (long long)a[1], (long long)a[0]);
		break;
	case MCPT__OP__OP_TGKILL:
	case MCPT__OP__OP_RT_TGSIGQUEUEINFO:
		snprintf(buf, cap, "signal %lld to thread %lld of pid %lld", (long long)a[2],
			 (long long)a[1], (long long)a[0]);
		break;
	case MCPT__OP__OP_PIDFD_SEND_SIGNAL:
		if (a[3])
			snprintf(buf, cap, "signal %lld to pid %lld (pidfd %lld)", (long long)a[1],
				 (long long)a[3], (long long)a[0]);
		else
			snprintf(buf, cap, "signal %lld through pidfd %lld", (long long)a[1],
				 (long long)a[0]);
		break;
	case MCPT__OP__OP_PIDFD_GETFD:
		if (a[3])
			snprintf(buf, cap, "fd %lld of pid %lld", (long long)a[1], (long long)a[3]);
		else
			snprintf(buf, cap, "fd %lld through pidfd %lld", (long long)a[1],
				 (long long)a[0]);
		break;
	case MCPT__OP__OP_FORK:
		put_namespaces(buf, cap, (uint64_t)a[3]);
		break;
	case MCPT__OP__OP_FOREIGN_ABI: {
		const char *name = abi_syscall_name(a[1], a[0]);

		snprintf(buf, cap, "syscall %lld%s%s%s of the %s ABI, not recorded",
			 (long long)a[0], name ? " (" : "", name ? name : "", name ? ")" : "",
			 abi_name(a[1]));
		break;
	}
	default:
		return NULL;
	}
	return buf;
}

void event_detail_set(struct ev_view *v)
{
	v->describe = describe_target;
	v->describe_ctx = v;
}

/* Linux's signal numbers (x86 and the generic table alike for these). */
static const char *const signal_names[] = {
	NULL,	     "SIGHUP",	"SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
	"SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
	"SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS",
};

int event_signal_by_name(const char *name)
{
	char *end;
	long n;

	for (size_t i = 1; i < sizeof(signal_names) / sizeof(signal_names[0]); i++)
		if (!strcmp(signal_names[i], name))
			return (int)i;
	if (*name < '1' || *name > '9')
		return -1;
	n = strtol(name, &end, 10);
	return *end || n > 64 ? -1 : (int)n;
}

int event_exit_code(int64_t status)
{
	return (status & 0x7f) == 0 ? (int)((status >> 8) & 0xff) : -1;
}

const char *event_exit_signal(int64_t status, char *buf, size_t len)
{
	int sig = (int)(status & 0x7f);

	if (sig == 0 || sig == 0x7f) /* exited, or stopped (never an exit record's) */
		return NULL;
	if ((size_t)sig < sizeof(signal_names) / sizeof(signal_names[0]))
		return signal_names[sig];
	snprintf(buf, len, "SIG%d", sig);
	return buf;
}

void event_format_exit(struct strbuf *sb, int64_t status)
{
	char buf[16];
	const char *sig = event_exit_signal(status, buf, sizeof(buf));

	if (status < 0 || status > 0xffff || (status & 0x7f) == 0x7f)
		strbuf_printf(sb, "status 0x%llx", (unsigned long long)status);
	else if (!sig)
		strbuf_printf(sb, "code %d", event_exit_code(status));
	else
		strbuf_printf(sb, "signal %s%s", sig, (status & 0x80) ? ", core dumped" : "");
}
