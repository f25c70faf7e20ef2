"""test_channel_uring.py - io_uring on the MCP channel (bpf/chan_async.bpf.h) on the real
kernel: a request's completion on the server's stdin or stdout object is a gap of its result
(reads, writes, splice, a registered file); one whose bytes no completion with its request will
show is a loss at its submission (a skipped completion, a multishot receive or read, a bundle
receive or send), as is a completion that overflows the ring; a receive with MSG_PEEK takes
nothing. The other calls on the channel: test_channel.py.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
from chancase import VEC, ChannelCase  # noqa: E402

# io_uring by raw syscalls (no liburing here): a ring of 4 and run(op, fd, addr, n, ...), which
# submits one request and, unless it skips its completion, waits for it and returns its result
URING_RING = VEC + r"""
import mmap, os, struct, sys
class params(ctypes.Structure):
    _fields_ = [("sq_entries", ctypes.c_uint32), ("cq_entries", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("sq_thread_cpu", ctypes.c_uint32),
                ("sq_thread_idle", ctypes.c_uint32), ("features", ctypes.c_uint32),
                ("wq_fd", ctypes.c_uint32), ("resv", ctypes.c_uint32 * 3),
                ("sq_off", ctypes.c_uint32 * 10), ("cq_off", ctypes.c_uint32 * 10)]
SETUP, ENTER = 425, 426  # the same on x86-64 and arm64
CQE_SKIP_SUCCESS = 1 << 6
p = params()
ring = libc.syscall(SETUP, 4, ctypes.byref(p))
assert ring >= 0, ctypes.get_errno()
sq_len = p.sq_off[6] + p.sq_entries * 4      # array
cq_len = p.cq_off[5] + p.cq_entries * 16     # cqes
rings = mmap.mmap(ring, max(sq_len, cq_len), offset=0)  # IORING_FEAT_SINGLE_MMAP
sqes = mmap.mmap(ring, p.sq_entries * 64, offset=0x10000000)
def u32(off, v=None):
    if v is None:
        return struct.unpack_from("<I", rings, off)[0]
    struct.pack_into("<I", rings, off, v)
def submit(op, fd, addr, n, flags=0, off=2**64 - 1, fd_in=0, rw_flags=0, wait=0, ioprio=0,
           buf_group=0):
    # submits one request; with wait, returns once wait completions are in the ring
    struct.pack_into("<BBHiQQIIQHHi16x", sqes, 0, op, flags, ioprio, fd, off, addr, n, rw_flags,
                     7, buf_group, 0, fd_in)
    tail = u32(p.sq_off[1])
    u32(p.sq_off[6] + (tail & u32(p.sq_off[2])) * 4, 0)
    u32(p.sq_off[1], tail + 1)
    assert libc.syscall(ENTER, ring, 1, wait, 1 if wait else 0, None, 0) == 1  # GETEVENTS
def run(op, fd, addr, n, flags=0, off=2**64 - 1, fd_in=0, rw_flags=0, ioprio=0, buf_group=0):
    wait = 0 if flags & CQE_SKIP_SUCCESS else 1
    submit(op, fd, addr, n, flags, off, fd_in, rw_flags, wait, ioprio, buf_group)
    if not wait:
        return None
    head = u32(p.cq_off[0])
    data, res, _ = struct.unpack_from("<QiI", rings, p.cq_off[5] + (head & u32(p.cq_off[2])) * 16)
    u32(p.cq_off[0], head + 1)
    assert data == 7, data
    return res
def multishot(op, fd, ioprio=0):
    # one multishot request of op on fd into 4 provided buffers of 64 bytes (buffer group 1,
    # IORING_OP_PROVIDE_BUFFERS), reaped until its last completion (no IORING_CQE_F_MORE);
    # returns the bytes its completions carried
    bufs = ctypes.create_string_buffer(4 * 64)
    assert run(31, 4, ctypes.addressof(bufs), 64, off=0, buf_group=1) >= 0
    submit(op, fd, 0, 0, flags=1 << 5, off=0, ioprio=ioprio, buf_group=1)  # BUFFER_SELECT
    got = b""
    while True:
        head = u32(p.cq_off[0])
        if head == u32(p.cq_off[1]):
            assert libc.syscall(ENTER, ring, 0, 1, 1, None, 0) == 0  # wait for one
            continue
        data, res, flags = struct.unpack_from("<QiI", rings,
                                              p.cq_off[5] + (head & u32(p.cq_off[2])) * 16)
        u32(p.cq_off[0], head + 1)
        assert data == 7 and res >= 0, (data, res)
        if res > 0:
            got += bufs.raw[(flags >> 16) * 64:][:res]  # IORING_CQE_BUFFER_SHIFT
        if not flags & 2:  # IORING_CQE_F_MORE
            return got
"""

# reads 8 bytes of stdin with IORING_OP_READ, then writes "<", 10 bytes with IORING_OP_WRITE
# and 10 with IORING_OP_WRITEV (two iovecs), then ">"; then splices 4 bytes of stdin to stdout
# (IORING_OP_SPLICE, pipe to pipe), then "!"
URING_SERVER = URING_RING + r"""
got = ctypes.create_string_buffer(8)
assert run(22, 0, ctypes.addressof(got), 8) == 8                     # IORING_OP_READ
os.write(1, b"<")
flat, _ = one(b"f", 10)
assert run(23, 1, ctypes.addressof(flat), 10) == 10                  # IORING_OP_WRITE
keep = [one(b"v", 5), one(b"w", 5)]
parts = (iovec * 2)(keep[0][1], keep[1][1])
assert run(2, 1, ctypes.addressof(parts), 2) == 10                   # IORING_OP_WRITEV
os.write(1, b">")
assert run(30, 1, 2**64 - 1, 4, off=2**64 - 1, fd_in=0) == 4         # IORING_OP_SPLICE
os.write(1, b"!")
assert os.read(0, 100) == b"rest"
"""

# a write whose completion is skipped on success (IOSQE_CQE_SKIP_SUCCESS): no completion ever
# says what it moved, so its submission is a loss
URING_SKIP_SERVER = URING_RING + r"""
os.write(1, b"<")
flat, _ = one(b"s", 10)
assert run(23, 1, ctypes.addressof(flat), 10, flags=CQE_SKIP_SUCCESS) is None
os.write(1, b">")
"""

# on a socket stdin: an IORING_OP_RECV with MSG_PEEK of 4 bytes (they stay in the socket), the
# same without, then the rest by read
URING_PEEK_SERVER = URING_RING + r"""
buf = ctypes.create_string_buffer(4)
assert run(27, 0, ctypes.addressof(buf), 4, off=0, rw_flags=2) == 4   # MSG_PEEK
assert run(27, 0, ctypes.addressof(buf), 4, off=0) == 4
assert buf.raw == b"abcd", buf.raw
assert os.read(0, 100) == b"efgh"
"""

# a multishot receive (IORING_RECV_MULTISHOT) on a socket stdin, and a multishot read
# (IORING_OP_READ_MULTISHOT) on a pipe stdin: their completions that carry bytes are posted
# without their request, so no gap can be placed for them
URING_RECV_MULTISHOT_SERVER = URING_RING + r"""
assert multishot(27, 0, ioprio=1 << 1) == b"abcdefgh"
"""
URING_READ_MULTISHOT_SERVER = URING_RING + r"""
assert multishot(49, 0) == b"abcdefgh"
"""
# a bundle receive (IORING_RECVSEND_BUNDLE) on a socket stdin, and a bundle send of a provided
# buffer on a socket stdout: one completion each here, but a bundle may post more without its
# request, so its submission is a loss too
URING_RECV_BUNDLE_SERVER = URING_RING + r"""
assert multishot(27, 0, ioprio=1 << 4) == b"abcdefgh"
"""
URING_SEND_BUNDLE_SERVER = URING_RING + r"""
data = ctypes.create_string_buffer(b"abcdefgh", 64)
assert run(31, 1, ctypes.addressof(data), 8, off=0, buf_group=1) >= 0  # PROVIDE_BUFFERS, one
assert run(26, 1, 0, 0, flags=1 << 5, off=0, ioprio=1 << 4, buf_group=1) == 8  # SEND, BUNDLE
"""

# nine 1-byte writes to stdout, none reaped: the ring's 8 completion slots fill, the ninth's
# completion overflows (IORING_SQ_CQ_OVERFLOW), and no completion ever says what it moved
URING_OVERFLOW_SERVER = URING_RING + r"""
import time
x, _ = one(b"x", 1)
for i in range(8):
    submit(23, 1, ctypes.addressof(x), 1, wait=i + 1)
submit(23, 1, ctypes.addressof(x), 1)
deadline = time.monotonic() + 10
while not u32(p.sq_off[4]) & 2:  # IORING_SQ_CQ_OVERFLOW
    assert time.monotonic() < deadline, "no overflow"
    time.sleep(0.01)
"""

# stdout registered as the ring's file 0 (IORING_REGISTER_FILES): a write through it, then one
# whose completion is skipped: its object is not known before it runs, so a loss
URING_FIXED_SERVER = URING_RING + r"""
one_fd = (ctypes.c_int * 1)(1)
assert libc.syscall(427, ring, 2, one_fd, 1) == 0  # io_uring_register(FILES)
FIXED_FILE = 1 << 0
flat, _ = one(b"f", 10)
assert run(23, 0, ctypes.addressof(flat), 10, flags=FIXED_FILE) == 10
skip, _ = one(b"s", 5)
assert run(23, 0, ctypes.addressof(skip), 5, flags=FIXED_FILE | CQE_SKIP_SUCCESS) is None
"""


class ChannelUring(ChannelCase):
    def test_io_uring_is_a_gap(self):
        """io_uring requests on the stdin and stdout pipes: a gap of each completion's length,
        between the reads and writes around them; a splice from stdin to stdout, one in each
        stream."""
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", URING_SERVER],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, input=b"12345678abcdrest", capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        want = b"<" + b"f" * 10 + b"v" * 5 + b"w" * 5 + b">abcd!"
        self.assertEqual(r.stdout, want)
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        _, gaps = self.tile(frames, "WRITE", want)
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps],
                         [(1, 10), (11, 10), (22, 4)])
        _, gaps = self.tile(frames, "READ", b"12345678abcdrest")
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(0, 8), (8, 4)])

    def uring_losses(self, server, out):
        """Records the python3 server (stdin empty); checks its stdout bytes, in any order
        (the ring's worker may write them late); returns (its gaps' lengths, its losses)."""
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", server],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        self.assertEqual(sorted(r.stdout), sorted(out))
        recs = mwtest.dump_json(self.trace, self.keys)
        gaps = [f["gap_len"] for f in recs if f.get("type") == "stdio" and "gap_len" in f]
        return gaps, self.capture_losses(recs)

    def capture_losses(self, recs):
        """The CAPTURE_TRUNCATED losses among the trace's records recs."""
        return sum(r["delta"] for r in recs if r.get("type") == "loss"
                   and r["src"] == "CAPTURE_TRUNCATED")

    def test_io_uring_unseen_is_a_loss(self):
        """A write to stdout whose completion is skipped: no gap can be placed, so the
        submission records a loss and the trace is incomplete, not silently short."""
        gaps, losses = self.uring_losses(URING_SKIP_SERVER, b"<" + b"s" * 10 + b">")
        self.assertEqual((gaps, losses), ([], 1))
        v = mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey", self.keys.public])
        self.assertIn("W_LOSS", v.stdout)

    def test_io_uring_overflow_is_a_loss(self):
        """Completions of channel writes that overflow the ring are posted later with no
        trace of their request: each overflow is a loss (beside each gap's own)."""
        gaps, losses = self.uring_losses(URING_OVERFLOW_SERVER, b"x" * 9)
        self.assertEqual(gaps, [1] * 8)
        self.assertEqual(losses, 8 + 1)

    def test_io_uring_registered_file(self):
        """A write through a registered stdout is a gap (its file known at completion); one
        whose completion is skipped is a loss at submission."""
        gaps, losses = self.uring_losses(URING_FIXED_SERVER, b"f" * 10 + b"s" * 5)
        self.assertEqual(gaps, [10])
        self.assertEqual(losses, 1 + 1)

    def channel_losses(self, frames, direction="READ"):
        """The channel's frames of direction and the trace's capture losses; verify says
        W_LOSS."""
        losses = self.capture_losses(mwtest.dump_json(self.trace, self.keys))
        v = mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey", self.keys.public])
        self.assertIn("W_LOSS", v.stdout)
        return [f for f in frames if f["dir"] == direction], losses

    def test_io_uring_multishot_recv_is_a_loss(self):
        """A multishot receive on a socket stdin: the completions that carry its bytes come
        without their request, so the submission records a loss and nothing is placed."""
        frames = self.record_socket_stdin(URING_RECV_MULTISHOT_SERVER, b"abcdefgh")
        self.assertEqual(self.channel_losses(frames), ([], 1))

    def test_io_uring_multishot_read_is_a_loss(self):
        """A multishot read (IORING_OP_READ_MULTISHOT) on a pipe stdin: a loss, as above."""
        cmd = mwtest.collect_cmd(self.trace, self.keys,
                                 ["python3", "-c", URING_READ_MULTISHOT_SERVER],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, input=b"abcdefgh", capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        self.assertEqual(self.channel_losses(frames), ([], 1))

    def test_io_uring_bundle_recv_is_a_loss(self):
        """A bundle receive on a socket stdin: a loss at its submission, and the gap of its
        completion, which here comes with its request (a loss of its own, as every gap)."""
        frames = self.record_socket_stdin(URING_RECV_BUNDLE_SERVER, b"abcdefgh")
        reads, losses = self.channel_losses(frames)
        self.assertEqual(([(f.get("stream_offset"), f.get("gap_len")) for f in reads], losses),
                         ([(0, 8)], 1 + 1))

    def test_io_uring_bundle_send_is_a_loss(self):
        """A bundle send of a provided buffer on a socket stdout: a loss at its submission, and
        the gap of its completion (a loss of its own)."""
        got, frames = self.record_socket_stdout(URING_SEND_BUNDLE_SERVER)
        self.assertEqual(got, b"abcdefgh")
        writes, losses = self.channel_losses(frames, "WRITE")
        self.assertEqual(([(f.get("stream_offset"), f.get("gap_len")) for f in writes], losses),
                         ([(0, 8)], 1 + 1))

    def test_io_uring_peek_takes_nothing(self):
        """An io_uring receive with MSG_PEEK on a socket stdin: no gap, the bytes are counted
        once, by the receive that takes them."""
        frames = self.record_socket_stdin(URING_PEEK_SERVER, b"abcdefgh")
        _, gaps = self.tile(frames, "READ", b"abcdefgh")
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(0, 4)])


if __name__ == "__main__":
    mwtest.main()
