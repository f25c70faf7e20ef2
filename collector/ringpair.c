/*
 * ringpair.c - the collector's reader of the two BPF record rings (see ringpair.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "events.h"
#include "ringpair.h"

/* A record at the head of a ring: its bytes without the trailer, the trailer, and where the
 * ring's consumer position goes once it is taken. */
struct head {
	const uint8_t *data;
	uint32_t size;
	uint64_t other; /* the other ring's producer position when it was made */
	uint64_t next;
};

/* Records taken between two publications of the consumer position: the producers read it (a
 * cache line that moves between CPUs each time it is written), and the space it frees is
 * needed only once the ring is nearly full. */
#define PUBLISH_EVERY 64

static void ring_publish(struct ring *g)
{
	if (g->published != g->pos)
		__atomic_store_n(g->consumer, (unsigned long)g->pos, __ATOMIC_RELEASE);
	g->published = g->pos;
	g->unpublished = 0;
}

static void ring_release(struct ring *g, uint64_t pos)
{
	g->pos = pos;
	if (++g->unpublished >= PUBLISH_EVERY)
		ring_publish(g);
}

/* The committed record at g's head, skipping discarded ones (none of ours discards). 1 if there
 * is one, 0 if the ring is empty or its head is still being written, -EBADMSG. */
static int ring_head(struct ring *g, struct head *h)
{
	for (;;) {
		const uint8_t *hdr;
		uint32_t word, len;

		if (g->pos >= g->prod) { /* read again only once the last reading is used up */
			g->prod = __atomic_load_n(g->producer, __ATOMIC_ACQUIRE);
			if (g->pos >= g->prod)
				return 0;
		}
		hdr = g->data + (g->pos & g->mask);
		word = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
		if (word & BPF_RINGBUF_BUSY_BIT)
			return 0;
		len = word & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		if ((uint64_t)len + BPF_RINGBUF_HDR_SZ > g->mask + 1)
			return -EBADMSG;
		h->next = g->pos + ((len + BPF_RINGBUF_HDR_SZ + 7) & ~7u);
		if ((word & BPF_RINGBUF_DISCARD_BIT) || len < MW_RING_TRAILER) {
			ring_release(g, h->next); /* no record of ours: nothing to take */
			continue;
		}
		h->data = hdr + BPF_RINGBUF_HDR_SZ;
		h->size = len - MW_RING_TRAILER;
		memcpy(&h->other, h->data + h->size, sizeof(h->other));
		return 1;
	}
}

int ringpair_drain(struct ringpair *rp, ringpair_fn fn, void *ctx)
{
	struct ring *hot = &rp->ring[RING_HOT], *spill = &rp->ring[RING_SPILL];
	struct epoll_event evs[RING_COUNT];
	int n = 0;

	/* The wake-ups this drain answers: taken before the records, so that one arriving
	 * during the drain makes the fd readable again (its records may be past the drain's
	 * reading of the producer position). Nothing to check in its result: what it took is
	 * answered by the drain either way. The unit test's rings in memory have no fd (-1). */
	if (rp->epfd >= 0)
		(void)epoll_wait(rp->epfd, evs, RING_COUNT, 0);

	for (;;) {
		struct head hh, sh, *h;
		struct ring *g;
		int hr = ring_head(hot, &hh), sr = ring_head(spill, &sh), err;

		if (hr < 0 || sr < 0) {
			n = -EBADMSG;
			break;
		}
		if (hr && spill->pos >= hh.other) {
			g = hot;
			h = &hh;
		} else if (sr && hot->pos >= sh.other) {
			g = spill;
			h = &sh;
		} else {
			break; /* empty, or a head waits for a record still being written */
		}
		err = fn(ctx, (void *)h->data, h->size);
		ring_release(g, h->next);
		rp->taken[g - rp->ring]++;
		if (err < 0) {
			n = err;
			break;
		}
		n++;
	}
	ring_publish(hot);
	ring_publish(spill);
	return n;
}

bool ringpair_waiting(struct ringpair *rp)
{
	int i;

	for (i = 0; i < RING_COUNT; i++) {
		struct ring *g = &rp->ring[i];

		g->prod = __atomic_load_n(g->producer, __ATOMIC_ACQUIRE);
		if (g->pos < g->prod)
			return true;
	}
	return false;
}

static void ring_unmap(struct ring *g)
{
	if (g->map_consumer && g->map_consumer != MAP_FAILED)
		munmap(g->map_consumer, (size_t)sysconf(_SC_PAGESIZE));
	if (g->map_producer && g->map_producer != MAP_FAILED)
		munmap(g->map_producer, g->len_producer);
	memset(g, 0, sizeof(*g));
}

static int ring_map(struct ring *g, int fd, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(g, 0, sizeof(*g));
	if (!bytes || (bytes & (bytes - 1)) || bytes % page)
		return -EINVAL;
	g->map_consumer = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (g->map_consumer == MAP_FAILED) {
		int err = -errno;

		ring_unmap(g);
		return err;
	}
	g->len_producer = page + 2 * bytes;
	g->map_producer = mmap(NULL, g->len_producer, PROT_READ, MAP_SHARED, fd, (off_t)page);
	if (g->map_producer == MAP_FAILED) {
		int err = -errno;

		ring_unmap(g);
		return err;
	}
	g->consumer = g->map_consumer;
	g->producer = g->map_producer;
	g->data = (const uint8_t *)g->map_producer + page;
	g->mask = bytes - 1;
	g->pos = __atomic_load_n(g->consumer, __ATOMIC_ACQUIRE);
	g->published = g->pos;
	return 0;
}

int ringpair_open(struct ringpair *rp, int hot_fd, size_t hot_bytes, int spill_fd,
		  size_t spill_bytes)
{
	int fds[RING_COUNT] = { hot_fd, spill_fd };
	int err, i;

	memset(rp, 0, sizeof(*rp));
	rp->epfd = -1;
	err = ring_map(&rp->ring[RING_HOT], hot_fd, hot_bytes);
	if (!err)
		err = ring_map(&rp->ring[RING_SPILL], spill_fd, spill_bytes);
	if (!err) {
		rp->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (rp->epfd < 0)
			err = -errno;
	}
	/* Edge-triggered: readable after a wake-up, not whenever a record waits. A ring map polls
	 * readable as long as it holds a byte, so with level-triggered entries a collector that
	 * polls again before the next record is in keeps finding the fd readable and never
	 * sleeps: it spun at ~25 000 drains a second, a whole CPU, during the openat loop. */
	for (i = 0; !err && i < RING_COUNT; i++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = (uint32_t)i };

		if (epoll_ctl(rp->epfd, EPOLL_CTL_ADD, fds[i], &ev))
			err = -errno;
	}
	if (err)
		ringpair_close(rp);
	return err;
}

void ringpair_close(struct ringpair *rp)
{
	int i;

	for (i = 0; i < RING_COUNT; i++)
		ring_unmap(&rp->ring[i]);
	if (rp->epfd >= 0)
		close(rp->epfd);
	rp->epfd = -1;
}
