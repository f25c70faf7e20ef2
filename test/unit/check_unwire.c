/*
 * check_unwire.c - the hand-written Event decoder (proto/unwire.c) against protobuf-c's unpack:
 * on random records packed by protobuf-c, and on every field at its default, its type's
 * extremes and 7-bit boundaries and byte strings up to 64 KiB, it decodes every record, field
 * for field as protobuf-c does; on hand-made unusual records (repeated, unknown or unpacked
 * fields, wrong wire types, over-long and non-canonical varints, tags and length prefixes,
 * truncated packed args) it either decodes exactly as protobuf-c or declines, and it declines
 * everything protobuf-c refuses; on damaged copies of random records (cut at every length,
 * bytes flipped, inserted, appended) whatever it decodes protobuf-c decodes the same way.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wire_testlib.h"

static void same_bytes_field(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
	ck_assert_uint_eq(a->len, b->len);
	ck_assert(!a->data == !b->data); /* protobuf-c: NULL exactly when empty */
	if (a->len)
		ck_assert_mem_eq(a->data, b->data, a->len);
}

/* Every field of two decoded Events. */
static void same_event(const Mcpt__Event *a, const Mcpt__Event *b)
{
	ck_assert_ptr_eq(a->base.descriptor, b->base.descriptor);
	ck_assert_uint_eq(a->base.n_unknown_fields, b->base.n_unknown_fields);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->ts, b->ts);
	ck_assert_uint_eq(a->pid, b->pid);
	ck_assert_uint_eq(a->tid, b->tid);
	ck_assert_int_eq(a->op, b->op);
	ck_assert_int_eq(a->ret, b->ret);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->dev, b->dev);
	ck_assert_uint_eq(a->ino, b->ino);
	ck_assert_uint_eq(a->pstart, b->pstart);
	ck_assert_uint_eq(a->uid, b->uid);
	ck_assert_uint_eq(a->gid, b->gid);
	ck_assert_uint_eq(a->path_ref, b->path_ref);
	ck_assert_uint_eq(a->abs_path_ref, b->abs_path_ref);
	ck_assert_uint_eq(a->opened_path_ref, b->opened_path_ref);
	ck_assert_uint_eq(a->data_ref, b->data_ref);
	ck_assert_uint_eq(a->path2_ref, b->path2_ref);
	ck_assert_uint_eq(a->abs_path2_ref, b->abs_path2_ref);
	ck_assert_uint_eq(a->data2_ref, b->data2_ref);
	ck_assert_uint_eq(a->task_ref, b->task_ref);
	ck_assert_int_eq(a->ts_delta, b->ts_delta);
	ck_assert_int_eq(a->child_task, b->child_task);
	ck_assert_uint_eq(a->n_args, b->n_args);
	ck_assert(!a->args == !b->args);
	for (size_t i = 0; i < a->n_args; i++)
		ck_assert_int_eq(a->args[i], b->args[i]);
	same_bytes_field(&a->path, &b->path);
	same_bytes_field(&a->abs_path, &b->abs_path);
	same_bytes_field(&a->opened_path, &b->opened_path);
	same_bytes_field(&a->data, &b->data);
	same_bytes_field(&a->path2, &b->path2);
	same_bytes_field(&a->abs_path2, &b->abs_path2);
	same_bytes_field(&a->data2, &b->data2);
	same_bytes_field(&a->payload, &b->payload);
}

enum outcome { DECODED, DECLINED_OK, DECLINED_BAD };

/* Decodes p both ways. Whatever unwire decodes, protobuf-c decodes the same way; returns
 * DECODED, or DECLINED_OK / DECLINED_BAD when unwire declined a record protobuf-c accepts /
 * refuses. */
static enum outcome compare(const uint8_t *p, size_t len)
{
	Mcpt__Event *ref = mcpt__event__unpack(NULL, len, p);
	Mcpt__Event *mine = mcpt_unwire_event(NULL, len, p);
	enum outcome o = mine ? DECODED : ref ? DECLINED_OK : DECLINED_BAD;

