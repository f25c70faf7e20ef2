/*
 * wl_common.h - what the benchmark workloads share: argument parsing, the timed loop and the
 * one line of result each prints.
 *
 * A workload is `wl_NAME ITERATIONS [ARG...]`: it runs ITERATIONS / 10 untimed warm-up
 * iterations, then ITERATIONS timed ones, and prints `RESULT <name> <wall ns per iteration>
 * <iterations> <CPU ns per iteration>` on stderr (stdout may be the MCP channel under test). The figures are computed
 * by test/bench/bench.py from these lines; the workloads make no judgement.
 */
#ifndef MW_WL_COMMON_H
#define MW_WL_COMMON_H

#include <stdint.h>

/* One iteration of the workload; returns 0 or -errno (the run then stops with status 1). */
typedef int (*wl_iter_fn)(void *ctx);

/* Parses ITERATIONS from argv[1] (exits 2 with usage on error). */
long wl_iterations(int argc, char **argv, const char *usage);

/* Runs warm-up and timed iterations of fn and prints the RESULT line; returns the exit
 * status for main. */
int wl_run(const char *name, long iterations, wl_iter_fn fn, void *ctx);

uint64_t wl_now_ns(void);

#endif /* MW_WL_COMMON_H */
