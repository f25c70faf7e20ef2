/*
 * clock.c - the real clock source of the writer (TRACE-FORMAT.md 4.9). A ClockSample reads
 * CLOCK_REALTIME between two CLOCK_BOOTTIME reads (so the analyzer knows how tightly realtime is
 * pinned to the event clock), then CLOCK_MONOTONIC, then the kernel's NTP state via adjtimex
 * (modes = 0 only reads; a collector's seccomp filter must allow adjtimex or clock_adjtime).
 * Seal cadence uses CLOCK_MONOTONIC, which NTP and root cannot step.
 */
#include <sys/timex.h>
#include <time.h>

#include "internal.h"

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0; /* only for an unknown clock id; all three exist since Linux 2.6.39 */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mcpt_clock_real_monotonic(void *ctx)
{
	(void)ctx;
	return now_ns(CLOCK_MONOTONIC);
}

void mcpt_clock_real_sample(void *ctx, Mcpt__ClockSample *out)
{
	struct timex tx = {.modes = 0};
	int state;

	(void)ctx;
	out->boottime_before_ns = now_ns(CLOCK_BOOTTIME);
	out->realtime_ns = now_ns(CLOCK_REALTIME);
	out->boottime_after_ns = now_ns(CLOCK_BOOTTIME);
	out->monotonic_ns = now_ns(CLOCK_MONOTONIC);
	state = adjtimex(&tx);
	out->ntp_synced = state >= 0 && state != TIME_ERROR && !(tx.status & STA_UNSYNC);
	out->esterror_us = state >= 0 && tx.esterror > 0 ? (uint64_t)tx.esterror : 0;
}

void mcpt_clock_sample(Mcpt__ClockSample *out)
{
	mcpt_clock_real_sample(NULL, out);
}
