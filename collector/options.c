/*
 * options.c - getopt_long parsing and --help for mcpwitness-collect.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static const char usage_text[] =
	"usage: mcpwitness-collect [OPTIONS] -o TRACE -- COMMAND [ARG...]\n"
	"       mcpwitness-collect [OPTIONS] -o TRACE --pid PID\n"
	"       mcpwitness-collect [OPTIONS] -o TRACE --pgid PGID\n"
	"\n"
	"Runs COMMAND (a stdio MCP server) as the invoking user and records what it and every\n"
	"process it creates do, as seen by the kernel through eBPF, into a signed trace.\n"
	"With --pid, records the running process PID, the processes already below it (found\n"
	"in /proc once, and noted as seeded) and every process they create from then on, until\n"
	"PID has exited (then, for at most --linger seconds, while recorded processes remain)\n"
	"or the collector gets INT, TERM, HUP or QUIT; the collector itself is never recorded.\n"
	"With --pgid, the same for every process of the process group PGID, until its leader\n"
	"(or, without one, the member watched) has exited.\n"
	"COMMAND's stdin, stdout and stderr are passed through untouched; INT, TERM, HUP and\n"
	"QUIT are forwarded to it; signals ignored by the collector's caller (nohup) stay\n"
	"ignored in it; the collector exits with COMMAND's exit status (128+N if killed by\n"
	"signal N).\n"
	"Diagnostics go to stderr only. Needs root (CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN,\n"
	"CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_KILL); never install it setuid.\n"
	"\n"
	"options:\n"
	"  -o, --output PATH         write the trace to PATH: a new file (owned by root, readable\n"
	"                            by the server user's group, 0640; removed again if the\n"
	"                            collector fails to start) or an existing FIFO\n"
	"      --output-fd N         write the trace to inherited file descriptor N instead\n"
	"  -k, --key PATH            Ed25519 signing key (default " MW_DEFAULT_KEY ")\n"
	"      --pid PID             attach to the running process PID instead of launching\n"
	"      --pgid PGID           attach to every process of the process group PGID\n"
	"      --user USER           run COMMAND as USER (name or uid); default: the invoking\n"
	"                            user from SUDO_UID/SUDO_GID. HOME, USER and LOGNAME that\n"
	"                            name the collector's own user (as sudo sets them) become\n"
	"                            USER's; any other value passes unchanged\n"
	"      --allow-root          allow COMMAND to run as root (refused otherwise)\n"
	"      --linger SECONDS      after COMMAND (or PID) exits, keep recording while recorded\n"
	"                            processes live, for at most SECONDS (default 2)\n"
	"      --after-linger kill|keep\n"
	"                            when --linger runs out with recorded processes still\n"
	"                            alive, kill them (the default for a launched COMMAND:\n"
	"                            nothing of its tree goes on unrecorded) or keep them\n"
	"                            running, unrecorded (the default for --pid and --pgid);\n"
	"                            the trace lists them either way\n"
	"      --on-collector-exit kill|keep\n"
	"                            if recording fails (disk full, reader gone) or a third\n"
	"                            INT/TERM/HUP forces the stop, kill the recorded process\n"
	"                            tree or keep it (default: kill a launched COMMAND, keep\n"
	"                            attached ones); with kill, a guardian process (mw-guardian,\n"
	"                            in a process group of its own) kills the tree if the\n"
	"                            collector itself is killed or crashes\n"
	"      --control PATH        read explicit marks (NDJSON lines, e.g. the mcpfz-probe\n"
	"                            sidecar protocol) from the FIFO PATH, created if missing\n"
	"                            and owned by COMMAND's user; each line is stored raw\n"
	"      --control-fd N        read explicit marks from inherited descriptor N\n"
	"      --stdio full|head:N|off\n"
	"                            capture of the MCP channel (the bytes the server reads\n"
	"                            from its stdin and writes to its stdout): everything\n"
	"                            (default), the first N bytes of each read or write, or\n"
	"                            nothing (no calls can then be reconstructed)\n"
	"      --ringbuf-size MIB    kernel spill ring size, a power of two (default 16), for\n"
	"                            what the 1 MiB hot ring has no room for\n"
	"  -q, --quiet               only errors on stderr\n"
	"  -v, --verbose             more diagnostics (repeat for more)\n"
	"  -h, --help                show this help\n"
	"      --version             show the version\n"
	"\n"
	"environment:\n"
	"  MCPWITNESS_HIDE_HOOKS=A,B a testing aid: treat the tp_btf hooks A and B as missing on\n"
	"                            this kernel (their programs stay unloaded, as on a kernel\n"
	"                            without them; the trace header and stderr say so)\n"
	"\n"
	"exit status: launch mode: COMMAND's status (128+N if killed by signal N); --pid and\n"
	"--pgid: 0 when the recording ended normally; 2 for a usage error or a failure to start\n"
	"or record (or to write --help or --version).\n";

enum {
	OPT_OUTPUT_FD = 256,
	OPT_CONTROL,
	OPT_CONTROL_FD,
	OPT_STDIO,
	OPT_PID,
	OPT_PGID,
	OPT_USER,
	OPT_ALLOW_ROOT,
	OPT_LINGER,
	OPT_AFTER_LINGER,
	OPT_ON_EXIT,
	OPT_RINGBUF,
	OPT_VERSION
};

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"output-fd", required_argument, NULL, OPT_OUTPUT_FD},
	{"key", required_argument, NULL, 'k'},
	{"pid", required_argument, NULL, OPT_PID},
	{"pgid", required_argument, NULL, OPT_PGID},
	{"stdio", required_argument, NULL, OPT_STDIO},
	{"control", required_argument, NULL, OPT_CONTROL},
	{"control-fd", required_argument, NULL, OPT_CONTROL_FD},
	{"user", required_argument, NULL, OPT_USER},
	{"allow-root", no_argument, NULL, OPT_ALLOW_ROOT},
	{"linger", required_argument, NULL, OPT_LINGER},
	{"after-linger", required_argument, NULL, OPT_AFTER_LINGER},
	{"on-collector-exit", required_argument, NULL, OPT_ON_EXIT},
	{"ringbuf-size", required_argument, NULL, OPT_RINGBUF},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mcpwitness-collect: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	return -EINVAL;
}

/* An option whose value is kill or keep: keep set for keep, given set. 0 or -EINVAL. */
static int parse_kill_keep(const char *name, const char *arg, bool *keep, bool *given)
{
	if (strcmp(arg, "kill") && strcmp(arg, "keep"))
		return usage_error("%s is kill or keep, not '%s'", name, arg);
	*keep = !strcmp(arg, "keep");
	*given = true;
	return 0;
}

