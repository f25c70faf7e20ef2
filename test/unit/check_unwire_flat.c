/*
 * check_unwire_flat.c - the hand-written decoder of the flat record types
 * (proto/unwire_flat.c) against protobuf-c's unpack, for every record type: random records of
 * PathDef, TaskDef, StdioFrame (and whatever else it takes) are decoded, field for field as
 * protobuf-c decodes them; hand-made unusual records are decoded the same way or declined;
 * damaged copies are, whenever decoded, decoded as protobuf-c does, and declined whenever
 * protobuf-c refuses them. Also the Event head a skipping reader takes (mcpt_unwire_event_head):
 * the op, ts and ts_delta mcpt_unwire_event decodes, declined exactly when it declines.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wire_testlib.h"

enum outcome { DECODED, DECLINED_OK, DECLINED_BAD };

static unsigned views; /* PathDef views given, in this test */
static bool views_want; /* the last record compared is a PathDef with both fields */

/* Every field's value in two messages of descriptor d. */
static void same_message(const ProtobufCMessageDescriptor *d, const ProtobufCMessage *a,
			 const ProtobufCMessage *b)
{
	ck_assert_ptr_eq(a->descriptor, b->descriptor);
	ck_assert_uint_eq(a->n_unknown_fields, b->n_unknown_fields);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *pa = (const char *)a + f->offset, *pb = (const char *)b + f->offset;

		switch (f->type) {
		case PROTOBUF_C_TYPE_BYTES: {
			const ProtobufCBinaryData *x = (const void *)pa, *y = (const void *)pb;

			ck_assert_uint_eq(x->len, y->len);
			ck_assert_msg(!x->data == !y->data, "field %s: NULL-ness", f->name);
			if (x->len)
				ck_assert_mem_eq(x->data, y->data, x->len);
			break;
		}
		case PROTOBUF_C_TYPE_STRING:
		case PROTOBUF_C_TYPE_MESSAGE:
			ck_assert_msg(*(void *const *)(const void *)pa ==
					      *(void *const *)(const void *)pb,
				      "field %s", f->name); /* absent: the same default */
			break;
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_FIXED64:
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_DOUBLE:
			ck_assert_msg(!memcmp(pa, pb, 8), "field %s", f->name);
			break;
		case PROTOBUF_C_TYPE_BOOL:
			ck_assert_msg(!memcmp(pa, pb, sizeof(protobuf_c_boolean)), "field %s",
				      f->name);
			break;
		default:
			ck_assert_msg(!memcmp(pa, pb, 4), "field %s", f->name);
			break;
		}
	}
}

/* The view of a PathDef (mcpt_unwire_path_def_view) is what protobuf-c decodes, whenever it
 * gives one; it gives one for every record a writer makes (random_flat_records). */
static bool same_view(const uint8_t *p, size_t len, const ProtobufCMessage *ref)
{
	const Mcpt__PathDef *r = (const Mcpt__PathDef *)ref;
	Mcpt__PathDef v;

	if (!mcpt_unwire_path_def_view(len, p, &v))
		return false;
	ck_assert_msg(ref != NULL, "a PathDef view of a record protobuf-c refuses");
	ck_assert_uint_eq(v.id, r->id);
	ck_assert_uint_eq(v.value.len, r->value.len);
	ck_assert(!v.value.data == !r->value.data);
	if (v.value.len)
		ck_assert_mem_eq(v.value.data, r->value.data, v.value.len);
	return true;
}

static enum outcome compare(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len)
{
	ProtobufCMessage *ref = protobuf_c_message_unpack(d, NULL, len, p);
	ProtobufCMessage *mine = mcpt_unwire_flat(d, NULL, len, p);
	enum outcome o = mine ? DECODED : ref ? DECLINED_OK : DECLINED_BAD;

	views_want = false;
	if (d == &mcpt__path_def__descriptor) {
		views += same_view(p, len, ref);
		views_want = ref && ((Mcpt__PathDef *)ref)->id && ((Mcpt__PathDef *)ref)->value.len;
	}
	if (mine) {
		ck_assert_msg(ref != NULL, "%s: decoded a record protobuf-c refuses (%zu bytes)",
			      d->short_name, len);
		same_message(d, mine, ref);
		protobuf_c_message_free_unpacked(mine, NULL); /* freed as protobuf-c's own */
	}
	if (ref)
		protobuf_c_message_free_unpacked(ref, NULL);
	return o;
}

static const uint8_t blob[300] = {'{', '"', 'i', 'd', 0x80, 0xff, 0, '\n'};

/* A random record of type d packed by protobuf-c into out (4 KiB): every scalar and bytes
 * field set at random, some left at their defaults. */
