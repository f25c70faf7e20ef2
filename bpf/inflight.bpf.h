/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inflight.bpf.h - the in-flight stash of a syscall, from its entry to its exit (`inflight`,
 * one entry per tracked thread), and the checks its exit makes against it.
 *
 * A few syscalls may block for long (connect, accept, opens of FIFOs): their sys_enter program
 * stashes the call in `inflight`, so that the collector can write a call still pending when
 * recording stops as unfinished (and a connect or accept that stays blocked, while recording
 * goes on, as an entry-time record: collector/pending.c).
 *
 * Reading a user-memory argument at exit leaves a window: another thread may rewrite it while
 * the call runs, after the kernel copied it. So every call whose record names what it acts on
 * through user memory (the opens and the other path calls, sends that name a destination) is
 * stashed at entry too, with the first bytes of that argument (the head) as the kernel is about
 * to read them; its exit compares them with what it recorded (mw_head_check). An argument that
 * fills the head, and the second path of rename, link and symlink, is also read whole at entry
 * and kept as a keyed hash (mw_hash), compared with the hash of the record's bytes at exit: the
 * head alone would miss a rewrite past it. A short argument, the common case, costs no more. What
 * this cannot see is a rewrite in the short gap between the entry program's read and the kernel's
 * own copy (entry and exit then read the same bytes, the kernel others): the check narrows the
 * window to that gap, it does not close it.
 */
#ifndef MW_INFLIGHT_BPF_H
#define MW_INFLIGHT_BPF_H

#include "args.bpf.h"
#include "path.bpf.h"

/* The in-flight slot of thread tid: each tracked thread keeps one `inflight` entry from its
 * first stashed call until it exits (handle_sched_process_exit deletes it). A stash rewrites the
 * entry in place and the call's exit marks it idle (op MW_OP_UNSPEC; the collector skips idle
 * entries), so a stashed call costs two inlined hash lookups instead of a locked update (an
 * element taken from the free list, a 128-byte copy from the stack) and a locked delete. Only a
 * thread's first stash inserts. NULL (counted as STASH_FULL) when the map is full. */
static __noinline struct mw_inflight *mw_inflight_insert(__u32 tid)
{
	struct mw_inflight idle = {};
	struct mw_inflight *f = NULL;

	if (bpf_map_update_elem(&inflight, &tid, &idle, BPF_NOEXIST) == 0)
		f = bpf_map_lookup_elem(&inflight, &tid);
	if (!f)
		mw_loss(MW_LOSS_STASH_FULL);
	return f;
}

/* (The insert is a function of its own so that zeroing its 152-byte stack copy is paid by a
 * thread's first stash only: inlined, clang zeroed it before the lookup, on every call.) */
static __always_inline struct mw_inflight *mw_inflight_slot(__u32 tid)
{
	struct mw_inflight *f = bpf_map_lookup_elem(&inflight, &tid);

	return f ? f : mw_inflight_insert(tid);
}

/* Starts rewriting the current thread's slot for a new call, from its sys_enter program: marks
 * it idle, then sets the entry time, the identity, no arguments, no head and no hash. The caller
 * sets what its call has, then mw_inflight_commit(). NULL when the map is full. */
static __always_inline struct mw_inflight *mw_inflight_start(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct mw_inflight *f = mw_inflight_slot((__u32)pid_tgid);

	if (!f)
		return NULL;
	f->op = MW_OP_UNSPEC;
	f->head_len = 0; /* with op: one 8-byte store */
	f->whole_len[MW_WHOLE_ARG] = MW_WHOLE_NONE;
	f->whole_len[MW_WHOLE_PATH2] = MW_WHOLE_NONE;
	f->ts = bpf_ktime_get_boot_ns();
	f->pstart = mw_task_pstart(task);
	f->tgid = pid_tgid >> 32;
	f->tid = (__u32)pid_tgid;
	f->uid = 0;
	f->gid = 0; /* with uid: one 8-byte store */
	f->arg[0] = 0;
	f->arg[1] = 0;
	f->arg[2] = 0;
	f->arg[3] = 0;
	return f;
}

/* Publishes the stash as call op. op is written last: the collector reads the map while
 * programs run and keeps a copy only when two reads agree (loader__inflight). */
static __always_inline void mw_inflight_commit(struct mw_inflight *f, __u16 op)
{
	barrier();
	f->op = op;
}

