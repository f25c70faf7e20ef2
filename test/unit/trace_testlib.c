/*
 * trace_testlib.c - see trace_testlib.h. Test code: failures abort the test with ck_assert.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace_testlib.h"

static uint64_t fake_mono(void *ctx)
{
	return ((struct tl_clock *)ctx)->now;
}

void tl_clock_fill(uint64_t now, Mcpt__ClockSample *cs)
{
	cs->realtime_ns = 1700000000000000000ull + now;
	cs->boottime_before_ns = now + 1000;
	cs->boottime_after_ns = now + 2000;
	cs->monotonic_ns = now;
	cs->ntp_synced = true;
	cs->esterror_us = 100;
}

static void fake_sample(void *ctx, Mcpt__ClockSample *cs)
{
	tl_clock_fill(((struct tl_clock *)ctx)->now, cs);
}

void tl_clock_init(struct tl_clock *c, uint64_t start)
{
	c->now = start;
	c->clock.monotonic_ns = fake_mono;
	c->clock.sample = fake_sample;
	c->clock.ctx = c;
}

struct mcpt_signer *tl_signer(uint8_t b)
{
	uint8_t seed[32];
	struct mcpt_signer *s;

	memset(seed, b, sizeof(seed));
	s = mcpt_signer_from_seed(seed);
	ck_assert_ptr_nonnull(s);
	return s;
}

void tl_pubkey(uint8_t b, struct mcpt_pubkey *out)
{
	struct mcpt_signer *s = tl_signer(b);

	mcpt_signer_pubkey(s, out);
	mcpt_signer_free(s);
}

void tl_header(Mcpt__Header *h, Mcpt__Host *host, Mcpt__Kernel *k, Mcpt__ClockSample *cs)
{
	static uint8_t mid[16] = "0123456789abcdef", boot[16] = "fedcba9876543210";

	mcpt__header__init(h);
	mcpt__host__init(host);
	mcpt__kernel__init(k);
	mcpt__clock_sample__init(cs);
	host->machine_id = (ProtobufCBinaryData){16, mid};
	host->hostname = (ProtobufCBinaryData){4, (uint8_t *)"test"};
	k->sysname = (ProtobufCBinaryData){5, (uint8_t *)"Linux"};
	k->release = (ProtobufCBinaryData){6, (uint8_t *)"6.1.0-"};
	k->btf = true;
	h->host = host;
	h->kernel = k;
	h->boot_id = (ProtobufCBinaryData){16, boot};
	h->event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	tl_clock_fill(0, cs);
	h->clock = cs;
}

void tl_bytes_free(struct tl_bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
}

void tl_slurp(int fd, struct tl_bytes *out)
{
	off_t end = lseek(fd, 0, SEEK_END);

	ck_assert_int_ge(end, 0);
	out->len = (size_t)end;
	out->p = malloc(out->len + 1);
	ck_assert_ptr_nonnull(out->p);
	ck_assert_int_eq(pread(fd, out->p, out->len, 0), (ssize_t)out->len);
}

int tl_memfd(const uint8_t *p, size_t n)
{
	int fd = memfd_create("trace", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

int tl_append_event(struct mcpt_writer *w, uint64_t i)
{
	Mcpt__Event ev = MCPT__EVENT__INIT;
	char path[96];
	int64_t args[3] = {(int64_t)i, -1, 0x41};
	int n = snprintf(path, sizeof(path), "/tmp/file-%llu%.*s", (unsigned long long)i,
			 (int)(i % 40), "////////////////////////////////////////");

	ev.seq = i;
	ev.ts = 1000000 + i * 1000;
	ev.pid = 100 + (uint32_t)(i % 7);
	ev.tid = ev.pid;
	ev.op = MCPT__OP__OP_OPENAT;
	ev.ret = (int64_t)(i % 5) - 2;
	ev.path = (ProtobufCBinaryData){(size_t)n, (uint8_t *)path};
	ev.n_args = 3;
	ev.args = args;
	return mcpt_writer__append(w, MCPT_T_EVENT, &ev.base, ev.ts);
}

void tl_make_trace(const struct tl_trace_opts *o, struct tl_bytes *out)
{
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct tl_clock clk;
	uint8_t tid[16];
	struct mcpt_writer_opts wo = {0};
	struct mcpt_signer *s = o->key ? tl_signer(o->key) : NULL;
	struct mcpt_writer *w;
	int fd = memfd_create("trace", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	tl_clock_init(&clk, 1000000);
	tl_header(&h, &host, &k, &cs);
	memset(tid, o->trace_id_byte ? o->trace_id_byte : 0x11, sizeof(tid));
	wo.trace_id = tid;
	wo.clock = &clk.clock;
	wo.max_segment_records = o->seg_max;
	wo.chunk_records = o->chunk_records;
	wo.chunk_bytes = o->chunk_bytes;
	w = mcpt_writer__new(fd, &h, s, &wo);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < o->n; i++) {
		clk.now += 1000000;
		ck_assert_int_eq(tl_append_event(w, i), 0);
		if (o->seal_every && (i + 1) % o->seal_every == 0)
			ck_assert_int_eq(mcpt_writer__seal(w, 0), 0);
	}
	clk.now += 1000000;
	if (!o->no_final)
		ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	else
		ck_assert_int_eq(mcpt_writer__tick(w) >= 0, 1); /* flush what is buffered */
	ck_assert_int_eq(mcpt_writer_flush(w), 0);
	mcpt_writer__free(w);
	mcpt_signer_free(s);
	tl_slurp(fd, out);
	close(fd);
}

