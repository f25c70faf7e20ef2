/*
 * verify_excerpt.c - verifying and showing an excerpt (see verify_excerpt.h). Every string that
 * comes from the excerpt (hostname, record contents, the library's message) is escaped.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "dump.h"
#include "log.h"
#include "strbuf.h"
#include "traceinfo.h"
#include "verify_excerpt.h"

typedef unsigned long long ull;

int verify_excerpt_probe(const char *path, int fd)
{
	uint8_t magic[MCPT_MAGIC_LEN];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	n = pread(fd, magic, sizeof(magic), 0);
	if (n < 0) {
		p_err("failed to read %s: %s", path, strerror(errno));
		return -1;
	}
	return mcpt_is_excerpt(magic, (size_t)n);
}

/* The whole file (an excerpt is small and read at once); NULL after printing an error. */
static uint8_t *slurp(const char *path, int fd, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fstat(fd, &st) || st.st_size > MCPT_EXCERPT_MAX_LEN) {
		p_err("failed to read excerpt %s: larger than %u MiB", path,
		      MCPT_EXCERPT_MAX_LEN >> 20);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		if (n > 0)
			got += (size_t)n;
	}
	if (!buf || got != (size_t)st.st_size) {
		p_err("failed to read excerpt %s: %s", path,
		      buf ? "short read (the file changed?)" : strerror(ENOMEM));
		free(buf);
		return NULL;
	}
	*len = got;
	return buf;
}

/* The proven record, unpacked for dump's renderings (it parsed within the verifier's budget),
 * with its value references resolved from its chunk (vt holds the values while it is shown). */
static void record_view(const struct mcpt_excerpt *x, struct mcpt_valtab *vt, struct replay_rec *rr)
{
	const ProtobufCMessageDescriptor *d = mcpt_record_descriptor(x->rec.type);

	memset(rr, 0, sizeof(*rr));
	rr->rec = &x->rec;
	if (d && x->rec.body) {
		rr->msg = protobuf_c_message_unpack(d, NULL, x->rec.body_len, x->rec.body);
		if (rr->msg && x->chunk &&
		    (!vt || mcpt_excerpt_resolve(x, vt, (ProtobufCMessage *)rr->msg, NULL, 0))) {
			mcpt_valtab__detach(vt, (ProtobufCMessage *)rr->msg);
			protobuf_c_message_free_unpacked((ProtobufCMessage *)rr->msg, NULL);
			rr->msg = NULL;
		}
		rr->malformed = !rr->msg;
	}
}

static void text_ids(struct strbuf *sb, const struct mcpt_excerpt *x)
{
	char kid[17], tk[17];

	mcpt_key_id_hex(x->key_id, kid);
	mcpt_key_id_hex(x->trusted_key_id, tk);
	strbuf_puts(sb, "  trace    ");
	strbuf_hex(sb, x->trace_id, sizeof(x->trace_id));
	strbuf_printf(sb, "\n  key      %s (trusted %s, signatures %s)\n", kid, tk,
		      x->signatures_checked ? "checked" : "NOT checked");
}

static void print_text(const struct mcpt_excerpt *x, const Mcpt__Header *h,
		       const struct replay_rec *rr)
{
	struct strbuf sb = STRBUF_INIT;
	char msg[1024];

	strbuf_printf(&sb, "%s: %s\n", mcpt_excerpt_verdict_name(x),
		      mcpt_sanitize(msg, sizeof(msg), x->message));
	if (x->header)
		text_ids(&sb, x);
	if (x->verdict == MCPT_VALID_COMPLETE || x->verdict == MCPT_VALID_PREFIX) {
		strbuf_printf(&sb, "  seal     %llu%s, digest ", (ull)x->seal_index,
			      x->seal_flags & MCPT_SEAL_FINAL ? " (FINAL)" : "");
		strbuf_hex(&sb, x->seal_digest, sizeof(x->seal_digest));
		strbuf_printf(&sb, "\n  record   %llu, %u of %u in chunk %llu of %llu",
			      (ull)x->record, x->in_chunk + 1, x->chunk_frames,
			      (ull)x->leaf_index + 1, (ull)x->leaf_count);
		if (x->index_min != x->index_max)
			strbuf_printf(&sb, " (index within %llu..%llu)", (ull)x->index_min,
				      (ull)x->index_max);
		strbuf_putc(&sb, '\n');
		trace_provenance(&sb, h);
	}
	if (strbuf_str(&sb))
		fputs(strbuf_str(&sb), stdout);
	if (rr->rec && rr->rec->body) {
		fputs("  ", stdout);
		dump_text(stdout, rr, &sb);
	}
	strbuf_fini(&sb);
}

/* dump's JSON object of the record, or null. */
static json_t *record_json(const struct replay_rec *rr)
{
	json_t *j;

	if (!rr->rec || !rr->rec->body)
		return json_null();
	j = dump_json_object(rr);
	json_object_del(j, "offset"); /* an excerpt does not know it */
	return j;
}

