/*
 * writer_testlib.c - the writer that check_trace_writer.c and check_trace_writer_output.c share
 * (writer_testlib.h).
 */
#include "writer_testlib.h"

struct mcpt_writer *tw_writer(int fd, struct tl_clock *clk, struct mcpt_signer *s,
			      struct mcpt_writer_opts *wo)
{
	static Mcpt__Header h;
	static Mcpt__Host host;
	static Mcpt__Kernel k;
	static Mcpt__ClockSample cs;
	struct mcpt_writer_opts def = {0};

	if (!wo)
		wo = &def;
	tl_clock_init(clk, 5000000);
	wo->clock = &clk->clock;
	tl_header(&h, &host, &k, &cs);
	return mcpt_writer__new(fd, &h, s, wo);
}