static void verify_opts(const struct tl_verify *o, struct mcpt_verify_opts *vo,
			struct mcpt_pubkey *pk)
{
	memset(vo, 0, sizeof(*vo));
	if (o && o->key) {
		tl_pubkey(o->key, pk);
		vo->key = pk;
	}
	vo->allow_unsigned = o && o->allow_unsigned;
	vo->hold_segments = o && o->hold;
	vo->hold_max_bytes = o ? o->hold_max : 0;
	vo->want_event = o ? o->want_event : NULL;
}

int tl_verify(const uint8_t *p, size_t n, const struct tl_verify *o, mcpt_record_cb cb, void *ctx,
	      struct mcpt_report *rep)
{
	struct mcpt_verify_opts vo;
	struct mcpt_pubkey pk;
	int fd = tl_memfd(p, n), err;

	verify_opts(o, &vo, &pk);
	err = mcpt_verify(fd, &vo, cb, ctx, rep);
	close(fd);
	return err;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void feed_child(int wfd, const uint8_t *p, size_t n, size_t max_piece)
{
	unsigned seed = 1;

	while (n) {
		size_t k = 1 + (size_t)rand_r(&seed) % max_piece;
		ssize_t w;

		if (k > n)
			k = n;
		w = write(wfd, p, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(1);
		p += w;
		n -= (size_t)w;
		if (rand_r(&seed) % 8 == 0)
			usleep(20);
	}
	_exit(0);
}

int tl_verify_pipe(const uint8_t *p, size_t n, const struct tl_verify *o, size_t max_piece,
		   struct mcpt_report *rep)
{
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART: reads see EINTR */
	struct itimerval it = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
	struct mcpt_verify_opts vo;
	struct mcpt_pubkey pk;
	int fds[2], err, status;
	pid_t pid;

	verify_opts(o, &vo, &pk);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		feed_child(fds[1], p, n, max_piece);
	}
	close(fds[1]);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	err = mcpt_verify(fds[0], &vo, NULL, NULL, rep);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return err;
}

/* A uvarint as protobuf defines it, with no strictness: the library is the strict one. */
static size_t get_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return 0;
}

size_t tl_frames(const uint8_t *p, size_t n, struct tl_frame *out, size_t max)
{
	size_t off = MCPT_PREAMBLE_LEN, k = 0;

	while (off < n && k < max) {
		uint64_t L, tag, inner;
		size_t a = get_varint(p + off, n - off, &L), b, c;

		ck_assert_uint_gt(a, 0);
		b = get_varint(p + off + a, n - off - a, &tag);
		c = get_varint(p + off + a + b, n - off - a - b, &inner);
		out[k] =
			(struct tl_frame){off, a + L, off + a + b + c, inner, (uint32_t)(tag >> 3)};
		off += a + L;
		k++;
	}
	ck_assert_uint_eq(off, n);
	return k;
}

uint64_t tl_header_features(const struct tl_bytes *t)
{
	size_t off = MCPT_PREAMBLE_LEN, a, b, c;
	uint64_t L, tag, inner, bits;
	Mcpt__Header *h;

	a = get_varint(t->p + off, t->len - off, &L);
	ck_assert_uint_gt(a, 0);
	b = get_varint(t->p + off + a, t->len - off - a, &tag);
	c = get_varint(t->p + off + a + b, t->len - off - a - b, &inner);
	ck_assert_uint_eq(tag >> 3, MCPT_T_HEADER);
	h = mcpt__header__unpack(NULL, inner, t->p + off + a + b + c);
	ck_assert_ptr_nonnull(h);
	bits = h->incompatible_features;
	mcpt__header__free_unpacked(h, NULL);
	return bits;
}