/* Parses a decimal in [min, max]; returns -EINVAL on anything else. */
static int parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The option getopt_long stopped at (c is '?' or ':'). argv[at] is the element it was reading:
 * with '+' nothing is permuted, and a cluster such as -vZq keeps its index until its end. A
 * long option is named as written, a short one by optopt. */
static int bad_option(int c, char **argv, int at)
{
	const char *a = argv[at];
	int len = (int)strcspn(a, "=");

	if (strncmp(a, "--", 2))
		return usage_error(c == ':' ? "option '-%c' needs an argument"
					    : "unknown option '-%c'",
				   optopt);
	if (c == ':')
		return usage_error("option '%.*s' needs an argument", len, a);
	if (optopt) /* a known option given a value it does not take */
		return usage_error("option '%.*s' takes no argument", len, a);
	return usage_error("unknown or ambiguous option '%s'", a);
}

/* --output-fd and --control-fd are checked before the collector opens any descriptor of its
 * own: a number the caller never opened would later name one of ours (signalfd, epoll, BPF). */
static int check_fd(const char *opt, int fd, bool for_write)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return usage_error("%s %d is not an open file descriptor", opt, fd);
	if ((fl & O_PATH) || (fl & O_ACCMODE) == (for_write ? O_RDONLY : O_WRONLY))
		return usage_error("%s %d is not open for %s", opt, fd,
				   for_write ? "writing" : "reading");
	return 0;
}

static int check_fds(const struct options *o)
{
	int err = 0;

	if (o->output_fd >= 0 && o->output_fd == o->control_fd)
		return usage_error("--output-fd and --control-fd name the same descriptor %d",
				   o->output_fd);
	if (o->output_fd >= 0)
		err = check_fd("--output-fd", o->output_fd, true);
	if (!err && o->control_fd >= 0)
		err = check_fd("--control-fd", o->control_fd, false);
	return err;
}

static int parse_stdio(struct options *o, const char *arg)
{
	unsigned long v;

	if (!strcmp(arg, "full") || !strcmp(arg, "off")) {
		o->stdio_off = !strcmp(arg, "off");
		o->stdio_head = 0;
	} else if (!strncmp(arg, "head:", 5) && parse_ulong(arg + 5, 1, 1u << 30, &v) == 0) {
		o->stdio_off = false;
		o->stdio_head = (uint32_t)v;
	} else {
		return usage_error("--stdio is full, head:N or off, not '%s'", arg);
	}
	snprintf(o->stdio_spec, sizeof(o->stdio_spec), "%s", arg);
	return 0;
}