/* Up to four integer arguments of the call (by spec) into a stash being written. */
static __always_inline void mw_inflight_args(struct mw_inflight *f, struct pt_regs *regs, int a0,
					     int a1, int a2, int a3)
{
	if (a0)
		f->arg[0] = mw_arg_spec(regs, a0);
	if (a1)
		f->arg[1] = mw_arg_spec(regs, a1);
	if (a2)
		f->arg[2] = mw_arg_spec(regs, a2);
	if (a3)
		f->arg[3] = mw_arg_spec(regs, a3);
}

/* ---- the keyed hash of a whole argument ----------------------------------------------------- */

/* SipHash-1-3 keyed with mw_hash_key (maps.h): one compression round per 8-byte word, three to
 * finish. A keyed pseudo-random function rather than a plain mixing hash: without the key no
 * difference between two arguments is known to survive into equal hashes (plain multiply-xor
 * mixers have such key-independent differentials), so a server that cannot read the key
 * cannot aim a rewrite at a collision; a chance one is 2^-64. About 5 ns a word. */
struct mw_sip {
	struct mw_scratch *s;
	__u64 v[4];
	__u32 off; /* the bytes hashed start at s->event[off] */
	__u32 pad;
};

#define MW_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define MW_SIPROUND(v0, v1, v2, v3)                                                                \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = MW_ROTL(v1, 13);                                                              \
		v1 ^= v0;                                                                          \
		v0 = MW_ROTL(v0, 32);                                                              \
		v2 += v3;                                                                          \
		v3 = MW_ROTL(v3, 16);                                                              \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = MW_ROTL(v3, 21);                                                              \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = MW_ROTL(v1, 17);                                                              \
		v1 ^= v2;                                                                          \
		v2 = MW_ROTL(v2, 32);                                                              \
	} while (0)

/* One 8-byte word (word i of the bytes): a bpf_loop callback, verified once. */
static long mw_sip_word(__u32 i, void *ctx)
{
	struct mw_sip *h = ctx;
	__u64 v0 = h->v[0], v1 = h->v[1], v2 = h->v[2], v3 = h->v[3], m;

	if (!h->s)
		return 1;
	m = *(const __u64 *)&h->s->event[(h->off + i * 8) & (MW_EVENT_MAX - 1)];
	v3 ^= m;
	MW_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	h->v[0] = v0;
	h->v[1] = v1;
	h->v[2] = v2;
	h->v[3] = v3;
	return 0;
}

/* The keyed hash of the len bytes at offset off of this CPU's record area (s->event): where
 * the entry program reads an argument (or a channel write's chunk, chan_sums.bpf.h), and where the
 * exit's record keeps it, so both hash the same way. off + len <= MW_EVENT_MAX (an argument
 * is under MW_PATH_MAX, a chunk at most MW_DATA_MAX after a record's header); the loads may run
 * past the bytes into the area's slack (the last word is masked to the bytes that count, little
 * endian), never past its end. A global function (weak: each object including this header brings
 * one, the linker keeps one), so the verifier checks it once per program on its own, not again on
 * every path that reaches a call (with a static one the two-path exit programs verified 50 000
 * instructions, not 30 000). */
__weak __noinline __u64 mw_hash(struct mw_scratch *s, __u32 off, __u32 len)
{
	struct mw_sip h = {
		.s = s,
		.off = off,
		.v = {mw_hash_key[0] ^ 0x736f6d6570736575ull,
		      mw_hash_key[1] ^ 0x646f72616e646f6dull,
		      mw_hash_key[0] ^ 0x6c7967656e657261ull,
		      mw_hash_key[1] ^ 0x7465646279746573ull},
	};
	__u32 tail = len & 7;
	__u64 v0, v1, v2, v3, m;

	if (!s)
		return 0;
	bpf_loop(len / 8, mw_sip_word, &h, 0);
	m = *(const __u64 *)&s->event[(off + len - tail) & (MW_EVENT_MAX - 1)];
	m = tail ? m & ((1ull << (tail * 8)) - 1) : 0;
	m |= (__u64)len << 56;
	v0 = h.v[0];
	v1 = h.v[1];
	v2 = h.v[2];
	v3 = h.v[3] ^ m;
	MW_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	MW_SIPROUND(v0, v1, v2, v3);
	MW_SIPROUND(v0, v1, v2, v3);
	MW_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* Where the hash of an argument starts: past the head for the checked argument (the head
 * compare covers the bytes before it exactly), at its start for a second path (no head). */
#define MW_WHOLE_FROM(which) ((which) == MW_WHOLE_ARG ? MW_HEAD_MAX - 1 : 0)

/* This CPU's record area, as an entry program's buffer for an argument to hash: free at
 * sys_enter, since programs on the syscall tracepoints run to completion with preemption off,
 * so no record is half built on this CPU (the entry records of connect and accept use it the
 * same way). */
static __always_inline struct mw_scratch *mw_entry_scratch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&scratch, &cpu);
}

