/*
 * check_encode.c - the collector's record encoder (collector/encode.c): slots map to their
 * fields, a record whose own lengths do not add up is refused, argv is cut after 64 entries
 * and flagged, trailing zero arguments are trimmed, device numbers become stat()'s encoding,
 * channel records become StdioFrames with gaps explicit; the hand-written wire packer gives
 * exactly protobuf-c's bytes.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "encode.h"
#include "wire.h"

static struct mw_event *event_with(const char *const *slots, const size_t *lens, size_t *size)
{
	size_t total = MW_EVENT_HDR_SIZE, off = 0;
	struct mw_event *e;
	int i;

	for (i = 0; i < MW_SLOTS; i++)
		total += lens[i];
	e = calloc(1, total);
	for (i = 0; i < MW_SLOTS; i++) {
		e->slen[i] = (uint16_t)lens[i];
		memcpy(e->data + off, slots[i], lens[i]);
		off += lens[i];
	}
	e->size = (uint16_t)total;
	*size = total;
	return e;
}

START_TEST(slots_to_fields)
{
	const char *s[MW_SLOTS] = { "rel", "/w/rel", "/real", "", "", "", "", "" };
	size_t l[MW_SLOTS] = { 3, 6, 5, 0, 0, 0, 0, 0 }, size;
	struct mw_event *e = event_with(s, l, &size);
	struct encoded_event out;

	e->op = MW_OP_OPENAT;
	e->ret = -2;
	e->arg[0] = (uint64_t)-100;
	e->arg[1] = 0x241;
	e->arg[MW_A_DEV] = (254ull << 20) | 3;
	e->arg[MW_A_INO] = 42;
	ck_assert_int_eq(encode_event(e, size, &out), 0);
	ck_assert_int_eq(out.msg.op, MCPT__OP__OP_OPENAT);
	ck_assert_int_eq(out.msg.ret, -2);
	ck_assert_uint_eq(out.msg.n_args, 2); /* arg2, arg3 zero: trimmed */
	ck_assert_int_eq(out.msg.args[0], -100);
	ck_assert_uint_eq(out.msg.dev, makedev(254, 3));
	ck_assert_uint_eq(out.msg.ino, 42);
	ck_assert(out.msg.path.len == 3 && !memcmp(out.msg.path.data, "rel", 3));
	ck_assert(out.msg.abs_path.len == 6 && !memcmp(out.msg.abs_path.data, "/w/rel", 6));
	ck_assert(out.msg.opened_path.len == 5 && !memcmp(out.msg.opened_path.data, "/real", 5));
	free(e);
}
END_TEST

START_TEST(lengths_that_do_not_add_up)
{
	const char *s[MW_SLOTS] = { "abcd", "", "", "", "", "", "", "" };
	size_t l[MW_SLOTS] = { 4, 0, 0, 0, 0, 0, 0, 0 }, size;
	struct mw_event *e = event_with(s, l, &size);
	struct encoded_event out;
	Mcpt__StdioFrame f;

	e->slen[0] = 5; /* one past the record */
	ck_assert_int_eq(encode_event(e, size, &out), -EBADMSG);
	e->slen[0] = 4;
	e->size = (uint16_t)(size + 1); /* claims more than was delivered */
	ck_assert_int_eq(encode_event(e, size, &out), -EBADMSG);
	ck_assert_int_eq(encode_stdio(e, size, &f), -EBADMSG);
	ck_assert_int_eq(encode_event(e, MW_EVENT_HDR_SIZE - 1, &out), -EBADMSG);
	free(e);
}
END_TEST

START_TEST(argv_capped_at_64)
{
	char argv[200 * 2];
	const char *s[MW_SLOTS] = { "", "", "", "", "", argv, "", "" };
	size_t l[MW_SLOTS] = { 0, 0, 0, 0, 0, sizeof(argv), 0, 0 }, size;
	struct mw_event *e;
	struct encoded_event out;

	for (size_t i = 0; i < sizeof(argv); i += 2) {
		argv[i] = 'a';
		argv[i + 1] = 0;
	}
	e = event_with(s, l, &size);
	e->op = MW_OP_EXEC;
	ck_assert_int_eq(encode_event(e, size, &out), 0);
	ck_assert_uint_eq(out.msg.data.len, 64 * 2);
	ck_assert(out.msg.flags & MW_F_ARGV_ENTRIES);
	free(e);
}
END_TEST

