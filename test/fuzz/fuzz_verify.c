/*
 * fuzz_verify.c - libFuzzer target: full verification with a fixed test key (seed 0x01 x 32,
 * the key fuzz_seeds signs its seed traces with), harness b of TRACE-FORMAT.md 5. Mutations of
 * signed seed traces reach the signature checks and everything after a failing seal; the
 * statement parser behind the signature is reached through fuzz_reader (no key). The excerpt
 * exporter runs on each input too (it scans the trace with its own loop).
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mcpt_pubkey key;
	static int ready;

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
	fuzz_verify_input(data, size, &key);
	{
		/* the excerpt exporter's own pass over the same (hostile) trace */
		struct mcpt_verify_opts o = {.key = &key, .allow_unsigned = size & 1};
		uint8_t *x = NULL;
		size_t n = 0;
		char err[256];
		int rc = mcpt_excerpt_export(fuzz_input_fd(data, size), 1 + size % 23, &o, &x, &n,
					     err, sizeof(err));

		if (rc == 0 && (!x || !n || !mcpt_is_excerpt(x, n)))
			abort();
		free(x);
	}
	return 0;
}
