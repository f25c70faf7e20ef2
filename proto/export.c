/*
 * export.c - building an excerpt (proto/EXCERPT.md): one pass over the trace up to the seal of
 * the wanted record's segment, replaying the chunk rule with the library's own segment code
 * while keeping what an excerpt needs: the preamble and Header frame, the frames of the chunk
 * that holds the record, every leaf of that segment (for the audit path) and the seal frame.
 * Memory: the Header, one open chunk, and the current segment's leaves (32 bytes per chunk,
 * capped). Nothing is trusted here: the excerpt is verified before it is handed out, so an
 * exporter never produces one that fails (a record of a tampered segment cannot be exported).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LEAVES_MAX (1u << 20) /* 32 MiB of leaf hashes: far beyond any writer's segment */

typedef unsigned long long ull;

struct xp {
	struct mcpt_reader rd;
	uint64_t want, index;
	char *err;
	size_t errlen;
	uint8_t preamble[MCPT_PREAMBLE_LEN];
	struct mcpt_buf header, open, chunk, leaves;
	uint32_t cap, open_n, chunk_frames, in_chunk;
	uint64_t leaf_index;
	bool in_open, have_chunk, leaves_err;
	struct mcpt_segment seg;
};

static int buf_put(struct mcpt_buf *b, const void *p, size_t n)
{
	if (mcpt_buf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static void on_leaf(void *ctx, const uint8_t leaf[MCPT_HASH_LEN])
{
	struct xp *x = ctx;

	if (x->leaves.len / MCPT_HASH_LEN >= LEAVES_MAX || buf_put(&x->leaves, leaf, MCPT_HASH_LEN))
		x->leaves_err = true;
}

/* One frame (not consumed): 0 with *p / *len / rv; -ENODATA at the end of the stream or a torn
 * frame; -EBADMSG for damaged framing; -errno of reading. */
static int next_frame(struct xp *x, uint32_t cap, const uint8_t **p, size_t *len,
		      struct mcpt_record_view *rv)
{
	ssize_t n = mcpt_reader_fill(&x->rd, MCPT_VARINT_MAX);
	char why[120];
	uint32_t L;
	size_t vlen;
	int err;

	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENODATA;
	err = mcpt_uvarint_get(mcpt_reader_peek(&x->rd), (size_t)n, &L, &vlen);
	if (err == -EAGAIN)
		return -ENODATA;
	if (err || L < 2 || L > cap) {
		mcpt_errf(x->err, x->errlen, "damaged framing at offset %llu (record %llu)",
			  (ull)x->rd.pos, (ull)x->index);
		return -EBADMSG;
	}
	n = mcpt_reader_fill(&x->rd, vlen + L);
	if (n < 0)
		return (int)n;
	if ((size_t)n < vlen + L)
		return -ENODATA;
	*p = mcpt_reader_peek(&x->rd);
	*len = vlen + L;
	if (mcpt_record_split(*p + vlen, L, rv, why, sizeof(why))) {
		mcpt_errf(x->err, x->errlen, "malformed record %llu at offset %llu: %s",
			  (ull)x->index, (ull)x->rd.pos, why);
		return -EBADMSG;
	}
	return 0;
}

static int start(struct xp *x)
{
	const ProtobufCMessageDescriptor *d = &mcpt__header__descriptor;
	struct mcpt_record_view rv;
	Mcpt__Header *h;
	const uint8_t *p;
	char msg[160];
	size_t len;
	int err;

	err = (int)mcpt_reader_fill(&x->rd, MCPT_PREAMBLE_LEN);
	if (err < 0)
		return err;
	if (mcpt_preamble_check(mcpt_reader_peek(&x->rd), (size_t)err, msg, sizeof(msg)) !=
	    MCPT_OK) {
		mcpt_errf(x->err, x->errlen, "%s", msg);
		return -EBADMSG;
	}
	memcpy(x->preamble, mcpt_reader_peek(&x->rd), MCPT_PREAMBLE_LEN);
	mcpt_reader_consume(&x->rd, MCPT_PREAMBLE_LEN);
	err = next_frame(x, MCPT_HEADER_MAX, &p, &len, &rv);
	if (err == -ENODATA)
		mcpt_errf(x->err, x->errlen, "the trace ends before its Header");
	if (err)
		return err == -ENODATA ? -EBADMSG : err;
	h = rv.type == MCPT_T_HEADER ? (Mcpt__Header *)protobuf_c_message_unpack(
					       d, NULL, rv.body_len, p + len - rv.body_len)
				     : NULL;
	if (!h || !h->seal_policy || h->seal_policy->chunk_records < 1 ||
	    h->seal_policy->chunk_records > MCPT_CHUNK_RECORDS_MAX ||
	    h->seal_policy->chunk_bytes < MCPT_CHUNK_BYTES_MIN ||
	    h->seal_policy->chunk_bytes > MCPT_CHUNK_BYTES_MAX) {
		/* the verifier's bounds: they also bound the open chunk this pass keeps */
		if (h)
			mcpt__header__free_unpacked(h, NULL);
		mcpt_errf(x->err, x->errlen,
			  "record 0 is not a readable Header with a sane chunk policy");
		return -EBADMSG;
	}
	mcpt_segment_init(&x->seg, h->seal_policy->chunk_records, h->seal_policy->chunk_bytes);
	x->seg.on_leaf = on_leaf;
	x->seg.leaf_ctx = x;
	x->cap = h->max_record_len && h->max_record_len <= MCPT_HARD_RECORD_LEN
			 ? h->max_record_len
			 : MCPT_HARD_RECORD_LEN;
	mcpt__header__free_unpacked(h, NULL);
	err = buf_put(&x->header, p, len);
	mcpt_reader_consume(&x->rd, len);
	x->index = 1;
	return err;
}

/* A data record: into the open chunk (and the segment's hashes); remember the wanted one. */
static int data(struct xp *x, const uint8_t *p, size_t len)
{
	int err;

	if (x->seg.chunk_n == 0) {
		x->open.len = 0;
		x->open_n = 0;
	}
	if (x->index == x->want) {
		x->in_open = true;
		x->in_chunk = x->open_n;
	}
	err = buf_put(&x->open, p, len);
	if (err)
		return err;
	x->open_n++;
	mcpt_segment_add(&x->seg, p, len);
	if (x->seg.chunk_n == 0 && x->in_open) { /* the wanted chunk just closed */
		x->chunk.len = 0;
		err = buf_put(&x->chunk, x->open.p, x->open.len);
		x->chunk_frames = x->open_n;
		x->leaf_index = x->seg.range.leaves - 1;
		x->in_open = false;
		x->have_chunk = true;
	}
	return err;
}

static int proof_bytes(struct xp *x, uint64_t leaf_count, struct mcpt_buf *out)
{
	uint8_t path[MCPT_PATH_MAX][MCPT_HASH_LEN], head[MCPT_VARINT_MAX];
	ProtobufCBinaryData bins[MCPT_PATH_MAX];
	Mcpt__ExcerptProof pr = MCPT__EXCERPT_PROOF__INIT;
	size_t k, n;

	if (x->leaves_err)
		return -EFBIG;
	if (x->leaves.len / MCPT_HASH_LEN != leaf_count || x->leaf_index >= leaf_count)
		return -EBADMSG; /* cannot happen: the leaves are the ones just counted */
	k = mcpt_audit_path((const uint8_t(*)[MCPT_HASH_LEN])x->leaves.p, leaf_count, x->leaf_index,
			    path);
	for (size_t i = 0; i < k; i++)
		bins[i] = (ProtobufCBinaryData){MCPT_HASH_LEN, path[i]};
	pr.record = x->want;
	pr.chunk_frames = x->chunk_frames;
	pr.in_chunk = x->in_chunk;
	pr.leaf_index = x->leaf_index;
	pr.leaf_count = leaf_count;
	pr.n_audit_path = k;
	pr.audit_path = bins;
	n = mcpt__excerpt_proof__get_packed_size(&pr);
	if (mcpt_buf_reserve(out, MCPT_VARINT_MAX + n))
		return -ENOMEM;
	buf_put(out, head, mcpt_uvarint_put(head, (uint32_t)n));
	out->len += mcpt__excerpt_proof__pack(&pr, out->p + out->len);
	return 0;
}

/* The seal of the wanted record's segment: close the segment, lay out the excerpt. */
static int build(struct xp *x, const uint8_t *seal, size_t seal_len, struct mcpt_buf *out)
{
	uint8_t root[MCPT_HASH_LEN], pre[MCPT_PREAMBLE_LEN];
	uint64_t leaf_count;
	int err;

	if (x->in_open) { /* the seal closes it: it is the segment's last leaf */
		x->chunk.len = 0;
		if (buf_put(&x->chunk, x->open.p, x->open.len))
			return -ENOMEM;
		x->chunk_frames = x->open_n;
		x->leaf_index = x->seg.range.leaves;
	}
	mcpt_segment_finish(&x->seg, root, &leaf_count);
	memcpy(pre, MCPT_EXCERPT_MAGIC, MCPT_MAGIC_LEN);
	pre[8] = MCPT_EXCERPT_MAJOR;
	pre[9] = 0;
	pre[10] = MCPT_EXCERPT_MINOR;
	pre[11] = 0;
	err = buf_put(out, pre, sizeof(pre));
	err = err ?: buf_put(out, x->preamble, MCPT_PREAMBLE_LEN);
	err = err ?: proof_bytes(x, leaf_count, out);
	err = err ?: buf_put(out, x->header.p, x->header.len);
	err = err ?: buf_put(out, seal, seal_len);
	err = err ?: buf_put(out, x->chunk.p, x->chunk.len);
	if (err == -EFBIG)
		mcpt_errf(x->err, x->errlen, "the segment of record %llu has more than %u chunks",
			  (ull)x->want, LEAVES_MAX);
	return err;
}

static int scan_error(struct xp *x, int err)
{
	if (err != -ENODATA)
		return err;
	if (x->index <= x->want) {
		mcpt_errf(x->err, x->errlen, "the trace has %llu records (no record %llu)",
			  (ull)x->index, (ull)x->want);
		return -ENOENT;
	}
	mcpt_errf(x->err, x->errlen,
		  "record %llu is after the last seal: no seal proves it (the trace ends at "
		  "record %llu)",
		  (ull)x->want, (ull)x->index - 1);
	return -ENODATA;
}

static int scan(struct xp *x, struct mcpt_buf *out)
{
	struct mcpt_record_view rv;
	const uint8_t *p;
	size_t len;
	int err;

	for (;;) {
		err = next_frame(x, x->cap, &p, &len, &rv);
		if (err)
			return scan_error(x, err);
		if (rv.type == MCPT_T_HEADER) {
			mcpt_errf(x->err, x->errlen, "a second Header at record %llu",
				  (ull)x->index);
			return -EBADMSG;
		}
		if (rv.type == MCPT_T_SEAL && x->index == x->want) {
			mcpt_errf(x->err, x->errlen,
				  "record %llu is a seal, not in a chunk (export --dsse gives the "
				  "FINAL seal)",
				  (ull)x->want);
			return -EINVAL;
		}
		if (rv.type == MCPT_T_SEAL && (x->in_open || x->have_chunk))
			return build(x, p, len, out);
		if (rv.type == MCPT_T_SEAL) {
			uint8_t root[MCPT_HASH_LEN];
			uint64_t leaves;

			mcpt_segment_finish(&x->seg, root, &leaves);
			x->leaves.len = 0;
			x->leaves_err = false;
		} else if ((err = data(x, p, len))) {
			return err;
		}
		mcpt_reader_consume(&x->rd, len);
		x->index++;
	}
}

static int self_check(struct xp *x, const struct mcpt_buf *out, const struct mcpt_verify_opts *opts)
{
	struct mcpt_excerpt chk;
	int err = mcpt_excerpt_verify(out->p, out->len, opts, &chk);

	if (err)
		return err;
	if (chk.verdict == MCPT_VALID_COMPLETE)
		return 0;
	mcpt_errf(x->err, x->errlen, "the excerpt of record %llu does not verify: %s (%s): %s",
		  (ull)x->want, mcpt_excerpt_verdict_name(&chk), mcpt_code_name(chk.code),
		  chk.message);
	return -EBADMSG;
}

int mcpt_excerpt_export(int fd, uint64_t index, const struct mcpt_verify_opts *opts, uint8_t **out,
			size_t *len, char *err, size_t errlen)
{
	struct xp *x;
	struct mcpt_buf b = {0};
	int rc;

	if (!out || !len || !opts || !opts->key)
		return -EINVAL;
	*out = NULL;
	*len = 0;
	if (err && errlen)
		err[0] = '\0';
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->want = index;
	x->err = err;
	x->errlen = errlen;
	rc = mcpt_reader_init(&x->rd, fd);
	rc = rc ?: start(x);
	if (!rc && index == 0) {
		mcpt_errf(err, errlen, "record 0 is the Header: every excerpt carries it");
		rc = -EINVAL;
	}
	rc = rc ?: scan(x, &b);
	rc = rc ?: self_check(x, &b, opts);
	if (rc == -ENOMEM || rc == -EIO || (rc < 0 && err && !err[0]))
		mcpt_errf(err, errlen, "%s", strerror(-rc));
	if (!rc) {
		*out = b.p;
		*len = b.len;
	} else {
		mcpt_buf_free(&b);
	}
	mcpt_reader_fini(&x->rd);
	mcpt_buf_free(&x->header);
	mcpt_buf_free(&x->open);
	mcpt_buf_free(&x->chunk);
	mcpt_buf_free(&x->leaves);
	free(x);
	return rc;
}
