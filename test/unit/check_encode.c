/*
 * check_encode.c - the collector's record encoder (collector/encode.c): slots map to their
 * fields, a record whose own lengths do not add up is refused, argv is cut after 64 entries
 * and flagged, trailing zero arguments are trimmed, device numbers become stat()'s encoding,
 * channel records become StdioFrames with gaps explicit; the hand-written wire packer gives
 * exactly protobuf-c's bytes (random records, and edge cases: every field at its default, at
 * its type's extremes and 7-bit boundaries, byte strings up to 64 KiB) and protobuf-c unpacks
 * them to the same fields.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "encode.h"
#include "wire.h"
#include "wire_testlib.h"

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
	e->size = MW_EVENT_HDR_SIZE - 1; /* shorter than its own header: no slot fits */
	for (int i = 0; i < MW_SLOTS; i++)
		e->slen[i] = 0;
	ck_assert_int_eq(encode_event(e, size, &out), -EBADMSG);
	ck_assert_int_eq(encode_stdio(e, size, &f), -EBADMSG);
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
		{ /* value- and task-table references (trace.proto 22..29) */
			uint32_t *r[8] = { &e.path_ref, &e.abs_path_ref, &e.opened_path_ref,
					   &e.data_ref, &e.path2_ref, &e.abs_path2_ref,
					   &e.data2_ref, &e.task_ref };

			for (i = 0; i < 8; i++)
				*r[i] = next_rand(&x) % 3 ? 0 : (uint32_t)rand_width(&x);
		}
		e.ts_delta = next_rand(&x) % 3 ? 0 : (int64_t)rand_width(&x); /* field 30 */
		e.child_task = next_rand(&x) % 4 == 0;			       /* field 31 */
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

/* Unpacks our bytes through protobuf-c and checks every field came back (decode equality,
 * beside the byte equality of same_bytes). */
static void event_round_trip(const Mcpt__Event *e, const uint8_t *p, size_t len)
{
	Mcpt__Event *d = mcpt__event__unpack(NULL, len, p);
	const ProtobufCBinaryData *a[8] = { &e->path, &e->abs_path, &e->opened_path, &e->data,
					    &e->path2, &e->abs_path2, &e->data2, &e->payload };
	const ProtobufCBinaryData *b[8];
	size_t i;

	ck_assert_ptr_nonnull(d);
	b[0] = &d->path, b[1] = &d->abs_path, b[2] = &d->opened_path, b[3] = &d->data;
	b[4] = &d->path2, b[5] = &d->abs_path2, b[6] = &d->data2, b[7] = &d->payload;
	ck_assert_uint_eq(d->seq, e->seq);
	ck_assert_uint_eq(d->ts, e->ts);
	ck_assert_uint_eq(d->pid, e->pid);
	ck_assert_uint_eq(d->tid, e->tid);
	ck_assert_int_eq(d->op, e->op);
	ck_assert_int_eq(d->ret, e->ret);
	ck_assert_uint_eq(d->flags, e->flags);
	ck_assert_uint_eq(d->dev, e->dev);
	ck_assert_uint_eq(d->ino, e->ino);
	ck_assert_uint_eq(d->pstart, e->pstart);
	ck_assert_uint_eq(d->uid, e->uid);
	ck_assert_uint_eq(d->gid, e->gid);
	ck_assert_uint_eq(d->task_ref, e->task_ref);
	ck_assert_int_eq(d->ts_delta, e->ts_delta);
	ck_assert_int_eq(d->child_task, e->child_task);
	ck_assert_uint_eq(d->n_args, e->n_args);
	for (i = 0; i < e->n_args; i++)
		ck_assert_int_eq(d->args[i], e->args[i]);
	for (i = 0; i < 8; i++) {
		ck_assert_uint_eq(b[i]->len, a[i]->len);
		if (a[i]->len)
			ck_assert_mem_eq(b[i]->data, a[i]->data, a[i]->len);
	}
	mcpt__event__free_unpacked(d, NULL);
}

