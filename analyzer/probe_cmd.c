/*
 * probe_cmd.c - `mcpwitness probe`: options and the control loop (see probe.h).
 *
 * The loop reads the harness's NDJSON control lines on stdin, one at a time:
 *   {"op":"scope","pgid":P,"generation":G}   (re)start the collector on process group P
 *   {"op":"mark","phase":"begin"|"end",...}  forwarded raw to the collector, acknowledged by the
 *                                            reader once the mark is back in the trace
 *   {"op":"shutdown"} or end of input        stop the collector (FINAL seal), then exit
 * Every line that reaches a collector is recorded raw in its trace. INT, TERM and HUP stop the
 * probe like a shutdown (mcpfz-probe's monitor sends shutdown and then TERM at once).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "probe.h"

#define LINE_MAX_BYTES (64u << 10)
#define TICK_MS	       50

#ifndef MW_COLLECTOR_PATH
#define MW_COLLECTOR_PATH "/usr/sbin/mcpwitness-collect"
#endif
#define MW_DEFAULT_KEY "/etc/mcpwitness/signing.key"

static void usage(FILE *out)
{
	fputs("usage: mcpwitness probe [--backend ebpf] [-o DIR] [-k KEY] [--pubkey FILE]\n"
	      "                        [--grace-ms MS] [--collector PATH]\n"
	      "The mcpfz-probe sidecar protocol on stdin/stdout "
	      "(MCPFZ_PROBE_BIN=mcpwitness-probe):\n"
	      "each scope {\"op\":\"scope\",\"pgid\":P,\"generation\":G} is recorded by\n"
	      "mcpwitness-collect --pgid P (through sudo -n when not root) into a signed trace,\n"
	      "DIR/mcpwitness-probe-PID-gG.mcpt; marks are stored raw in it and acknowledged;\n"
	      "events come out as NDJSON lines (exec, connect, file_open, file_delete, chmod,\n"
	      "ptrace, drop, status) with bucket, call_id, pid, comm and ts_ns.\n"
	      "  --backend ebpf       the only backend (harnesses pass it)\n"
	      "  -o, --output-dir DIR where the traces go (default: the current directory)\n"
	      "  -k, --key KEY        the collector's signing key (default " MW_DEFAULT_KEY ")\n"
	      "  --pubkey FILE        verify the stream with FILE (default " MW_DEFAULT_PUBKEY
	      " when readable)\n"
	      "  --grace-ms MS        trailing window after an end mark (default 100)\n"
	      "  --collector PATH     the collector to run (default " MW_COLLECTOR_PATH ")\n"
	      "Exit: 0 after shutdown or end of input, 2 usage error or event lines that could\n"
	      "not be written.\n",
	      out);
}

enum { OPT_BACKEND = 256, OPT_PUBKEY, OPT_GRACE, OPT_COLLECTOR };

static int parse_opts(struct probe *p, int argc, char **argv)
{
	static const struct option opts[] = {
		{"backend", required_argument, NULL, OPT_BACKEND},
		{"output-dir", required_argument, NULL, 'o'},
		{"key", required_argument, NULL, 'k'},
		{"pubkey", required_argument, NULL, OPT_PUBKEY},
		{"grace-ms", required_argument, NULL, OPT_GRACE},
		{"collector", required_argument, NULL, OPT_COLLECTOR},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long ms;
	char *end;
	struct cmd_parser parser = {"probe", ":o:k:h", opts, NULL};
	int opt;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case OPT_BACKEND:
			if (strcmp(optarg, "ebpf"))
				return cmd_usage_error("probe", "unknown backend \"%s\" (ebpf)",
						       optarg);
			break;
		case 'o':
			p->opts.dir = optarg;
			break;
		case 'k':
			p->opts.key = optarg;
			break;
		case OPT_PUBKEY:
			p->opts.pubkey = optarg;
			p->opts.pubkey_given = true;
			break;
		case OPT_GRACE:
			errno = 0;
			ms = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || ms > 60000)
				return cmd_usage_error(
					"probe", "bad --grace-ms \"%s\" (0 to 60000)", optarg);
			p->opts.grace_ns = (uint64_t)ms * 1000000;
			break;
		case OPT_COLLECTOR:
			p->opts.collector = optarg;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("probe", argv, opt);
		}
	}
	if (optind < argc)
		return cmd_usage_error("probe", "unexpected argument \"%s\"", argv[optind]);
	return -1;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Standard input and output are the protocol's channel. A closed one would be taken by the
 * first descriptor the probe opens (its signalfd), then read as the control lines or written
 * with event lines: refused up front. */
