/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * maps.h - every map and read-only global of the BPF side, in one place.
 *
 * The per-family objects (proc.bpf.c, file.bpf.c, net.bpf.c) are linked into one object by
 * `bpftool gen object`; the definitions are __weak so each object may include this header and
 * the linker keeps a single instance of each.
 */
#ifndef MW_MAPS_H
#define MW_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "events.h"

/* Sizes the collector may change before load (bpf_map__set_max_entries). */
#define MW_MAX_TRACKED	 65536
#define MW_RINGBUF_BYTES (16u << 20) /* the spill ring (--ringbuf-size; the hot ring: events.h) */

/* Scratch layout per CPU: the record being built, then a buffer the path walk fills backwards,
 * then what a handler hands a shared exit program (struct mw_shared_call). Slot appends mask
 * their offset with MW_EVENT_MAX - 1 and read at most MW_DATA_MAX bytes, so the record area is
 * MW_EVENT_MAX + MW_DATA_MAX long, and the ring trailer after the longest record. */
#define MW_SCRATCH_EVENT (MW_EVENT_MAX + MW_DATA_MAX + MW_RING_TRAILER)
#define MW_SCRATCH_PATH	 (2 * MW_PATH_MAX)

/* What a handler hands the program it shares with other handlers (shared_progs): the call
 * its record is of, written into its CPU's scratch area just before the tail call. tid is the
 * thread whose handler wrote it; the shared program takes a description only from the same
 * thread's syscall, and clears it. */
struct mw_shared_call {
	__u32 tid;
	__u16 op;    /* enum mw_op */
	__s8 dfd_i;  /* the dirfd argument of the path (-1: AT_FDCWD) */
	__u8 path_i; /* the path argument */
	__s8 dfd2_i; /* the same for a second path (MW_SHARED_PATH2_EXIT) */
	__u8 path2_i;
	__u16 spec[4]; /* up to four integer arguments, by spec (MW_INT, MW_UINT, MW_LONG) */
};

struct mw_scratch {
	__u8 event[MW_SCRATCH_EVENT];
	__u8 path[MW_SCRATCH_PATH];
	struct mw_shared_call call;
};

/* Read-only configuration, set by the collector between open and load. */
const volatile __u32 mw_schema_version __weak = MW_SCHEMA_VERSION;
/* The key of the hash that checks an argument past its head (mw_hash in inflight.bpf.h): drawn
 * by the collector (getrandom) for each load, never written out, so that a server cannot
 * choose a rewrite that hashes like the argument the kernel used. */
const volatile __u64 mw_hash_key[2] __weak = {0, 0};
/* Wake the collector only once this many bytes wait in the ring (batch draining); below it the
 * collector's poll timeout picks them up. */
const volatile __u64 mw_wakeup_bytes __weak = 128 * 1024;
/* The same for the spill ring (a size of its own). */
const volatile __u64 mw_spill_wakeup_bytes __weak = 2 * 1024 * 1024;
/* While the collector lags (the ring holds mw_wakeup_bytes or more), it is woken at most once
 * every MW_WAKE_GAP_NS, not for every record: a wake-up is an irq_work (an interrupt the CPU
 * sends itself) that a collector busy elsewhere (a slow fdatasync, a full CPU) cannot use, and
 * paying one per record made the monitored server 2 to 2.7 times slower while the collector
 * lagged (the slowdisk benchmark). mw_woken_ts is when the last one was asked (boot ns),
 * written by every CPU without a lock: a lost update costs one wake-up more. */
#define MW_WAKE_GAP_NS 1000000
__u64 mw_woken_ts __weak;

/* The tracked set: tgid -> start_boottime of the process when it was added. Seeded by the
 * collector with the launched server, propagated at fork in kernel, removed when the group dies. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MW_MAX_TRACKED);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps") __weak;

/* The tracked set again, as a bitmap over tgids (bit tgid % 64 of word tgid / 64): the filter
 * that every syscall of every process on the host pays, in the dispatchers, before anything
 * else. An array lookup the verifier inlines (no helper call, no hashing) and a bit test,
 * instead of a tail call and a hash lookup. `tracked` stays the authoritative set (start times,
 * what user space lists); both change together: at fork (set), at group exit (clear), when the
 * collector seeds a process (set, by an atomic OR on the mmap'ed array). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MW_PID_WORDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} tracked_bits SEC(".maps") __weak;

/* Records reach the collector through two rings. Each goes to the hot ring, small enough that
 * its pages and cache lines are still warm when the producer comes round to them again (a
 * record in a 16 MiB ring costs 100-300 ns more, its lines and page-table entries cold after
 * a lap); a record that finds it full goes to the spill ring, sized for bursts and for a
 * collector held up, so the two together hold what one large ring held. Every record ends
 * with the other ring's producer position as the program read it just before reserving
 * (MW_RING_TRAILER, events.h): the collector takes a record only once it has consumed the
 * other ring up to there, which puts a thread's records in the order it made them whichever
 * rings they went to (collector/ringpair.c). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MW_HOT_RING_BYTES);
} events SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MW_RINGBUF_BYTES);
} events_spill SEC(".maps") __weak;

/* Calls that may block, from entry to exit (struct mw_inflight, keyed by tid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct mw_inflight);
} inflight SEC(".maps") __weak;

/* Writes on the stdout object in progress: the chunks' hashes taken at entry (struct
 * mw_chan_sums; chan_sums.bpf.h). Storage of the thread itself (task storage, 5.11+): made at its
 * first write on the channel, freed with the thread, never evicted by other threads' writes nor
 * found by another thread that reuses its tid. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mw_chan_sums);
} chan_sums SEC(".maps") __weak;

/* Foreign-ABI syscalls already recorded (dispatch.bpf.c): one record per process, ABI and
 * number is enough to say what escaped the trace; LRU, so a process that makes more distinct
 * ones than fit is recorded again rather than not at all. */
struct mw_foreign_key {
	__u64 pstart;
	__u32 tgid;
	__u16 abi; /* enum mw_abi */
	__u16 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct mw_foreign_key);
	__type(value, __u8);
} foreign_seen SEC(".maps") __weak;

/* io_uring requests on the channel's objects between their submission and their completion
 * (chan_async.bpf.h mw_chan_uring_submit): the request's address to the direction and fd the
 * submission found. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct mw_uring_req);
} uring_reqs SEC(".maps") __weak;

/* The MCP channel's two objects (struct mw_chan, index enum mw_chan_dir). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MW_CHAN_DIRS);
	__type(key, __u32);
	__type(value, struct mw_chan);
} chan SEC(".maps") __weak;

/* Per-syscall handlers, indexed by syscall number, for the two dispatchers. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, MW_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u32);
} sys_exit_progs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, MW_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u32);
} sys_enter_progs SEC(".maps") __weak;

/* Programs several handlers share (mw_shared_*, slots in events.h): one program verified once
 * instead of a copy per syscall, reached by a tail call from each syscall's own small handler. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, MW_SHARED_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} shared_progs SEC(".maps") __weak;

/* One scratch area per CPU. An ARRAY indexed by CPU (sized by the collector to the number of
 * possible CPUs) rather than a PERCPU_ARRAY, whose values are limited to 32 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to libbpf_num_possible_cpus() before load */
	__type(key, __u32);
	__type(value, struct mw_scratch);
} scratch SEC(".maps") __weak;

/* Per-reason loss counters (enum mw_loss). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MW_LOSS_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps") __weak;

/* The next sequence number (one global counter: gaps in the trace are losses). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} seqno SEC(".maps") __weak;

#endif /* MW_MAPS_H */
