/*
 * chan.c - stream reassembly by offset and line splitting (see chan.h).
 *
 * Per direction: `next` is the offset of the first byte not yet placed; frames at `next` are
 * consumed at once, later ones wait in a list sorted by offset. Consuming feeds the line
 * builder, which keeps the current line's bytes (up to line_max); the jscan of a line kept
 * whole runs over them only when the callback asks for it, that of an overlong line as its
 * bytes come.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"
#include "events.h"

struct piece {
	uint64_t off, len;
	uint8_t *data; /* NULL: a hole (bytes not captured) */
	uint64_t ts, record;
	bool chunk0;   /* the first bytes a write()/read() transferred */
	unsigned mark; /* CHAN_L_TAMPERED, CHAN_L_UNCHECKED: for each line it has bytes of */
	struct piece *next;
};

struct stream {
	enum chan_dir dir;
	uint64_t next;
	struct piece *pending;
	size_t pending_bytes;
	/* the line being built */
	uint8_t *buf;
	size_t kept, cap;
	uint64_t line_off, line_len;
	bool in_line;
	unsigned flags;
	bool skipping;		    /* after a hole: drop bytes up to the next newline */
	bool may_resync;	    /* ... unless the next bytes start a write with '{' or '[' */
	uint64_t skipped, skip_off; /* bytes dropped while skipping, from skip_off */
	uint64_t last_ts, last_record;
	struct chan_scan scan;
	struct chan_stats st;
};

struct chan {
	size_t line_max;
	struct chan_ops ops;
	void *ctx;
	struct stream s[CHAN_DIRS];
};

const char *chan_dir_name(enum chan_dir dir)
{
	return dir == CHAN_IN ? "stdin" : "stdout";
}

struct chan *chan__new(size_t line_max, const struct chan_ops *ops, void *ctx)
{
	struct chan *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->line_max = line_max ? line_max : CHAN_LINE_MAX_DEFAULT;
	c->ops = *ops;
	c->ctx = ctx;
	for (int d = 0; d < CHAN_DIRS; d++)
		c->s[d].dir = (enum chan_dir)d;
	return c;
}

static void pieces_free(struct piece *p)
{
	struct piece *next;

	for (; p; p = next) {
		next = p->next;
		free(p->data);
		free(p);
	}
}

void chan__free(struct chan *c)
{
	if (!c)
		return;
	for (int d = 0; d < CHAN_DIRS; d++) {
		pieces_free(c->s[d].pending);
		free(c->s[d].buf);
	}
	free(c);
}

const struct chan_stats *chan__stats(const struct chan *c, enum chan_dir dir)
{
	return &c->s[dir].st;
}

static void note(struct chan *c, struct stream *s, uint64_t off, uint64_t ts, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void note(struct chan *c, struct stream *s, uint64_t off, uint64_t ts, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->ops.note)
		c->ops.note(c->ctx, s->dir, off, ts, msg);
}

/* --- lines ---------------------------------------------------------------------------------- */

static void line_reset(struct stream *s)
{
	s->kept = 0;
	s->line_len = 0;
	s->in_line = false;
	s->flags = 0;
}

static int line_emit(struct chan *c, struct stream *s, uint64_t ts, uint64_t record, unsigned extra)
{
	struct chan_line l = {
		.dir = s->dir,
		.offset = s->line_off,
		.len = s->line_len,
		.ts = ts,
		.record = record,
		.flags = s->flags | extra,
		.scan_ = c->ops.no_scan ? NULL : &s->scan,
	};
	int err;

	if (!(l.flags & CHAN_L_OVERLONG))
		l.data = s->buf ? s->buf : (const uint8_t *)"";
	if (l.flags & CHAN_L_OVERLONG) {
		s->st.overlong++;
		note(c, s, l.offset, ts,
		     "message of %llu bytes is longer than the limit of %zu bytes: only its id and "
		     "method are used",
		     (unsigned long long)l.len, c->line_max);
	}
	s->st.lines++;
	err = c->ops.line(c->ctx, &l);
	line_reset(s);
	return err;
}

static void scan_feed(struct chan_scan *sc, const uint8_t *p, size_t n)
{
	if (!sc->begun) {
		jscan_init(&sc->js);
		sc->begun = true;
	}
	if (n)
		jscan_feed(&sc->js, p, n);
	sc->fed += n;
}