START_TEST(wire_event_edges)
{
	uint8_t *blob = malloc(65536), *out;
	size_t k, i, len;

	ck_assert_ptr_nonnull(blob);
	for (i = 0; i < 65536; i++)
		blob[i] = (uint8_t)(i * 131 + 7);
	out = malloc(8 * 65536 + 4096);
	ck_assert_ptr_nonnull(out);
	for (k = 0; k < 64; k++) {
		Mcpt__Event e;
		int64_t args[4];

		edge_event(&e, k, args, blob);
		len = wire_event_pack(&e, out);
		same_bytes(&e.base, len, wire_event_max(&e), out);
		event_round_trip(&e, out, len);
		if (k == 0)
			ck_assert_uint_eq(len, 0); /* nothing on the wire */
	}
	free(out);
	free(blob);
}
END_TEST

START_TEST(wire_stdio_edges)
{
	static const int32_t fds[] = { 0, 1, -1, 63, -64, 64, INT32_MAX, INT32_MIN };
	static const uint64_t uns[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX };
	size_t nl = sizeof(edge_lens) / sizeof(edge_lens[0]), nu = sizeof(uns) / sizeof(uns[0]);
	uint8_t *blob = malloc(65536), *out = malloc(65536 + 1024);
	size_t k, len;

	ck_assert_ptr_nonnull(blob);
	ck_assert_ptr_nonnull(out);
	memset(blob, '{', 65536);
	for (k = 0; k < 48; k++) {
		Mcpt__StdioFrame f = MCPT__STDIO_FRAME__INIT;
		Mcpt__StdioFrame *d;

		f.ts = k == 1 ? UINT64_MAX : uns[k % nu];
		f.pid = (uint32_t)(k == 1 ? UINT32_MAX : uns[(k + 1) % nu]);
		f.tid = (uint32_t)(k == 1 ? UINT32_MAX : uns[(k + 2) % nu]);
		f.fd = k == 0 ? 0 : fds[k % 8];
		f.dir = (Mcpt__StdioFrame__Dir)(k % 3);
		f.stream_offset = k == 1 ? UINT64_MAX : uns[(k + 3) % nu];
		f.data.len = k == 0 ? 0 : k == 1 ? 65536 : edge_lens[k % nl];
		f.data.data = blob;
		f.orig_len = (uint32_t)(k == 1 ? UINT32_MAX : uns[(k + 4) % nu]);
		f.chunk = (uint32_t)(k == 1 ? UINT32_MAX : uns[(k + 5) % nu]);
		f.last = k % 2;
		f.seq = k == 1 ? UINT64_MAX : uns[(k + 6) % nu];
		f.flags = (uint32_t)(k == 1 ? UINT32_MAX : uns[(k + 7) % nu]);
		f.gap_len = k == 1 ? UINT64_MAX : uns[(k + 5) % nu];
		if (k == 0) { /* the end-of-file frame of an empty stdin: no data, LAST */
			f.ts = f.pid = f.tid = 0;
			f.stream_offset = f.orig_len = f.chunk = f.seq = f.flags = f.gap_len = 0;
			f.dir = MCPT__STDIO_FRAME__DIR__READ;
		}
		len = wire_stdio_pack(&f, out);
		same_bytes(&f.base, len, wire_stdio_max(&f), out);
		d = mcpt__stdio_frame__unpack(NULL, len, out);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(d->ts, f.ts);
		ck_assert_uint_eq(d->pid, f.pid);
		ck_assert_uint_eq(d->tid, f.tid);
		ck_assert_int_eq(d->fd, f.fd);
		ck_assert_int_eq(d->dir, f.dir);
		ck_assert_uint_eq(d->stream_offset, f.stream_offset);
		ck_assert_uint_eq(d->data.len, f.data.len);
		if (f.data.len)
			ck_assert_mem_eq(d->data.data, blob, f.data.len);
		ck_assert_uint_eq(d->orig_len, f.orig_len);
		ck_assert_uint_eq(d->chunk, f.chunk);
		ck_assert_int_eq(!!d->last, !!f.last);
		ck_assert_uint_eq(d->seq, f.seq);
		ck_assert_uint_eq(d->flags, f.flags);
		ck_assert_uint_eq(d->gap_len, f.gap_len);
		mcpt__stdio_frame__free_unpacked(d, NULL);
	}
	free(out);
	free(blob);
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
	tcase_add_test(wire, wire_event_edges);
	tcase_add_test(wire, wire_stdio_edges);
	suite_add_tcase(s, wire);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
