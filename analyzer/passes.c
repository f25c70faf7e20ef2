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

void pass_digest_init(struct pass_digest *d)
{
	memset(d, 0, sizeof(*d));
	crypto_generichash_init((crypto_generichash_state *)(void *)d->state, NULL, 0, 32);
}

void pass_digest_add(struct pass_digest *d, const struct mcpt_record *rec)
{
	crypto_generichash_state *st = (crypto_generichash_state *)(void *)d->state;
	uint8_t type = (uint8_t)rec->type;

	crypto_generichash_update(st, &type, 1);
	crypto_generichash_update(st, rec->body, rec->body_len);
	d->records++;
}

void pass_digest_final(struct pass_digest *d, uint8_t out[32])
{
	crypto_generichash_final((crypto_generichash_state *)(void *)d->state, out, 32);
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
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			e = n < 0 ? errno : (errno ? errno : EIO);
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

struct model_ctx {
	struct callmodel *cm;
	struct replay *rp;
	struct pass_digest dg;
	bool header;
};

static int on_record(void *ctx, const struct replay_rec *rr)
{
	struct model_ctx *m = ctx;
	struct ev_view v;

	pass_digest_add(&m->dg, rr->rec);
	if (!rr->msg)
		return 0;
	if (!m->header) {
		m->header = true;
		if (callmodel__header(m->cm, replay__header(m->rp)))
			return -ENOMEM;
	}
	switch (rr->rec->type) {
	case MCPT_T_STDIO:
		return callmodel__stdio(m->cm, (const Mcpt__StdioFrame *)rr->msg, rr->rec->index);
	case MCPT_T_MARK:
		return callmodel__mark(m->cm, (const Mcpt__Mark *)rr->msg, rr->rec->index);
	case MCPT_T_LOSS:
		return callmodel__loss(m->cm, (const Mcpt__Loss *)rr->msg);
	case MCPT_T_EVENT:
		if (!callmodel_wants_op(((const Mcpt__Event *)rr->msg)->op))
			return 0; /* the model keeps process facts only: no view to decode */
		event_decode(&v, (const Mcpt__Event *)rr->msg);
		return callmodel__event(m->cm, &v);
	default:
		return 0;
	}
}

bool pass_changed(const struct pass_digest *first, const uint8_t d1[32],
		  const struct pass_digest *second, const uint8_t d2[32])
{
	if (second->records > first->records)
		return true;
	return second->records == first->records && memcmp(d1, d2, 32) != 0;
}

int pass_model(int fd, struct callmodel *cm, struct pass_digest *d, uint8_t digest[32])
{
	struct replay_opts ro = {.allow_unsigned = true};
	struct model_ctx m = {.cm = cm};
	int rc;

	m.rp = replay__new(&ro);
	if (!m.rp)
		return -ENOMEM;
	pass_digest_init(&m.dg);
	rc = replay__run(m.rp, fd, on_record, &m);
	replay__free(m.rp);
	pass_digest_final(&m.dg, digest);
	*d = m.dg;
	if (rc)
		return rc < 0 ? rc : -EIO;
	rc = callmodel__resolve(cm);
	if (!rc && lseek(fd, 0, SEEK_SET) < 0)
		rc = -errno;
	return rc;
}
