/*
 * log.c - leveled diagnostics on stderr for the collector (see log.h).
 */
#include <stdarg.h>
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

__attribute__((format(printf, 2, 0))) static int libbpf_print(enum libbpf_print_level level,
							      const char *fmt, va_list ap)
{
	/* libbpf warnings are mostly about features it probes for; they matter only with -v */
	enum log_level mine = level == LIBBPF_DEBUG ? LOG_DEBUG + 1 : LOG_DEBUG;
	int n;

	if (mine > current_level)
		return 0;
	flockfile(stderr);
	fputs("libbpf: ", stderr);
	n = vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
	return n;
}

void log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
