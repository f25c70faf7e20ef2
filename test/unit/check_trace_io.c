/*
 * check_trace_io.c - the verifier's input side and its outputs: a pipe fed in random small
 * pieces with SIGALRM interrupting reads (EINTR) and one fed one byte per write() give the same
 * report as a file; 3 million tiny records through a pipe leave memory flat; a record exactly at
 * the 16 MiB hard cap is written and verified, one byte more is refused; mcpt_write_all goes on
 * after short writes and EINTR and returns the errno of a full device or a closed pipe; the
 * human and JSON renderings, verdict names and exit codes.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *trace_io_suite(void);

static void same_report(const struct mcpt_report *a, const struct mcpt_report *b)
{
	ck_assert_int_eq(a->verdict, b->verdict);
	ck_assert_int_eq(a->code, b->code);
	ck_assert_uint_eq(a->records, b->records);
	ck_assert_uint_eq(a->bytes, b->bytes);
	ck_assert_uint_eq(a->seals_ok, b->seals_ok);
	ck_assert_uint_eq(a->verified_through_record, b->verified_through_record);
	ck_assert_str_eq(a->message, b->message);
}

START_TEST(test_pipe_short_reads_eintr)
{
	struct tl_trace_opts o = {.n = 2000, .seg_max = 300, .key = 1};
	struct tl_verify vo = {.key = 1, .hold = (bool)_i};
	struct mcpt_report a, b;
	struct tl_bytes t;
	size_t cut[] = {0, 5, 777, 4321};

	tl_make_trace(&o, &t);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		ck_assert_int_eq(tl_verify(t.p, t.len - cut[i], &vo, NULL, NULL, &a), 0);
		ck_assert_int_eq(tl_verify_pipe(t.p, t.len - cut[i], &vo, 7, &b), 0);
		same_report(&a, &b);
		mcpt_report__fini(&a);
		mcpt_report__fini(&b);
	}
	tl_bytes_free(&t);
}
END_TEST

/* Every byte boundary: the child writes the trace one byte per write(). */
START_TEST(test_pipe_every_byte)
{
	struct tl_trace_opts o = {.n = 40, .seg_max = 9, .key = 1};
	struct tl_verify vo = {.key = 1};
	struct mcpt_report a, b;
	struct tl_bytes t;

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &a), 0);
	ck_assert_int_eq(tl_verify_pipe(t.p, t.len, &vo, 1, &b), 0);
	ck_assert_int_eq(b.verdict, MCPT_VALID_COMPLETE);
	same_report(&a, &b);
	mcpt_report__fini(&a);
	mcpt_report__fini(&b);
	tl_bytes_free(&t);
}
END_TEST

static long maxrss_kb(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* 3 million 3-byte records streamed through a pipe: memory stays flat (TRACE-FORMAT.md 5.14). */
START_TEST(test_long_stream_constant_memory)
{
	static uint8_t chunk[3 * 20000];
	const uint64_t n = 3000000;
	struct tl_verify vo = {.key = 1};
	struct mcpt_verify_opts o = {0};
	struct mcpt_pubkey pk;
	struct mcpt_report rep;
	struct forge f;
	int p[2], status;
	long before;
	pid_t pid;

	forge_init(&f, 1, 0, NULL, NULL);
	for (size_t i = 0; i < sizeof(chunk); i += 3)
		memcpy(chunk + i, "\x02\x12\x00", 3); /* an empty Event */
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		if (write(p[1], f.out.p, f.out.len) != (ssize_t)f.out.len)
			_exit(1);
		for (uint64_t i = 0; i < n / 20000; i++)
			if (write(p[1], chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
				_exit(1);
		_exit(0);
	}
	close(p[1]);
	tl_pubkey(vo.key, &pk);
	o.key = &pk;
	before = maxrss_kb();
	ck_assert_int_eq(mcpt_verify(p[0], &o, NULL, NULL, &rep), 0);
	ck_assert_int_lt(maxrss_kb() - before, 8 * 1024); /* well below the 9 MB read */
	ck_assert_int_eq(rep.code, MCPT_E_UNVERIFIED);
	ck_assert_uint_eq(rep.records, n + 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mcpt_report__fini(&rep);
	close(p[0]);
	forge_fini(&f);
}
END_TEST

/* One record exactly at the 16 MiB hard cap goes through; one byte more is refused. */
START_TEST(test_record_at_hard_cap)
{
	struct mcpt_writer_opts wo = {.max_record_len = MCPT_HARD_RECORD_LEN};
	const size_t body = MCPT_HARD_RECORD_LEN - 6; /* 2-byte tag, 4-byte inner length */
	struct mcpt_signer *s = tl_signer(1);
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_clock clk;
	struct tl_bytes t;
	uint8_t *blob = calloc(1, body + 1);
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct mcpt_writer *w;
	int fd = memfd_create("big", 0);

	ck_assert_ptr_nonnull(blob);
	tl_clock_init(&clk, 1);
	wo.clock = &clk.clock;
	tl_header(&h, &host, &k, &cs);
	w = mcpt_writer__new(fd, &h, s, &wo);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1024, blob, body + 1, 0), -EMSGSIZE);
	ck_assert_int_eq(mcpt_writer__append_raw(w, 1024, blob, body, 0), 0);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(w);
	tl_slurp(fd, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
	free(blob);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

START_TEST(test_report_renderings)
{
	struct tl_trace_opts o = {.n = 120, .seg_max = 50, .key = 1, .no_final = true};
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;
	char *buf = NULL;
	size_t len = 0;
	json_error_t jerr;
	json_t *j;
	FILE *f;

	tl_make_trace(&o, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	f = open_memstream(&buf, &len);
	mcpt_report_print(f, &rep);
	fclose(f);
	ck_assert_ptr_nonnull(
		strstr(buf, "VALID_PREFIX: verified through record 102; 20 records ("));
	ck_assert_ptr_nonnull(strstr(buf, "warning W_UNSEALED_TAIL"));
	free(buf);
	f = open_memstream(&buf, &len);
	mcpt_report_print_json(f, &rep);
	fclose(f);
	ck_assert_ptr_null(strchr(buf, '\n'));
	j = json_loads(buf, 0, &jerr);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "VALID_PREFIX");
	ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "E_NO_FINAL");
	ck_assert_int_eq(json_integer_value(json_object_get(j, "exit_code")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "verified_through_record")), 102);
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(j, "unsealed_tail"), "records")),
		20);
	json_decref(j);
	free(buf);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}
