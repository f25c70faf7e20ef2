/*
 * check_trace_writer_output.c - what the writer refuses and the exact bytes it writes: sticky
 * write errors (EPIPE, EFBIG via RLIMIT_FSIZE with short writes, ENOSPC on /dev/full), API
 * misuse, and the golden trace: fixed seed + injected clock + fixed trace id give the same bytes
 * every run, equal to test/fixtures/golden/trace-v1.mcpt, whose BLAKE2b-256 is also pinned here.
 * MW_UPDATE_GOLDEN=1 rewrites the fixtures (then update GOLDEN_DIGEST by hand, deliberately).
 * The writer's cadence, buffering and syncs: check_trace_writer.c.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "writer_testlib.h"

Suite *trace_writer_output_suite(void);

#define GOLDEN_DIR    MW_SOURCE_DIR "/test/fixtures/golden/"
#define GOLDEN_DIGEST "6a843ad3ecb9413d4c5fbd9d46372571b65cea0348740f6881e4111b9390f926"

static void all_fail_with(struct mcpt_writer *w, int err)
{
	ck_assert_int_eq(tl_append_event(w, 99), err);
	ck_assert_int_eq(mcpt_writer__tick(w), err);
	ck_assert_int_eq(mcpt_writer__seal(w, 0), err);
	ck_assert_int_eq(mcpt_writer__set_loss(w, MCPT__LOSS_SOURCE__PERF_LOST, 1), err);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), err);
}

START_TEST(test_sticky_epipe)
{
	struct mcpt_signer *s = tl_signer(1);
	struct tl_clock clk;
	struct mcpt_writer *w;
	int p[2];

	ck_assert_ptr_ne(signal(SIGPIPE, SIG_IGN), SIG_ERR);
	ck_assert_int_eq(pipe(p), 0);
	w = tw_writer(p[1], &clk, s, NULL);
	ck_assert_ptr_nonnull(w);
	close(p[0]);
	ck_assert_int_eq(tl_append_event(w, 0), 0); /* buffered */
	ck_assert_int_eq(mcpt_writer__seal(w, 0), -EPIPE);
	all_fail_with(w, -EPIPE);
	mcpt_writer__free(w);
	close(p[1]);
	mcpt_signer_free(s);
}
END_TEST

START_TEST(test_sticky_efbig)
{
	struct rlimit rl = {8192, 8192};
	struct mcpt_writer_opts wo = {.flush_bytes = 1000};
	struct mcpt_signer *s = tl_signer(1);
	char path[] = "/tmp/mcpt-efbig-XXXXXX";
	struct tl_clock clk;
	struct mcpt_writer *w;
	int fd = mkstemp(path), err = 0;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_ptr_ne(signal(SIGXFSZ, SIG_IGN), SIG_ERR);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	w = tw_writer(fd, &clk, s, &wo);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < 1000 && !err; i++)
		err = tl_append_event(w, i);
	ck_assert_int_eq(err, -EFBIG);
	ck_assert_int_eq(lseek(fd, 0, SEEK_END), 8192); /* the short write went through */
	all_fail_with(w, -EFBIG);
	mcpt_writer__free(w);
	close(fd);
	mcpt_signer_free(s);
}
END_TEST

START_TEST(test_enospc_at_open)
{
	struct mcpt_signer *s = tl_signer(1);
	struct tl_clock clk;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	errno = 0;
	ck_assert_ptr_null(tw_writer(fd, &clk, s, NULL));
	ck_assert_int_eq(errno, ENOSPC);
	close(fd);
	mcpt_signer_free(s);
}
END_TEST