static int parse_one(struct options *o, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'o':
		o->output = arg;
		return 0;
	case OPT_OUTPUT_FD:
		if (parse_ulong(arg, 3, INT_MAX, &v))
			return usage_error("--output-fd needs a file descriptor >= 3, not '%s'", arg);
		o->output_fd = (int)v;
		return 0;
	case 'k':
		o->key_path = arg;
		return 0;
	case OPT_CONTROL:
		o->control = arg;
		return 0;
	case OPT_CONTROL_FD:
		if (parse_ulong(arg, 3, INT_MAX, &v))
			return usage_error("--control-fd needs a file descriptor >= 3, not '%s'", arg);
		o->control_fd = (int)v;
		return 0;
	case OPT_STDIO:
		return parse_stdio(o, arg);
	case OPT_PID:
		if (parse_ulong(arg, 1, INT_MAX, &v))
			return usage_error("--pid needs a process id, not '%s'", arg);
		o->attach_pid = (pid_t)v;
		return 0;
	case OPT_PGID:
		if (parse_ulong(arg, 1, INT_MAX, &v))
			return usage_error("--pgid needs a process group id, not '%s'", arg);
		o->attach_pgid = (pid_t)v;
		return 0;
	case OPT_USER:
		o->user = arg;
		return 0;
	case OPT_ALLOW_ROOT:
		o->allow_root = true;
		return 0;
	case OPT_LINGER:
		if (parse_ulong(arg, 0, 3600, &v))
			return usage_error("--linger needs whole seconds from 0 to 3600, not '%s'", arg);
		o->linger_ms = v * 1000;
		return 0;
	case OPT_AFTER_LINGER:
		return parse_kill_keep("--after-linger", arg, &o->keep_leftovers, &o->after_given);
	case OPT_ON_EXIT:
		return parse_kill_keep("--on-collector-exit", arg, &o->keep_server,
				       &o->on_exit_given);
	case OPT_RINGBUF:
		if (parse_ulong(arg, 1, 1024, &v) || (v & (v - 1)))
			return usage_error("--ringbuf-size needs a power of two from 1 to 1024, not '%s'",
					   arg);
		o->ringbuf_mib = (uint32_t)v;
		return 0;
	case 'q':
		o->verbosity = -1;
		return 0;
	case 'v':
		o->verbosity++;
		return 0;
	default:
		return usage_error("%s", "unknown option");
	}
}

int options_parse(struct options *o, int argc, char **argv)
{
	int c, err, at;

	memset(o, 0, sizeof(*o));
	o->output_fd = -1;
	o->control_fd = -1;
	o->key_path = MW_DEFAULT_KEY;
	o->linger_ms = 2000;
	o->ringbuf_mib = 16;
	snprintf(o->stdio_spec, sizeof(o->stdio_spec), "full");
	opterr = 0;
	while ((at = optind, c = getopt_long(argc, argv, "+:o:k:qvh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("mcpwitness-collect %s\n", MW_VERSION);
			return 1;
		}
		if (c == '?' || c == ':')
			return bad_option(c, argv, at);
		err = parse_one(o, c, optarg);
		if (err)
			return err;
	}
	if (!o->output && o->output_fd < 0)
		return usage_error("%s", "no output: give -o TRACE or --output-fd N");
	if (o->output && o->output_fd >= 0)
		return usage_error("%s", "-o and --output-fd exclude each other");
	if (o->control && o->control_fd >= 0)
		return usage_error("%s", "--control and --control-fd exclude each other");
	if (o->attach_pid && o->attach_pgid)
		return usage_error("%s", "--pid and --pgid exclude each other");
	err = check_fds(o);
	if (err)
		return err;
	if (o->attach_pid || o->attach_pgid) {
		if (optind < argc)
			return usage_error("%s", "--pid/--pgid and a COMMAND exclude each other");
		if (o->user || o->allow_root)
			return usage_error("%s", "--user and --allow-root apply to a launched COMMAND only");
		if (!o->on_exit_given)
			o->keep_server = true; /* we did not start it: do not kill it by default */
		if (!o->after_given)
			o->keep_leftovers = true; /* nor what it started */
		return 0;
	}
	if (optind >= argc)
		return usage_error("%s", "no COMMAND to run: give it after -- (or use --pid or --pgid)");
	o->command = &argv[optind];
	return 0;
}
