/*
 * framing.c - the byte-level container of a trace (TRACE-FORMAT.md 4.1, 4.2): the 12-byte
 * preamble, minimal uvarint32 lengths, and the rule that a Record is exactly one
 * length-delimited field whose number is the record type. Nothing here allocates or reads a
 * file; the reader and the writer build on it. Decoding is strict on purpose: one encoding per
 * value, so the bytes that are hashed are the only way to say what they say.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

size_t mcpt_uvarint_put(uint8_t *out, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

int mcpt_uvarint_get(const uint8_t *p, size_t n, uint32_t *v, size_t *used)
{
	uint64_t val = 0;
	size_t i;

	/* most prefixes and tags: one byte, or two whose second is not 0 (minimal) */
	if (n && p[0] < 0x80) {
		*v = p[0];
		*used = 1;
		return 0;
	}
	if (n >= 2 && p[1] < 0x80 && p[1]) {
		*v = (p[0] & 0x7fu) | (uint32_t)p[1] << 7;
		*used = 2;
		return 0;
	}
	for (i = 0; i < MCPT_VARINT_MAX; i++) {
		if (i == n)
			return -EAGAIN;
		val |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] & 0x80)
			continue;
		if (val > UINT32_MAX)
			return -EOVERFLOW;
		if (i > 0 && p[i] == 0)
			return -EINVAL; /* e.g. 80 00: a shorter encoding exists */
		*v = (uint32_t)val;
		*used = i + 1;
		return 0;
	}
	return -EOVERFLOW; /* a continuation bit in the 5th byte */
}

void mcpt_preamble(uint8_t out[MCPT_PREAMBLE_LEN], uint16_t minor)
{
	memcpy(out, MCPT_MAGIC, MCPT_MAGIC_LEN);
	out[8] = MCPT_FORMAT_MAJOR & 0xff;
	out[9] = MCPT_FORMAT_MAJOR >> 8;
	out[10] = minor & 0xff;
	out[11] = minor >> 8;
}

/* What a file that is not a trace probably is, so the message can say what to do. */
static const char *format_hint(const uint8_t *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} known[] = {
		{"\x1f\x8b", 2, "gzip-compressed data: decompress it first (zcat)"},
		{"\x28\xb5\x2f\xfd", 4, "zstd-compressed data: decompress it first (zstdcat)"},
		{"\x0a\x0d\x0d\x0a", 4, "a pcapng or Falco scap capture, not an mcpwitness trace"},
		{"\xfd\x37\x7a\x58\x5a", 5, "xz-compressed data: decompress it first (xzcat)"},
		{"\xff\xfe", 2, "UTF-16 text (byte order mark), not a trace"},
		{"\xfe\xff", 2, "UTF-16 text (byte order mark), not a trace"},
		{MCPT_EXCERPT_MAGIC, 8,
		 "an mcpwitness excerpt: check it with mcpwitness verify from a file, not a pipe"},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (n >= known[i].len && memcmp(p, known[i].magic, known[i].len) == 0)
			return known[i].what;
	if (n >= 5 && memcmp(p + 1, "MCPT", 4) == 0)
		return "the magic is mangled (text-mode transfer: CR-LF conversion or 8-bit "
		       "stripping?)";
	return "wrong magic";
}

enum mcpt_code mcpt_preamble_check(const uint8_t *p, size_t n, char *msg, size_t len)
{
	uint16_t major;

	if (n == 0) {
		snprintf(msg, len, "empty file: not a trace");
		return MCPT_E_NOT_A_TRACE;
	}
	if (n < MCPT_PREAMBLE_LEN) {
		size_t m = n < MCPT_MAGIC_LEN ? n : MCPT_MAGIC_LEN;

		if (memcmp(p, MCPT_MAGIC, m) == 0) {
			snprintf(msg, len, "truncated inside the preamble (%zu of 12 bytes)", n);
			return MCPT_E_TRUNCATED;
		}
		snprintf(msg, len, "not a trace (%zu bytes): %s", n, format_hint(p, n));
		return MCPT_E_NOT_A_TRACE;
	}
	if (memcmp(p, MCPT_MAGIC, MCPT_MAGIC_LEN) != 0) {
		snprintf(msg, len, "not a trace: %s", format_hint(p, n));
		return MCPT_E_NOT_A_TRACE;
	}
	major = (uint16_t)(p[8] | p[9] << 8);
	if (major != MCPT_FORMAT_MAJOR) {
		snprintf(msg, len,
			 "trace format major version %u is not supported (this reader: %u)", major,
			 MCPT_FORMAT_MAJOR);
		return MCPT_E_VERSION;
	}
	return MCPT_OK;
}