bool tl_has_bad(const struct mcpt_report *rep, enum mcpt_code code)
{
	for (size_t i = 0; i < rep->n_bad_segments; i++)
		if (rep->bad_segments[i].code == code)
			return true;
	return false;
}

bool tl_has_warning(const struct mcpt_report *rep, enum mcpt_code code)
{
	for (size_t i = 0; i < rep->n_warnings; i++)
		if (rep->warnings[i].code == code)
			return true;
	return false;
}

void tl_tab_open(struct tl_tab *f, uint32_t chunk_records, uint32_t seg_max, bool values,
		 bool tasks)
{
	struct mcpt_writer_opts wo = {.value_table = values, .task_table = tasks};

	tl_tab_open_opts(f, chunk_records, seg_max, wo, 1000000);
}

void tl_tab_open_opts(struct tl_tab *f, uint32_t chunk_records, uint32_t seg_max,
		      struct mcpt_writer_opts wo, uint64_t clock_start)
{
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	uint8_t tid[16];

	memset(tid, 0x33, sizeof(tid));
	f->fd = memfd_create("tab", MFD_CLOEXEC);
	ck_assert_int_ge(f->fd, 0);
	tl_clock_init(&f->clk, clock_start);
	tl_header(&h, &host, &k, &cs);
	wo.trace_id = tid;
	wo.clock = &f->clk.clock;
	wo.chunk_records = chunk_records;
	wo.chunk_bytes = MCPT_CHUNK_BYTES_MAX;
	wo.max_segment_records = seg_max;
	f->s = tl_signer(1);
	f->w = mcpt_writer__new(f->fd, &h, f->s, &wo);
	ck_assert_ptr_nonnull(f->w);
}

