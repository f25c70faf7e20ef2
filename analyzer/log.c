/*
 * log.c - stderr diagnostics with levels (see log.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static int cur_level = LOG_WARN;

void log_set_level(int level)
{
	if (level < LOG_QUIET)
		level = LOG_QUIET;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	cur_level = level;
}

int log_level(void)
{
	return cur_level;
}

static void vlog(const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void vlog(const char *kind, const char *fmt, va_list ap)
{
	fflush(stdout); /* keep the order of data and diagnostics on a shared terminal */
	fputs("mcpwitness: ", stderr);
	if (kind)
		fputs(kind, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_WARN)
		return;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_INFO)
		return;
	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}

void p_debug(const char *fmt, ...)
{
	va_list ap;

	if (cur_level < LOG_DEBUG)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}
