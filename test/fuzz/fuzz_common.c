/*
 * fuzz_common.c - see fuzz_common.h. The memfd and the /dev/null stream are opened once per
 * process (libFuzzer calls the target millions of times); a failure to set them up aborts, as
 * a fuzzer that silently tests nothing would be worse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int fuzz_input_fd(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) != 0 ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

static int touch(void *ctx, const struct mcpt_record *r)
{
	uint8_t *acc = ctx;

	for (size_t i = 0; i < r->body_len; i++)
		*acc ^= r->body[i];
	*acc ^= (uint8_t)(r->index + r->type + r->provisional);
	return 0;
}

static void render(const struct mcpt_report *rep)
{
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		abort();
	mcpt_report_print(null, rep);
	mcpt_report_print_json(null, rep);
}

void fuzz_verify_input(const uint8_t *data, size_t size, const struct mcpt_pubkey *key)
{
	for (int hold = 0; hold < 2; hold++) {
		struct mcpt_verify_opts o = {.key = key,
					     .hold_segments = hold,
					     .allow_unsigned = size & 1,
					     .hold_max_bytes = 1u << 20};
		struct mcpt_report rep;
		uint8_t acc = 0;
		int err = mcpt_verify(fuzz_input_fd(data, size), &o, touch, &acc, &rep);

		if (err && err != -ENOBUFS)
			abort(); /* a memfd never fails to read; only the hold limit may stop it */
		render(&rep);
		mcpt_report__fini(&rep);
	}
}
