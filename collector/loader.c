/*
 * loader.c - open, size, feature-probe, load, attach and drain the BPF programs (see loader.h).
 *
 * The open -> configure -> load -> attach sequence of libbpf-tools: every map size and program
 * choice is settled between __open and __load, never with open_and_load. The per-syscall
 * handlers are verified in parallel, in copies of the object that share its maps (handlers.c);
 * the threads that load them end before loader__new returns.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "mcpwitness.skel.h"

#include "encode.h"
#include "handlers.h"
#include "hookshape.h"
#include "loader.h"
#include "log.h"
#include "ringpair.h"
#include "tracefs.h"

/* Stash entries read per bpf() call: a scan of the whole map (16 384 threads) is 64 calls. */
#define INFLIGHT_BATCH 256

struct loader {
	struct mcpwitness *skel;
	struct handlers handlers;
	bool tracefs_mounted;
	struct ringpair rings;
	bool rings_open;
	loader_record_fn on_record;
	void *ctx;
	int ncpus;
	uint64_t *tracked_bits; /* the mmap'ed bitmap of the tracked set (maps.h) */
	char *notes[LOADER_MAX_NOTES];
	size_t n_notes;
	struct mw_inflight inflight_batch[INFLIGHT_BATCH]; /* loader__inflight's reads */
};

/* AddressSanitizer's allocator replaces glibc's and refuses its tuning (mallopt returns 0). */
#ifdef MW_SANITIZE_BUILD
#define MW_OWN_ALLOCATOR 1
#else
#define MW_OWN_ALLOCATOR 0
#endif

static void __attribute__((format(printf, 2, 3))) loader_note(struct loader *l, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p_warn("%s", buf);
	if (l->n_notes < LOADER_MAX_NOTES)
		l->notes[l->n_notes++] = strdup(buf);
}

/* MCPWITNESS_HIDE_HOOKS=a,b makes the loader treat the tp_btf hooks a and b as missing, so the
 * path a kernel without them takes (program disabled before load, a note in the trace header
 * and on stderr, the rest running) can be tested on a kernel that has them. It can only ever
 * switch a program off, and says so where a real absence would be said. */
#define HIDE_HOOKS_ENV "MCPWITNESS_HIDE_HOOKS"

static bool hook_hidden(const char *hook)
{
	const char *list = getenv(HIDE_HOOKS_ENV), *p;
	size_t n = strlen(hook);

	for (p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (!strncmp(p, hook, n) && (p[n] == ',' || p[n] == 0))
			return true;
	}
	return false;
}

/* Whether the hook named by a program's section exists on this kernel. */
static bool hook_exists(const char *sec, const struct btf *vmlinux)
{
	char path[256];

	if (!strncmp(sec, "tracepoint/", 11)) {
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", sec + 11);
		if (access(path, F_OK) == 0)
			return true;
		snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s", sec + 11);
		return access(path, F_OK) == 0;
	}
	if (!strncmp(sec, "tp_btf/", 7))
		return !hook_hidden(sec + 7) && hook_typedef(sec + 7, vmlinux) > 0;
	return true;
}

/* tracefs is needed only by tracepoint/ programs (the syscall path uses raw tracepoints). */
static int mount_tracefs_if_needed(struct loader *l)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, l->skel->obj) {
		if (bpf_program__autoload(prog) &&
		    !strncmp(bpf_program__section_name(prog), "tracepoint/", 11))
			return tracefs_ensure(&l->tracefs_mounted);
	}
	return 0;
}

static void disable_missing_hooks(struct loader *l)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;

	if (!vmlinux)
		loader_note(l, "kernel BTF unavailable: tp_btf programs may fail");
	/* the handlers first: they are not attached, whatever their section names */
	bpf_object__for_each_program(prog, l->skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		switch (handlers__take(&l->handlers, prog)) {
		case HANDLER_TAKEN:
			continue;
		case HANDLER_NO_SLOT:
			loader_note(l, "program %s disabled: no such syscall on this architecture",
				    bpf_program__name(prog));
			continue;
		case HANDLER_NOT:
			break;
		}
		if (hook_exists(sec, vmlinux)) {
			if (strncmp(sec, "tp_btf/", 7) || hook_has_shape(sec + 7, vmlinux))
				continue;
			bpf_program__set_autoload(prog, false);
			loader_note(
				l, "program %s disabled: this kernel's hook %s has other arguments",
				bpf_program__name(prog), sec);
			continue;
		}
		bpf_program__set_autoload(prog, false);
		loader_note(l, "program %s disabled: this kernel has no hook %s%s",
			    bpf_program__name(prog), sec,
			    hook_hidden(strchr(sec, '/') ? strchr(sec, '/') + 1 : sec) ?
				    " (hidden by " HIDE_HOOKS_ENV ")" : "");
	}
	btf__free(vmlinux);
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct loader *l = ctx;

	if (size < MW_EVENT_HDR_SIZE)
		return 0; /* cannot happen: every record starts with the header */
	return l->on_record(l->ctx, data, size);
}