int mcpt_record_split(const uint8_t *rec, size_t len, struct mcpt_record_view *out, char *why,
		      size_t whylen)
{
	uint32_t tag, inner;
	size_t tl, il;
	int err;

	err = mcpt_uvarint_get(rec, len, &tag, &tl);
	if (err) {
		snprintf(why, whylen, "%s tag varint", err == -EAGAIN ? "truncated" : "bad");
		return -EBADMSG;
	}
	if ((tag & 7) != 2) {
		snprintf(why, whylen, "field %u has wire type %u, not length-delimited", tag >> 3,
			 tag & 7);
		return -EBADMSG;
	}
	if ((tag >> 3) == 0) {
		snprintf(why, whylen, "field number 0");
		return -EBADMSG;
	}
	err = mcpt_uvarint_get(rec + tl, len - tl, &inner, &il);
	if (err) {
		snprintf(why, whylen, "%s inner length varint",
			 err == -EAGAIN ? "truncated" : "bad");
		return -EBADMSG;
	}
	if (inner > len - tl - il) {
		snprintf(why, whylen, "inner length %u exceeds the record (%zu bytes left)", inner,
			 len - tl - il);
		return -EBADMSG;
	}
	if (inner < len - tl - il) {
		snprintf(why, whylen, "%zu bytes after the record's field (a second field?)",
			 len - tl - il - inner);
		return -EBADMSG;
	}
	out->type = tag >> 3;
	out->body_off = tl + il;
	out->body_len = inner;
	return 0;
}

size_t mcpt_record_len(uint32_t type, size_t body_len)
{
	return mcpt_uvarint_len(type << 3 | 2) + mcpt_uvarint_len((uint32_t)body_len) + body_len;
}

size_t mcpt_frame_head(uint8_t *out, uint32_t type, size_t body_len)
{
	size_t n;

	n = mcpt_uvarint_put(out, (uint32_t)mcpt_record_len(type, body_len));
	n += mcpt_uvarint_put(out + n, type << 3 | 2);
	n += mcpt_uvarint_put(out + n, (uint32_t)body_len);
	return n;
}

const ProtobufCMessageDescriptor *mcpt_record_descriptor(enum mcpt_type type)
{
	if (type == MCPT_T_HEADER)
		return &mcpt__header__descriptor;
	if (type == MCPT_T_SEAL)
		return &mcpt__seal__descriptor;
	return mcpt_type_descriptor(type);
}

__attribute__((format(printf, 3, 4))) void mcpt_errf(char *err, size_t errlen, const char *fmt,
						      ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const ProtobufCMessageDescriptor *mcpt_type_descriptor(uint32_t type)
{
	switch (type) {
	case MCPT_T_EVENT:
		return &mcpt__event__descriptor;
	case MCPT_T_MARK:
		return &mcpt__mark__descriptor;
	case MCPT_T_STDIO:
		return &mcpt__stdio_frame__descriptor;
	case MCPT_T_LOSS:
		return &mcpt__loss__descriptor;
	case MCPT_T_PROC:
		return &mcpt__proc_info__descriptor;
	case MCPT_T_NOTE:
		return &mcpt__annotation__descriptor;
	case MCPT_T_PATH_DEF:
		return &mcpt__path_def__descriptor;
	case MCPT_T_TASK_DEF:
		return &mcpt__task_def__descriptor;
	case MCPT_T_EPOCH_CERT:
		return &mcpt__epoch_cert__descriptor;
	default:
		return NULL;
	}
}