/* Keeps argument `which` of the stash, whose bytes from MW_WHOLE_FROM(which) on (n of them)
 * were read into s->event: its length and their hash, or (n < 0: the read failed, the page
 * not present yet) MW_HEAD_UNREAD, which makes that argument unchecked past its head. */
static __always_inline void mw_inflight_hashed(struct mw_inflight *f, int which,
					       struct mw_scratch *s, long n)
{
	if (!s || n < 0) {
		f->whole_len[which] = MW_HEAD_UNREAD;
		return;
	}
	f->whole_hash[which] = mw_hash(s, 0, (__u32)n);
	f->whole_len[which] = (__u16)(MW_WHOLE_FROM(which) + n);
}

/* Hashes the path at upath into the stash, up to MW_PATH_MAX bytes with its NUL: the cap the
 * record reads it with, so a longer path hashes the same bytes at both ends. */
static __always_inline void mw_inflight_whole_str(struct mw_inflight *f, int which,
						  const char *upath)
{
	struct mw_scratch *s = mw_entry_scratch();
	long n = 0;

	if (s)
		n = bpf_probe_read_user_str(s->event, MW_PATH_MAX - MW_WHOLE_FROM(which),
					    upath + MW_WHOLE_FROM(which));
	mw_inflight_hashed(f, which, s, n - 1);
}

/* Hashes len (>= MW_HEAD_MAX - 1) bytes at ubuf (a socket address) into the stash as the
 * checked argument, up to MW_SOCKADDR_MAX: the cap the record reads it with. */
static __always_inline void mw_inflight_whole_bytes(struct mw_inflight *f, const void *ubuf,
						    __u32 len)
{
	struct mw_scratch *s = mw_entry_scratch();
	__u32 n = (len < MW_SOCKADDR_MAX ? len : MW_SOCKADDR_MAX) - MW_WHOLE_FROM(MW_WHOLE_ARG);

	/* masked (a no-op the compiler cannot drop) for the verifier, which does not see the
	 * bound through a 32-bit compare of a register whose upper half is undefined */
	barrier_var(n);
	n &= 2 * MW_SOCKADDR_MAX - 1;
	if (s && bpf_probe_read_user(s->event, n, ubuf + MW_WHOLE_FROM(MW_WHOLE_ARG)))
		s = NULL;
	mw_inflight_hashed(f, MW_WHOLE_ARG, s, n);
}

/* Starts the stash of a call from its sys_enter program: up to four integer arguments by spec;
 * upath (may be NULL): a path argument whose first bytes are kept, as the kernel is about to
 * read them, and, when they fill the head (the cheap compare would miss a rewrite past it), its
 * whole hash too. The caller commits it. */
static __always_inline struct mw_inflight *
mw_inflight_path_begin(struct pt_regs *regs, int a0, int a1, int a2, int a3, const char *upath)
{
	struct mw_inflight *f = mw_inflight_start();

	if (!f)
		return NULL;
	mw_inflight_args(f, regs, a0, a1, a2, a3);
	if (upath) {
		long n = bpf_probe_read_user_str(f->head, sizeof(f->head), upath);

		/* fails when the string's page is not present yet: the kernel's own read will
		 * fault it in, ours cannot */
		f->head_len = n > 0 ? (__u16)(n - 1) : MW_HEAD_UNREAD;
		if (f->head_len == MW_HEAD_MAX - 1)
			mw_inflight_whole_str(f, MW_WHOLE_ARG, upath);
	}
	return f;
}

