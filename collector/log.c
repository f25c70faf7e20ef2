/*
 * log.c - leveled diagnostics on stderr for the collector (see log.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

__attribute__((format(printf, 2, 0))) static void log_vmsg(enum log_level level, const char *fmt,
							      va_list ap)
{
	if (level > current_level)
		return;
	flockfile(stderr); /* one whole line: the loader's threads may log at the same time */
	fputs("mcpwitness-collect: ", stderr);
	if (level == LOG_WARN)
		fputs("warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (!*fmt || fmt[strlen(fmt) - 1] != '\n')
		fputc('\n', stderr);
	funlockfile(stderr);
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
	flockfile(stderr);
	if (strncmp(fmt, "libbpf: ", strlen("libbpf: "))) /* libbpf's own messages carry it */
		fputs("libbpf: ", stderr);
	n = vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
	return n;
}

void log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
