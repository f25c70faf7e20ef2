/*
 * fuzz_common.h - shared by the libFuzzer targets of the trace library: feeds an input to
 * mcpt_verify through a memfd (a real file descriptor, as the analyzer reads), touches every
 * byte of every record handed to the callback (so ASan sees any out-of-bounds body), and
 * renders the report both ways (so the printers see every verdict).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "mcpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_verify_input(const uint8_t *data, size_t size, const struct mcpt_pubkey *key);
/* The input in a memfd (one per process, rewritten each time), offset 0. */
int fuzz_input_fd(const uint8_t *data, size_t size);

#endif /* FUZZ_COMMON_H */
