/*
 * check_session.c - the collector's record loop (collector/session.c) on records a kernel
 * never sends it: a record whose own lengths do not add up, or that is shorter than its header,
 * is not written but counted as lost in user space (USER_QUEUE), in a Loss record that carries
 * its sequence number and in the totals of the seals that follow, so the trace does not read
 * as complete. The session runs for real (signalfd, epoll, the trace writer on a memfd); only
 * the BPF side is absent, and no loop turn runs. Also the window of the scan that writes a
 * call still blocked as an entry-time record (collector/pending.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "encode.h"
#include "options.h"
#include "pending.h"
#include "session.h"
#include "trace_testlib.h"

struct seen {
	uint64_t events, stdio, losses, delta, first_seq, last_seq;
	Mcpt__LossSource src;
};

static int on_rec(void *ctx, const struct mcpt_record *r)
{
	struct seen *s = ctx;
	Mcpt__Loss *l;

	if (r->type == MCPT_T_EVENT)
		s->events++;
	if (r->type == MCPT_T_STDIO)
		s->stdio++;
	if (r->type != MCPT_T_LOSS)
		return 0;
	l = mcpt__loss__unpack(NULL, r->body_len, r->body);
	ck_assert_ptr_nonnull(l);
	s->losses++;
	s->src = l->src;
	s->delta += l->delta;
	s->first_seq = l->first_seq;
	s->last_seq = l->last_seq;
	mcpt__loss__free_unpacked(l, NULL);
	return 0;
}

/* A record of op with one slot of n bytes, sequence number seq. */
static struct mw_event *record(uint16_t op, uint64_t seq, size_t n, size_t *size)
{
	struct mw_event *e = calloc(1, MW_EVENT_HDR_SIZE + n + 8);

	ck_assert_ptr_nonnull(e);
	e->ts = 1000 + seq;
	e->seq = seq;
	e->tgid = e->tid = 4242;
	e->op = op;
	e->slen[0] = (uint16_t)n;
	memset(e->data, 'a', n);
	*size = MW_EVENT_HDR_SIZE + n;
	e->size = (uint16_t)*size;
	return e;
}

/* Finishes the trace, ends the session and verifies what was written. */
static void run(struct session *s, struct mcpt_writer *w, int fd, struct seen *seen,
		struct mcpt_report *rep)
{
	struct tl_verify vo = {.key = 1};
	struct tl_bytes t;

	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(w);
	s->writer = NULL;
	tl_slurp(fd, &t);
	ck_assert_int_eq(tl_verify(t.p, t.len, &vo, on_rec, seen, rep), 0);
	ck_assert_int_eq(rep->verdict, MCPT_VALID_COMPLETE);
	tl_bytes_free(&t);
	session_fini(s);
}

static struct mcpt_writer *open_writer(int fd, struct mcpt_signer *sg)
{
	static Mcpt__Header h;
	static Mcpt__Host host;
	static Mcpt__Kernel k;
	static Mcpt__ClockSample cs;
	struct mcpt_writer_opts wo = {.value_table = true};

	tl_header(&h, &host, &k, &cs);
	return mcpt_writer__new(fd, &h, sg, &wo);
}

/* A session on its signals and epoll set, writing to fd, signed with sg; no BPF loaded. */
static void start(struct session *s, struct options *opts, int fd, struct mcpt_signer *sg)
{
	memset(opts, 0, sizeof(*opts));
	ck_assert_int_eq(session_init(s, opts), 0);
	s->writer = open_writer(fd, sg);
	ck_assert_ptr_nonnull(s->writer);
}

