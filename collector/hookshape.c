/*
 * hookshape.c - the tp_btf hooks whose arguments changed across kernels, and the check that
 * this kernel's match what our programs read. A tp_btf program reads its arguments by
 * position; on a kernel where the argument at that position has another type, it would read
 * something else as the pointer it expects, so the loader leaves such a program unloaded.
 */
#include <stdio.h>
#include <string.h>

#include "hookshape.h"

/* The tracepoint's argument at index arg (after the leading void * of its btf_trace_ type) is
 * a pointer to struct strct. */
static const struct hook_shape {
	const char *hook;
	unsigned arg;
	const char *strct;
} hook_shapes[] = {
	/* (ctx, req, cqe); older kernels pass (ctx, req, user_data, res, cflags...) */
	{"io_uring_complete", 2, "io_uring_cqe"},
};

/* The type a pointer of type id points to, past typedefs and modifiers; NULL if id is not a
 * pointer. */
static const struct btf_type *pointee(const struct btf *btf, int id)
{
	const struct btf_type *t;

	id = id > 0 ? btf__resolve_type(btf, (__u32)id) : -1;
	t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	if (!t || !btf_is_ptr(t))
		return NULL;
	id = btf__resolve_type(btf, t->type);
	return id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
}

int hook_typedef(const char *hook, const struct btf *vmlinux)
{
	char name[128];

	if (!vmlinux || snprintf(name, sizeof(name), "btf_trace_%s", hook) >= (int)sizeof(name))
		return -1;
	return btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF);
}

bool hook_has_shape(const char *hook, const struct btf *vmlinux)
{
	const struct btf_type *proto, *arg;
	size_t i;

	for (i = 0; i < sizeof(hook_shapes) / sizeof(hook_shapes[0]); i++) {
		const struct hook_shape *h = &hook_shapes[i];

		if (strcmp(h->hook, hook))
			continue;
		proto = pointee(vmlinux, hook_typedef(hook, vmlinux));
		if (!proto || !btf_is_func_proto(proto) || btf_vlen(proto) <= h->arg + 1)
			return false;
		arg = pointee(vmlinux, (int)btf_params(proto)[h->arg + 1].type);
		return arg && btf_is_struct(arg) &&
		       !strcmp(btf__name_by_offset(vmlinux, arg->name_off), h->strct);
	}
	return true;
}
