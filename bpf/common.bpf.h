/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.bpf.h - the body every handler shares: the membership test that untracked tasks pay
 * (and nothing more), starting a record in the per-CPU scratch area, appending slots, emitting
 * the record to the ring buffer with batched wake-ups, and counting every loss by reason.
 *
 * A handler is: if (!mw_is_tracked()) return 0; mw_rec_begin(); set args; append slots in slot
 * order; mw_rec_emit(). Slots must be appended in increasing slot order: the decoder walks them
 * back to back using slen[].
 */
#ifndef MW_COMMON_BPF_H
#define MW_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"
#include "maps.h"

#ifndef bpf_ksym_exists /* libbpf < 1.2: whether a __weak kfunc or ksym resolved at load */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

#ifdef MW_DIRECT_LOADS
/* bpf_rdonly_cast (6.2+) turns a kernel address into a read-only BTF pointer whose fields are
 * read by direct loads (the JIT emits a plain load with a fault fixup) instead of one
 * bpf_probe_read_kernel() call each: a path walk step costs one helper call (the name bytes)
 * instead of three. Where the kernel lacks it, the helper reads are used. Only the object that
 * defines MW_DIRECT_LOADS (file.bpf.c: the opens, the hot path) declares it: bpftool's linker
 * up to 7.1 refuses an extern kfunc declared in two objects ("failed to resolve size of
 * underlying type"). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

#define MW_RO(type, p) ((type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)))
#endif

/* The exec identity of the current task: its thread group leader's start time. */
static __always_inline __u64 mw_task_pstart(struct task_struct *task)
{
#ifdef MW_DIRECT_LOADS
	if (bpf_ksym_exists(bpf_rdonly_cast))
		return MW_RO(struct task_struct, task)->group_leader->start_boottime;
#endif
	return BPF_CORE_READ(task, group_leader, start_boottime);
}

/* The current task's fs_struct (cwd and root). Not `task->fs` on the trusted pointer
 * bpf_get_current_task_btf() returns: for each pointer loaded from a trusted pointer the verifier
 * looks for the type's "__safe_trusted", "__safe_rcu", ... variants by name, a linear search
 * of the kernel's BTF each time, on every path that reaches the load. That was a fifth of the
 * collector's start. Through a read-only cast (or a helper read) the pointer is untrusted and
 * costs the verifier nothing more. */
static __always_inline struct fs_struct *mw_task_fs(struct task_struct *task)
{
#ifdef MW_DIRECT_LOADS
	if (bpf_ksym_exists(bpf_rdonly_cast))
		return MW_RO(struct task_struct, task)->fs;
#endif
	return BPF_CORE_READ(task, fs);
}

char LICENSE[] SEC("license") __weak = "GPL";

struct mw_rec {
	struct mw_scratch *s;
	struct mw_event *e;
	__u32 off; /* bytes of the record so far */
};

/* Whether tgid is in the tracked set: an inlined array lookup and a bit test (maps.h). */
static __always_inline bool mw_tgid_tracked(__u32 tgid)
{
	__u32 word = tgid / 64;
	__u64 *w = bpf_map_lookup_elem(&tracked_bits, &word);

	return w && ((*w >> (tgid & 63)) & 1);
}

/* The only work an untracked task pays (in the dispatchers, before any tail call). */
static __always_inline bool mw_is_tracked(void)
{
	return mw_tgid_tracked(bpf_get_current_pid_tgid() >> 32);
}

/* Adds tgid (with its start time) to the tracked set, or removes it: the hash and the bitmap
 * together. Returns false when the hash is full (the bit is then left clear). */
static __always_inline bool mw_track(__u32 tgid, __u64 start, bool add)
{
	__u32 word = tgid / 64;
	__u64 *w = bpf_map_lookup_elem(&tracked_bits, &word);
	__u64 bit = 1ull << (tgid & 63);

	if (!add) {
		bpf_map_delete_elem(&tracked, &tgid);
		if (w)
			__sync_fetch_and_and(w, ~bit);
		return true;
	}
	if (bpf_map_update_elem(&tracked, &tgid, &start, BPF_ANY))
		return false;
	if (w)
		__sync_fetch_and_or(w, bit);
	return true;
}

static __always_inline void mw_loss(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &reason);

	if (n)
		*n += 1; /* per-CPU value: no atomic needed */
}

/* The user registers of the current task: syscall arguments are read from them at exit, so
 * one program per syscall suffices (no entry program, no argument stash). */
static __always_inline struct pt_regs *mw_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

