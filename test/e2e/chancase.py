"""chancase.py - what the channel capture's end-to-end suites share (test_channel.py,
test_channel_uring.py): a test case that records a python3 server with a socket stdin or stdout
and reads back the trace's channel frames, and the check that the frames and gaps of one
direction tile the stream that crossed it; the ctypes prelude (VEC) of the servers' scripts.
"""
import socket
import subprocess

import mwtest

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


def recv_all(sock):
    """Everything sock receives until its peer closes."""
    got = b""
    while True:
        b = sock.recv(65536)
        if not b:
            return got
        got += b


class ChannelCase(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

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