const struct jscan *chan_line_scan(const struct chan_line *l)
{
	struct chan_scan *sc = l->scan_;

	if (!sc)
		return NULL;
	if (!sc->begun || (l->data && sc->fed < l->len))
		scan_feed(sc, l->data ? l->data + sc->fed : NULL,
			  l->data ? (size_t)(l->len - sc->fed) : 0);
	return &sc->js;
}

static int line_append(struct chan *c, struct stream *s, const uint8_t *p, size_t n, uint64_t off)
{
	if (!s->in_line) {
		s->in_line = true;
		s->line_off = off;
		s->scan.fed = 0;
		s->scan.begun = false;
	}
	s->line_len += n;
	if (!(s->flags & CHAN_L_OVERLONG) && s->line_len > c->line_max) {
		s->flags |= CHAN_L_OVERLONG; /* no longer kept: scanned now and as the bytes come */
		if (!c->ops.no_scan && s->kept > s->scan.fed)
			scan_feed(&s->scan, s->buf + s->scan.fed, s->kept - (size_t)s->scan.fed);
	}
	if (s->flags & CHAN_L_OVERLONG) {
		if (!c->ops.no_scan)
			scan_feed(&s->scan, p, n);
		return 0;
	}
	if (s->kept + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		uint8_t *b;

		while (cap < s->kept + n + 1)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->kept, p, n);
	s->kept += n;
	s->buf[s->kept] = '\0';
	return 0;
}

/* After a hole: may the stream restart at these bytes (the start of a write, '{' or '[')? */
static bool resync_here(bool chunk0, const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (!chunk0)
		return false;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	return i < n && (p[i] == '{' || p[i] == '[');
}

/* Bytes dropped after a hole, up to a newline: said once per run. */
static void skip_bytes(struct chan *c, struct stream *s, uint64_t off, size_t n, bool end,
		       uint64_t ts)
{
	if (!s->skipped)
		s->skip_off = off;
	s->skipped += n;
	if (!end)
		return;
	s->skipping = false;
	if (s->skipped)
		note(c, s, s->skip_off, ts,
		     "%llu bytes after a gap skipped up to the next newline (the rest of a message "
		     "whose start was not captured)",
		     (unsigned long long)s->skipped);
	s->skipped = 0;
}

static int feed_data(struct chan *c, struct stream *s, const struct piece *pc, bool chunk0,
		     const uint8_t *p, size_t n, uint64_t off)
{
	const uint8_t *nl;
	size_t seg;
	int err;

	if (s->skipping && s->may_resync && resync_here(chunk0, p, n))
		skip_bytes(c, s, off, 0, true, pc->ts);
	s->may_resync = false;
	while (n) {
		nl = memchr(p, '\n', n);
		seg = nl ? (size_t)(nl - p) : n;
		if (s->skipping) {
			skip_bytes(c, s, off, seg + (nl ? 1 : 0), nl != NULL, pc->ts);
			p += seg + (nl ? 1 : 0);
			off += seg + (nl ? 1 : 0);
			n -= seg + (nl ? 1 : 0);
			continue;
		} else if (seg && (err = line_append(c, s, p, seg, off))) {
			return err;
		}
		if (seg || (nl && s->in_line))
			s->flags |= pc->mark;
		if (nl && s->in_line && (err = line_emit(c, s, pc->ts, pc->record, 0)))
			return err;
		if (nl && !s->in_line)
			line_reset(s); /* an empty line: nothing to deliver */
		seg += nl ? 1 : 0;
		p += seg;
		n -= seg;
		off += seg;
	}
	return 0;
}

/* A hole of len bytes at off: the line in progress is cut; resynchronise after it. */
static int feed_hole(struct chan *c, struct stream *s, const struct piece *pc)
{
	int err = 0;

	s->st.gap_bytes += pc->len;
	s->st.holes++;
	if (s->in_line) {
		s->flags |= CHAN_L_GAP;
		err = line_emit(c, s, pc->ts, pc->record, CHAN_L_UNTERMINATED);
	}
	s->skipping = true;
	s->may_resync = true;
	return err;
}

static int consume(struct chan *c, struct stream *s, const struct piece *pc)
{
	uint64_t skip = s->next - pc->off; /* bytes already placed */

	if (skip >= pc->len)
		return 0;
	s->next = pc->off + pc->len;
	s->last_ts = pc->ts;
	s->last_record = pc->record;
	if (!pc->data)
		return feed_hole(c, s, pc);
	s->st.bytes += pc->len - skip;
	return feed_data(c, s, pc, pc->chunk0 && !skip, pc->data + skip, (size_t)(pc->len - skip),
			 pc->off + skip);
}

