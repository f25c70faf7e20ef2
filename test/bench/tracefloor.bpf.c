// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracefloor.bpf.c - the programs test/bench/tracefloor.c attaches, one attach kind at a
 * time, to measure what a process the collector does not track pays once syscall tracing is
 * on (issue 8: "measure tracepoint vs raw tracepoint"). Each filtering program runs the collector's own
 * membership test (mw_is_tracked, common.bpf.h) and returns: exactly what the dispatchers do
 * for an untracked task. The *_empty pair returns at once: the attach mechanism alone.
 * floor_btf_ring_exit reserves a record-sized slot in the ring and discards it: what a
 * record's ring traffic (its lock, header and commit) adds to a syscall, nothing else.
 */
#include "common.bpf.h"

static __always_inline int floor_filter(void)
{
	return mw_is_tracked() ? 1 : 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_btf_empty_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_btf_empty_exit, struct pt_regs *regs, long ret)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_btf_enter, struct pt_regs *regs, long id)
{
	return floor_filter();
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_btf_exit, struct pt_regs *regs, long ret)
{
	return floor_filter();
}

SEC("raw_tp/sys_enter")
int floor_raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return floor_filter();
}

SEC("raw_tp/sys_exit")
int floor_raw_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return floor_filter();
}

SEC("tracepoint/syscalls/sys_enter_openat")
int floor_tp_enter_openat(void *ctx)
{
	return floor_filter();
}

SEC("tracepoint/syscalls/sys_exit_openat")
int floor_tp_exit_openat(void *ctx)
{
	return floor_filter();
}

SEC("tracepoint/syscalls/sys_enter_close")
int floor_tp_enter_close(void *ctx)
{
	return floor_filter();
}

SEC("tracepoint/syscalls/sys_exit_close")
int floor_tp_exit_close(void *ctx)
{
	return floor_filter();
}

/* A reservation of 96 bytes (about an openat record) discarded at once: the ring never fills,
 * nobody needs to drain it. */
SEC("tp_btf/sys_exit")
int BPF_PROG(floor_btf_ring_exit, struct pt_regs *regs, long ret)
{
	void *slot = bpf_ringbuf_reserve(&events, 96, 0);

	if (slot)
		bpf_ringbuf_discard(slot, BPF_RB_NO_WAKEUP);
	return 0;
}
