"""test_channel.py - the MCP channel capture (bpf/chan.bpf.c) on the real kernel: bytes moved by
read, readv, write and writev on the server's stdin and stdout objects come back from the trace
exactly, chunked and stamped with their stream offsets, and whatever is not captured is a gap
record, never a hole.

full: a server reads its stdin with readv into three buffers until end of file, then writes
  with writev (three iovecs), write (40 000 bytes: three chunks) and writev (two iovecs of
  20 000: chunks numbered on across the iovecs). The frames of each direction tile the stream
  from offset 0 to its end with no gap, hold the bytes that crossed it, and each call's chunks
  are numbered 0, 1, ... with the last one flagged.
head: the same server under `--stdio head:1000`: each call keeps its first 1 000 bytes (across
  its iovecs), the rest is gap records, and frames and gaps still tile both streams.
seal: a response is sealed (a MARK seal) soon after it is written, also when it comes 3 ms
  after the one before, inside the 10 ms the writer keeps between two such seals: the seal is
  held to that mark, not left to the 1 s segment timer. A 1 MiB ring (wake-up at 128 KiB) and
  200 KB lines make the collector read each response as it comes.
other calls: stdin and stdout as sockets (socketpairs, as libuv gives a child) read with recv
  and recvmsg and written with sendmsg, send and pwritev2 are captured as read and write are;
  bytes vmspliced into the stdout pipe (pages by reference) are a gap of their length, as are
  the messages of a sendmmsg or a recvmmsg and the iocbs of a Linux AIO io_submit (flat and
  vectored) on the channel.
io_uring: a request's completion on the channel is a gap of its result (reads, writes, splice,
  a registered file); one whose bytes no completion with its request will show is a loss at
  its submission (a skipped completion, a multishot receive or read, a bundle receive or
  send), as is a completion that overflows the ring; a receive with MSG_PEEK takes nothing.
"""
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

SERVER = r"""
import os
bufs = [bytearray(5), bytearray(3), bytearray(70000)]
got = b""
while True:
    n = os.readv(0, bufs)
    if n == 0:
        break
    got += b"".join(bytes(b) for b in bufs)[:n]
os.writev(1, [b"<", got, b">"])
os.write(1, b"x" * 40000)
os.writev(1, [b"y" * 20000, b"z" * 20000])
"""

INPUT = bytes(ord("a") + i % 26 for i in range(50000))
OUTPUT = b"<" + INPUT + b">" + b"x" * 40000 + b"y" * 20000 + b"z" * 20000
CALL_LENGTHS = [1 + len(INPUT) + 1, 40000, 40000]  # the three writes, in order
DATA_MAX = 16384  # MW_DATA_MAX: bytes of one chunk
MW_F_TAMPERED, MW_F_UNCHECKED = 1 << 19, 1 << 24

# pwritev2 and vmsplice, which Python does not offer as such: one iovec of n bytes of c.
VEC = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
def one(c, n):
    buf = ctypes.create_string_buffer(c * n, n)
    return buf, iovec(ctypes.cast(buf, ctypes.c_void_p), n)
"""

SOCKET_SERVER = VEC + r"""
import socket
sin, sout = socket.socket(fileno=0), socket.socket(fileno=1)
got = sin.recv(5)
bufs = [bytearray(3), bytearray(70000)]
while True:
    n = sin.recvmsg_into(bufs)[0]
    if n == 0:
        break
    got += b"".join(bytes(b) for b in bufs)[:n]
sout.sendmsg([b"<", got, b">"])
sout.sendall(b"x" * 40000)
buf, iov = one(b"y", 20000)
assert libc.pwritev2(1, ctypes.byref(iov), 1, ctypes.c_long(-1), 0) == 20000
"""

# sendmmsg of two 100-byte messages on a stdout that is a socket, between two sends.
MSGHDR = r"""
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint), ("iov", ctypes.c_void_p),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
                ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
"""

SENDMMSG_SERVER = VEC + MSGHDR + r"""
import socket
sout = socket.socket(fileno=1)
sout.sendall(b"a" * 100)
bufs = [one(c, 100) for c in (b"m", b"n")]
vec = (mmsghdr * 2)()
for i, (buf, iov) in enumerate(bufs):
    vec[i].hdr.iov = ctypes.addressof(iov)
    vec[i].hdr.iovlen = 1
