/*
 * log.c - leveled diagnostics on stderr for the collector (see log.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "log.h"

static enum log_level current_level = LOG_WARN;

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

#define LOG_LINE_MAX 4096 /* PIPE_BUF: a line is one write, whole to whoever reads the pipe */

static bool stderr_shared;
static unsigned long lines_dropped;

void log_share_stderr(void)
{
	stderr_shared = true;
}

unsigned long log_dropped(void)
{
	return lines_dropped;
}

/* Writes buf in one write. Once the server shares stderr, never blocks: RWF_NOWAIT, and a full
 * pipe drops the line (counted). A descriptor that cannot say so without blocking (a regular
 * file, a terminal) is written to as before. */
static void emit(const char *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	ssize_t n;

	if (stderr_shared) {
		n = pwritev2(STDERR_FILENO, &iov, 1, -1, RWF_NOWAIT);
		if (n < 0 && errno == EAGAIN)
			__atomic_add_fetch(&lines_dropped, 1, __ATOMIC_RELAXED);
		if (n >= 0 || (errno != EOPNOTSUPP && errno != EINVAL))
			return;
	}
	while (len) {
		n = write(STDERR_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* prefix, then fmt, as one line (a newline added unless fmt ends with one), cut to
 * LOG_LINE_MAX. errno is kept: callers log strerror(errno) and then return -errno. */
__attribute__((format(printf, 2, 0))) static void emit_line(const char *prefix, const char *fmt,
							    va_list ap)
{
	char buf[LOG_LINE_MAX];
	int saved = errno, n = snprintf(buf, sizeof(buf), "%s", prefix);
	size_t len;

	if (n >= 0 && (size_t)n < sizeof(buf))
		vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	len = strlen(buf);
	if (len == sizeof(buf) - 1) /* cut: say so, and end the line */
		memcpy(buf + len - 4, "...\n", 4);
	else if (!len || buf[len - 1] != '\n')
		buf[len++] = '\n';
	emit(buf, len);
	errno = saved;
}

__attribute__((format(printf, 2, 0))) static void log_vmsg(enum log_level level, const char *fmt,
							      va_list ap)
{
	if (level > current_level)
		return;
	emit_line(level == LOG_WARN ? "mcpwitness-collect: warning: " : "mcpwitness-collect: ",
		  fmt, ap);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

/* The first program the kernel's verifier refused and its verdict, "NAME: VERDICT", or empty.
 * The loader loads handler copies in threads of their own: set under the lock, read after
 * they are joined. */
static char refusal[256];
static pthread_mutex_t refusal_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_statistics_line(const char *line, size_t len)
{
	static const char *const stats[] = {"processed ", "verification time ", "stack depth "};

	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		if (len >= strlen(stats[i]) && !strncmp(line, stats[i], strlen(stats[i])))
			return true;
	return false;
}

bool log_verifier_verdict(const char *log, char *out, size_t size)
{
	const char *best = NULL, *line = log;
	size_t best_len = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len && !is_statistics_line(line, len)) {
			best = line;
			best_len = len;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!best || !size)
		return false;
	snprintf(out, size, "%.*s", (int)(best_len < size ? best_len : size - 1), best);
	return true;
}

const char *log_refusal(void)
{
	return refusal[0] ? refusal : NULL;
}

/* libbpf prints a refused program's verifier log as one message: its name and the log. */
#define LOAD_LOG_FMT "prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n"

__attribute__((format(printf, 1, 0))) static void note_refusal(const char *fmt, va_list ap)
{
	const char *name, *log;
	char verdict[200];
	va_list aq;

	/* only that exact message (with or without libbpf's prefix), so that its two arguments
	 * are known to be the strings */
	if (strcmp(fmt, LOAD_LOG_FMT) && strcmp(fmt, "libbpf: " LOAD_LOG_FMT))
		return;
	va_copy(aq, ap);
	name = va_arg(aq, char *); /* libbpf passes char *, as the two %s say */
	log = va_arg(aq, char *);
	va_end(aq);
	if (!name || !log || !log_verifier_verdict(log, verdict, sizeof(verdict)))
		return;
	pthread_mutex_lock(&refusal_lock);
	if (!refusal[0])
		snprintf(refusal, sizeof(refusal), "%.48s: %s", name, verdict);
	pthread_mutex_unlock(&refusal_lock);
}

__attribute__((format(printf, 2, 0))) static int libbpf_print(enum libbpf_print_level level,
							      const char *fmt, va_list ap)
{
	/* libbpf warnings are mostly about features it probes for; they matter only with -v */
	enum log_level mine = level == LIBBPF_DEBUG ? LOG_DEBUG + 1 : LOG_DEBUG;
	int n;

	if (level == LIBBPF_WARN)
		note_refusal(fmt, ap);
	if (mine > current_level)
		return 0;
	if (!stderr_shared) { /* a verifier's log can be megabytes: whole, while nobody shares */
		flockfile(stderr);
		if (strncmp(fmt, "libbpf: ", strlen("libbpf: "))) /* its own messages carry it */
			fputs("libbpf: ", stderr);
		n = vfprintf(stderr, fmt, ap);
		funlockfile(stderr);
		return n;
	}
	emit_line(strncmp(fmt, "libbpf: ", strlen("libbpf: ")) ? "libbpf: " : "", fmt, ap);
	return 0;
}

void log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
