/*
 * fuzz_reader.c - libFuzzer target: framing and structure (TRACE-FORMAT.md 5, harness a):
 * mcpt_verify with no key, so everything but the signatures is exercised on any input -
 * preamble, varints, caps, Record rule, Header, statements, chain and count checks, tails.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_verify_input(data, size, NULL);
	return 0;
}
