/*
 * loader.c - open, size, feature-probe, load, attach and drain the BPF programs (see loader.h).
 *
 * The open -> configure -> load -> attach sequence of libbpf-tools: every map size and program
 * choice is settled between __open and __load, never with open_and_load.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "mcpwitness.skel.h"

#include "encode.h"
#include "loader.h"
#include "log.h"

struct loader {
	struct mcpwitness *skel;
	struct ring_buffer *ring;
	loader_record_fn on_record;
	void *ctx;
	int ncpus;
	char *notes[LOADER_MAX_NOTES];
	size_t n_notes;
};

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

/* Whether the hook named by a program's section exists on this kernel. */
static bool hook_exists(const char *sec, const struct btf *vmlinux)
{
	char path[256], name[128];

	if (!strncmp(sec, "tracepoint/", 11)) {
		snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", sec + 11);
		if (access(path, F_OK) == 0)
			return true;
		snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s", sec + 11);
		return access(path, F_OK) == 0;
	}
	if (!strncmp(sec, "tp_btf/", 7)) {
		snprintf(name, sizeof(name), "btf_trace_%s", sec + 7);
		return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0;
	}
	return true;
}

static void disable_missing_hooks(struct loader *l)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;

	if (!vmlinux)
		loader_note(l, "kernel BTF unavailable: tp_btf programs may fail");
	bpf_object__for_each_program(prog, l->skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		if (hook_exists(sec, vmlinux))
			continue;
		bpf_program__set_autoload(prog, false);
		loader_note(l, "program %s disabled: this kernel has no hook %s",
			    bpf_program__name(prog), sec);
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

static int loader_configure(struct loader *l, const struct loader_opts *o)
{
	struct mcpwitness *s = l->skel;
	int err;

	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0)
		return l->ncpus ? l->ncpus : -EINVAL;
	err = bpf_map__set_max_entries(s->maps.scratch, (uint32_t)l->ncpus);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.events, o->ringbuf_bytes);
	if (err)
		return err;
	if (s->rodata->mw_schema_version != MW_SCHEMA_VERSION) {
		p_err("BPF object schema %u does not match the collector's %u",
		      s->rodata->mw_schema_version, MW_SCHEMA_VERSION);
		return -EPROTO;
	}
	s->rodata->mw_wakeup_bytes = o->ringbuf_bytes / 8;
	disable_missing_hooks(l);
	return 0;
}

struct loader *loader__new(const struct loader_opts *o)
{
	struct loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
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
	if (err) {
		p_err("failed to load the BPF programs: %s (run with -vvv for the verifier log)",
		      strerror(-err));
		goto fail;
	}
	err = mcpwitness__attach(l->skel);
	if (err) {
		p_err("failed to attach the BPF programs: %s", strerror(-err));
		goto fail;
	}
	l->ring = ring_buffer__new(bpf_map__fd(l->skel->maps.events), on_ring_record, l, NULL);
	if (!l->ring) {
		err = -errno;
		p_err("failed to set up the ring buffer: %s", strerror(-err));
		goto fail;
	}
	return l;
fail:
	loader__free(l);
	errno = -err;
	return NULL;
}

#define DETACH_THREADS 16

struct detach_job {
	struct bpf_link **links;
	size_t n, stride, first;
};

static void *detach_some(void *arg)
{
	struct detach_job *j = arg;

	for (size_t i = j->first; i < j->n; i += j->stride)
		bpf_link__destroy(j->links[i]);
	return NULL;
}

/* Detaching a syscall tracepoint waits for an RCU grace period (tens of milliseconds on a
 * kernel with faultable syscall tracepoints); one after the other, eighty of them take
 * seconds. Concurrent waiters share grace periods, so the links are destroyed from a few
 * threads at once; whatever a thread could not take is destroyed here. */
static void detach_all(struct loader *l)
{
	const struct bpf_object_skeleton *sk = l->skel->skeleton;
	struct bpf_link *links[256];
	struct detach_job jobs[DETACH_THREADS];
	pthread_t tids[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };
	size_t n = 0, t;
	int i;

	for (i = 0; i < sk->prog_cnt && n < 256; i++) {
		if (*sk->progs[i].link) {
			links[n++] = *sk->progs[i].link;
			*sk->progs[i].link = NULL;
		}
	}
	for (t = 0; t < DETACH_THREADS; t++) {
		jobs[t] = (struct detach_job){ .links = links, .n = n, .stride = DETACH_THREADS,
					       .first = t };
		started[t] = pthread_create(&tids[t], NULL, detach_some, &jobs[t]) == 0;
	}
	for (t = 0; t < DETACH_THREADS; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else
			detach_some(&jobs[t]);
	}
}

void loader__free(struct loader *l)
{
	size_t i;

	if (!l)
		return;
	ring_buffer__free(l->ring);
	if (l->skel)
		detach_all(l);
	mcpwitness__destroy(l->skel);
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
	return 0;
}

int loader__set_chan(struct loader *l, uint32_t dir, uint64_t dev, uint64_t ino, uint32_t head)
{
	struct mw_chan c = {
		.dev = encode_to_kdev(dev),
		.ino = ino,
		.head = head,
		.enabled = 1,
	};

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.chan), &dir, &c, BPF_ANY))
		return -errno;
	return 0;
}

int loader__tracked(struct loader *l, uint32_t *out, size_t cap)
{
	int fd = bpf_map__fd(l->skel->maps.tracked);
	uint32_t key, next;
	size_t n = 0;
	int err = bpf_map_get_next_key(fd, NULL, &next);

	while (!err && n < cap) {
		out[n++] = next;
		key = next;
		err = bpf_map_get_next_key(fd, &key, &next);
	}
	if (err && errno != ENOENT)
		return -errno;
	return (int)n;
}

int loader__inflight(struct loader *l, void (*fn)(void *ctx, const struct mw_inflight *f),
		     void *ctx)
{
	int fd = bpf_map__fd(l->skel->maps.inflight);
	struct mw_inflight f;
	uint32_t key, next;
	int n = 0, err = bpf_map_get_next_key(fd, NULL, &next);

	while (!err) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &f) == 0) {
			fn(ctx, &f);
			n++;
		}
		err = bpf_map_get_next_key(fd, &key, &next);
	}
	return errno == ENOENT ? n : -errno;
}

int loader__ring_fd(struct loader *l)
{
	return ring_buffer__epoll_fd(l->ring);
}

int loader__drain(struct loader *l)
{
	return ring_buffer__consume(l->ring);
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

size_t loader__notes(struct loader *l, const char *const **notes)
{
	*notes = (const char *const *)l->notes;
	return l->n_notes;
}