START_TEST(test_malformed_records_are_losses)
{
	struct mcpt_signer *sg = tl_signer(1);
	struct options opts;
	struct session s;
	struct seen seen = {0};
	struct mcpt_report rep;
	struct mw_event *ok, *bad, *stdio_bad;
	size_t ok_size, bad_size, stdio_size;
	int fd = memfd_create("t", 0);

	start(&s, &opts, fd, sg);
	ok = record(MW_OP_OPENAT, 7, 5, &ok_size);
	bad = record(MW_OP_OPENAT, 8, 5, &bad_size);
	bad->slen[0] = 6; /* one byte past the record */
	stdio_bad = record(MW_OP_STDIO_WRITE, 9, 5, &stdio_size);
	stdio_bad->size = (uint16_t)(stdio_size + 1); /* claims more than was delivered */

	ck_assert_int_eq(session_on_record(&s, ok, ok_size), 0);
	ck_assert_int_eq(session_on_record(&s, bad, bad_size), 0);
	ck_assert_uint_eq(s.dropped, 1);
	ck_assert_int_eq(session_on_record(&s, stdio_bad, stdio_size), 0);
	ck_assert_uint_eq(s.dropped, 2);
	ck_assert_int_eq(session_on_record(&s, ok, MW_EVENT_HDR_SIZE - 1), 0); /* short */
	ck_assert_uint_eq(s.dropped, 3);
	ck_assert_uint_eq(s.records, 1); /* what the closing "N events recorded" line says */
	run(&s, s.writer, fd, &seen, &rep);

	ck_assert_uint_eq(seen.events, 1);
	ck_assert_uint_eq(seen.stdio, 0);
	ck_assert_uint_eq(seen.losses, 3);
	ck_assert_int_eq(seen.src, MCPT__LOSS_SOURCE__USER_QUEUE);
	ck_assert_uint_eq(seen.delta, 3);
	ck_assert_uint_eq(seen.first_seq, 0); /* the short one: no sequence number to read */
	ck_assert_uint_eq(rep.loss.user_queue, 3); /* in the sealed totals */
	mcpt_report__fini(&rep);
	free(ok);
	free(bad);
	free(stdio_bad);
	mcpt_signer_free(sg);
	close(fd);
}
END_TEST

/* The Loss record names the dropped record's own sequence number. */
START_TEST(test_loss_names_the_record)
{
	struct mcpt_signer *sg = tl_signer(1);
	struct options opts;
	struct session s;
	struct seen seen = {0};
	struct mcpt_report rep;
	size_t size;
	struct mw_event *bad = record(MW_OP_OPENAT, 123456, 5, &size);
	int fd = memfd_create("t", 0);

	start(&s, &opts, fd, sg);
	bad->size = (uint16_t)(size + 3);
	ck_assert_int_eq(session_on_record(&s, bad, size), 0);
	run(&s, s.writer, fd, &seen, &rep);
	ck_assert_uint_eq(seen.losses, 1);
	ck_assert_uint_eq(seen.first_seq, 123456);
	ck_assert_uint_eq(seen.last_seq, 123456);
	ck_assert_uint_eq(rep.loss.user_queue, 1);
	mcpt_report__fini(&rep);
	free(bad);
	mcpt_signer_free(sg);
	close(fd);
}
END_TEST

/* The pending scan's window (pending.c): a call blocked PENDING_ENTRY_MS is written by the one
 * scan whose window (from, to] holds that moment, whatever the scans' spacing; only connect,
 * accept and accept4 are. */
START_TEST(test_pending_window_writes_each_blocked_call_once)
{
	const uint64_t ms = 1000000ull, entry = 1000 * ms, due = entry + PENDING_ENTRY_MS * ms;
	const uint16_t ops[] = { MW_OP_CONNECT, MW_OP_ACCEPT, MW_OP_ACCEPT4 };
	struct mw_inflight f = { .ts = entry, .op = MW_OP_CONNECT };
	uint64_t step, from, to;
	size_t i;

	ck_assert(!pending_due(&f, 0, due - 1));
	ck_assert(pending_due(&f, due - 1, due)); /* the window's end belongs to it */
	ck_assert(!pending_due(&f, due, due + 20 * ms)); /* and not to the next one */
	ck_assert(pending_due(&f, 0, due + 20 * ms)); /* the first scan: from 0 */
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (step = 1; step <= 97; step += 3) { /* scans every 1 to 97 ms */
			unsigned writes = 0;

			f.op = ops[i];
			for (from = 0, to = step * ms + 1; from < 2 * due;
			     from = to, to += step * ms)
				writes += pending_due(&f, from, to);
			ck_assert_uint_eq(writes, 1);
		}
	}
	f.op = MW_OP_OPENAT; /* stashed too, never written while it blocks */
	ck_assert(!pending_due(&f, 0, 2 * due));
}
END_TEST

Suite *session_suite(void);
Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("malformed");

	tcase_add_test(tc, test_malformed_records_are_losses);
	tcase_add_test(tc, test_loss_names_the_record);
	tcase_add_test(tc, test_pending_window_writes_each_blocked_call_once);
	suite_add_tcase(s, tc);
	return s;
}
