/*
 * check_trace_writer.c - when the writer writes, seals and syncs: seal cadence on an injected
 * clock (segment 0 sealed within max_segment_ns, 1 s rule, 10 s heartbeat, MARK rate limit,
 * count rule), buffering (64 KiB / 100 ms), seal syncs paced to 100 ms (spaced further after a
 * slow sync; with fsync_seals off only the FINAL seal is synced), and the real clocks with
 * fsync on a regular file. Write errors, API misuse and the golden trace:
 * check_trace_writer_output.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer_testlib.h"

Suite *trace_writer_suite(void);

struct flags_seen {
	uint32_t flags[64];
	size_t n;
};

static int seal_flags(void *ctx, const struct mcpt_record *r)
{
	struct flags_seen *fs = ctx;
	Mcpt__Seal *s;
	Mcpt__SealStatement *st;

	if (r->type != MCPT_T_SEAL || fs->n == 64)
		return 0;
	s = mcpt__seal__unpack(NULL, r->body_len, r->body);
	ck_assert_ptr_nonnull(s);
	st = mcpt__seal_statement__unpack(NULL, s->statement.len, s->statement.data);
	ck_assert_ptr_nonnull(st);
	fs->flags[fs->n++] = st->flags;
	mcpt__seal_statement__free_unpacked(st, NULL);
	mcpt__seal__free_unpacked(s, NULL);
	return 0;
}

static void verify_flags(int fd, struct flags_seen *fs)
{
	struct tl_verify vo = {.key = 1};
	struct mcpt_report rep;
	struct tl_bytes t;

	tl_slurp(fd, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, seal_flags, fs, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
}

START_TEST(test_cadence)
{
	struct mcpt_signer *s = tl_signer(1);
	struct flags_seen fs = {0};
	struct tl_clock clk;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w = tw_writer(fd, &clk, s, NULL);
	const uint32_t want[] = {
		0, 0, MCPT_SEAL_HEARTBEAT, MCPT_SEAL_MARK, MCPT_SEAL_MARK, MCPT_SEAL_FINAL};

	ck_assert_ptr_nonnull(w);
	clk.now += 500 * MS;
	ck_assert_int_eq(mcpt_writer__tick(w), 100);
	ck_assert_uint_eq(mcpt_writer__seals(w), 0);
	clk.now += 500 * MS; /* the empty segment 0 is sealed: the Header is covered */
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 1);
	ck_assert_int_eq(tl_append_event(w, 0), 0);
	clk.now += 999 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 1);
	clk.now += 1 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 2);
	clk.now += 9999 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 2);
	clk.now += 1 * MS; /* idle 10 s: heartbeat, empty segment */
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 3);
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0); /* too soon: held back */
	ck_assert_uint_eq(mcpt_writer__seals(w), 3);
	clk.now += 5 * MS;
	ck_assert_int_eq(mcpt_writer__tick(w), 5);
	ck_assert_uint_eq(mcpt_writer__seals(w), 3);
	clk.now += 5 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 4);
	clk.now += 20 * MS;
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 5);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 6);
	mcpt_writer__free(w);
	verify_flags(fd, &fs);
	ck_assert_uint_eq(fs.n, 6);
	ck_assert_mem_eq(fs.flags, want, sizeof(want));
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

START_TEST(test_count_rule)
{
	struct mcpt_writer_opts wo = {.max_segment_records = 10};
	struct mcpt_signer *s = tl_signer(1);
	struct flags_seen fs = {0};
	struct tl_clock clk;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w = tw_writer(fd, &clk, s, &wo);

	for (uint64_t i = 0; i < 25; i++)
		ck_assert_int_eq(tl_append_event(w, i), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 2);
	ck_assert_uint_eq(mcpt_writer__records(w), 1 + 25 + 2);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_TARGET_EXITED), 0);
	mcpt_writer__free(w);
	verify_flags(fd, &fs);
	ck_assert_uint_eq(fs.n, 3);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

