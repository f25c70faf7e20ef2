/*
 * fuzz_unwire.c - libFuzzer target, differential: the hand-written Event decoder
 * (proto/unwire.c) against protobuf-c's unpack on arbitrary bytes. Whatever unwire decodes,
 * protobuf-c must decode too, to the same fields; it aborts otherwise (test/unit/check_unwire.c
 * has the same check on chosen records).
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
	/* the table references: values (22..28) and task (29); the timestamp delta (30) */
	if (a->path_ref != b->path_ref || a->abs_path_ref != b->abs_path_ref ||
	    a->opened_path_ref != b->opened_path_ref || a->data_ref != b->data_ref ||
	    a->path2_ref != b->path2_ref || a->abs_path2_ref != b->abs_path2_ref ||
	    a->data2_ref != b->data2_ref || a->task_ref != b->task_ref ||
	    a->ts_delta != b->ts_delta)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Mcpt__Event *mine = mcpt_unwire_event(NULL, size, data);
	Mcpt__Event *ref;

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