/* --- ordering ------------------------------------------------------------------------------- */

static int drain_pending(struct chan *c, struct stream *s)
{
	struct piece *p;
	int err = 0;

	while (!err && (p = s->pending) && p->off <= s->next) {
		s->pending = p->next;
		s->pending_bytes -= p->data ? p->len : 0;
		err = consume(c, s, p);
		free(p->data);
		free(p);
	}
	return err;
}

/* Bytes [next, first pending) will never come: a hole. */
static int declare_missing(struct chan *c, struct stream *s, const char *why)
{
	struct piece hole = {.off = s->next};

	if (!s->pending)
		return 0;
	hole.len = s->pending->off - s->next;
	hole.ts = s->pending->ts;
	hole.record = s->pending->record;
	note(c, s, s->next, hole.ts, "%llu bytes of the stream were never captured (%s)",
	     (unsigned long long)hole.len, why);
	return consume(c, s, &hole) ?: drain_pending(c, s);
}

static int hold(struct stream *s, const struct piece *src, const uint8_t *data)
{
	struct piece *p = malloc(sizeof(*p)), **pp;

	if (!p)
		return -ENOMEM;
	*p = *src;
	p->data = NULL;
	if (data) {
		p->data = malloc(src->len ? src->len : 1);
		if (!p->data) {
			free(p);
			return -ENOMEM;
		}
		memcpy(p->data, data, src->len);
		s->pending_bytes += src->len;
	}
	for (pp = &s->pending; *pp && (*pp)->off <= p->off; pp = &(*pp)->next)
		;
	p->next = *pp;
	*pp = p;
	return 0;
}

static int place(struct chan *c, struct stream *s, struct piece *pc, const uint8_t *data)
{
	int err;

	if (pc->off + pc->len <= s->next) {
		s->st.duplicate_bytes += data ? pc->len : 0;
		return 0;
	}
	if (pc->off > s->next) {
		err = hold(s, pc, data);
		if (!err && s->pending_bytes > CHAN_PENDING_MAX)
			err = declare_missing(c, s, "frames out of order beyond the reorder limit");
		return err;
	}
	if (pc->off < s->next && data)
		s->st.duplicate_bytes += s->next - pc->off;
	pc->data = (uint8_t *)data;
	err = consume(c, s, pc);
	return err ?: drain_pending(c, s);
}

int chan__frame(struct chan *c, const Mcpt__StdioFrame *f, uint64_t index)
{
	struct piece pc = {.off = f->stream_offset, .ts = f->ts, .record = index};
	struct stream *s;
	const uint8_t *data = NULL;

	if (f->dir != MCPT__STDIO_FRAME__DIR__READ && f->dir != MCPT__STDIO_FRAME__DIR__WRITE)
		return 0;
	s = &c->s[f->dir == MCPT__STDIO_FRAME__DIR__READ ? CHAN_IN : CHAN_OUT];
	s->st.frames++;
	if (f->flags & MW_F_GAP) {
		pc.len = f->gap_len;
		if (pc.len)
			note(c, s, pc.off, pc.ts, "%llu bytes were not captured (gap record)",
			     (unsigned long long)pc.len);
	} else {
		pc.len = f->data.len;
		pc.chunk0 = f->chunk == 0;
		pc.mark = (f->flags & MW_F_TAMPERED ? CHAN_L_TAMPERED : 0) |
			  (f->flags & MW_F_UNCHECKED ? CHAN_L_UNCHECKED : 0);
		data = f->data.len ? f->data.data : NULL;
	}
	if (!pc.len || pc.off > UINT64_MAX - pc.len)
		return 0;
	return place(c, s, &pc, data);
}

static int finish_stream(struct chan *c, struct stream *s)
{
	int err = 0;

	while (!err && s->pending)
		err = declare_missing(c, s, "no frame covers them");
	if (!err && s->skipping && s->skipped)
		skip_bytes(c, s, s->next, 0, true, s->last_ts);
	if (!err && s->in_line) {
		note(c, s, s->line_off, s->last_ts, "the stream ends inside a message");
		err = line_emit(c, s, s->last_ts, s->last_record, CHAN_L_UNTERMINATED);
	}
	return err;
}

int chan__finish(struct chan *c)
{
	int err = 0;

	for (int d = 0; d < CHAN_DIRS && !err; d++)
		err = finish_stream(c, &c->s[d]);
	return err;
}