static size_t random_record(const ProtobufCMessageDescriptor *d, uint64_t *x, uint8_t *out)
{
	ProtobufCMessage *m = calloc(1, d->sizeof_message);
	size_t len;

	ck_assert_ptr_nonnull(m);
	d->message_init(m);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *at = (char *)m + f->offset;
		uint64_t v = next_rand(x) % 4 ? rand_width(x) : 0;

		if (f->label != PROTOBUF_C_LABEL_NONE)
			continue;
		switch (f->type) {
		case PROTOBUF_C_TYPE_BYTES:
			((ProtobufCBinaryData *)(void *)at)->len = (size_t)(v % sizeof(blob));
			((ProtobufCBinaryData *)(void *)at)->data = (uint8_t *)blob;
			break;
		case PROTOBUF_C_TYPE_STRING:
		case PROTOBUF_C_TYPE_MESSAGE:
			break;
		case PROTOBUF_C_TYPE_BOOL:
			*(protobuf_c_boolean *)(void *)at = v & 1;
			break;
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_SINT64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_FIXED64:
		case PROTOBUF_C_TYPE_SFIXED64:
		case PROTOBUF_C_TYPE_DOUBLE:
			memcpy(at, &v, 8);
			break;
		default: {
			uint32_t w = (uint32_t)v;

			memcpy(at, &w, 4);
			break;
		}
		}
	}
	ck_assert_uint_le(protobuf_c_message_get_packed_size(m), 4096);
	len = protobuf_c_message_pack(m, out);
	free(m);
	return len;
}

/* The flat record types a writer emits, and every other record type this library knows
 * (whatever the decoder takes of those must be right too). */
static const ProtobufCMessageDescriptor *const flat_types[] = {
	&mcpt__path_def__descriptor, &mcpt__task_def__descriptor, &mcpt__stdio_frame__descriptor};

START_TEST(random_flat_records)
{
	const ProtobufCMessageDescriptor *d = flat_types[_i];
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	uint8_t out[4096];

	views = 0;
	for (int round = 0; round < 5000; round++) {
		size_t len = random_record(d, &x, out);

		ck_assert_int_eq(compare(d, out, len), DECODED);
		if (d == &mcpt__path_def__descriptor && out[0] == 0x08 && len > 2 && views_want)
			ck_assert_msg(mcpt_unwire_path_def_view(len, out, &(Mcpt__PathDef){0}),
				      "no view of a writer's PathDef (id and value)");
	}
	if (d == &mcpt__path_def__descriptor)
		ck_assert_uint_gt(views, 1000);
}
END_TEST

START_TEST(other_types)
{
	uint64_t x = 0x51afd7ed558ccd1dull;
	uint8_t out[4096];
	unsigned decoded = 0;

	for (uint32_t t = 1; t < 64; t++) {
		const ProtobufCMessageDescriptor *d = mcpt_type_descriptor(t);

		if (!d)
			continue;
		for (int round = 0; round < 300; round++)
			decoded += compare(d, out, random_record(d, &x, out)) == DECODED;
	}
	ck_assert_uint_gt(decoded, 0);
}
END_TEST

struct unusual {
	const char *what;
	const ProtobufCMessageDescriptor *d;
	const char *bytes;
	size_t len;
	enum outcome want;
};

#define U(what, d, s, want)                                                                        \
	{                                                                                          \
		what, d, s, sizeof(s) - 1, want                                                    \
	}
#define SF (&mcpt__stdio_frame__descriptor)
#define PD (&mcpt__path_def__descriptor)