START_TEST(test_api_misuse)
{
	struct mcpt_writer_opts bad[] = {
		{.chunk_records = 65537}, {.chunk_bytes = 100},
		{.max_record_len = 100},  {.max_record_len = (16u << 20) + 1},
		{.heartbeat_ns = 1000},	  {.max_segment_records = (1u << 24) + 1},
	};
	struct mcpt_writer_opts wo = {.max_record_len = 1024};
	struct mcpt_signer *s = tl_signer(1);
	Mcpt__Mark mark = MCPT__MARK__INIT;
	uint8_t big[2000] = {0};
	struct tl_clock clk;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ck_assert_ptr_null(tw_writer(fd, &clk, s, &bad[i]));
		ck_assert_int_eq(errno, EINVAL);
	}
	w = tw_writer(fd, &clk, s, &wo);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_EVENT, &mark.base, 0), -EINVAL);
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_SEAL, &mark.base, 0), -EINVAL);
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_MARK, &mark.base, 0), 0);
	ck_assert_int_eq(mcpt_writer__append_raw(w, MCPT_T_HEADER, big, 1, 0), -EINVAL);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 0, big, 1, 0), -EINVAL);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1u << 29, big, 1, 0), -EINVAL);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1024, big, sizeof(big), 0), -EMSGSIZE);
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_FINAL), -EINVAL);
	ck_assert_int_eq(tl_append_event(w, 1), 0); /* EMSGSIZE was not sticky */
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	ck_assert_int_eq(tl_append_event(w, 2), -EINVAL);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), -EINVAL);
	ck_assert_int_eq(mcpt_writer__tick(w), -EINVAL);
	mcpt_writer__free(w);
	mcpt_writer__free(NULL);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

START_TEST(test_big_header)
{
	static uint8_t huge[70000];
	struct mcpt_signer *s = tl_signer(1);
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	int fd = memfd_create("t", 0);

	tl_header(&h, &host, &k, &cs);
	h.challenge = (ProtobufCBinaryData){sizeof(huge), huge};
	errno = 0;
	ck_assert_ptr_null(mcpt_writer__new(fd, &h, s, NULL));
	ck_assert_int_eq(errno, EMSGSIZE);
	h.challenge.len = 0;
	h.incompatible_features = 1;
	ck_assert_ptr_null(mcpt_writer__new(fd, &h, s, NULL));
	ck_assert_int_eq(errno, EINVAL);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

/* ---- golden ---- */

static void golden_records(struct mcpt_writer *w, struct tl_clock *clk)
{
	Mcpt__Mark mk = MCPT__MARK__INIT;
	Mcpt__StdioFrame sf = MCPT__STDIO_FRAME__INIT;
	Mcpt__Loss loss = MCPT__LOSS__INIT;
	Mcpt__Annotation note = MCPT__ANNOTATION__INIT;
	static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n";

	for (uint64_t i = 0; i < 3; i++)
		ck_assert_int_eq(tl_append_event(w, i), 0);
	sf.ts = 2000000;
	sf.pid = 100;
	sf.dir = MCPT__STDIO_FRAME__DIR__READ;
	sf.data = (ProtobufCBinaryData){sizeof(line) - 1, (uint8_t *)line};
	sf.orig_len = sizeof(line) - 1;
	sf.last = true;
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_STDIO, &sf.base, sf.ts), 0);
	mk.ts = 2000100;
	mk.phase = MCPT__MARK__PHASE__BEGIN;
	mk.tool = (ProtobufCBinaryData){9, (uint8_t *)"read_file"};
	mk.source = MCPT__MARK__SOURCE__STDIO_PARSE;
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_MARK, &mk.base, mk.ts), 0);
	mk.phase = MCPT__MARK__PHASE__END;
	mk.ts = 2000200;
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_MARK, &mk.base, mk.ts), 0);
	clk->now += 20 * MS;
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
	loss.src = MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL;
	loss.delta = loss.cumulative = 3;
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_LOSS, &loss.base, 0), 0);
	ck_assert_int_eq(mcpt_writer__set_loss(w, MCPT__LOSS_SOURCE__RINGBUF_RESERVE_FAIL, 3), 0);
	clk->now += 1000 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	clk->now += 10000 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	note.kind = (char *)"operator";
	note.text = (ProtobufCBinaryData){6, (uint8_t *)"golden"};
	ck_assert_int_eq(mcpt_writer__append(w, MCPT_T_NOTE, &note.base, 0), 0);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1030, (const uint8_t *)"\x08\x2a", 2, 0), 0);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
}

