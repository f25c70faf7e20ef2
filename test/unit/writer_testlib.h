/*
 * writer_testlib.h - what the writer's suites (check_trace_writer.c, check_trace_writer_output.c)
 * share: a writer on the fake clock (trace_testlib.h) with the fixed test Header.
 */
#ifndef MW_WRITER_TESTLIB_H
#define MW_WRITER_TESTLIB_H

#include <stdint.h>

#include "trace_testlib.h"

/* One millisecond of the fake clock, in nanoseconds. */
#define MS UINT64_C(1000000)

/* A writer on fd: clk started at 5 ms and made the writer's clock, tl_header's Header, signer
 * s, options wo (NULL: the defaults). NULL with errno set when the writer refuses. */
struct mcpt_writer *tw_writer(int fd, struct tl_clock *clk, struct mcpt_signer *s,
			      struct mcpt_writer_opts *wo);

#endif /* MW_WRITER_TESTLIB_H */
