/*
 * handlers.c - the per-syscall handlers: their slots, their parallel verification and their
 * placement in the dispatchers' program arrays (see handlers.h).
 *
 * Handlers are not attached: they wait in the program arrays the dispatchers tail-call through,
 * at their syscall's number; the foreign-ABI recorder waits at MW_FOREIGN_SLOT of the entry
 * array, and the exits several handlers share (file.bpf.c) in shared_progs, at their MW_SHARED_*
 * slot.
 *
 * Most of the collector's start is the kernel verifying ~150 programs, and libbpf loads an
 * object's programs one after the other. The verifier takes no global lock for a privileged
 * load, so the handlers are spread over copies of the object (fresh opens of the same ELF, one
 * per CPU the collector may run on, at most HANDLERS_MAX_COPIES), loaded one thread each once
 * the main object has created the maps; each copy reuses every map of the main object (the same
 * kernel maps, .rodata included, so the copies see the same read-only configuration). The main
 * object keeps the maps and the attached programs; a copy only verifies its handlers, which
 * handlers__place puts in the program arrays, and is closed then: the arrays hold the programs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mcpwitness.skel.h"

#include "handlers.h"
#include "syscalls.h"

/* The exits several handlers share, by program name. */
static const struct {
	const char *name;
	uint32_t slot;
} shared_exits[] = {
	{"mw_shared_path1_exit", MW_SHARED_PATH1_EXIT},
	{"mw_shared_path2_exit", MW_SHARED_PATH2_EXIT},
};

static enum handler_take take(struct handlers *hs, struct bpf_program *prog, struct handler h)
{
	bpf_program__set_autoattach(prog, false);
	if (h.slot >= MW_MAX_SYSCALLS || hs->n == MW_MAX_SYSCALLS) {
		bpf_program__set_autoload(prog, false);
		return HANDLER_NO_SLOT;
	}
	hs->h[hs->n++] = h;
	return HANDLER_TAKEN;
}

enum handler_take handlers__take(struct handlers *hs, struct bpf_program *prog)
{
	static const char exit_prefix[] = "handle_sys_exit_", enter_prefix[] = "handle_sys_enter_";
	const char *name = bpf_program__name(prog);
	bool enter = !strncmp(name, enter_prefix, sizeof(enter_prefix) - 1);
	long nr;

	for (size_t i = 0; i < sizeof(shared_exits) / sizeof(shared_exits[0]); i++) {
		if (!strcmp(name, shared_exits[i].name))
			return take(hs, prog,
				    (struct handler){prog, shared_exits[i].slot, false, true});
	}
	if (!strcmp(name, "handle_foreign_abi"))
		return take(hs, prog, (struct handler){prog, MW_FOREIGN_SLOT, true, false});
	if (!enter && strncmp(name, exit_prefix, sizeof(exit_prefix) - 1))
		return HANDLER_NOT;
	nr = syscall_number(name + (enter ? sizeof(enter_prefix) : sizeof(exit_prefix)) - 1);
	/* the slots from MW_FOREIGN_SLOT on are not syscall numbers */
	if (nr < 0 || nr >= MW_FOREIGN_SLOT)
		nr = MW_MAX_SYSCALLS;
	return take(hs, prog, (struct handler){prog, (uint32_t)nr, enter, false});
}

int handlers__place(const struct handlers *hs, struct mcpwitness *main)
{
	int exit_fd = bpf_map__fd(main->maps.sys_exit_progs);
	int enter_fd = bpf_map__fd(main->maps.sys_enter_progs);
	int shared_fd = bpf_map__fd(main->maps.shared_progs);

	for (size_t i = 0; i < hs->n; i++) {
		const struct handler *h = &hs->h[i];
		int fd = bpf_program__fd(h->prog), map = exit_fd;

		if (h->shared)
			map = shared_fd;
		else if (h->enter)
			map = enter_fd;
		if (bpf_map_update_elem(map, &h->slot, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

static size_t usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return (size_t)CPU_COUNT(&set);
}

/* Handler i goes to copy i % n (the main object's program no longer loads; the copy's is the
 * one placed). Programs are matched by their order, the same in every open of the object. */
int handlers__split(struct handlers *hs, struct mcpwitness *main)
{
	size_t n = usable_cpus(), c, h;
	struct bpf_program *mine, *copy[HANDLERS_MAX_COPIES] = {NULL};

	if (n > HANDLERS_MAX_COPIES)
		n = HANDLERS_MAX_COPIES;
	if (n > hs->n)
		n = hs->n;
	if (n < 2)
		return 0;
	for (c = 0; c < n; c++) {
		hs->copies[c] = mcpwitness__open();
		if (!hs->copies[c])
			return -errno;
		hs->n_copies = c + 1;
	}
	h = 0;
	bpf_object__for_each_program(mine, main->obj) {
		size_t owner = n; /* none: the program is not a handler, or not loaded */

		if (h < hs->n && hs->h[h].prog == mine)
			owner = h % n;
		for (c = 0; c < n; c++) {
			copy[c] = bpf_object__next_program(hs->copies[c]->obj, copy[c]);
			if (!copy[c])
				return -EPROTO;
			bpf_program__set_autoload(copy[c], c == owner);
		}
		if (owner < n) {
			bpf_program__set_autoload(mine, false);
			hs->h[h++].prog = copy[owner];
		}
	}
	return 0;
}

struct copy_load {
	struct bpf_object *obj;
	int err;
};

static void *load_copy(void *arg)
{
	struct copy_load *load = arg;

	load->err = bpf_object__load(load->obj);
	return NULL;
}

/* All copies but the first load in threads of their own; a thread that cannot be created leaves
 * its copy to this thread, after the others. */
int handlers__load_copies(struct handlers *hs, struct mcpwitness *main)
{
	struct copy_load loads[HANDLERS_MAX_COPIES];
	pthread_t threads[HANDLERS_MAX_COPIES];
	bool started[HANDLERS_MAX_COPIES] = {false};
	size_t c;
	int err = 0;

	for (c = 0; c < hs->n_copies; c++) {
		struct bpf_map *mine, *copy = NULL;

		bpf_object__for_each_map(mine, main->obj) {
			copy = bpf_object__next_map(hs->copies[c]->obj, copy);
			if (!copy)
				return -EPROTO;
			err = bpf_map__reuse_fd(copy, bpf_map__fd(mine));
			if (err)
				return err;
		}
		loads[c] = (struct copy_load){hs->copies[c]->obj, 0};
	}
	for (c = 1; c < hs->n_copies; c++)
		started[c] = !pthread_create(&threads[c], NULL, load_copy, &loads[c]);
	for (c = 0; c < hs->n_copies; c++) {
		int joined = 0;

		if (started[c])
			joined = -pthread_join(threads[c], NULL);
		else
			load_copy(&loads[c]);
		if (!err)
			err = joined ? joined : loads[c].err;
	}
	return err;
}

void handlers__close(struct handlers *hs)
{
	for (size_t c = 0; c < hs->n_copies; c++) {
		mcpwitness__destroy(hs->copies[c]);
		hs->copies[c] = NULL;
	}
	hs->n_copies = 0;
	hs->n = 0; /* their programs were the copies' */
}