static void golden_trace(struct tl_bytes *out)
{
	Mcpt__Collector col = MCPT__COLLECTOR__INIT;
	Mcpt__Target tg = MCPT__TARGET__INIT;
	ProtobufCBinaryData argv[2] = {{6, (uint8_t *)"server"}, {7, (uint8_t *)"--stdio"}};
	struct mcpt_writer_opts wo = {0};
	struct mcpt_signer *s = tl_signer(0x42);
	uint8_t tid[16];
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct tl_clock clk;
	struct mcpt_writer *w;
	int fd = memfd_create("golden", 0);

	memset(tid, 0xa5, sizeof(tid));
	tl_clock_init(&clk, 1000000000);
	tl_header(&h, &host, &k, &cs);
	col.name = (char *)"mcpwitness-collect";
	col.version = (char *)"golden";
	tg.n_argv = 2;
	tg.argv = argv;
	h.collector = &col;
	h.target = &tg;
	wo.trace_id = tid;
	wo.clock = &clk.clock;
	w = mcpt_writer__new(fd, &h, s, &wo);
	ck_assert_ptr_nonnull(w);
	golden_records(w, &clk);
	mcpt_writer__free(w);
	tl_slurp(fd, out);
	close(fd);
	mcpt_signer_free(s);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static void golden_pub_text(char *out, size_t cap)
{
	struct mcpt_pubkey pk;
	uint8_t blob[42];
	char hex[17];
	int n;

	tl_pubkey(0x42, &pk);
	mcpt_key_id_hex(pk.key_id, hex);
	memcpy(blob, "Ed", 2);
	memcpy(blob + 2, pk.key_id, 8);
	memcpy(blob + 10, pk.pk, 32);
	n = snprintf(out, cap, "untrusted comment: mcpwitness trace public key %s\n", hex);
	sodium_bin2base64(out + n, cap - (size_t)n, blob, sizeof(blob),
			  sodium_base64_VARIANT_ORIGINAL);
	strcat(out, "\n");
}

static char *golden_json(const uint8_t *p, size_t n)
{
	struct mcpt_verify_opts vo = {0};
	struct mcpt_pubkey pk;
	struct mcpt_report rep;
	char err[256], *buf = NULL;
	size_t len = 0;
	int fd = tl_memfd(p, n);
	FILE *f;

	ck_assert_int_eq(mcpt_pubkey_load(&pk, GOLDEN_DIR "golden.pub", err, sizeof(err)), 0);
	vo.key = &pk;
	ck_assert_int_eq(mcpt_verify(fd, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	f = open_memstream(&buf, &len);
	mcpt_report_print_json(f, &rep);
	fclose(f);
	mcpt_report__fini(&rep);
	close(fd);
	return buf;
}

static void read_file(const char *path, struct tl_bytes *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "missing %s (MW_UPDATE_GOLDEN=1 creates it)", path);
	tl_slurp(fd, out);
	out->p[out->len] = '\0';
	close(fd);
}

START_TEST(test_golden)
{
	struct tl_bytes a, b, file, json;
	uint8_t dig[32];
	char hex[65], pub[256], *got;

	golden_trace(&a);
	golden_trace(&b);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert_mem_eq(a.p, b.p, a.len); /* deterministic run after run */
	if (getenv("MW_UPDATE_GOLDEN")) {
		golden_pub_text(pub, sizeof(pub));
		write_file(GOLDEN_DIR "golden.pub", pub, strlen(pub));
		write_file(GOLDEN_DIR "trace-v1.mcpt", a.p, a.len);
		got = golden_json(a.p, a.len);
		write_file(GOLDEN_DIR "trace-v1.verify.json", got, strlen(got));
		free(got);
	}
	crypto_generichash(dig, 32, a.p, a.len, NULL, 0);
	sodium_bin2hex(hex, sizeof(hex), dig, 32);
	ck_assert_msg(strcmp(hex, GOLDEN_DIGEST) == 0, "golden digest changed: %s", hex);
	read_file(GOLDEN_DIR "trace-v1.mcpt", &file);
	ck_assert_uint_eq(file.len, a.len);
	ck_assert_mem_eq(file.p, a.p, a.len);
	read_file(GOLDEN_DIR "trace-v1.verify.json", &json);
	got = golden_json(file.p, file.len);
	ck_assert_str_eq(got, (char *)json.p);
	free(got);
	tl_bytes_free(&a);
	tl_bytes_free(&b);
	tl_bytes_free(&file);
	tl_bytes_free(&json);
}
END_TEST

Suite *trace_writer_output_suite(void)
{
	Suite *s = suite_create("trace_writer_output");
	TCase *err = tcase_create("errors"), *gold = tcase_create("golden");

	tcase_add_test(err, test_sticky_epipe);
	tcase_add_test(err, test_sticky_efbig);
	tcase_add_test(err, test_enospc_at_open);
	tcase_add_test(err, test_api_misuse);
	tcase_add_test(err, test_big_header);
	tcase_add_test(gold, test_golden);
	suite_add_tcase(s, err);
	suite_add_tcase(s, gold);
	return s;
}
