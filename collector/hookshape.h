/* hookshape.h - whether a tp_btf hook passes the arguments our program reads (see hookshape.c). */
#ifndef MW_HOOKSHAPE_H
#define MW_HOOKSHAPE_H

#include <stdbool.h>

#include <bpf/btf.h>

/* The id of this kernel's btf_trace_<hook> typedef, the type of a tp_btf hook (its section's
 * name after "tp_btf/"), or a negative number when vmlinux has none (no such hook). */
int hook_typedef(const char *hook, const struct btf *vmlinux);

/* Whether the kernel's tracepoint `hook` (a tp_btf section's name after "tp_btf/") has the
 * arguments the program attached to it reads, by the kernel's BTF (vmlinux). True for a hook
 * whose arguments never changed shape; false when the hook's type is missing. */
bool hook_has_shape(const char *hook, const struct btf *vmlinux);

#endif