assert libc.sendmmsg(1, vec, 2, 0) == 2
sout.sendall(b"b" * 100)
"""

# The vmspliced bytes are in a page of their own (mmap): the pipe holds the page itself, which
# Python's allocator must not reuse before the reader reads.
VMSPLICE_SERVER = VEC + r"""
import mmap, os
os.write(1, b"a" * 100)
page = mmap.mmap(-1, 4096)
page.write(b"v" * 1000)
iov = iovec(ctypes.addressof(ctypes.c_char.from_buffer(page)), 1000)
assert libc.vmsplice(1, ctypes.byref(iov), 1, 0) == 1000
os.write(1, b"b" * 100)
"""

# recvmmsg on a stdin that is a socket: two messages of 100 bytes (MSG_WAITALL: each full),
# between a recv before and the reads to the end after. The client sent everything at once.
RECVMMSG_SERVER = VEC + MSGHDR + r"""
import socket
sin = socket.socket(fileno=0)
got = b""
while len(got) < 100:
    got += sin.recv(100 - len(got))
bufs = [one(b"-", 100) for _ in range(2)]
vec = (mmsghdr * 2)()
for i, (buf, iov) in enumerate(bufs):
    vec[i].hdr.iov = ctypes.addressof(iov)
    vec[i].hdr.iovlen = 1
assert libc.recvmmsg(0, vec, 2, 0x100, None) == 2  # MSG_WAITALL
assert [vec[i].len for i in range(2)] == [100, 100]
while sin.recv(4096):
    pass
"""

# Linux AIO on the stdout pipe: an IOCB_CMD_PWRITE of 10 bytes and an IOCB_CMD_PWRITEV of two
# iovecs of 5, between two writes.
AIO_SERVER = VEC + r"""
import os
class iocb(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("key", ctypes.c_uint32), ("rw_flags", ctypes.c_int32),
                ("opcode", ctypes.c_uint16), ("reqprio", ctypes.c_int16),
                ("fildes", ctypes.c_uint32), ("buf", ctypes.c_uint64),
                ("nbytes", ctypes.c_uint64), ("offset", ctypes.c_int64),
                ("reserved2", ctypes.c_uint64), ("flags", ctypes.c_uint32),
                ("resfd", ctypes.c_uint32)]
class io_event(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64), ("res", ctypes.c_int64),
                ("res2", ctypes.c_int64)]
import platform
SYS_io_setup, SYS_io_destroy, SYS_io_getevents, SYS_io_submit = {
    "x86_64": (206, 207, 208, 209), "aarch64": (0, 1, 4, 2)}[platform.machine()]
aio = ctypes.c_ulong(0)
assert libc.syscall(SYS_io_setup, 8, ctypes.byref(aio)) == 0
os.write(1, b"<")
flat, _ = one(b"f", 10)
keep = [one(b"v", 5), one(b"w", 5)]
parts = (iovec * 2)(keep[0][1], keep[1][1])
cbs = [iocb(opcode=1, fildes=1, buf=ctypes.addressof(flat), nbytes=10),
       iocb(opcode=8, fildes=1, buf=ctypes.addressof(parts), nbytes=2)]
for cb in cbs:
    assert libc.syscall(SYS_io_submit, aio, 1, ctypes.byref(ctypes.pointer(cb))) == 1
    ev = io_event()
    assert libc.syscall(SYS_io_getevents, aio, 1, 1, ctypes.byref(ev), None) == 1
    assert ev.res == 10, ev.res
