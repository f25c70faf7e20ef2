/*
 * ring_wakeup.c - the collector's record rings wake it only when a producer asks (the wake-up
 * mark, bpf/maps.h), on real kernel ring buffer maps read through collector/ringpair.c.
 *
 * A ring map polls readable as long as it holds a byte. The collector sleeps in epoll_wait on
 * ringpair's epoll fd (nested in its own set, level-triggered, as session.c has it), so if that
 * fd stayed readable while records below the mark wait, a collector that polls again before the
 * next record is in would never sleep: it drained ~25 000 times a second, a whole CPU, during
 * the openat benchmark loop. Records are written by a small raw tracepoint program run with
 * BPF_PROG_TEST_RUN (its instructions are below: the map's fd, the record's value and the
 * output's flags), each an 8-byte value and ringpair's 8-byte trailer (0: nothing to wait for).
 *
 * Checked, on both the ring pair's fd and an outer epoll set holding it:
 * - a record written without a wake-up leaves the fd unreadable, before any wake-up and after a
 *   drain that answered one, though the record waits;
 * - a record written with a wake-up makes it readable at once; the drain takes every waiting
 *   record in order and leaves it unreadable, records without a wake-up written after it too;
 * - a wake-up that comes while a drain runs leaves it readable for the records the drain left.
 *
 * usage: mw_ring_wakeup   (root; exit 0 all hold, 1 one does not, 77 not root or no ring maps)
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "events.h"
#include "ringpair.h"

#define RING_BYTES 8192

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };

	return i;
}

/* A program that outputs ctx[1] and a zero trailer to the ring map_fd with flags ctx[0], and
 * returns the helper's result. */
static int load_writer(int map_fd)
{
	struct bpf_insn p[] = {
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
		insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6, 8, 0),
		insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_1, -16, 0),
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0),
		insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		insn(0, 0, 0, 0, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 16),
		insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_4, BPF_REG_6, 0, 0),
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "mw_ring_writer", "GPL", p,
			     sizeof(p) / sizeof(p[0]), NULL);
}

/* Writes the record `value` with the output flags through program prog; false if it failed. */
static bool write_record(int prog, uint64_t flags, uint64_t value)
{
	uint64_t args[2] = { flags, value };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	return bpf_prog_test_run_opts(prog, &opts) == 0 && opts.retval == 0;
}

/* Whether fd polls readable within ms milliseconds. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static uint64_t got[16];
static int ngot, wake_prog = -1;

static int take(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size == sizeof(uint64_t) && ngot < 16)
		memcpy(&got[ngot++], data, sizeof(uint64_t));
	return 0;
}

/* Takes the first record, writes one with a wake-up on the hot ring meanwhile, and stops the
 * drain there (as the collector's budget does), so that the new record still waits after it. */
static int take_and_wake(void *ctx, void *data, size_t size)
{
	if (!write_record(wake_prog, BPF_RB_FORCE_WAKEUP, 99))
		CHECK(false, "writing a record during the drain failed");
	take(ctx, data, size);
	return -EINTR;
}

/* How long a wake-up may take to reach the fd (an irq_work, run when the CPU takes it), and how
 * long an fd that must stay unreadable is watched. */
#define WAKE_MS	 1000
#define QUIET_MS 100