/* In-flight stash of call op with one path argument (see mw_inflight_path_begin). */
static __always_inline void mw_inflight_path(__u16 op, struct pt_regs *regs, int a0, int a1, int a2,
					     int a3, const char *upath)
{
	struct mw_inflight *f = mw_inflight_path_begin(regs, a0, a1, a2, a3, upath);

	if (f)
		mw_inflight_commit(f, op);
}

/* In-flight stash of call op with two paths: upath (the record's PATH) as above, upath2 (its
 * PATH2) always hashed whole: the calls are rare, and the second path is often the one that
 * matters (the name a rename or a link creates, a symlink's target). */
static __always_inline void mw_inflight_path2(__u16 op, struct pt_regs *regs, int a0, int a1,
					      int a2, int a3, const char *upath, const char *upath2)
{
	struct mw_inflight *f = mw_inflight_path_begin(regs, a0, a1, a2, a3, upath);

	if (!f)
		return;
	mw_inflight_whole_str(f, MW_WHOLE_PATH2, upath2);
	mw_inflight_commit(f, op);
}

/* The entry program of a call with a path argument (path_i; it may be NULL: the head is then
 * empty, as the record's slot will be) and up to four integer arguments its exit record
 * carries: the stash its exit checks the path against and ends (mw_sys_path1,
 * mw_sys_path1_checked, mw_sys_path2, or an mw_inflight_check of its own). */
static __always_inline int mw_path_enter(struct pt_regs *regs, __u16 op, int a0, int a1, int a2,
					 int a3, int path_i)
{
	if (!mw_is_tracked())
		return 0;
	mw_inflight_path(op, regs, a0, a1, a2, a3, (const char *)mw_arg(regs, path_i));
	return 0;
}

/* A call with two paths: path_i the one its record keeps in PATH, path2_i the one in PATH2. */
static __always_inline int mw_path2_enter(struct pt_regs *regs, __u16 op, int a0, int a1, int a2,
					  int path_i, int path2_i)
{
	if (!mw_is_tracked())
		return 0;
	mw_inflight_path2(op, regs, a0, a1, a2, 0, (const char *)mw_arg(regs, path_i),
			  (const char *)mw_arg(regs, path2_i));
	return 0;
}

static __always_inline void mw_inflight_begin(__u16 op, struct pt_regs *regs, int a0, int a1,
					      int a2, int a3)
{
	mw_inflight_path(op, regs, a0, a1, a2, a3, NULL);
}

/* Into a stash being written: its checked argument, len bytes of user memory at ubuf (a socket
 * address): the first bytes, up to MW_HEAD_MAX - 1 (then head_len says "maybe longer", and the
 * whole is hashed, as for a path), as the kernel is about to copy them. */
static __always_inline void mw_inflight_head_bytes(struct mw_inflight *f, const void *ubuf,
						   __u32 len)
{
	__u32 n = len < MW_HEAD_MAX - 1 ? len : MW_HEAD_MAX - 1;

	barrier_var(n); /* masked for the verifier: see mw_inflight_whole_bytes */
	n &= MW_HEAD_MAX - 1;
	/* fails when the page is not present yet, as for a path */
	if (n > 0 && bpf_probe_read_user(f->head, n, ubuf))
		n = MW_HEAD_UNREAD;
	f->head_len = (__u16)n;
	if (n == MW_HEAD_MAX - 1)
		mw_inflight_whole_bytes(f, ubuf, len);
}

/* In-flight stash of call op with such an argument and up to four integer arguments by spec. */
static __always_inline void mw_inflight_bytes(__u16 op, struct pt_regs *regs, int a0, int a1,
					      int a2, int a3, const void *ubuf, __u32 len)
{
	struct mw_inflight *f = mw_inflight_start();

	if (!f)
		return;
	mw_inflight_args(f, regs, a0, a1, a2, a3);
	mw_inflight_head_bytes(f, ubuf, len);
	mw_inflight_commit(f, op);
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "mw_head_differs masks little endian");

/* Whether the n (<= MW_HEAD_MAX - 1) bytes at offset off of the record differ from head[]:
 * eight bytes a step, the last step masked to the bytes that count (little endian). The loads
 * may run past the slot into the scratch area's slack, never past its end (MW_SCRATCH_EVENT). */