void tl_tab_close(struct tl_tab *f, struct tl_bytes *out)
{
	ck_assert_int_eq(mcpt_writer__finish(f->w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(f->w);
	mcpt_signer_free(f->s);
	tl_slurp(f->fd, out);
	close(f->fd);
}

uint64_t tl_tab_put(struct tl_tab *f, Mcpt__Event *e)
{
	f->clk.now += 1000;
	return tl_tab_put_at(f, e, f->clk.now);
}

uint64_t tl_tab_put_at(struct tl_tab *f, Mcpt__Event *e, uint64_t ts)
{
	uint64_t before = mcpt_writer__records(f->w);

	e->ts = ts;
	ck_assert_int_eq(mcpt_writer__event_refs(f->w, e), 0);
	before = mcpt_writer__records(f->w) - before;
	ck_assert_int_eq(mcpt_writer__append(f->w, MCPT_T_EVENT, &e->base, ts), 0);
	return before;
}

static bool every_event(void *ctx, uint32_t op)
{
	(void)ctx;
	(void)op;
	return true;
}

/* The same read with every Event wanted (opts.want_event): PathDefs then only feed the table,
 * through their own path, and must be judged the same way. */
static void bad_refs_defs_only(const struct forge *f, const char *const *want, size_t n_bad)
{
	const struct tl_verify o = {.key = 1, .want_event = every_event};
	struct mcpt_report rep;

	ck_assert_int_eq(tl_verify(f->out.p, f->out.len, &o, NULL, NULL, &rep), 0);
	ck_assert_uint_eq(rep.n_bad_segments, n_bad);
	for (size_t i = 0; i < n_bad; i++)
		ck_assert_str_eq(rep.bad_segments[i].reason, want[i]);
	mcpt_report__fini(&rep);
}

void tl_verify_bad_refs(const struct forge *f, const char *const *want, size_t n_bad,
			struct mcpt_report *rep)
{
	bad_refs_defs_only(f, want, n_bad);
	ck_assert_int_eq(
		tl_verify(f->out.p, f->out.len, &(struct tl_verify){.key = 1}, NULL, NULL, rep), 0);
	ck_assert_int_eq(rep->verdict, MCPT_INVALID);
	ck_assert_int_eq(rep->code, MCPT_E_RECORD_PARSE);
	ck_assert_uint_eq(rep->n_bad_segments, n_bad);
	for (size_t i = 0; i < n_bad; i++) {
		ck_assert_int_eq(rep->bad_segments[i].code, MCPT_E_RECORD_PARSE);
		ck_assert_str_eq(rep->bad_segments[i].reason, want[i]);
	}
	ck_assert_ptr_null(strchr(rep->message, '\n'));
}

Mcpt__Event *tl_excerpt_event(const struct tl_bytes *t, size_t index, struct mcpt_valtab *vt)
{
	struct mcpt_pubkey pk;
	struct mcpt_verify_opts vo = {.key = &pk};
	struct mcpt_excerpt ex;
	struct tl_bytes x;
	Mcpt__Event *e;
	char err[256];
	int fd = tl_memfd(t->p, t->len);

	tl_pubkey(1, &pk);
	ck_assert_int_eq(mcpt_excerpt_export(fd, index, &vo, &x.p, &x.len, err, sizeof(err)), 0);
	close(fd);
	ck_assert_int_eq(mcpt_excerpt_verify(x.p, x.len, &vo, &ex), 0);
	ck_assert_msg(ex.verdict == MCPT_VALID_COMPLETE, "%s", ex.message);
	e = mcpt__event__unpack(NULL, ex.rec.body_len, ex.rec.body);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(mcpt_excerpt_resolve(&ex, vt, &e->base, err, sizeof(err)), 0);
	tl_bytes_free(&x);
	return e;
}

void tl_excerpt_event_free(struct mcpt_valtab *vt, Mcpt__Event *e)
{
	mcpt_valtab__detach(vt, &e->base);
	mcpt__event__free_unpacked(e, NULL);
}

struct resolved {
	struct mcpt_valtab *vt;
	bool hold;
	tl_resolved_fn each;
	void *ctx;
	bool bad;
};

static int on_resolved(void *ctx, const struct mcpt_record *rec)
{
	struct resolved *r = ctx;
	ProtobufCMessage *m = (ProtobufCMessage *)rec->msg;

	if (rec->type != MCPT_T_EVENT && rec->type != MCPT_T_TASK_DEF &&
	    rec->type != MCPT_T_PATH_DEF)
		return 0;
	if (r->hold) { /* held records come without msg: the caller unpacks them */
		ck_assert_ptr_null(m);
		m = protobuf_c_message_unpack(mcpt_record_descriptor(rec->type), NULL,
					      rec->body_len, rec->body);
	}
	ck_assert_ptr_nonnull(m);
	if (mcpt_valtab__feed(r->vt, rec->chunk, rec->type, m, NULL, 0))
		r->bad = true;
	r->each(r->ctx, rec->type, m);
	mcpt_valtab__detach(r->vt, m);
	if (r->hold)
		protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}

void tl_verify_resolved(const struct tl_bytes *t, bool hold, tl_resolved_fn each, void *ctx)
{
	struct resolved r = {.vt = mcpt_valtab__new(), .hold = hold, .each = each, .ctx = ctx};
	struct mcpt_report rep;

	ck_assert_ptr_nonnull(r.vt);
	ck_assert_int_eq(tl_verify(t->p, t->len, &(struct tl_verify){.key = 1, .hold = hold},
				   on_resolved, &r, &rep),
			 0);
	ck_assert_msg(rep.verdict == MCPT_VALID_COMPLETE, "%s", rep.message);
	ck_assert(!r.bad);
	mcpt_report__fini(&rep);
	mcpt_valtab__free(r.vt);
}

size_t tl_excerpt_each(const struct tl_bytes *t, tl_excerpt_fn each, void *ctx)
{
	struct tl_frame fr[256];
	struct mcpt_valtab *vt = mcpt_valtab__new();
	size_t n, i, ev = 0;

	ck_assert_ptr_nonnull(vt);
	n = tl_frames(t->p, t->len, fr, 256);
	for (i = 1; i < n; i++) {
		Mcpt__Event *raw, *e;

		if (fr[i].type != MCPT_T_EVENT)
			continue;
		raw = mcpt__event__unpack(NULL, fr[i].blen, t->p + fr[i].body);
		ck_assert_ptr_nonnull(raw);
		e = tl_excerpt_event(t, i, vt);
		each(ctx, raw, e, ev++);
		mcpt__event__free_unpacked(raw, NULL);
		tl_excerpt_event_free(vt, e);
	}
	mcpt_valtab__free(vt);
	return ev;
}