/* Draws the key of the hash the BPF side checks long arguments with (maps.h mw_hash_key) into
 * the object's rodata, fresh for each load: a server that cannot read it cannot aim a rewrite
 * at a hash collision. It stays in the loaded object's read-only data (root only) and is
 * written nowhere else. */
static int draw_hash_key(struct mcpwitness *s)
{
	uint64_t key[2];
	ssize_t n = getrandom(key, sizeof(key), 0);

	if (n != (ssize_t)sizeof(key))
		return n < 0 ? -errno : -EIO;
	s->rodata->mw_hash_key[0] = key[0];
	s->rodata->mw_hash_key[1] = key[1];
	explicit_bzero(key, sizeof(key));
	return 0;
}

static int loader_configure(struct loader *l, const struct loader_opts *o)
{
	struct mcpwitness *s = l->skel;
	int err;

	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0)
		return l->ncpus ? l->ncpus : -EINVAL;
	err = bpf_map__set_max_entries(s->maps.scratch, (uint32_t)l->ncpus);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.events_spill, o->ringbuf_bytes);
	if (err)
		return err;
	if (s->rodata->mw_schema_version != MW_SCHEMA_VERSION) {
		p_err("BPF object schema %u does not match the collector's %u",
		      s->rodata->mw_schema_version, MW_SCHEMA_VERSION);
		return -EPROTO;
	}
	/* Half the hot ring: the other half is the headroom for the records made while the
	 * collector wakes up and drains. At 7/8, 4-10% of a flood of syscalls spilled on the
	 * README's EPYC host, at a half 0.01-1.1%, at the same collector CPU (change 46). */
	s->rodata->mw_wakeup_bytes = MW_HOT_RING_BYTES / 2;
	s->rodata->mw_spill_wakeup_bytes = o->ringbuf_bytes / 8;
	err = draw_hash_key(s);
	if (err) {
		p_err("failed to draw the argument hash key: %s", strerror(-err));
		return err;
	}
	disable_missing_hooks(l);
	err = handlers__split(&l->handlers, l->skel);
	if (err) {
		p_err("failed to open the BPF object again for a parallel load: %s", strerror(-err));
		return err;
	}
	return mount_tracefs_if_needed(l);
}

/* The kernel's BTF (5 MiB here) is parsed by disable_missing_hooks, by the main object's load
 * and by each copy's, two at a time or more, in threads: the largest temporaries of the load,
 * each a fresh mapping under glibc's defaults, whose every page faults in again (70 ms a parse
 * where faults are dear, 4 ms for the parse itself). While loading, one arena for every thread
 * and thresholds above those blocks keep them on the heap, where each parse reuses the pages of
 * the last; once loaded, the heap's free pages go back to the kernel and recording runs with
 * blocks over 128 KiB in mappings given back on free, so the collector's RSS does not keep
 * what loading used (10 MiB of its peak, measured, when glibc's moving threshold left a BTF
 * block on the heap). Under AddressSanitizer, whose allocator refuses this tuning, nothing. */
static void load_heap_begin(void)
{
	if ((!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, 64 << 20) ||
	     !mallopt(M_TRIM_THRESHOLD, 256 << 20)) &&
	    !MW_OWN_ALLOCATOR)
		p_warn("mallopt failed: loading may take longer");
}

static void load_heap_end(void)
{
	malloc_trim(0);
	if ((!mallopt(M_TRIM_THRESHOLD, 128 * 1024) || !mallopt(M_MMAP_THRESHOLD, 128 * 1024)) &&
	    !MW_OWN_ALLOCATOR)
		p_warn("mallopt failed: recording may take more memory");
}