static __always_inline struct mw_event *mw_rec_begin(struct mw_rec *r, __u16 op, __s64 ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 uid_gid = bpf_get_current_uid_gid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct mw_event *e;

	r->s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!r->s) {
		mw_loss(MW_LOSS_TOO_LARGE);
		return NULL;
	}
	e = (struct mw_event *)r->s->event;
	__builtin_memset(e, 0, sizeof(*e));
	e->ts = bpf_ktime_get_boot_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->uid = (__u32)uid_gid;
	e->gid = uid_gid >> 32;
	e->pstart = mw_task_pstart(task);
	e->op = op;
	e->ret = ret;
	r->e = e;
	r->off = MW_EVENT_HDR_SIZE;
	return e;
}

/* Appends a NUL-terminated string read from user (or kernel) memory, without its NUL. A read
 * that fills cap is flagged truncated; a faulting pointer leaves the slot empty and flagged. */
static __always_inline void mw_slot_str(struct mw_rec *r, int slot, const void *src, __u32 cap,
					bool user)
{
	__u32 off = r->off;
	long n;

	if (off >= MW_EVENT_MAX) {
		r->e->flags |= MW_F_TRUNC(slot);
		return;
	}
	if (user)
		n = bpf_probe_read_user_str(&r->s->event[off & (MW_EVENT_MAX - 1)], cap, src);
	else
		n = bpf_probe_read_kernel_str(&r->s->event[off & (MW_EVENT_MAX - 1)], cap, src);
	if (n <= 0) {
		r->e->flags |= MW_F_FAULT;
		return;
	}
	if (n >= cap)
		r->e->flags |= MW_F_TRUNC(slot);
	n -= 1;
	r->e->slen[slot] = n;
	r->off = off + n;
}

/* Appends len bytes of user (or kernel) memory; len above cap is cut to cap and flagged. */
static __always_inline void mw_slot_bytes(struct mw_rec *r, int slot, const void *src, __u32 len,
					  __u32 cap, bool user)
{
	__u32 off = r->off;
	long err;

	if (len > cap) {
		len = cap;
		r->e->flags |= MW_F_TRUNC(slot);
	}
	if (off >= MW_EVENT_MAX) {
		r->e->flags |= MW_F_TRUNC(slot);
		return;
	}
	if (len > MW_DATA_MAX)
		return;
	barrier_var(len);
	if (len == 0)
		return;
	if (user)
		err = bpf_probe_read_user(&r->s->event[off & (MW_EVENT_MAX - 1)], len, src);
	else
		err = bpf_probe_read_kernel(&r->s->event[off & (MW_EVENT_MAX - 1)], len, src);
	if (err) {
		r->e->flags |= MW_F_FAULT;
		return;
	}
	r->e->slen[slot] = len;
	r->off = off + len;
}

/* The wake-up flag for a record about to go to ring rb (at most one wake-up every
 * MW_WAKE_GAP_NS, and only once wake_bytes wait: see maps.h). */
static __always_inline __u64 mw_wake_flag(void *rb, __u64 wake_bytes, __u64 ts)
{
	if (bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wake_bytes &&
	    (__s64)(ts - mw_woken_ts) >= MW_WAKE_GAP_NS) {
		mw_woken_ts = ts;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Assigns the sequence number and hands the record to the hot ring, or to the spill ring when
 * the hot one is full (maps.h), followed by the trailer: the other ring's producer position,
 * read before this ring's reservation. Wakes the collector only when enough bytes wait (it also
 * polls on a short timeout), so a burst costs one wake-up. */
static __always_inline void mw_rec_emit(struct mw_rec *r)
{
	__u32 zero = 0;
	__u64 *seq = bpf_map_lookup_elem(&seqno, &zero);
	__u32 size = r->off;
	__u64 *trailer;

	if (!seq)
		return;
	r->e->seq = __sync_fetch_and_add(seq, 1);
	if (size > MW_SCRATCH_EVENT - MW_RING_TRAILER) {
		mw_loss(MW_LOSS_TOO_LARGE);
		return;
	}
	barrier_var(size);
	r->e->size = size;
	trailer = (__u64 *)&r->s->event[size];
	*trailer = bpf_ringbuf_query(&events_spill, BPF_RB_PROD_POS);
	if (!bpf_ringbuf_output(&events, r->e, size + MW_RING_TRAILER,
				mw_wake_flag(&events, mw_wakeup_bytes, r->e->ts)))
		return;
	*trailer = bpf_ringbuf_query(&events, BPF_RB_PROD_POS);
	if (bpf_ringbuf_output(&events_spill, r->e, size + MW_RING_TRAILER,
			       mw_wake_flag(&events_spill, mw_spill_wakeup_bytes, r->e->ts)))
		mw_loss(MW_LOSS_RINGBUF_FULL);
}

#endif /* MW_COMMON_BPF_H */
