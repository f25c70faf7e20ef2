/*
 * reader.c - a buffered reader over a file descriptor for the verifier: it hands out whole
 * frames as contiguous bytes, so memory is one frame (at most the 16 MiB hard cap plus a
 * varint) however long the stream. Works on pipes and sockets: short reads are normal, EINTR is
 * retried, and a non-blocking descriptor is waited on with poll().
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define READER_MIN (64u << 10)

int mcpt_reader_init(struct mcpt_reader *r, int fd)
{
	r->fd = fd;
	r->buf = malloc(READER_MIN);
	if (!r->buf)
		return -ENOMEM;
	r->cap = READER_MIN;
	r->off = r->len = 0;
	r->pos = 0;
	r->eof = false;
	r->on_read = NULL;
	r->on_read_ctx = NULL;
	return 0;
}

void mcpt_reader_fini(struct mcpt_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

static int wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Room for n bytes from off: slide the data to the front, grow the buffer if it must. */
static int make_room(struct mcpt_reader *r, size_t n)
{
	uint8_t *p;
	size_t cap;

	if (r->cap - r->off >= n)
		return 0;
	if (r->len)
		memmove(r->buf, r->buf + r->off, r->len);
	r->off = 0;
	if (r->cap >= n)
		return 0;
	cap = r->cap;
	while (cap < n)
		cap = cap > SIZE_MAX / 2 ? n : cap * 2;
	p = realloc(r->buf, cap);
	if (!p)
		return -ENOMEM;
	r->buf = p;
	r->cap = cap;
	return 0;
}

ssize_t mcpt_reader_fill(struct mcpt_reader *r, size_t n)
{
	int err;

	if (r->len >= n || r->eof)
		return (ssize_t)r->len;
	err = make_room(r, n);
	if (err)
		return err;
	while (r->len < n) {
		ssize_t got = read(r->fd, r->buf + r->off + r->len, r->cap - r->off - r->len);

		if (got > 0) {
			if (r->on_read)
				r->on_read(r->on_read_ctx, r->buf + r->off + r->len, (size_t)got);
			r->len += (size_t)got;
		} else if (got == 0) {
			r->eof = true;
			break;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			err = wait_readable(r->fd);
			if (err)
				return err;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return (ssize_t)r->len;
}

void mcpt_reader_consume(struct mcpt_reader *r, size_t n)
{
	r->off += n;
	r->len -= n;
	r->pos += n;
	if (r->len == 0)
		r->off = 0;
}

int mcpt_reader_skip_zeros(struct mcpt_reader *r, uint64_t *skipped)
{
	*skipped = 0;
	for (;;) {
		ssize_t avail = mcpt_reader_fill(r, 1);
		const uint8_t *p = mcpt_reader_peek(r);
		size_t i = 0;

		if (avail < 0)
			return (int)avail;
		if (avail == 0)
			return 1;
		while (i < (size_t)avail && p[i] == 0)
			i++;
		mcpt_reader_consume(r, i);
		*skipped += i;
		if (i < (size_t)avail)
			return 0;
	}
}

int mcpt_reader_drain(struct mcpt_reader *r, uint64_t *n, bool *all_zero)
{
	*n = 0;
	*all_zero = true;
	for (;;) {
		ssize_t avail = mcpt_reader_fill(r, 1);
		const uint8_t *p = mcpt_reader_peek(r);

		if (avail < 0)
			return (int)avail;
		if (avail == 0)
			return 0;
		for (ssize_t i = 0; i < avail && *all_zero; i++)
			*all_zero = p[i] == 0;
		mcpt_reader_consume(r, (size_t)avail);
		*n += (uint64_t)avail;
	}
}
