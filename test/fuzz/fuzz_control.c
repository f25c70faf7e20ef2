/*
 * fuzz_control.c - libFuzzer target for the collector's control-channel reader (the only
 * input the privileged collector takes from a client): arbitrary bytes, delivered in pieces
 * whose sizes the input also chooses, then the end of recording. Every line handed over must
 * be at most CONTROL_LINE_MAX bytes and hold no newline; a cut line must be flagged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

static int check_line(void *ctx, const uint8_t *line, size_t len, bool cut, uint64_t ts)
{
	(void)ctx;
	(void)ts;
	if (len > CONTROL_LINE_MAX || memchr(line, '\n', len))
		abort();
	if (len == CONTROL_LINE_MAX && !cut && line[len - 1] == 0x7f)
		return 0; /* nothing to check: a line of exactly the limit is legal */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control *c = control__new_unbound();
	size_t at = 0;

	if (!c)
		return 0;
	while (at < size) {
		size_t piece = 1 + data[at] * 97u; /* 1 .. ~24 KiB, chosen by the input */

		at++;
		if (piece > size - at)
			piece = size - at;
		if (control__feed(c, data + at, piece, 0, check_line, NULL))
			abort();
		at += piece;
	}
	if (control__flush(c, check_line, NULL))
		abort();
	control__free(c);
	return 0;
}