static __always_inline bool mw_head_differs(struct mw_rec *r, __u32 off,
					    const struct mw_inflight *f, __u32 n)
{
	__u32 i;

	for (i = 0; i < MW_HEAD_MAX / 8; i++) {
		__u32 at = i * 8;
		__u64 a, b, mask = ~0ull;

		if (at >= n)
			break;
		if (n - at < 8)
			mask = (1ull << ((n - at) * 8)) - 1;
		a = *(__u64 *)&r->s->event[(off + at) & (MW_EVENT_MAX - 1)];
		b = *(const __u64 *)&f->head[at];
		if ((a ^ b) & mask)
			return true;
	}
	return false;
}

/* The argument in slot, which starts at slot_off in the record (read now, at exit), against
 * what the entry program kept of it (what the kernel was about to read): for the checked
 * argument (which MW_WHOLE_ARG), its head: the first MW_HEAD_MAX - 1 bytes and, for a shorter
 * argument, the length; then, where the entry hashed it (a longer argument: the bytes past the
 * head; a second path: all of it), its length and that hash. A difference means another thread
 * rewrote the argument while the call ran, so what the record shows is not what the kernel
 * acted on: TAMPERED; a part that could not be read at entry: UNCHECKED (the head unread:
 * nothing is compared). A record that could not read a user pointer (FAULT) is not compared. */
static __always_inline void mw_arg_check(struct mw_rec *r, const struct mw_inflight *f, int which,
					 int slot, __u32 slot_off)
{
	__u32 len = r->e->slen[slot], n;
	__u16 whole = f->whole_len[which];

	if (r->e->flags & MW_F_FAULT)
		return;
	if (which == MW_WHOLE_ARG) {
		if (f->head_len == MW_HEAD_UNREAD) {
			r->e->flags |= MW_F_UNCHECKED;
			return;
		}
		n = f->head_len < MW_HEAD_MAX - 1 ? f->head_len : MW_HEAD_MAX - 1;
		if (f->head_len < MW_HEAD_MAX - 1 ? len != f->head_len : len < MW_HEAD_MAX - 1)
			r->e->flags |= MW_F_TAMPERED;
		else if (mw_head_differs(r, slot_off, f, n))
			r->e->flags |= MW_F_TAMPERED;
	}
	if (whole == MW_HEAD_UNREAD)
		r->e->flags |= MW_F_UNCHECKED;
	else if (whole != MW_WHOLE_NONE &&
		 (len != whole || mw_hash(r->s, slot_off + MW_WHOLE_FROM(which),
					  len - MW_WHOLE_FROM(which)) != f->whole_hash[which]))
		r->e->flags |= MW_F_TAMPERED;
}

/* At the exit of a call op: the current thread's stash of that call, with end marked idle (the
 * call is no longer pending; its fields stay readable until this program returns). NULL when
 * the call was not stashed: the map was full, or recording began during the call. */
static __always_inline struct mw_inflight *mw_inflight_of(__u16 op, bool end)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mw_inflight *f = bpf_map_lookup_elem(&inflight, &tid);

	if (!f || f->op != op)
		return NULL;
	if (end)
		f->op = MW_OP_UNSPEC;
	return f;
}

/* At the exit of a stashed call (op r->e->op): checks argument `which` (mw_arg_check) against
 * the stash of the current thread's call and, with end, marks the stash idle. The stash is
 * looked up for each argument, not held across the record's next slots: the verifier would walk
 * them once with it and once without. Returns whether the call was stashed. */
static __always_inline bool mw_inflight_check(struct mw_rec *r, int which, int slot, __u32 slot_off,
					      bool end)
{
	struct mw_inflight *f = mw_inflight_of(r->e->op, end);

	if (!f)
		return false;
	mw_arg_check(r, f, which, slot, slot_off);
	return true;
}

/* At the exit of a call stashed with one checked argument (in slot, at slot_off): checks it
 * and ends the stash. Returns whether the call was stashed. */
static __always_inline bool mw_head_check(struct mw_rec *r, int slot, __u32 slot_off)
{
	return mw_inflight_check(r, MW_WHOLE_ARG, slot, slot_off, true);
}

/* Called by the exit program of a stashed call: the call is no longer pending. */
static __always_inline void mw_inflight_end(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mw_inflight *f = bpf_map_lookup_elem(&inflight, &tid);

	if (f)
		f->op = MW_OP_UNSPEC;
}

#endif /* MW_INFLIGHT_BPF_H */
