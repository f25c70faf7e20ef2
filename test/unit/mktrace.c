/*
 * mktrace.c - writes a test trace to files for the tests that run outside C (the independent
 * Python checks): DIR/multi.mcpt, a complete signed trace of several segments whose chunks
 * close both by count and by size (so excerpts have multi-leaf audit paths and index ranges),
 * written with a fixed seed (0x01 x 32), trace id and fake clock, and DIR/test.pub, its public
 * key in the minisign format. Plain C on the library's API: the Check helpers need a test
 * runner. Usage: mktrace DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static uint64_t now = 1000000;

static uint64_t mono(void *ctx)
{
	(void)ctx;
	return now;
}

static void sample(void *ctx, Mcpt__ClockSample *cs)
{
	(void)ctx;
	cs->realtime_ns = 1700000000000000000ull + now;
	cs->boottime_before_ns = now + 1000;
	cs->boottime_after_ns = now + 2000;
	cs->monotonic_ns = now;
	cs->ntp_synced = 1;
}

static int events(struct mcpt_writer *w)
{
	Mcpt__Event ev = MCPT__EVENT__INIT;
	char path[128];
	int err = 0;

	ev.op = MCPT__OP__OP_OPENAT;
	for (uint64_t i = 0; i < 300 && !err; i++) {
		int n = snprintf(path, sizeof(path), "/tmp/file-%llu%.*s", (unsigned long long)i,
				 (int)(i % 60),
				 "//////////////////////////////////////////////////"
				 "//////////");

		now += 1000000;
		ev.seq = i;
		ev.ts = now;
		ev.pid = 100 + (uint32_t)(i % 7);
		ev.path = (ProtobufCBinaryData){(size_t)n, (uint8_t *)path};
		err = mcpt_writer__append(w, MCPT_T_EVENT, &ev.base, ev.ts);
	}
	return err;
}

static int write_pub(const char *dir, const struct mcpt_signer *s)
{
	struct mcpt_pubkey key;
	uint8_t blob[42];
	char b64[sodium_base64_ENCODED_LEN(42, sodium_base64_VARIANT_ORIGINAL)], kid[17],
		path[4096];
	FILE *f;

	mcpt_signer_pubkey(s, &key);
	memcpy(blob, "Ed", 2);
	memcpy(blob + 2, key.key_id, 8);
	memcpy(blob + 10, key.pk, 32);
	sodium_bin2base64(b64, sizeof(b64), blob, sizeof(blob), sodium_base64_VARIANT_ORIGINAL);
	mcpt_key_id_hex(key.key_id, kid);
	snprintf(path, sizeof(path), "%s/test.pub", dir);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f, "untrusted comment: mcpwitness trace public key %s\n%s\n", kid, b64);
	return fclose(f);
}

int main(int argc, char **argv)
{
	static const uint8_t seed[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
					 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	Mcpt__Header h = MCPT__HEADER__INIT;
	struct mcpt_clock c = {mono, sample, NULL};
	uint8_t tid[16] = {0x33};
	struct mcpt_writer_opts o = {.clock = &c,
				     .trace_id = tid,
				     .max_segment_records = 90,
				     .chunk_records = 16,
				     .chunk_bytes = 1024};
	struct mcpt_signer *s = mcpt_signer_from_seed(seed);
	struct mcpt_writer *w = NULL;
	char path[4096];
	int fd = -1, err = -1;

	if (argc != 2) {
		fprintf(stderr, "usage: mktrace DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/multi.mcpt", argv[1]);
	h.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && s)
		w = mcpt_writer__new(fd, &h, s, &o);
	if (w && events(w) == 0 && mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN) == 0)
		err = write_pub(argv[1], s);
	if (err)
		perror(path);
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	if (fd >= 0)
		close(fd);
	return err ? 1 : 0;
}