static int check_stdio(void)
{
	static const char *const names[] = {"standard input", "standard output"};

	for (int fd = 0; fd < 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0) {
			p_err("probe: %s is not open: %s", names[fd], strerror(errno));
			return MW_EXIT_USAGE;
		}
	}
	return -1;
}

/* Absolute trace directory (one the traces can be made in) and the verification key. */
static int prepare(struct probe *p, char *dir)
{
	char err[256] = "";

	if (!realpath(p->opts.dir, dir)) {
		p_err("probe: output directory %s: %s", p->opts.dir, strerror(errno));
		return MW_EXIT_USAGE;
	}
	if (!is_dir(dir) || access(dir, W_OK | X_OK)) {
		p_err("probe: output directory %s: %s", p->opts.dir,
		      is_dir(dir) ? strerror(errno) : "not a directory");
		return MW_EXIT_USAGE;
	}
	p->opts.dir = dir;
	if (mcpt_pubkey_load(&p->key, p->opts.pubkey, err, sizeof(err)) == 0) {
		p->have_key = true;
	} else if (p->opts.pubkey_given) {
		p_err("failed to load public key %s: %s", p->opts.pubkey, err);
		return MW_EXIT_USAGE;
	}
	return -1;
}

/* ---- control lines ------------------------------------------------------------------------ */

static void status_with(struct probe *p, const char *msg, const char *key, json_t *value)
{
	json_t *o =
		json_pack("{s:s, s:s, s:s}", "type", "status", "message", msg, "bucket", "ambient");

	if (o)
		json_object_set_new(o, key, value);
	else
		json_decref(value);
	pthread_mutex_lock(&p->lock);
	probe_emit(p, o);
	pthread_mutex_unlock(&p->lock);
}

/* The live generation's collector, or NULL (none yet, or it failed to start). */
static struct probe_gen *live_gen(struct probe *p)
{
	struct probe_gen *g;

	pthread_mutex_lock(&p->lock);
	g = p->gen && !p->gen->done ? p->gen : NULL;
	pthread_mutex_unlock(&p->lock);
	return g;
}

static void stop_gen(struct probe *p)
{
	struct probe_gen *g;

	pthread_mutex_lock(&p->lock);
	g = p->gen;
	p->gen = NULL;
	pthread_mutex_unlock(&p->lock);
	probe_gen_stop(g); /* outside the lock: its reader takes it until the trace ends */
}

