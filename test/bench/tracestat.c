/*
 * tracestat.c - trace bytes per record, by record type and by event family, for the
 * collector benchmark. Reads a trace (structure only: framing and hashes are checked, not
 * signatures) and prints one line per class:
 *   STAT <class> <records> <bytes> <bytes per record>
 * then `STAT lost <events lost, from the Loss records>`, and for the event classes the same
 * figures projected for a chunk-scoped path and task table (pathproj.c):
 *   PROJ <class> <records> <bytes> <bytes per record>
 * where bytes are whole frames (length prefix, record tag and body), the file's real cost;
 * the preamble, Header and Seals are reported apart ("header", "seal"). The PathDef and
 * TaskDef records of the value and task tables are counted in the bytes of the event that
 * follows them (the one they were written for), and also alone: `DEFS <records> <bytes>`. The
 * projection is meant for traces without the tables.
 *
 * usage: tracestat TRACE
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mcpt.h"
#include "pathproj.h"

enum cls { C_HEADER, C_SEAL, C_PROC, C_FILE, C_NET, C_PRIV, C_EVASION, C_STDIO, C_OTHER, C_N };
static const char *const cls_name[C_N] = { "header", "seal", "process", "file", "network",
					   "privilege", "evasion", "stdio", "other" };

struct stat_ctx {
	uint64_t n[C_N], bytes[C_N], proj[C_N];
	uint64_t last_offset;
	int last_cls;
	uint64_t lost; /* sum of Loss.delta */
	enum mcpt_type last_type;
	Mcpt__Event *last_event; /* the previous record when an Event: projected once its frame
				  * length is known */
	size_t last_body;
	uint64_t defs, def_bytes, pending; /* PathDef/TaskDef bytes waiting for their event */
};

static bool is_def(enum mcpt_type t)
{
	return t == MCPT_T_PATH_DEF || t == MCPT_T_TASK_DEF;
}

static int event_class(const struct mcpt_record *rec, Mcpt__Event **out)
{
	Mcpt__Event *e;
	int c = C_OTHER;

	e = (Mcpt__Event *)protobuf_c_message_unpack(&mcpt__event__descriptor, NULL, rec->body_len,
						      rec->body);
	*out = e;
	if (!e)
		return C_OTHER;
	if (e->op < 40)
		c = C_PROC;
	else if (e->op < 100)
		c = C_FILE;
	else if (e->op < 130)
		c = C_NET;
	else if (e->op < 170)
		c = C_PRIV;
	else if (e->op < 190)
		c = C_EVASION;
	else
		c = C_STDIO;
	return c;
}

/* The previous record's frame is frame_len bytes: add it to the projection. */
static void project_last(struct stat_ctx *s, uint64_t frame_len)
{
	uint64_t p = frame_len;

	if (s->last_event) {
		p = pathproj_event(s->last_event, s->last_body);
		protobuf_c_message_free_unpacked(&s->last_event->base, NULL);
		s->last_event = NULL;
	} else {
		pathproj_other(s->last_type, frame_len);
	}
	s->proj[s->last_cls] += p;
}

static int on_record(void *ctx, const struct mcpt_record *rec)
{
	struct stat_ctx *s = ctx;
	int c;

	if (is_def(s->last_type)) {
		s->pending += rec->offset - s->last_offset;
		s->def_bytes += rec->offset - s->last_offset;
	} else if (s->last_cls >= 0) {
		s->bytes[s->last_cls] += rec->offset - s->last_offset;
		project_last(s, rec->offset - s->last_offset);
	}
	s->last_offset = rec->offset;
	if (is_def(rec->type)) {
		s->defs++;
		s->last_type = rec->type;
		return 0;
	}
	switch (rec->type) {
	case MCPT_T_HEADER:
		c = C_HEADER;
		break;
	case MCPT_T_SEAL:
		c = C_SEAL;
		break;
	case MCPT_T_EVENT:
		c = event_class(rec, &s->last_event);
		s->last_body = rec->body_len;
		s->bytes[c] += s->pending;
		s->proj[c] += s->pending;
		s->pending = 0;
		break;
	case MCPT_T_STDIO:
		c = C_STDIO;
		break;
	case MCPT_T_LOSS: {
		Mcpt__Loss *l = (Mcpt__Loss *)protobuf_c_message_unpack(&mcpt__loss__descriptor, NULL,
									 rec->body_len, rec->body);

		if (l) {
			s->lost += l->delta;
			protobuf_c_message_free_unpacked(&l->base, NULL);
		}
		c = C_OTHER;
		break;
	}
	default:
		c = C_OTHER;
	}
	s->n[c]++;
	s->last_cls = c;
	s->last_type = rec->type;
	return 0;
}

int main(int argc, char **argv)
{
	struct stat_ctx s = { .last_cls = -1 };
	struct mcpt_report rep;
	int fd, c;

	if (argc != 2) {
		fprintf(stderr, "usage: tracestat TRACE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (mcpt_verify(fd, NULL, on_record, &s, &rep) < 0) {
		fprintf(stderr, "tracestat: failed to read %s\n", argv[1]);
		return 1;
	}
	if (s.last_cls >= 0) {
		s.bytes[s.last_cls] += rep.bytes - s.last_offset;
		project_last(&s, rep.bytes - s.last_offset);
	}
	s.bytes[C_HEADER] += s.n[C_HEADER] ? 12 : 0; /* the preamble */
	for (c = 0; c < C_N; c++)
		if (s.n[c])
			printf("STAT %s %llu %llu %.1f\n", cls_name[c], (unsigned long long)s.n[c],
			       (unsigned long long)s.bytes[c], (double)s.bytes[c] / (double)s.n[c]);
	for (c = C_PROC; c < C_STDIO; c++)
		if (s.n[c])
			printf("PROJ %s %llu %llu %.1f\n", cls_name[c], (unsigned long long)s.n[c],
			       (unsigned long long)s.proj[c], (double)s.proj[c] / (double)s.n[c]);
	printf("DEFS %llu %llu\n", (unsigned long long)s.defs, (unsigned long long)s.def_bytes);
	printf("STAT lost %llu\n", (unsigned long long)s.lost);
	printf("STAT verdict %s\n", mcpt_report_verdict_name(&rep));
	mcpt_report__fini(&rep);
	close(fd);
	return 0;
}