START_TEST(channel_records)
{
	const char *s[MW_SLOTS] = { "", "", "", "", "", "{\"id\":1}\n", "", "" };
	size_t l[MW_SLOTS] = { 0, 0, 0, 0, 0, 9, 0, 0 }, size;
	struct mw_event *e = event_with(s, l, &size);
	Mcpt__StdioFrame f;

	e->op = MW_OP_STDIO_WRITE;
	e->flags = MW_F_LAST;
	e->arg[0] = 1;
	e->arg[1] = 4096;
	e->arg[2] = 9;
	ck_assert(encode_is_stdio(e));
	ck_assert_int_eq(encode_stdio(e, size, &f), 0);
	ck_assert_int_eq(f.dir, MCPT__STDIO_FRAME__DIR__WRITE);
	ck_assert_uint_eq(f.stream_offset, 4096);
	ck_assert(f.last && f.data.len == 9 && f.gap_len == 0);
	e->op = MW_OP_STDIO_MOVED;
	e->flags = MW_F_GAP;
	e->arg[2] = 1000;
	e->arg[3] = MW_CHAN_IN;
	ck_assert_int_eq(encode_stdio(e, size, &f), 0);
	ck_assert_int_eq(f.dir, MCPT__STDIO_FRAME__DIR__READ);
	ck_assert_uint_eq(f.gap_len, 1000);
	ck_assert_uint_eq(f.data.len, 0);
	free(e);
}
END_TEST

/* Packs msg both ways and compares the bytes. */
static void same_bytes(const ProtobufCMessage *msg, size_t len, size_t max, const uint8_t *mine)
{
	size_t want = protobuf_c_message_get_packed_size(msg);
	uint8_t *ref = malloc(want + 1);

	ck_assert_uint_le(len, max);
	ck_assert_uint_eq(protobuf_c_message_pack(msg, ref), want);
	ck_assert_uint_eq(len, want);
	ck_assert_mem_eq(mine, ref, want);
	free(ref);
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A value of a random width, so every varint length is covered. */
static uint64_t rand_width(uint64_t *x)
{
	uint64_t v = next_rand(x);
	unsigned bits = (unsigned)(next_rand(x) % 65);

	if (bits == 0)
		return 0;
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

START_TEST(wire_event_matches_protobuf_c)
{
	static const uint8_t blob[300] = { 1, 2, 3 };
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	uint8_t out[4096];
	int round;

	for (round = 0; round < 2000; round++) {
		Mcpt__Event e = MCPT__EVENT__INIT;
		ProtobufCBinaryData *b[8] = { &e.path, &e.abs_path, &e.opened_path, &e.data,
					      &e.path2, &e.abs_path2, &e.data2, &e.payload };
		int64_t args[4];
		size_t i, len;

		e.seq = rand_width(&x);
		e.ts = rand_width(&x);
		e.pid = (uint32_t)rand_width(&x);
		e.tid = (uint32_t)rand_width(&x);
		e.op = (Mcpt__Op)(next_rand(&x) % 200);
		e.ret = (int64_t)rand_width(&x);
		e.flags = (uint32_t)rand_width(&x);
		e.dev = rand_width(&x);
		e.ino = rand_width(&x);
		e.pstart = rand_width(&x);
		e.uid = (uint32_t)rand_width(&x);
		e.gid = (uint32_t)rand_width(&x);
		for (i = 0; i < 8; i++) {
			b[i]->len = next_rand(&x) % 3 ? 0 : next_rand(&x) % sizeof(blob);
			b[i]->data = (uint8_t *)blob;
		}
		e.n_args = next_rand(&x) % 5;
		for (i = 0; i < e.n_args; i++)
			args[i] = (int64_t)rand_width(&x);
		e.args = args;
		len = wire_event_pack(&e, out);
		same_bytes(&e.base, len, wire_event_max(&e), out);
	}
}
END_TEST

START_TEST(wire_stdio_matches_protobuf_c)
{
	static const uint8_t blob[600] = { '{', '}' };
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint8_t out[2048];
	int round;

	for (round = 0; round < 2000; round++) {
		Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;
		size_t len;

		f.ts = rand_width(&x);
		f.pid = (uint32_t)rand_width(&x);
		f.tid = (uint32_t)rand_width(&x);
		f.fd = (int32_t)rand_width(&x);
		f.dir = (Mcpt__StdioFrame__Dir)(next_rand(&x) % 3);
		f.stream_offset = rand_width(&x);
		f.data.len = next_rand(&x) % 2 ? 0 : next_rand(&x) % sizeof(blob);
		f.data.data = (uint8_t *)blob;
		f.orig_len = (uint32_t)rand_width(&x);
		f.chunk = (uint32_t)rand_width(&x);
		f.last = next_rand(&x) % 2;
		f.seq = rand_width(&x);
		f.flags = (uint32_t)rand_width(&x);
		f.gap_len = rand_width(&x);
		len = wire_stdio_pack(&f, out);
		same_bytes(&f.base, len, wire_stdio_max(&f), out);
	}
}
END_TEST

Suite *encode_suite(void);
Suite *encode_suite(void)
{
	Suite *s = suite_create("encode");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");
	TCase *wire = tcase_create("wire");

	tcase_add_test(core, slots_to_fields);
	tcase_add_test(core, argv_capped_at_64);
	tcase_add_test(core, channel_records);
	tcase_add_test(errors, lengths_that_do_not_add_up);
	tcase_add_loop_test(wire, wire_event_matches_protobuf_c, 0, 4);
	tcase_add_test(wire, wire_stdio_matches_protobuf_c);
	suite_add_tcase(s, wire);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