os.write(1, b">")
libc.syscall(SYS_io_destroy, aio)
"""

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


def recv_all(sock):
    """Everything sock receives until its peer closes."""
    got = b""
    while True:
        b = sock.recv(65536)
        if not b:
            return got
        got += b


class Channel(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def record(self, extra=()):
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", SERVER],
                                 extra=["--linger", "0"] + list(extra))
        r = subprocess.run(cmd, input=INPUT, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        self.assertEqual(r.stdout, OUTPUT, "the collector changed the channel's bytes")
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)
        return [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]

    def tile(self, frames, direction, stream):
        """Checks that the frames and gaps of one direction cover stream exactly, in order, with
        the captured bytes equal to the stream's, and that none is flagged TAMPERED or
        UNCHECKED (each write's chunks were hashed at its entry, whichever call made it, and
        matched); returns (frames with data, gaps)."""
        mine = [f for f in frames if f["dir"] == direction]
        self.assertTrue(mine, "no %s frames" % direction)
        self.assertEqual([f for f in mine if f["flags"] & (MW_F_TAMPERED | MW_F_UNCHECKED)], [])
        at, data, gaps = 0, [], []
        for f in sorted(mine, key=lambda f: (f["stream_offset"], f["seq"])):
            self.assertEqual(f["stream_offset"], at, "hole or overlap at %s offset %d: %s" %
                             (direction, at, f))
            if "gap_len" in f:
                self.assertEqual(f["data"], "")
                gaps.append(f)
                at += f["gap_len"]
            elif f["data"]:
                self.assertEqual(f["data"].encode(), stream[at:at + len(f["data"])],
                                 "%s bytes at offset %d differ" % (direction, at))
                data.append(f)
                at += len(f["data"])
        self.assertEqual(at, len(stream), "%s stream ends early" % direction)
        return data, gaps

    def record_socket_stdin(self, server, data):
        """Records the python3 server with a socket stdin that holds data, then end-of-file;
        returns the trace's channel frames."""
        ins = socket.socketpair()
        ins[0].sendall(data)
        ins[0].shutdown(socket.SHUT_WR)
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", server],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, stdin=ins[1], capture_output=True, timeout=120)
        for s in ins:
            s.close()
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        return [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]

    def calls(self, frames):
        """Write frames grouped by call: a call's chunks are numbered from 0."""
        groups = []
        for f in sorted(frames, key=lambda f: f["seq"]):
            if f["chunk"] == 0 and "gap_len" not in f:
                groups.append([])
            groups[-1].append(f)
        return groups

    def test_full(self):
        frames = self.record()
        reads, read_gaps = self.tile(frames, "READ", INPUT)
        writes, write_gaps = self.tile(frames, "WRITE", OUTPUT)
        self.assertEqual(read_gaps + write_gaps, [])
        # readv fills the iovecs in order: a read of n bytes is cut at 5 and 8
        first = sorted(reads, key=lambda f: f["seq"])[:3]
        self.assertEqual([len(f["data"]) for f in first[:2]], [5, 3], first)
        groups = self.calls(writes)
        self.assertEqual([sum(len(f["data"]) for f in g) for g in groups], CALL_LENGTHS)
        for g in groups:
            self.assertEqual([f["chunk"] for f in g], list(range(len(g))))
            self.assertEqual([f["last"] for f in g], [False] * (len(g) - 1) + [True])
            self.assertTrue(all(len(f["data"]) <= DATA_MAX for f in g))
        # write(40 000): three chunks; writev(20 000, 20 000): two per iovec, numbered on
        self.assertEqual([len(f["data"]) for f in groups[1]], [16384, 16384, 7232])
        self.assertEqual([len(f["data"]) for f in groups[2]], [16384, 3616, 16384, 3616])

    def test_response_sealed_soon(self):
        server = ("import os, time\n"
                  "line = b'{\"x\":\"' + b'a' * 200000 + b'\"}\\n'\n"
                  "def put(b):\n"
                  "    while b:\n"
                  "        b = b[os.write(1, b):]\n"
                  "put(line); time.sleep(0.003); put(line); time.sleep(0.5)\n")
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", server],
                                 extra=["--linger", "0", "--ringbuf-size", "1"])
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        self.assertEqual(len(r.stdout), 2 * 200009)
        recs = mwtest.dump_json(self.trace, self.keys)
        writes = [i for i, f in enumerate(recs) if f.get("type") == "stdio" and
                  f["dir"] == "WRITE" and f["last"]]
        self.assertEqual(len(writes), 2, "two responses")
        for w in writes:
            seals = [f["flags"] for f in recs[w:] if f.get("type") == "seal"]
            self.assertTrue(seals and seals[0] & 4 and not seals[0] & 1,
                            "the response at record %d is not followed by a MARK seal before "
                            "the FINAL one: %s" % (w, seals))

    def test_other_calls_on_the_channel(self):
        ins, outs = socket.socketpair(), socket.socketpair()
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", SOCKET_SERVER],
                                 extra=["--linger", "0"])
        p = subprocess.Popen(cmd, stdin=ins[1], stdout=outs[1], stderr=subprocess.PIPE)
        ins[1].close()
        outs[1].close()

        def feed():
            ins[0].sendall(INPUT)
            ins[0].shutdown(socket.SHUT_WR)
        t = threading.Thread(target=feed)
        t.start()
        got = recv_all(outs[0])
        t.join()
        rc = p.wait(timeout=120)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        for s in ins + outs:
            s.close()
        self.assertEqual(rc, 0, err)
        want = b"<" + INPUT + b">" + b"x" * 40000 + b"y" * 20000
        self.assertEqual(got, want)
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        reads, read_gaps = self.tile(frames, "READ", INPUT)
        writes, write_gaps = self.tile(frames, "WRITE", want)
        self.assertEqual(read_gaps + write_gaps, [])
        self.assertEqual(len(sorted(reads, key=lambda f: f["seq"])[0]["data"]), 5)  # recv(5)

    def test_a_read_of_nothing_is_not_the_end(self):
        """read(0, buf, 0) returns 0 without the client having closed anything: the end of
        the stream is where the stream really ends."""
        cmd = mwtest.collect_cmd(self.trace, self.keys,
                                 ["python3", "-c", "import os\nos.read(0, 0)\n" + SERVER],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, input=INPUT, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        ends = [f["stream_offset"] for f in frames
                if f["dir"] == "READ" and f["last"] and not f["data"] and "gap_len" not in f]
        self.assertEqual(ends, [len(INPUT)])

    def record_socket_stdout(self, server):
        """Records the python3 server with stdin empty and a socket stdout; returns what the
        socket received and the trace's channel frames."""
        outs = socket.socketpair()
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", server],
                                 extra=["--linger", "0"])
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=outs[1],
                             stderr=subprocess.PIPE)
        outs[1].close()
        got = recv_all(outs[0])
        rc = p.wait(timeout=120)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        outs[0].close()
        self.assertEqual(rc, 0, err)
        return got, [f for f in mwtest.dump_json(self.trace, self.keys)
                     if f.get("type") == "stdio"]

    def test_sendmmsg_is_a_gap(self):
        """Messages of a sendmmsg on a stdout that is a socket: a gap of their bytes (the
        kernel's msg_len of each), between the sends around it."""
        got, frames = self.record_socket_stdout(SENDMMSG_SERVER)
        want = b"a" * 100 + b"m" * 100 + b"n" * 100 + b"b" * 100
        self.assertEqual(got, want)
        _, gaps = self.tile(frames, "WRITE", want)
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(100, 200)])

    def test_recvmmsg_is_a_gap(self):
        """Messages of a recvmmsg on a stdin that is a socket: a gap of their bytes (the
        kernel's msg_len of each), between the reads around it."""
        want = b"a" * 100 + b"m" * 100 + b"n" * 100 + b"b" * 100
        frames = self.record_socket_stdin(RECVMMSG_SERVER, want)
        _, gaps = self.tile(frames, "READ", want)
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(100, 200)])

    def test_aio_is_a_gap(self):
        """Linux AIO writes (io_submit) on the stdout pipe: a gap of each iocb's length, flat
        or vectored, between the writes around them."""
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", AIO_SERVER],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        want = b"<" + b"f" * 10 + b"v" * 5 + b"w" * 5 + b">"
        self.assertEqual(r.stdout, want)
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        _, gaps = self.tile(frames, "WRITE", want)
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(1, 10), (11, 10)])

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
        return sum(l["delta"] for l in recs if l.get("type") == "loss"
                   and l["src"] == "CAPTURE_TRUNCATED")

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

    def test_vmsplice_is_a_gap(self):
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", VMSPLICE_SERVER],
                                 extra=["--linger", "0"])
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        want = b"a" * 100 + b"v" * 1000 + b"b" * 100
        self.assertEqual(r.stdout, want)
        frames = [f for f in mwtest.dump_json(self.trace, self.keys) if f.get("type") == "stdio"]
        _, gaps = self.tile(frames, "WRITE", want)
        self.assertEqual([(g["stream_offset"], g["gap_len"]) for g in gaps], [(100, 1000)])

    def test_head(self):
        frames = self.record(["--stdio", "head:1000"])
        self.tile(frames, "READ", INPUT)
        writes, gaps = self.tile(frames, "WRITE", OUTPUT)
        groups = self.calls(writes)
        self.assertEqual([sum(len(f["data"]) for f in g) for g in groups], [1000] * 3)
        # the rest of each write is gaps: one for write, one per iovec for writev
        self.assertEqual(sum(g["gap_len"] for g in gaps), sum(CALL_LENGTHS) - 3000)
        self.assertEqual(sorted(g["gap_len"] for g in gaps if g["orig_len"] == 40000),
                         [19000, 20000, 39000])


if __name__ == "__main__":
    mwtest.main()