static int pending(int fd)
{
	int n = -1;

	ck_assert_int_eq(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

START_TEST(test_buffering)
{
	struct mcpt_writer_opts wo = {.flush_bytes = 1024};
	struct mcpt_signer *s = tl_signer(1);
	struct tl_clock clk;
	int p[2], head;
	struct mcpt_writer *w;

	ck_assert_int_eq(pipe(p), 0);
	w = tw_writer(p[1], &clk, s, &wo);
	head = pending(p[0]); /* the Header is written at once */
	ck_assert_int_gt(head, 12);
	ck_assert_int_eq(tl_append_event(w, 0), 0);
	ck_assert_int_eq(pending(p[0]), head);
	clk.now += 60 * MS;
	ck_assert_int_eq(mcpt_writer__tick(w), 40);
	ck_assert_int_eq(pending(p[0]), head);
	clk.now += 40 * MS; /* 100 ms old: written */
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_int_gt(pending(p[0]), head);
	head = pending(p[0]);
	for (uint64_t i = 1; pending(p[0]) == head; i++) {
		ck_assert_uint_lt(i, 40); /* 1 KiB threshold reached within a few records */
		ck_assert_int_eq(tl_append_event(w, i), 0);
	}
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* Real clocks, fsync on, a regular file: what the collector does. */
START_TEST(test_real_file)
{
	struct mcpt_signer *s = tl_signer(1);
	struct tl_verify vo = {.key = 1};
	char path[] = "/tmp/mcpt-real-XXXXXX";
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct mcpt_report rep;
	struct tl_bytes t;
	struct mcpt_writer *w;
	uint8_t tid[16] = {0}, dig[32] = {0}, zero[32] = {0};
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	tl_header(&h, &host, &k, &cs);
	h.clock = NULL; /* the writer samples it */
	w = mcpt_writer__new(fd, &h, s, NULL);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < 100; i++)
		ck_assert_int_eq(tl_append_event(w, i), 0);
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__trace_id(w, tid);
	mcpt_writer__seal_digest(w, dig);
	ck_assert_mem_ne(dig, zero, 32);
	mcpt_writer__free(w);
	tl_slurp(fd, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_VALID_COMPLETE);
	ck_assert_mem_eq(rep.trace_id, tid, 16);
	ck_assert_mem_eq(rep.last_seal_digest, dig, 32); /* what to anchor off-host */
	mcpt_report__fini(&rep);
	tl_bytes_free(&t);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

/* ---- paced seal syncs ---- */

static uint64_t file_size(int fd)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return (uint64_t)st.st_size;
}

/* Seals of a regular file are synced at most every 100 ms; one that comes sooner is written at
 * once and synced by the tick that follows; the FINAL seal is synced at once. */
START_TEST(test_sync_paced)
{
	struct mcpt_writer_opts wo = {.fsync_seals = true};
	struct mcpt_signer *s = tl_signer(1);
	struct flags_seen fs = {0};
	struct tl_clock clk;
	int fd = memfd_create("t", 0); /* a regular file: fdatasync succeeds */
	struct mcpt_writer *w = tw_writer(fd, &clk, s, &wo);
	uint64_t size;

	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 0);
	clk.now += 1000 * MS; /* seal 0: the first sync is never held */
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 1);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1);
	clk.now += 20 * MS;
	ck_assert_int_eq(tl_append_event(w, 0), 0);
	size = file_size(fd);
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 2);
	ck_assert_uint_gt(file_size(fd), size);	     /* written at once */
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1); /* synced later */
	ck_assert_int_eq(mcpt_writer__tick(w), 80);  /* the sync is the next deadline */
	clk.now += 79 * MS;
	ck_assert_int_eq(mcpt_writer__tick(w), 1);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1);
	clk.now += 1 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 2);
	ck_assert_int_eq(mcpt_writer__tick(w), 100); /* nothing pending: the flush age bounds it */
	/* 30 seals 10 ms apart: every tenth is synced when it is made */
	for (uint64_t i = 1; i <= 30; i++) {
		clk.now += 10 * MS;
		ck_assert_int_eq(tl_append_event(w, i), 0);
		ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
		ck_assert_uint_eq(mcpt_writer__syncs(w), 2 + i / 10);
	}
	ck_assert_uint_eq(mcpt_writer__seals(w), 32);
	clk.now += 11 * MS;
	ck_assert_int_eq(tl_append_event(w, 31), 0);
	ck_assert_int_eq(mcpt_writer__seal(w, MCPT_SEAL_MARK), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 5);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 6); /* FINAL: at once */
	mcpt_writer__free(w);
	verify_flags(fd, &fs);
	ck_assert_uint_eq(fs.n, 34);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