static void on_scope(struct probe *p, json_t *j)
{
	json_t *pg = json_object_get(j, "pgid"), *gen = json_object_get(j, "generation");
	long long pgid = json_integer_value(pg), generation = json_integer_value(gen);
	struct probe_gen *g;

	if (!json_is_integer(pg) || pgid <= 0 || pgid > INT_MAX || (gen && !json_is_integer(gen))) {
		status_with(p, "parse_error", "error",
			    json_string("scope needs an integer pgid > 0 and generation"));
		return;
	}
	pthread_mutex_lock(&p->lock);
	g = p->gen;
	pthread_mutex_unlock(&p->lock);
	if (g && g->pgid == pgid && g->generation == generation && !g->done)
		return; /* the same scope again */
	stop_gen(p);
	g = probe_gen_start(p, pgid, generation);
	if (!g) {
		status_with(p, "error", "error", json_string("failed to start the collector"));
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->gen = g;
	pthread_mutex_unlock(&p->lock);
}

static void on_mark(struct probe *p, json_t *j, struct probe_gen *g)
{
	const char *phase = json_string_value(json_object_get(j, "phase"));
	const char *call_id = json_string_value(json_object_get(j, "call_id"));

	if (!phase || (strcmp(phase, "begin") && strcmp(phase, "end"))) {
		status_with(p, "unknown_phase", "phase", phase ? json_string(phase) : json_null());
		return;
	}
	if (g)
		return; /* acknowledged by the reader once the collector has recorded it */
	pthread_mutex_lock(&p->lock); /* no scope: nothing is watched, nothing to wait for */
	probe_status(p, phase, "call", call_id);
	pthread_mutex_unlock(&p->lock);
}

/* One control line; returns true when the probe must stop. */
static bool on_line(struct probe *p, char *line, size_t len)
{
	json_error_t e;
	json_t *j = json_loadb(line, len, 0, &e);
	const char *op = json_string_value(json_object_get(j, "op"));
	struct probe_gen *g;
	bool stop = false;

	if (!json_is_object(j) || !op) {
		status_with(p, "parse_error", "error", json_string(j ? "no \"op\"" : e.text));
		json_decref(j);
		return false;
	}
	if (!strcmp(op, "scope"))
		on_scope(p, j);
	g = live_gen(p);
	if (g) { /* recorded raw, with the collector's timestamp */
		line[len] = '\n';
		if (probe_gen_send(g, line, len + 1))
			p_err("failed to pass a control line to the collector");
	}
	if (!strcmp(op, "mark"))
		on_mark(p, j, g);
	else if (!strcmp(op, "shutdown"))
		stop = true;
	else if (strcmp(op, "scope"))
		status_with(p, "parse_error", "error", json_string("unknown op"));
	json_decref(j);
	return stop;
}

/* ---- the loop ----------------------------------------------------------------------------- */

struct linebuf {
	char buf[LINE_MAX_BYTES + 1];
	size_t len;
	bool skipping; /* the current line is too long: drop it up to its newline */
};

/* Reads what stdin has and handles every complete line; true at EOF or shutdown. */
static bool read_stdin(struct probe *p, struct linebuf *lb)
{
	ssize_t n = read(0, lb->buf + lb->len, LINE_MAX_BYTES - lb->len);
	char *nl;

	if (n < 0)
		return errno != EINTR && errno != EAGAIN;
	if (n == 0)
		return true;
	lb->len += (size_t)n;
	while ((nl = memchr(lb->buf, '\n', lb->len))) {
		size_t len = (size_t)(nl - lb->buf);
		bool stop = false;

		if (!lb->skipping && len)
			stop = on_line(p, lb->buf, len);
		lb->skipping = false;
		memmove(lb->buf, nl + 1, lb->len - len - 1);
		lb->len -= len + 1;
		if (stop)
			return true;
	}
	if (lb->len == LINE_MAX_BYTES) {
		if (!lb->skipping)
			status_with(p, "parse_error", "error", json_string("line too long"));
		lb->skipping = true;
		lb->len = 0;
	}
	return false;
}

static int loop(struct probe *p, int sigfd)
{
	static struct linebuf lb;
	struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = sigfd, .events = POLLIN}};

	for (;;) {
		int n = poll(fds, 2, TICK_MS);

		if (n < 0 && errno != EINTR)
			return -errno;
		/* input first: a harness writes shutdown and signals TERM at once */
		if (fds[0].revents && read_stdin(p, &lb))
			return 0;
		if (fds[1].revents)
			return 0; /* INT, TERM or HUP */
		pthread_mutex_lock(&p->lock);
		if (p->gen)
			probe_ack_ends(p->gen, probe_boottime_ns(), false);
		pthread_mutex_unlock(&p->lock);
	}
}

static int run(struct probe *p)
{
	sigset_t mask;
	int sigfd, err;
	json_t *ready;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) ||
	    (sigfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
		p_err("probe: failed to set up signals: %s", strerror(errno));
		return MW_EXIT_USAGE;
	}
	ready = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "type", "status", "bucket", "startup",
			  "message", "ready", "backend", "ebpf", "grace_ms",
			  (json_int_t)(p->opts.grace_ns / 1000000), "recorder", "mcpwitness");
	pthread_mutex_lock(&p->lock);
	probe_emit(p, ready);
	pthread_mutex_unlock(&p->lock);
	err = loop(p, sigfd);
	stop_gen(p);
	close(sigfd);
	if (err)
		p_err("probe: failed to read the control channel: %s", strerror(-err));
	return err ? MW_EXIT_USAGE : MW_EXIT_OK;
}

int do_probe(int argc, char **argv)
{
	static struct probe p; /* large (the comm tables live in each generation) */
	char dir[PATH_MAX];
	int code;

	memset(&p, 0, sizeof(p));
	p.opts.dir = ".";
	p.opts.key = MW_DEFAULT_KEY;
	p.opts.pubkey = MW_DEFAULT_PUBKEY;
	p.opts.collector = MW_COLLECTOR_PATH;
	p.opts.grace_ns = 100 * 1000000ull;
	code = parse_opts(&p, argc, argv);
	if (code < 0)
		code = check_stdio();
	if (code < 0)
		code = prepare(&p, dir);
	if (code >= 0)
		return code;
	pthread_mutex_init(&p.lock, NULL);
	code = run(&p);
	pthread_mutex_destroy(&p.lock);
	if (p.out_failed) { /* reported once by probe_emit: not again by main */
		clearerr(stdout);
		code = code ?: MW_EXIT_USAGE;
	}
	return code;
}