struct loader *loader__new(const struct loader_opts *o)
{
	struct loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	load_heap_begin();
	l->on_record = o->on_record;
	l->ctx = o->ctx;
	l->skel = mcpwitness__open();
	if (!l->skel) {
		err = -errno;
		p_err("failed to open the BPF object: %s", strerror(-err));
		goto fail;
	}
	err = loader_configure(l, o);
	if (err) {
		p_err("failed to configure the BPF object: %s", strerror(-err));
		goto fail;
	}
	err = mcpwitness__load(l->skel);
	if (!err)
		err = handlers__load_copies(&l->handlers, l->skel);
	if (err) {
		p_err("failed to load the BPF programs: %s%s (run with -vvv for the verifier log)",
		      log_refusal() ? "the kernel's verifier refused " : "",
		      log_refusal() ? log_refusal() : strerror(-err));
		goto fail;
	}
	l->tracked_bits = mmap(NULL, MW_PID_WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_SHARED, bpf_map__fd(l->skel->maps.tracked_bits), 0);
	if (l->tracked_bits == MAP_FAILED) {
		l->tracked_bits = NULL;
		err = -errno;
		p_err("failed to map the tracked set: %s", strerror(-err));
		goto fail;
	}
	err = handlers__place(&l->handlers, l->skel);
	if (err) {
		p_err("failed to set up the syscall dispatch: %s", strerror(-err));
		goto fail;
	}
	handlers__close(&l->handlers);
	load_heap_end();
	err = mcpwitness__attach(l->skel);
	if (err) {
		p_err("failed to attach the BPF programs: %s", strerror(-err));
		goto fail;
	}
	err = ringpair_open(&l->rings, bpf_map__fd(l->skel->maps.events),
			    bpf_map__max_entries(l->skel->maps.events),
			    bpf_map__fd(l->skel->maps.events_spill),
			    bpf_map__max_entries(l->skel->maps.events_spill));
	if (err) {
		p_err("failed to map the ring buffers: %s", strerror(-err));
		goto fail;
	}
	l->rings_open = true;
	return l;
fail:
	loader__free(l);
	errno = -err;
	return NULL;
}

void loader__free(struct loader *l)
{
	size_t i;

	if (!l)
		return;
	if (l->rings_open)
		ringpair_close(&l->rings);
	if (l->tracked_bits)
		munmap(l->tracked_bits, MW_PID_WORDS * sizeof(uint64_t));
	handlers__close(&l->handlers);
	mcpwitness__destroy(l->skel);
	tracefs_release(l->tracefs_mounted);
	for (i = 0; i < l->n_notes; i++)
		free(l->notes[i]);
	free(l);
}

int loader__track(struct loader *l, pid_t tgid)
{
	uint32_t key = (uint32_t)tgid;
	uint64_t value = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.tracked), &key, &value, BPF_ANY))
		return -errno;
	/* atomic: the kernel sets and clears other bits of the same word at forks and exits */
	__atomic_fetch_or(&l->tracked_bits[key / 64], 1ull << (key % 64), __ATOMIC_SEQ_CST);
	return 0;
}

void loader__untrack(struct loader *l, pid_t tgid)
{
	uint32_t key = (uint32_t)tgid;

	if (loader__tracked_start(l, key) != 0)
		return; /* a fork tracked it since: another process under this pid */
	bpf_map_delete_elem(bpf_map__fd(l->skel->maps.tracked), &key);
	__atomic_fetch_and(&l->tracked_bits[key / 64], ~(1ull << (key % 64)), __ATOMIC_SEQ_CST);
}

uint64_t loader__tracked_start(struct loader *l, uint32_t tgid)
{
	uint64_t start = 0;

	return loader__tracked_lookup(l, tgid, &start) ? start : 0;
}

bool loader__tracked_lookup(struct loader *l, uint32_t tgid, uint64_t *start)
{
	*start = 0;
	return bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.tracked), &tgid, start) == 0;
}

int loader__set_chan(struct loader *l, uint32_t dir, uint64_t dev, uint64_t ino, uint32_t head,
		     bool sock)
{
	struct mw_chan c = {
		.dev = encode_to_kdev(dev),
		.ino = ino,
		.head = head,
		.enabled = MW_CHAN_ON | (sock ? MW_CHAN_SOCK : 0),
	};

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.chan), &dir, &c, BPF_ANY))
		return -errno;
	return 0;
}

size_t loader__each_tracked(struct loader *l, void (*fn)(void *ctx, uint32_t tgid), void *ctx)
{
	size_t n = 0;

	for (uint32_t w = 0; w < MW_PID_WORDS; w++) {
		/* the kernel sets and clears bits of the same word at forks and exits */
		uint64_t bits = __atomic_load_n(&l->tracked_bits[w], __ATOMIC_RELAXED);

		for (; bits; bits &= bits - 1, n++)
			fn(ctx, w * 64 + (uint32_t)__builtin_ctzll(bits));
	}
	return n;
}

bool loader__tracked_empty(struct loader *l)
{
	for (uint32_t w = 0; w < MW_PID_WORDS; w++)
		if (__atomic_load_n(&l->tracked_bits[w], __ATOMIC_RELAXED))
			return false;
	return true;
}

