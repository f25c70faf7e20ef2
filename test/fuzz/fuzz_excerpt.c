/*
 * fuzz_excerpt.c - libFuzzer target: the excerpt verifier (proto/EXCERPT.md) with the fixed test
 * key (seed 0x01 x 32, the key fuzz_seeds signs with), with and without the key, touching every
 * byte it hands back (the proven record and the Header point into the input). Seeds include
 * real excerpts exported from the seed traces, so mutations reach the audit path, the chunk
 * rule and the index bounds behind a valid signature.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static uint8_t touch(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; p && i < n; i++)
		acc ^= p[i];
	return acc;
}

/* The proven record's value references, resolved from its chunk as `verify` shows them: a
 * proven excerpt's references always resolve (the verifier checked them). */
static uint8_t resolve(const struct mcpt_excerpt *x)
{
	const ProtobufCMessageDescriptor *d = mcpt_record_descriptor(x->rec.type);
	struct mcpt_valtab *vt;
	ProtobufCMessage *m;
	uint8_t r = 0;
	int err;

	if (!d || !x->rec.body || !x->chunk)
		return 0;
	m = protobuf_c_message_unpack(d, NULL, x->rec.body_len, x->rec.body);
	vt = mcpt_valtab__new();
	if (!vt)
		abort();
	if (m) {
		err = mcpt_excerpt_resolve(x, vt, m, NULL, 0);
		if (err && x->verdict == MCPT_VALID_COMPLETE)
			abort();
		r = (uint8_t)err;
		mcpt_valtab__detach(vt, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	mcpt_valtab__free(vt);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mcpt_pubkey key;
	static int ready;
	volatile uint8_t sink = 0;

	if (!ready) {
		uint8_t seed[32], sk[64];

		if (sodium_init() < 0)
			abort();
		memset(seed, 1, sizeof(seed));
		if (crypto_sign_seed_keypair(key.pk, sk, seed) != 0)
			abort();
		mcpt_key_id(key.pk, key.key_id);
		ready = 1;
	}
	for (int with_key = 0; with_key < 2; with_key++) {
		struct mcpt_verify_opts o = {.key = with_key ? &key : NULL,
					     .allow_unsigned = size & 1};
		struct mcpt_excerpt x;

		if (mcpt_excerpt_verify(data, size, &o, &x) != 0)
			abort(); /* only allocation failures may fail, and the fuzzer has memory */
		if (x.index_min > x.index_max && x.verdict == MCPT_VALID_COMPLETE)
			abort();
		sink ^= touch(x.rec.body, x.rec.body_len) ^ touch(x.header, x.header_len);
		sink ^= resolve(&x);
		sink ^= (uint8_t)strlen(x.message) ^ (uint8_t)strlen(mcpt_excerpt_verdict_name(&x));
	}
	(void)sink;
	return 0;
}
