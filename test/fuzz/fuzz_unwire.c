/*
 * fuzz_unwire.c - libFuzzer target, differential: the hand-written decoders (proto/unwire.c
 * for Events and their head, proto/unwire_flat.c for PathDef, TaskDef and StdioFrame and the
 * PathDef view) against
 * protobuf-c's unpack on arbitrary bytes. Whatever they decode, protobuf-c must decode too, to
 * the same fields; the Event head is declined exactly when the Event is; it aborts otherwise
 * (test/unit/check_unwire.c and check_unwire_flat.c have the same checks on chosen records).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void same_bytes(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
	if (a->len != b->len || !a->data != !b->data ||
	    (a->len && memcmp(a->data, b->data, a->len)))
		abort();
}

static void same_event(const Mcpt__Event *a, const Mcpt__Event *b)
{
	if (a->seq != b->seq || a->ts != b->ts || a->pid != b->pid || a->tid != b->tid ||
	    a->op != b->op || a->ret != b->ret || a->flags != b->flags || a->dev != b->dev ||
	    a->ino != b->ino || a->pstart != b->pstart || a->uid != b->uid || a->gid != b->gid ||
	    a->n_args != b->n_args || !a->args != !b->args ||
	    a->base.n_unknown_fields != b->base.n_unknown_fields)
		abort();
	/* the table references: values (22..28) and task (29); the timestamp delta (30); the
	 * fork's child task (31) */
	if (a->path_ref != b->path_ref || a->abs_path_ref != b->abs_path_ref ||
	    a->opened_path_ref != b->opened_path_ref || a->data_ref != b->data_ref ||
	    a->path2_ref != b->path2_ref || a->abs_path2_ref != b->abs_path2_ref ||
	    a->data2_ref != b->data2_ref || a->task_ref != b->task_ref ||
	    a->ts_delta != b->ts_delta || a->child_task != b->child_task)
		abort();
	if (a->n_args && memcmp(a->args, b->args, a->n_args * sizeof(*a->args)))
		abort();
	same_bytes(&a->path, &b->path);
	same_bytes(&a->abs_path, &b->abs_path);
	same_bytes(&a->opened_path, &b->opened_path);
	same_bytes(&a->data, &b->data);
	same_bytes(&a->path2, &b->path2);
	same_bytes(&a->abs_path2, &b->abs_path2);
	same_bytes(&a->data2, &b->data2);
	same_bytes(&a->payload, &b->payload);
}

static const ProtobufCBinaryData *bytes_at(const ProtobufCMessage *m, unsigned offset)
{
	return (const ProtobufCBinaryData *)(const void *)((const char *)m + offset);
}

/* The same message, as protobuf-c packs it, with byte fields NULL in the same places. */
static void same_flat(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	const ProtobufCMessageDescriptor *d = a->descriptor;
	size_t n = protobuf_c_message_get_packed_size(a);
	uint8_t *pa, *pb;

	if (n != protobuf_c_message_get_packed_size(b) || !(pa = malloc(n + 1)) ||
	    !(pb = malloc(n + 1)))
		abort();
	protobuf_c_message_pack(a, pa);
	protobuf_c_message_pack(b, pb);
	if (memcmp(pa, pb, n))
		abort();
	free(pa);
	free(pb);
	for (unsigned i = 0; i < d->n_fields; i++)
		if (d->fields[i].type == PROTOBUF_C_TYPE_BYTES &&
		    !bytes_at(a, d->fields[i].offset)->data != !bytes_at(b, d->fields[i].offset)->data)
			abort();
}

static void flat(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t size)
{
	ProtobufCMessage *mine = mcpt_unwire_flat(d, NULL, size, data), *ref;

	if (!mine)
		return;
	ref = protobuf_c_message_unpack(d, NULL, size, data);
	if (!ref)
		abort();
	same_flat(mine, ref);
	protobuf_c_message_free_unpacked(mine, NULL);
	protobuf_c_message_free_unpacked(ref, NULL);
}

/* A PathDef view, when given, is what protobuf-c decodes. */
static void path_def_view(const uint8_t *data, size_t size)
{
	Mcpt__PathDef v, *ref;

	if (!mcpt_unwire_path_def_view(size, data, &v))
		return;
	ref = mcpt__path_def__unpack(NULL, size, data);
	if (!ref || ref->id != v.id || ref->value.len != v.value.len ||
	    !ref->value.data != !v.value.data ||
	    (v.value.len && memcmp(ref->value.data, v.value.data, v.value.len)))
		abort();
	mcpt__path_def__free_unpacked(ref, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Mcpt__Event *mine = mcpt_unwire_event(NULL, size, data);
	Mcpt__Event *ref;
	struct mcpt_event_head h;
	bool head = mcpt_unwire_event_head(size, data, &h);

	flat(&mcpt__path_def__descriptor, data, size);
	flat(&mcpt__task_def__descriptor, data, size);
	flat(&mcpt__stdio_frame__descriptor, data, size);
	path_def_view(data, size);
	if (head != (mine != NULL) ||
	    (mine && (h.op != (uint32_t)mine->op || h.ts != mine->ts ||
		      h.ts_delta != mine->ts_delta)))
		abort();
	if (!mine)
		return 0;
	ref = mcpt__event__unpack(NULL, size, data);
	if (!ref)
		abort();
	same_event(mine, ref);
	mcpt__event__free_unpacked(mine, NULL);
	mcpt__event__free_unpacked(ref, NULL);
	return 0;
}
