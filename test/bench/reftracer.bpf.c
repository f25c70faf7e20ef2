// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reftracer.bpf.c - the programs of test/bench/reftracer.c: issue 8's "minimal libbpf tracer"
 * (classic tracepoints, an in-kernel tree filter, a ring buffer drained in batches), built here
 * so that its cost is measured on the machine mcpwitness is measured on instead of quoted from
 * another. It traces what the bench's bpftrace script traces (fork, exec, exit; openat with its
 * path; connect with its address; reads of fd 0 and writes to fd 1 with their first bytes) the
 * way libbpf-tools' opensnoop does: the entry stashes the user pointer by thread, the exit reads
 * it and emits one fixed-size record. Nothing of mcpwitness's own code is used.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define REF_DATA_MAX 256

enum ref_kind { REF_FORK = 1, REF_EXEC, REF_EXIT, REF_OPENAT, REF_CONNECT, REF_READ, REF_WRITE };

/* One record; the user side writes the header and len bytes of data. */
struct ref_event {
	__u64 ts;
	__u32 pid, tid;
	__u32 kind;
	__s32 ret;
	__u32 len;
	__u32 pad;
	char data[REF_DATA_MAX];
};

const volatile __u64 ref_wakeup_bytes = 256 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} ref_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} ref_tracked SEC(".maps");

/* The user pointer of a call in progress, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} ref_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ref_lost SEC(".maps");

char LICENSE[] SEC("license") = "GPL";

static __always_inline bool ref_is_tracked(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return bpf_map_lookup_elem(&ref_tracked, &tgid) != NULL;
}

static __always_inline struct ref_event *ref_begin(__u32 kind, __s32 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ref_event *e = bpf_ringbuf_reserve(&ref_events, sizeof(*e), 0);

	if (!e) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&ref_lost, &zero);

		if (n)
			*n += 1;
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->kind = kind;
	e->ret = ret;
	e->len = 0;
	return e;
}

/* Submits without a wake-up until enough bytes wait: the user side drains in batches. */
static __always_inline void ref_submit(struct ref_event *e)
{
	__u64 flags = bpf_ringbuf_query(&ref_events, BPF_RB_AVAIL_DATA) >= ref_wakeup_bytes
			      ? BPF_RB_FORCE_WAKEUP
			      : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
}

static __always_inline void ref_stash(__u64 ptr)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_update_elem(&ref_start, &tid, &ptr, BPF_ANY);
}

enum ref_copy {
	REF_STR,      /* the NUL-terminated string at the pointer */
	REF_BYTES,    /* n bytes */
	REF_BYTES_RET /* up to n bytes, no more than ret (a read or write's count) */
};

/* The exit of a stashed call: one record with ret and what the stashed pointer points to. Only
 * a tracked thread's entry stashes, so the stash lookup is also the membership test (as in
 * opensnoop): one hash lookup at exit, not two. */
static __always_inline void ref_exit(__u32 kind, long ret, enum ref_copy copy, __u32 n)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *ptr = bpf_map_lookup_elem(&ref_start, &tid);
	struct ref_event *e;
	long got;

	if (!ptr)
		return;
	e = ref_begin(kind, (__s32)ret);
	if (e) {
		if (copy == REF_STR) {
			got = bpf_probe_read_user_str(e->data, sizeof(e->data), (void *)*ptr);
			e->len = got > 0 ? (__u32)got : 0;
		} else {
			if (copy == REF_BYTES_RET && (ret < 0 || n > (__u64)ret))
				n = ret < 0 ? 0 : (__u32)ret;
			barrier_var(n); /* the verifier needs the bound below, not the compiler's */
			if (n > sizeof(e->data))
				n = 0;
			if (n && bpf_probe_read_user(e->data, n, (void *)*ptr) == 0)
				e->len = n;
		}
		ref_submit(e);
	}
	bpf_map_delete_elem(&ref_start, &tid);
}

SEC("tracepoint/sched/sched_process_fork")
int ref_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 child = ctx->child_pid;
	__u8 one = 1;
	struct ref_event *e;

	if (!ref_is_tracked())
		return 0;
	bpf_map_update_elem(&ref_tracked, &child, &one, BPF_ANY);
	e = ref_begin(REF_FORK, (__s32)child);
	if (e)
		ref_submit(e);
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int ref_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	__u32 off = ctx->__data_loc_filename & 0xffff;
	struct ref_event *e;
	long got;

	if (!ref_is_tracked())
		return 0;
	e = ref_begin(REF_EXEC, 0);
	if (!e)
		return 0;
	got = bpf_probe_read_kernel_str(e->data, sizeof(e->data), (void *)ctx + off);
	e->len = got > 0 ? (__u32)got : 0;
	ref_submit(e);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int ref_exit_task(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct ref_event *e;

	if (!ref_is_tracked())
		return 0;
	e = ref_begin(REF_EXIT, 0);
	if (e)
		ref_submit(e);
	if (pid == (__u32)id)
		bpf_map_delete_elem(&ref_tracked, &pid);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int ref_enter_openat(struct trace_event_raw_sys_enter *ctx)
{
	if (ref_is_tracked())
		ref_stash(ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int ref_exit_openat(struct trace_event_raw_sys_exit *ctx)
{
	ref_exit(REF_OPENAT, ctx->ret, REF_STR, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_connect")
int ref_enter_connect(struct trace_event_raw_sys_enter *ctx)
{
	if (ref_is_tracked())
		ref_stash(ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_connect")
int ref_exit_connect(struct trace_event_raw_sys_exit *ctx)
{
	ref_exit(REF_CONNECT, ctx->ret, REF_BYTES, 16); /* the address */
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_write")
int ref_enter_write(struct trace_event_raw_sys_enter *ctx)
{
	if (ctx->args[0] == 1 && ref_is_tracked())
		ref_stash(ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_write")
int ref_exit_write(struct trace_event_raw_sys_exit *ctx)
{
	ref_exit(REF_WRITE, ctx->ret, REF_BYTES_RET, 128);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_read")
int ref_enter_read(struct trace_event_raw_sys_enter *ctx)
{
	if (ctx->args[0] == 0 && ref_is_tracked())
		ref_stash(ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_read")
int ref_exit_read(struct trace_event_raw_sys_exit *ctx)
{
	ref_exit(REF_READ, ctx->ret, REF_BYTES_RET, 128);
	return 0;
}