static void run(struct ringpair *rp, int outer, int hot, int spill)
{
	int fds[2] = { rp->epfd, outer }, i;

	for (i = 0; i < 2; i++)
		CHECK(!readable(fds[i], QUIET_MS), "fd %d readable before any record", i);
	CHECK(write_record(hot, BPF_RB_NO_WAKEUP, 1) && write_record(spill, BPF_RB_NO_WAKEUP, 2),
	      "writing records without a wake-up failed");
	for (i = 0; i < 2; i++)
		CHECK(!readable(fds[i], QUIET_MS),
		      "fd %d readable after records written without a wake-up", i);

	CHECK(write_record(hot, BPF_RB_FORCE_WAKEUP, 3), "writing a record with a wake-up failed");
	for (i = 0; i < 2; i++)
		CHECK(readable(fds[i], WAKE_MS), "fd %d not readable after a wake-up", i);
	ngot = 0;
	CHECK(ringpair_drain(rp, take, NULL) == 3, "the drain did not take the 3 records");
	CHECK(ngot == 3 && got[0] == 1 && got[1] == 3 && got[2] == 2,
	      "records taken: %d (%llu %llu %llu), expected 1 3 2", ngot,
	      (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2]);

	/* the collector's case: more records come in before it polls again */
	CHECK(write_record(hot, BPF_RB_NO_WAKEUP, 4), "writing a record failed");
	for (i = 0; i < 2; i++)
		CHECK(!readable(fds[i], QUIET_MS),
		      "fd %d readable after a drain, with only records without a wake-up waiting "
		      "(a collector polling it would never sleep)",
		      i);
	ngot = 0;
	CHECK(ringpair_drain(rp, take, NULL) == 1 && ngot == 1 && got[0] == 4,
	      "the record written without a wake-up was not taken by the next drain");

	/* a wake-up during a drain is not lost */
	CHECK(write_record(hot, BPF_RB_FORCE_WAKEUP, 5), "writing a record with a wake-up failed");
	CHECK(readable(rp->epfd, WAKE_MS), "not readable after a wake-up");
	ngot = 0;
	wake_prog = hot;
	CHECK(ringpair_drain(rp, take_and_wake, NULL) == -EINTR && ngot == 1 && got[0] == 5,
	      "the drain stopped by its callback did not take record 5 alone");
	for (i = 0; i < 2; i++)
		CHECK(readable(fds[i], WAKE_MS), "fd %d: a wake-up during the drain was lost", i);
	ngot = 0;
	CHECK(ringpair_drain(rp, take, NULL) == 1 && ngot == 1 && got[0] == 99,
	      "the record written during the drain was not taken by the next one");
	for (i = 0; i < 2; i++)
		CHECK(!readable(fds[i], QUIET_MS), "fd %d readable with nothing waiting", i);
}

int main(void)
{
	int hot_map, spill_map, hot = -1, spill = -1, outer = -1, err;
	struct epoll_event ev = { .events = EPOLLIN };
	struct ringpair rp;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root (BPF maps and programs)\n");
		return 77;
	}
	hot_map = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mw_hot", 0, 0, RING_BYTES, NULL);
	spill_map = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mw_spill", 0, 0, RING_BYTES, NULL);
	if (hot_map < 0 || spill_map < 0) {
		fprintf(stderr, "SKIP: this kernel makes no BPF ring buffer map: %s\n",
			strerror(errno));
		return 77;
	}
	hot = load_writer(hot_map);
	spill = load_writer(spill_map);
	if (hot < 0 || spill < 0) {
		fprintf(stderr, "FAIL: loading the writer program: %s\n", strerror(errno));
		return 1;
	}
	err = ringpair_open(&rp, hot_map, RING_BYTES, spill_map, RING_BYTES);
	if (err) {
		fprintf(stderr, "FAIL: ringpair_open: %s\n", strerror(-err));
		return 1;
	}
	outer = epoll_create1(EPOLL_CLOEXEC);
	if (outer < 0 || epoll_ctl(outer, EPOLL_CTL_ADD, rp.epfd, &ev)) {
		fprintf(stderr, "FAIL: the outer epoll set: %s\n", strerror(errno));
		return 1;
	}
	run(&rp, outer, hot, spill);
	ringpair_close(&rp);
	close(outer);
	close(hot);
	close(spill);
	close(hot_map);
	close(spill_map);
	if (failures)
		return 1;
	printf("ok: the ring pair's fd is readable after wake-ups only\n");
	return 0;
}
