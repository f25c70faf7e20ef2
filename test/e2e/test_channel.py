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
io_uring on the channel: test_channel_uring.py.
"""
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
from chancase import DATA_MAX, VEC, ChannelCase, recv_all  # noqa: E402

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


class Channel(ChannelCase):
    def record(self, extra=()):
        cmd = mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", SERVER],
                                 extra=["--linger", "0"] + list(extra))
        r = subprocess.run(cmd, input=INPUT, capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
        self.assertEqual(r.stdout, OUTPUT, "the collector changed the channel's bytes")
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)
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