static const struct unusual unusual[] = {
	U("empty PathDef", PD, "", DECODED),
	U("PathDef id as a 10-byte varint", PD, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECODED),
	U("PathDef empty value", PD, "\x12\x00", DECODED),
	U("PathDef non-canonical length", PD,
	  "\x12\x83\x80\x80\x80\x00"
	  "xyz",
	  DECODED),
	U("bool from bits past 64 only", SF, "\x50\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02",
	  DECODED),
	U("bool 2", SF, "\x50\x02", DECODED),
	U("bool non-canonical 0", SF, "\x50\x80\x00", DECODED),
	U("sint32 fd as a 10-byte varint", SF, "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	  DECODED),
	U("enum dir past 31 bits", SF, "\x28\x80\x80\x80\x80\x08", DECODED),
	U("repeated id", PD, "\x08\x01\x08\x02", DECLINED_OK),
	U("unknown field 3", PD, "\x18\x01", DECLINED_OK),
	U("unknown field 14 of StdioFrame", SF, "\x70\x01", DECLINED_OK),
	U("StdioFrame flags (12) and gap_len (13)", SF, "\x60\x01\x68\x80\x01", DECODED),
	U("3-byte tag", PD, "\x88\x80\x00\x01", DECLINED_OK),
	U("tag 0", PD, "\x00\x01", DECLINED_BAD),
	U("bytes as a varint", PD, "\x10\x01", DECLINED_BAD),
	U("varint as bytes", PD, "\x0a\x01\x01", DECLINED_BAD),
	U("11-byte varint", PD, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", DECLINED_BAD),
	U("length past the end", PD,
	  "\x12\x05"
	  "ab",
	  DECLINED_BAD),
	U("6-byte length", PD, "\x12\x80\x80\x80\x80\x80\x00", DECLINED_BAD),
	U("varint cut", SF, "\x08\xff", DECLINED_BAD),
};

START_TEST(unusual_records)
{
	const struct unusual *u = &unusual[_i];

	ck_assert_msg(compare(u->d, (const uint8_t *)u->bytes, u->len) == u->want, "%s", u->what);
}
END_TEST

START_TEST(damaged_records)
{
	const ProtobufCMessageDescriptor *d = flat_types[_i];
	uint64_t x = 0x2545f4914f6cdd1dull + (uint64_t)_i;
	uint8_t out[4096], bad[4200];
	unsigned counts[3] = {0};

	for (int round = 0; round < 400; round++) {
		size_t len = random_record(d, &x, out), at;

		for (size_t cut = 0; cut < len; cut++)
			counts[compare(d, out, cut)]++;
		for (int k = 0; k < 32 && len; k++) {
			memcpy(bad, out, len);
			at = next_rand(&x) % len;
			bad[at] = (uint8_t)next_rand(&x);
			counts[compare(d, bad, len)]++;
			memcpy(bad, out, at);
			bad[at] = (uint8_t)next_rand(&x);
			memcpy(bad + at + 1, out + at, len - at);
			counts[compare(d, bad, len + 1)]++;
		}
	}
	ck_assert_uint_gt(counts[DECODED], 0);
	ck_assert_uint_gt(counts[DECLINED_BAD], 0);
}
END_TEST

/* The head of an Event is what mcpt_unwire_event decodes of it, on random and damaged
 * records, and declined exactly when it declines. */
START_TEST(event_head)
{
	uint64_t x = 0x1234567887654321ull;
	uint8_t out[4096];
	unsigned heads = 0;

	for (int round = 0; round < 20000; round++) {
		Mcpt__Event e = MCPT__EVENT__INIT, *full;
		struct mcpt_event_head h;
		int64_t args[2] = {(int64_t)rand_width(&x), -1};
		size_t len;
		bool got;

		e.op = (Mcpt__Op)(next_rand(&x) % 210);
		e.ts = next_rand(&x) % 2 ? rand_width(&x) : 0;
		e.ts_delta = next_rand(&x) % 2 ? (int64_t)rand_width(&x) : 0;
		e.seq = rand_width(&x);
		e.path.len = next_rand(&x) % 40;
		e.path.data = (uint8_t *)blob;
		e.n_args = next_rand(&x) % 3;
		e.args = args;
		len = protobuf_c_message_pack(&e.base, out);
		if (round % 2) /* damaged: cut, or a byte changed */
			len = next_rand(&x) % 2
				      ? next_rand(&x) % (len + 1)
				      : (out[next_rand(&x) % len] ^= (uint8_t)next_rand(&x), len);
		full = mcpt_unwire_event(NULL, len, out);
		got = mcpt_unwire_event_head(len, out, &h);
		ck_assert_int_eq(got, full != NULL);
		if (full) {
			ck_assert_uint_eq(h.op, (uint32_t)full->op);
			ck_assert_uint_eq(h.ts, full->ts);
			ck_assert_int_eq(h.ts_delta, full->ts_delta);
			heads++;
			mcpt__event__free_unpacked(full, NULL);
		}
	}
	ck_assert_uint_gt(heads, 10000);
}
END_TEST

Suite *unwire_flat_suite(void);

Suite *unwire_flat_suite(void)
{
	Suite *s = suite_create("unwire_flat");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");
	size_t ntypes = sizeof(flat_types) / sizeof(flat_types[0]);

	tcase_add_loop_test(core, random_flat_records, 0, (int)ntypes);
	tcase_add_test(core, other_types);
	tcase_add_test(core, event_head);
	tcase_add_loop_test(errors, unusual_records, 0, sizeof(unusual) / sizeof(unusual[0]));
	tcase_add_loop_test(errors, damaged_records, 0, (int)ntypes);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