	if (mine) {
		ck_assert_msg(ref != NULL, "decoded a record protobuf-c refuses (%zu bytes)", len);
		same_event(mine, ref);
		mcpt__event__free_unpacked(mine, NULL); /* freed as protobuf-c's own */
	}
	if (ref)
		mcpt__event__free_unpacked(ref, NULL);
	return o;
}

static void bytes_fields(Mcpt__Event *e, ProtobufCBinaryData *b[8])
{
	b[0] = &e->path, b[1] = &e->abs_path, b[2] = &e->opened_path, b[3] = &e->data;
	b[4] = &e->path2, b[5] = &e->abs_path2, b[6] = &e->data2, b[7] = &e->payload;
}

static const uint8_t blob[300] = {'/', 'h', 'o', 'm', 'e', 0x80, 0xff, 0};

/* A random Event (args has room for 6) packed by protobuf-c into out (4 KiB); its length. */
static size_t random_event(uint64_t *x, int64_t *args, uint8_t *out)
{
	Mcpt__Event e = MCPT__EVENT__INIT;
	ProtobufCBinaryData *b[8];

	bytes_fields(&e, b);
	e.seq = rand_width(x);
	e.ts = rand_width(x);
	e.pid = (uint32_t)rand_width(x);
	e.tid = (uint32_t)rand_width(x);
	e.op = (Mcpt__Op)(next_rand(x) % 4 ? next_rand(x) % 210 : (uint32_t)rand_width(x));
	e.ret = (int64_t)rand_width(x);
	e.flags = (uint32_t)rand_width(x);
	e.dev = rand_width(x);
	e.ino = rand_width(x);
	e.pstart = rand_width(x);
	e.uid = (uint32_t)rand_width(x);
	e.gid = (uint32_t)rand_width(x);
	e.path_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x); /* value-table references */
	e.abs_path_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.opened_path_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.data_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.path2_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.abs_path2_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.data2_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x);
	e.task_ref = next_rand(x) % 3 ? 0 : (uint32_t)rand_width(x); /* task table */
	e.ts_delta = next_rand(x) % 3 ? 0 : (int64_t)rand_width(x); /* timestamp deltas */
	e.child_task = next_rand(x) % 4 == 0; /* fork tasks */
	for (size_t i = 0; i < 8; i++) {
		b[i]->len = next_rand(x) % 3 ? 0 : next_rand(x) % sizeof(blob);
		b[i]->data = (uint8_t *)blob;
	}
	e.n_args = next_rand(x) % 7;
	for (size_t i = 0; i < e.n_args; i++)
		args[i] = (int64_t)rand_width(x);
	e.args = args;
	ck_assert_uint_le(protobuf_c_message_get_packed_size(&e.base), 4096);
	return protobuf_c_message_pack(&e.base, out);
}

START_TEST(random_records)
{
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	uint8_t out[4096];
	int64_t args[6];

	for (int round = 0; round < 5000; round++) {
		size_t len = random_event(&x, args, out);

		ck_assert_int_eq(compare(out, len), DECODED); /* every record a writer makes */
	}
}
END_TEST

START_TEST(edge_values)
{
	uint8_t *big = malloc(65536), *out = malloc(8 * 65536 + 4096);

	ck_assert(big && out);
	for (size_t i = 0; i < 65536; i++)
		big[i] = (uint8_t)(i * 131 + 7);
	for (size_t k = 0; k < 64; k++) {
		Mcpt__Event e;
		int64_t args[4];

		edge_event(&e, k, args, big);
		ck_assert_int_eq(compare(out, protobuf_c_message_pack(&e.base, out)), DECODED);
	}
	free(out);
	free(big);
}
END_TEST

struct unusual {
	const char *what;
	const char *bytes; /* the record */
	size_t len;
	enum outcome want;
};

#define U(what, s, want)                                                                           \
	{                                                                                          \
		what, s, sizeof(s) - 1, want                                                       \
	}