END_TEST

/* ---- mcpt_write_all ---- */

static void on_tick(int sig)
{
	(void)sig;
}

#define WA_BYTES (4u << 20)

/* Reads fd to its end: exit 0 when it held exactly WA_BYTES bytes of the pattern. */
static void wa_reader(int fd)
{
	static uint8_t buf[4096];
	size_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(2);
		}
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != (uint8_t)((total + (size_t)i) * 7))
				_exit(3);
		total += (size_t)n;
		usleep(50); /* a slow reader: the writer blocks, the ticks interrupt it */
	}
	_exit(total == WA_BYTES ? 0 : 4);
}

/* Short writes and EINTR (a 1 ms timer without SA_RESTART, a slow reader) lose no byte; a
 * full device and a closed pipe give their errno. */
START_TEST(test_write_all)
{
	struct sigaction sa = {.sa_handler = on_tick}, old_sa;
	struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	uint8_t *p = malloc(WA_BYTES);
	int pfd[2], st, fd;
	pid_t pid;

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < WA_BYTES; i++)
		p[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[1]);
		wa_reader(pfd[0]);
	}
	close(pfd[0]);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, &old_sa), 0); /* no SA_RESTART */
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	ck_assert_int_eq(mcpt_write_all(pfd[1], p, WA_BYTES), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	close(pfd[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(mcpt_write_all(fd, p, 100), -ENOSPC);
	close(fd);
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(pfd), 0);
	close(pfd[0]);
	ck_assert_int_eq(mcpt_write_all(pfd[1], p, 100), -EPIPE);
	close(pfd[1]);
	ck_assert_int_eq(mcpt_write_all(1, p, 0), 0); /* nothing to write: no write at all */
	free(p);
}
END_TEST

START_TEST(test_names_and_exit_codes)
{
	ck_assert_int_eq(mcpt_verdict_exit_code(MCPT_VALID_COMPLETE), 0);
	ck_assert_int_eq(mcpt_verdict_exit_code(MCPT_INVALID), 1);
	ck_assert_int_eq(mcpt_verdict_exit_code(MCPT_WRONG_KEY), 3);
	ck_assert_int_eq(mcpt_verdict_exit_code(MCPT_UNSUPPORTED), 4);
	ck_assert_int_eq(mcpt_verdict_exit_code(MCPT_VALID_PREFIX), 5);
	for (int a = 0; a < MCPT_CODE_COUNT; a++) {
		ck_assert_str_ne(mcpt_code_name(a), "E_UNKNOWN");
		for (int b = 0; b < a; b++)
			ck_assert_str_ne(mcpt_code_name(a), mcpt_code_name(b));
	}
	ck_assert_str_eq(mcpt_code_name(MCPT_CODE_COUNT), "E_UNKNOWN");
	ck_assert_str_eq(mcpt_verdict_name(MCPT_UNSUPPORTED), "UNSUPPORTED");
}
END_TEST

Suite *trace_io_suite(void)
{
	Suite *s = suite_create("trace_io");
	TCase *io = tcase_create("io"), *out = tcase_create("output");

	tcase_set_timeout(io, 120);
	tcase_add_loop_test(io, test_pipe_short_reads_eintr, 0, 2);
	tcase_add_test(io, test_pipe_every_byte);
	tcase_add_test(io, test_long_stream_constant_memory);
	tcase_add_test(io, test_record_at_hard_cap);
	tcase_add_test(io, test_write_all);
	tcase_add_test(out, test_report_renderings);
	tcase_add_test(out, test_names_and_exit_codes);
	suite_add_tcase(s, io);
	suite_add_tcase(s, out);
	return s;
}
