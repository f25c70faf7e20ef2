/*
 * ringpair.h - the collector's reader of the two BPF record rings (bpf/maps.h: the hot ring
 * and the spill ring), merged so that each thread's records come out in the order it made them.
 *
 * Every ring record is a record followed by an 8-byte trailer (MW_RING_TRAILER): the other
 * ring's producer position when the record was made, read before this ring's reservation. A
 * record is taken only once the other ring has been consumed up to that position, so whatever
 * a thread put in the other ring before it is taken first. Two heads can never wait for each
 * other: a waits for b only if b was reserved before a's read of the position, and b for a only
 * if a was reserved before b's, and each read comes before its own reservation. A head waiting
 * for a record still being written (busy) is taken by a later drain.
 */
#ifndef MW_COLLECTOR_RINGPAIR_H
#define MW_COLLECTOR_RINGPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RING_HOT, RING_SPILL, RING_COUNT };

/* One BPF ring buffer as mapped into the collector (the layout of the kernel's ringbuf map:
 * a consumer page, written by us; a producer page and the data, mapped twice in a row so that
 * a record that wraps reads as one piece). */
struct ring {
	unsigned long *consumer;       /* the kernel's consumer position: we publish ours here */
	const unsigned long *producer; /* where the kernel has reserved up to */
	const uint8_t *data;	       /* 2 * size bytes: the data pages, twice */
	uint64_t mask;		       /* size - 1 (a power of two) */
	uint64_t pos;		       /* our consumer position */
	uint64_t published;	       /* the last one written to *consumer */
	uint64_t prod;		       /* the producer position as last read */
	unsigned unpublished;	       /* records taken since */
	void *map_consumer, *map_producer;
	size_t len_producer;
};

struct ringpair {
	struct ring ring[RING_COUNT];
	int epfd; /* both map fds, edge-triggered: readable once a ring's producer woke it (the
		   * wake-up mark, bpf/maps.h) until the next drain, not whenever a record waits */
	uint64_t taken[RING_COUNT]; /* records taken from each ring since it was opened: how many
				     * spilled (found the hot ring full) is taken[RING_SPILL] */
};

/* Called with each record, without its trailer; a negative return stops the drain after that
 * record (which counts as taken) and is returned. */
typedef int (*ringpair_fn)(void *ctx, void *data, size_t size);

/* Maps the rings of map fds hot_fd and spill_fd (their sizes hot_bytes and spill_bytes) and
 * makes the epoll fd. 0 or -errno; on failure nothing is left to free. */
int ringpair_open(struct ringpair *rp, int hot_fd, size_t hot_bytes, int spill_fd,
		  size_t spill_bytes);
void ringpair_close(struct ringpair *rp);

/* Whether either ring holds a record reserved and not yet taken (one still being written, or
 * one waiting for it in the other ring): what a last drain should wait a moment for. */
bool ringpair_waiting(struct ringpair *rp);

/* Takes every record that can be taken now, in order, calling fn for each, after taking the
 * wake-ups waiting on epfd (records below the mark are drained by a caller's timeout, not by a
 * readable fd). Returns how many,
 * fn's negative return, or -EBADMSG for a ring header that cannot be (a length past the ring;
 * nothing more is read from that ring). */
int ringpair_drain(struct ringpair *rp, ringpair_fn fn, void *ctx);

#endif