static const struct unusual unusual[] = {
	/* decoded as protobuf-c decodes them */
	U("empty record", "", DECODED),
	U("uint32 as a 10-byte varint (-1)", "\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECODED),
	U("uint32 past 32 bits", "\x18\x80\x80\x80\x80\x10", DECODED),
	U("op -1 (10 bytes)", "\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", DECODED),
	U("op past 31 bits", "\x28\x80\x80\x80\x80\x08", DECODED),
	U("10th varint byte past bit 63", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", DECODED),
	U("sint64 ret, 10 bytes", "\x30\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", DECODED),
	U("non-canonical varint", "\x10\x80\x80\x00", DECODED),
	U("non-canonical 2-byte tag", "\x88\x00\x05", DECODED),
	U("field 16 (2-byte tag)", "\x80\x01\x2a", DECODED),
	U("field 21 (2-byte tag)", "\xaa\x01\x02hi", DECODED),
	U("empty packed args", "\x6a\x00", DECODED),
	U("packed args, 10-byte varint", "\x6a\x0b\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECODED),
	U("empty bytes field", "\x42\x00", DECODED),
	U("non-canonical 5-byte length", "\x42\x83\x80\x80\x80\x00\x61\x62\x63", DECODED),
	/* declined: protobuf-c accepts them and decodes them itself */
	U("repeated scalar", "\x08\x01\x08\x02", DECLINED_OK),
	U("repeated bytes", "\x42\x01\x61\x42\x01\x62", DECLINED_OK),
	U("args twice", "\x6a\x01\x02\x6a\x01\x04", DECLINED_OK),
	U("args not packed", "\x68\x02", DECLINED_OK),
	U("field 22 (path_ref)", "\xb0\x01\x01", DECODED),
	U("field 28 (data2_ref), 5-byte varint", "\xe0\x01\xff\xff\xff\xff\x0f", DECODED),
	U("field 29 (task_ref)", "\xe8\x01\x01", DECODED),
	U("field 29, 5-byte varint", "\xe8\x01\xff\xff\xff\xff\x0f", DECODED),
	U("task_ref twice", "\xe8\x01\x01\xe8\x01\x02", DECLINED_OK),
	U("field 29 as bytes", "\xea\x01\x01\x01", DECLINED_BAD),
	U("field 30 (ts_delta -1)", "\xf0\x01\x01", DECODED),
	U("field 30, 10-byte varint", "\xf0\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECODED),
	U("ts_delta twice", "\xf0\x01\x01\xf0\x01\x02", DECLINED_OK),
	U("field 30 as bytes", "\xf2\x01\x01\x01", DECLINED_BAD),
	U("field 31 (child_task)", "\xf8\x01\x01", DECODED),
	U("field 31 as 5", "\xf8\x01\x05", DECODED),
	U("field 31, 2-byte varint 1", "\xf8\x01\x81\x00", DECLINED_OK),
	U("field 31, only bits past 64", "\xf8\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02",
	  DECLINED_OK),
	U("child_task twice", "\xf8\x01\x01\xf8\x01\x00", DECLINED_OK),
	U("field 31 as bytes (protobuf-c takes it)", "\xfa\x01\x01\x01", DECLINED_OK),
	U("unknown field 32", "\x80\x02\x01", DECLINED_OK),
	U("field 28 as bytes", "\xe2\x01\x01\x01", DECLINED_BAD),
	U("unknown field 1000", "\xc0\x3e\x01", DECLINED_OK),
	U("3-byte tag of field 1", "\x88\x80\x00\x01", DECLINED_OK),
	/* declined: protobuf-c refuses them */
	U("tag 0", "\x00\x01", DECLINED_BAD),
	U("tag 0 with a wire type", "\x02\x00", DECLINED_BAD),
	U("bytes field as a varint", "\x40\x01", DECLINED_BAD),
	U("varint field as bytes", "\x0a\x01\x01", DECLINED_BAD),
	U("fixed64 wire type", "\x09\x01\x02\x03\x04\x05\x06\x07\x08", DECLINED_BAD),
	U("group wire type", "\x0b\x0c", DECLINED_BAD),
	U("11-byte varint", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", DECLINED_BAD),
	U("varint cut", "\x08\xff", DECLINED_BAD),
	U("tag cut", "\x80", DECLINED_BAD),
	U("length past the end", "\x42\x05\x61\x62", DECLINED_BAD),
	U("6-byte length", "\x42\x80\x80\x80\x80\x80\x00", DECLINED_BAD),
	U("length over INT_MAX", "\x42\xff\xff\xff\xff\x0f", DECLINED_BAD),
	U("packed args, last varint cut", "\x6a\x02\x01\x80", DECLINED_BAD),
	U("packed args, 11-byte varint", "\x6a\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECLINED_BAD),
};

START_TEST(unusual_records)
{
	const struct unusual *u = &unusual[_i];

	ck_assert_msg(compare((const uint8_t *)u->bytes, u->len) == u->want, "%s", u->what);
}
END_TEST

/* Damaged copies of random records: cut at every length, one byte changed, one inserted,
 * bytes appended. */
START_TEST(damaged_records)
{
	uint64_t x = 0x2545f4914f6cdd1dull + (uint64_t)_i;
	uint8_t out[4096], bad[4200];
	int64_t args[6];
	unsigned counts[3] = {0};

	for (int round = 0; round < 400; round++) {
		size_t len = random_event(&x, args, out), at;

		for (size_t cut = 0; cut < len; cut++)
			counts[compare(out, cut)]++;
		for (int k = 0; k < 32 && len; k++) {
			memcpy(bad, out, len);
			at = next_rand(&x) % len;
			bad[at] = (uint8_t)next_rand(&x);
			counts[compare(bad, len)]++;
			memcpy(bad, out, at);
			bad[at] = (uint8_t)next_rand(&x);
			memcpy(bad + at + 1, out + at, len - at);
			counts[compare(bad, len + 1)]++;
		}
		memcpy(bad, out, len);
		for (size_t i = 0; i < 16; i++)
			bad[len + i] = (uint8_t)next_rand(&x);
		for (size_t extra = 1; extra <= 16; extra++)
			counts[compare(bad, len + extra)]++;
	}
	/* the damage produced all three outcomes */
	ck_assert_uint_gt(counts[DECODED], 0);
	ck_assert_uint_gt(counts[DECLINED_OK], 0);
	ck_assert_uint_gt(counts[DECLINED_BAD], 0);
}
END_TEST

/* In an arena, as the verifier calls it: the record's bytes are copied, not referenced. */
START_TEST(arena_copies)
{
	static const uint8_t rec[] = {0x08, 0x07, 0x42, 0x03, 'a', 'b',
				      'c',  0x6a, 0x02, 0x03, 0x04};
	uint8_t copy[sizeof(rec)];
	struct mcpt_arena a;
	Mcpt__Event *e;

	memcpy(copy, rec, sizeof(rec));
	mcpt_arena_init(&a);
	mcpt_arena_reset(&a, mcpt_arena_budget(sizeof(rec)));
	e = mcpt_unwire_event(&a.pb, sizeof(copy), copy);
	ck_assert_ptr_nonnull(e);
	memset(copy, 0, sizeof(copy));
	ck_assert_uint_eq(e->seq, 7);
	ck_assert(e->path.len == 3 && memcmp(e->path.data, "abc", 3) == 0);
	ck_assert(e->n_args == 2 && e->args[0] == -2 && e->args[1] == 2);
	mcpt_arena_fini(&a);
}
END_TEST

Suite *unwire_suite(void);

Suite *unwire_suite(void)
{
	Suite *s = suite_create("unwire");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_loop_test(core, random_records, 0, 4);
	tcase_add_test(core, edge_values);
	tcase_add_test(core, arena_copies);
	tcase_add_loop_test(errors, unusual_records, 0, sizeof(unusual) / sizeof(unusual[0]));
	tcase_add_loop_test(errors, damaged_records, 0, 4);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