/* A clock that moves by step at every reading: a sync then takes (at least) step. */
struct step_clock {
	struct tl_clock c; /* first: the sample callback takes the context as a tl_clock */
	uint64_t step;
};

static uint64_t step_mono(void *ctx)
{
	struct step_clock *k = ctx;

	k->c.now += k->step;
	return k->c.now;
}

/* A sync that took long spaces the next one by four times its duration (here 4 x 50 ms), so
 * a slow disk holds the collector for at most a fifth of its time; a quick one brings the gap
 * back to 100 ms. */
START_TEST(test_sync_gap_follows_slow_sync)
{
	struct mcpt_writer_opts wo = {.fsync_seals = true};
	struct mcpt_signer *s = tl_signer(1);
	struct step_clock k = {.step = 0};
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel kern;
	Mcpt__ClockSample cs;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w;

	tl_clock_init(&k.c, 5 * MS);
	k.c.clock.monotonic_ns = step_mono;
	wo.clock = &k.c.clock;
	tl_header(&h, &host, &kern, &cs);
	w = mcpt_writer__new(fd, &h, s, &wo);
	ck_assert_ptr_nonnull(w);
	k.c.now += 1000 * MS;
	k.step = 50 * MS;
	ck_assert_int_eq(mcpt_writer__seal(w, 0), 0); /* seal 0, synced in 50 ms */
	k.step = 0;
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1);
	k.c.now += 150 * MS;
	ck_assert_int_eq(tl_append_event(w, 0), 0);
	ck_assert_int_eq(mcpt_writer__seal(w, 0), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1); /* 150 ms < 4 x 50 ms */
	ck_assert_int_eq(mcpt_writer__tick(w), 50);
	k.c.now += 50 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 2); /* a quick one: 100 ms again */
	k.c.now += 100 * MS;
	ck_assert_int_eq(tl_append_event(w, 1), 0);
	ck_assert_int_eq(mcpt_writer__seal(w, 0), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 3);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

/* fsync_seals off: seals are not synced, the FINAL one still is (fsync). */
START_TEST(test_sync_off)
{
	struct mcpt_signer *s = tl_signer(1);
	struct tl_clock clk;
	int fd = memfd_create("t", 0);
	struct mcpt_writer *w = tw_writer(fd, &clk, s, NULL);

	ck_assert_ptr_nonnull(w);
	clk.now += 1000 * MS;
	ck_assert_int_ge(mcpt_writer__tick(w), 0);
	ck_assert_int_eq(mcpt_writer__seal(w, 0), 0);
	ck_assert_uint_eq(mcpt_writer__seals(w), 2);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 0);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	ck_assert_uint_eq(mcpt_writer__syncs(w), 1);
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

Suite *trace_writer_suite(void)
{
	Suite *s = suite_create("trace_writer");
	TCase *cad = tcase_create("cadence");

	tcase_add_test(cad, test_cadence);
	tcase_add_test(cad, test_count_rule);
	tcase_add_test(cad, test_buffering);
	tcase_add_test(cad, test_real_file);
	tcase_add_test(cad, test_sync_paced);
	tcase_add_test(cad, test_sync_gap_follows_slow_sync);
	tcase_add_test(cad, test_sync_off);
	suite_add_tcase(s, cad);
	return s;
}