static json_t *ids_json(const struct mcpt_excerpt *x)
{
	char kid[17], tk[17];
	struct strbuf sb = STRBUF_INIT;
	json_t *o;

	mcpt_key_id_hex(x->key_id, kid);
	mcpt_key_id_hex(x->trusted_key_id, tk);
	strbuf_hex(&sb, x->trace_id, sizeof(x->trace_id));
	o = json_pack("{s:s?, s:s, s:s, s:b}", "trace_id", x->header ? strbuf_str(&sb) : NULL,
		      "key_id", kid, "trusted_key_id", tk, "signatures_checked",
		      x->signatures_checked);
	strbuf_fini(&sb);
	return o;
}

static json_t *seal_json(const struct mcpt_excerpt *x)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o;

	strbuf_hex(&sb, x->seal_digest, sizeof(x->seal_digest));
	o = json_pack("{s:o, s:o, s:o, s:o, s:b, s:i, s:s?}", "index", json_u64(x->seal_index),
		      "first_record", json_u64(x->first_record), "record_count",
		      json_u64(x->record_count), "seal_record", json_u64(x->seal_record), "final",
		      (x->seal_flags & MCPT_SEAL_FINAL) != 0, "end_reason", (int)x->end_reason,
		      "digest", strbuf_str(&sb));
	strbuf_fini(&sb);
	return o;
}

static int print_json(const struct mcpt_excerpt *x, const Mcpt__Header *h,
		      const struct replay_rec *rr)
{
	const Mcpt__Host *host = h ? h->host : NULL;
	char msg[1024];
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:s}", "kind", "excerpt", "verdict",
			      mcpt_excerpt_verdict_name(x), "exit_code",
			      mcpt_verdict_exit_code(x->verdict), "code", mcpt_code_name(x->code),
			      "message", mcpt_sanitize(msg, sizeof(msg), x->message));
	int err = o ? 0 : -ENOMEM;

	err = err ?: json_object_update_new(o, ids_json(x));
	err = err ?: json_put(o, "record", json_u64(x->record));
	err = err ?: json_put(o, "index_min", json_u64(x->index_min));
	err = err ?: json_put(o, "index_max", json_u64(x->index_max));
	err = err ?: json_put(o, "seal", seal_json(x));
	err = err
		      ?: json_put(o, "chunk",
				  json_pack("{s:o, s:o, s:i, s:i}", "leaf_index",
					    json_u64(x->leaf_index), "leaf_count",
					    json_u64(x->leaf_count), "in_chunk", (int)x->in_chunk,
					    "frames", (int)x->chunk_frames));
	err = err
		      ?: json_put(o, "host",
				  host ? json_bytes(host->hostname.data, host->hostname.len)
				       : json_null());
	err = err ?: json_put(o, "content", record_json(rr));
	if (!err && (json_dumpf(o, stdout, JSON_COMPACT) || fputc('\n', stdout) == EOF))
		err = -EIO;
	json_decref(o);
	return err;
}

int verify_excerpt(const char *path, int fd, const struct mcpt_pubkey *key, bool allow_unsigned,
		   bool json)
{
	struct mcpt_verify_opts vo = {.key = key, .allow_unsigned = allow_unsigned};
	Mcpt__Header *h = NULL;
	struct mcpt_excerpt x;
	struct replay_rec rr = {0};
	struct mcpt_valtab *vt = mcpt_valtab__new();
	char msg[1024];
	size_t len = 0;
	uint8_t *buf = slurp(path, fd, &len);
	int code = MW_EXIT_USAGE;

	if (!buf)
		return code;
	if (mcpt_excerpt_verify(buf, len, &vo, &x)) {
		p_err("failed to verify excerpt %s: %s", path, strerror(ENOMEM));
		goto cleanup;
	}
	if (x.header && x.verdict != MCPT_INVALID)
		h = mcpt__header__unpack(NULL, x.header_len, x.header);
	record_view(&x, vt, &rr);
	if (json && print_json(&x, h, &rr))
		p_err("failed to write the report: %s", strerror(ENOMEM));
	else if (!json)
		print_text(&x, h, &rr);
	code = mcpt_verdict_exit_code(x.verdict);
	if (x.verdict != MCPT_VALID_COMPLETE)
		p_err("%s: %s: %s", path, mcpt_excerpt_verdict_name(&x),
		      mcpt_sanitize(msg, sizeof(msg), x.message));
cleanup:
	mcpt_valtab__detach(vt, (ProtobufCMessage *)rr.msg);
	if (rr.msg)
		protobuf_c_message_free_unpacked((ProtobufCMessage *)rr.msg, NULL);
	if (h)
		mcpt__header__free_unpacked(h, NULL);
	mcpt_valtab__free(vt);
	free(buf);
	return code;
}