static void kill_one(void *ctx, uint32_t tgid)
{
	(void)ctx;
	kill((pid_t)tgid, SIGKILL);
}

size_t loader__kill_tracked(struct loader *l, unsigned int wait_ms, void (*between)(void *ctx),
			    void *ctx)
{
	struct timespec start, now;
	size_t left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((left = loader__each_tracked(l, kill_one, NULL)) > 0) {
		if (between)
			between(ctx);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
		    (long)wait_ms)
			break;
		poll(NULL, 0, 1);
	}
	return left;
}

size_t loader__link_fds(struct loader *l, int *out, size_t cap)
{
	const struct bpf_object_skeleton *sk = l->skel->skeleton;
	size_t n = 0;

	for (int i = 0; i < sk->prog_cnt && n < cap; i++) {
		struct bpf_link *link = *sk->progs[i].link;

		if (link)
			out[n++] = bpf_link__fd(link);
	}
	return n;
}

/* A consistent copy of the in-flight entry of tid: the BPF side rewrites a thread's entry in
 * place (inflight.bpf.h), so a copy is taken only when two reads in a row agree. Returns 0, or
 * -errno (-EAGAIN: the entry kept changing; -ENOENT: it is gone). */
static int inflight_read(int fd, uint32_t tid, struct mw_inflight *f)
{
	struct mw_inflight again;
	int i;

	if (bpf_map_lookup_elem(fd, &tid, f))
		return -errno;
	for (i = 0; i < 8; i++) {
		if (bpf_map_lookup_elem(fd, &tid, &again))
			return -errno;
		if (memcmp(f, &again, sizeof(again)) == 0)
			return 0;
		*f = again;
	}
	return -EAGAIN;
}

int loader__inflight(struct loader *l, bool (*want)(void *ctx, const struct mw_inflight *f),
		     void (*fn)(void *ctx, const struct mw_inflight *f), void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(l->skel->maps.inflight);
	uint32_t keys[INFLIGHT_BATCH], cursor = 0;
	struct mw_inflight *vals = l->inflight_batch, f;
	bool first = true, done = false;
	int n = 0;

	while (!done) {
		__u32 count = INFLIGHT_BATCH, i;
		int err = bpf_map_lookup_batch(fd, first ? NULL : &cursor, &cursor, keys, vals,
					       &count, &opts);

		if (err && errno != ENOENT)
			return -errno;
		done = err != 0; /* ENOENT: the last entries are in this batch */
		first = false;
		for (i = 0; i < count; i++) {
			/* an idle entry (op unspecified) is a live thread between stashed calls;
			 * the batch's copy may be torn (programs rewrite entries in place), so a
			 * wanted one is read again until two reads agree */
			if (vals[i].op == MW_OP_UNSPEC || (want && !want(ctx, &vals[i])))
				continue;
			if (inflight_read(fd, keys[i], &f) || f.op == MW_OP_UNSPEC ||
			    (want && !want(ctx, &f)))
				continue;
			fn(ctx, &f);
			n++;
		}
	}
	return n;
}

int loader__ring_fd(struct loader *l)
{
	return l->rings.epfd;
}

int loader__drain(struct loader *l)
{
	return ringpair_drain(&l->rings, on_ring_record, l);
}

uint64_t loader__spilled(struct loader *l)
{
	return l->rings.taken[RING_SPILL];
}

bool loader__ring_waiting(struct loader *l)
{
	return l->rings_open && ringpair_waiting(&l->rings);
}

int loader__losses(struct loader *l, uint64_t totals[MW_LOSS_REASONS])
{
	int fd = bpf_map__fd(l->skel->maps.losses);
	uint64_t *percpu = calloc((size_t)l->ncpus, sizeof(uint64_t));
	uint32_t reason;
	int cpu;

	if (!percpu)
		return -ENOMEM;
	for (reason = 0; reason < MW_LOSS_REASONS; reason++) {
		totals[reason] = 0;
		if (bpf_map_lookup_elem(fd, &reason, percpu)) {
			free(percpu);
			return -errno;
		}
		for (cpu = 0; cpu < l->ncpus; cpu++)
			totals[reason] += percpu[cpu];
	}
	free(percpu);
	return 0;
}

int loader__next_seq(struct loader *l, uint64_t *next)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.seqno), &zero, next))
		return -errno;
	return 0;
}

size_t loader__notes(struct loader *l, const char *const **notes)
{
	*notes = (const char *const *)l->notes;
	return l->n_notes;
}
