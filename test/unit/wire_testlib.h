/*
 * wire_testlib.h - random numbers for the wire-format suites (check_encode.c, the packer;
 * check_unwire.c, the decoder): a xorshift generator, values of random width so that every
 * varint length is covered, and edge values. Header-only: the two suites link different
 * libraries.
 */
#ifndef MW_WIRE_TESTLIB_H
#define MW_WIRE_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "trace.pb-c.h"

static inline uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A value of a random width (0 to 64 bits). */
static inline uint64_t rand_width(uint64_t *x)
{
	uint64_t v = next_rand(x);
	unsigned bits = (unsigned)(next_rand(x) % 65);

	if (bits == 0)
		return 0;
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

/* Byte strings at every varint length boundary of their length prefix, up to the channel's
 * 64 KiB chunk; integers at 0, 1, the 7-bit boundaries and the extremes of their types. */
static const size_t edge_lens[] = {0, 1, 127, 128, 4095, 4096, 16383, 16384, 65535, 65536};
static const int64_t edge_ints[] = {0,	       1,	  -1,	     63,
				    -64,       64,	  -65,	     127,
				    128,       INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX,
				    INT64_MAX, INT64_MIN};
static const uint64_t edge_uns[] = {
	0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1, INT64_MAX, UINT64_MAX};

/* The k-th edge Event (k = 0: every field at its default; k = 1: every field at its maximum,
 * byte strings of 64 KiB), its byte strings cut from blob (64 KiB), its args in args[4]. */
static inline void edge_event(Mcpt__Event *e, size_t k, int64_t args[4], uint8_t *blob)
{
	static const int ops[] = {0,   1,   40,	 127,	    128, 192,	   199,
				  200, 255, 256, INT32_MAX, -1,	 INT32_MIN};
	size_t nl = sizeof(edge_lens) / sizeof(edge_lens[0]);
	size_t nu = sizeof(edge_uns) / sizeof(edge_uns[0]);
	size_t ni = sizeof(edge_ints) / sizeof(edge_ints[0]), no = sizeof(ops) / sizeof(ops[0]);
	ProtobufCBinaryData *b[8] = {&e->path,	&e->abs_path,  &e->opened_path, &e->data,
				     &e->path2, &e->abs_path2, &e->data2,	&e->payload};

	mcpt__event__init(e);
	if (k == 0)
		return;
	e->seq = k == 1 ? UINT64_MAX : edge_uns[k % nu];
	e->ts = k == 1 ? UINT64_MAX : edge_uns[(k + 1) % nu];
	e->pid = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 2) % nu]);
	e->tid = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 3) % nu]);
	e->op = (Mcpt__Op)ops[k % no];
	e->ret = k == 1 ? INT64_MIN : edge_ints[k % ni];
	e->flags = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 4) % nu]);
	e->dev = k == 1 ? UINT64_MAX : edge_uns[(k + 5) % nu];
	e->ino = k == 1 ? UINT64_MAX : edge_uns[(k + 6) % nu];
	e->pstart = k == 1 ? UINT64_MAX : edge_uns[(k + 7) % nu];
	e->uid = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 8) % nu]);
	e->gid = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 9) % nu]);
	e->task_ref = (uint32_t)(k == 1 ? UINT32_MAX : edge_uns[(k + 10) % nu]);
	e->n_args = 1 + k % 4;
	for (size_t i = 0; i < e->n_args; i++)
		args[i] = k == 1 ? (i % 2 ? INT64_MIN : INT64_MAX) : edge_ints[(k + i) % ni];
	e->args = args;
	for (size_t i = 0; i < 8; i++) {
		b[i]->len = k == 1 ? 65536 : edge_lens[(k + i) % nl];
		b[i]->data = blob;
	}
}

#endif /* MW_WIRE_TESTLIB_H */
