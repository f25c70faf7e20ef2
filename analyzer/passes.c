/*
 * passes.c - the model pass and the spooling of unseekable input (see passes.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes.h"

_Static_assert(sizeof(crypto_generichash_state) <= sizeof(((struct pass_digest *)0)->state),
	       "pass_digest.state too small");

static void digest_read(void *ctx, const uint8_t *p, size_t n)
{
	struct pass_digest *d = ctx;

	crypto_generichash_update((crypto_generichash_state *)(void *)d->state, p, n);
	d->length += n;
}

/* What the reader left unread of fd, to its end. 0 or -errno. */
static int digest_rest(struct pass_digest *d, int fd)
{
	uint8_t buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		digest_read(d, buf, (size_t)n);
	}
	return 0;
}

/* One read of fd through rp, digested; with digest NULL, only read (d unused). */
static int pass_read(struct replay *rp, int fd, replay_cb cb, void *ctx, struct pass_digest *d,
		     uint8_t digest[32])
{
	int rc;

	if (!digest)
		return replay__run_reading(rp, fd, cb, ctx, NULL, NULL);
	memset(d, 0, sizeof(*d));
	crypto_generichash_init((crypto_generichash_state *)(void *)d->state, NULL, 0, 32);
	rc = replay__run_reading(rp, fd, cb, ctx, digest_read, d);
	rc = rc ?: digest_rest(d, fd);
	crypto_generichash_final((crypto_generichash_state *)(void *)d->state, digest, 32);
	return rc;
}

/* Copies fd to an unlinked temporary file; returns its fd (rewound) or -errno. */
static int spool(int fd, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char path[4096], buf[65536];
	ssize_t n;
	int out, e;

	snprintf(path, sizeof(path), "%s/mcpwitness-XXXXXX", dir && *dir ? dir : "/tmp");
	out = mkostemp(path, O_CLOEXEC);
	if (out < 0 && dir && *dir) {
		snprintf(path, sizeof(path), "/tmp/mcpwitness-XXXXXX");
		out = mkostemp(path, O_CLOEXEC);
	}
	if (out < 0) {
		e = errno;
		snprintf(err, errlen, "failed to create a temporary copy of the trace: %s",
			 strerror(e));
		return -e;
	}
	unlink(path);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (e = -mcpt_write_all(out, buf, (size_t)n))) {
			e = n < 0 ? errno : e;
			snprintf(err, errlen, "failed to copy the trace to a temporary file: %s",
				 strerror(e));
			close(out);
			return -e;
		}
	}
	lseek(out, 0, SEEK_SET);
	return out;
}

int pass_open(const char *path, char *err, size_t errlen)
{
	int fd = replay_open(path, err, errlen), sp;

	if (fd < 0 || lseek(fd, 0, SEEK_CUR) >= 0)
		return fd;
	sp = spool(fd, err, errlen);
	if (fd > 0)
		close(fd);
	return sp;
}

/* Whether the model takes record rr (pass_feed_model's cases). */
static bool model_input(const struct replay_rec *rr)
{
	switch (rr->rec->type) {
	case MCPT_T_STDIO:
	case MCPT_T_MARK:
	case MCPT_T_LOSS:
	case MCPT_T_PROC:
		return true;
	case MCPT_T_EVENT:
		return callmodel_wants_op(((const Mcpt__Event *)rr->msg)->op);
	default:
		return false;
	}
}

int pass_feed_model(struct pass_model_feed *m, const struct replay_rec *rr)
{
	struct ev_view v;

	if (rr->rec->type == MCPT_T_SEAL) {
		m->last_seal = rr->rec->index;
		m->tail_fed = false;
		return 0;
	}
	if (!rr->msg)
		return 0;
	if (!m->header) {
		m->header = true;
		if (callmodel__header(m->cm, replay__header(m->rp)))
			return -ENOMEM;
	}
	if (!model_input(rr) || (m->cut && rr->rec->index > m->cutoff))
		return 0;
	m->tail_fed = true;
	switch (rr->rec->type) {
	case MCPT_T_STDIO:
		return callmodel__stdio(m->cm, (const Mcpt__StdioFrame *)rr->msg, rr->rec->index);
	case MCPT_T_MARK:
		return callmodel__mark(m->cm, (const Mcpt__Mark *)rr->msg, rr->rec->index);
	case MCPT_T_LOSS:
		return callmodel__loss(m->cm, (const Mcpt__Loss *)rr->msg);
	case MCPT_T_PROC:
		return callmodel__proc(m->cm, (const Mcpt__ProcInfo *)rr->msg, rr->rec->index);
	case MCPT_T_EVENT: /* process facts only (model_input) */
		event_decode(&v, (const Mcpt__Event *)rr->msg);
		return callmodel__event(m->cm, &v);
	default:
		return 0;
	}
}

static int on_record(void *ctx, const struct replay_rec *rr)
{
	return pass_feed_model(ctx, rr);
}

/* This read checks nothing (records are not hashed, Events the model has no use for are
 * skipped unparsed): the second read, which verifies, proves it read the same bytes. */
static bool wants_event(void *ctx, uint32_t op)
{
	(void)ctx;
	return callmodel_wants_op((int)op);
}

/* One skimming read of fd into m->cm (rewound after). 0 or -errno. */
static int model_read(int fd, struct pass_model_feed *m, struct pass_digest *d,
		      uint8_t digest[32])
{
	struct replay_opts ro = {.allow_unsigned = true, .want_event = wants_event, .skim = true};
	int rc;

	m->rp = replay__new(&ro);
	if (!m->rp)
		return -ENOMEM;
	rc = pass_read(m->rp, fd, on_record, m, d, digest);
	replay__free(m->rp);
	m->rp = NULL;
	if (rc)
		return rc < 0 ? rc : -EIO;
	return lseek(fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

int pass_model(int fd, const struct callmodel_opts *co, bool verified_only,
	       struct callmodel **out, bool *tail_left, struct pass_digest *d, uint8_t digest[32])
{
	struct pass_model_feed m = {.cm = callmodel__new(co)};
	int rc = m.cm ? model_read(fd, &m, d, digest) : -ENOMEM;

	if (tail_left)
		*tail_left = !rc && verified_only && m.tail_fed;
	if (!rc && verified_only && m.tail_fed) { /* again, without the unsealed tail */
		uint64_t cutoff = m.last_seal;

		callmodel__free(m.cm);
		m = (struct pass_model_feed){.cm = callmodel__new(co), .cut = true, .cutoff = cutoff};
		rc = m.cm ? model_read(fd, &m, d, digest) : -ENOMEM;
	}
	rc = rc ?: callmodel__resolve(m.cm);
	if (rc) {
		callmodel__free(m.cm);
		return rc;
	}
	*out = m.cm;
	return 0;
}

int pass_once(struct replay *rp, int fd, replay_cb cb, void *ctx, struct pass_digest *d,
	      uint8_t digest[32])
{
	return pass_read(rp, fd, cb, ctx, d, digest);
}

int pass_second(struct replay *rp, int fd, replay_cb cb, void *ctx, const uint8_t first[32],
		struct pass_digest *d, uint8_t digest[32])
{
	int rc = pass_read(rp, fd, cb, ctx, d, digest);

	return !rc && memcmp(first, digest, 32) ? -ESTALE : rc;
}
