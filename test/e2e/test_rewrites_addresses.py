"""test_rewrites_addresses.py - destination addresses (connect, sendto, sendmsg) rewritten by
another thread while the kernel acts on them, also past the 63 bytes of their head: read back at
exit, the address names something else than what the kernel used, and the record must say so
(TAMPERED; UNCHECKED where the call named none at entry). Where the send can be made to block
after the kernel copied the address (a full datagram queue), the rewrite is certain and every
such record is checked, and a send still pending when the recording ends is written with its
address; a thread flipping the address in a loop shows the same on calls that do not block.
Calls not rewritten (addresses, and the paths beside them) carry no flag. Paths rewritten under
the kernel: test_rewrites.py."""
import errno
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
from collectorcase import BLOCKED_IN, FLIPPER, CollectorCase, kill_quietly  # noqa: E402
from mwevents import F_ENTRY, F_TAMPERED, F_UNCHECKED, F_UNFINISHED  # noqa: E402

# A child fills real.sock's queue and blocks in a sendto to it (holding the receiving socket
# too, so the queue stays full); the server prints the child's pid and exits. The collector's
# --linger ends the recording with the send still pending.
PENDING_SEND = r"""
import os, socket, sys, time
real = sys.argv[1]
r, s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
r.bind(real)
rd, wr = os.pipe()
child = os.fork()
if child == 0:
    null = os.open(os.devnull, os.O_RDWR)  # the collector's pipes end with the recording
    os.dup2(null, 1)
    os.dup2(null, 2)
    s.setblocking(False)
    try:
        while True:
            s.sendto(b"filler", real)
    except BlockingIOError:
        pass
    s.setblocking(True)
    os.write(wr, b"x")
    s.sendto(b"pending", real)
    os._exit(0)
os.read(rd, 1)
deadline = time.time() + 60
while time.time() < deadline:
    with open("/proc/%d/syscall" % child) as f:
        if f.read().split()[0] == "44":
            break
    time.sleep(0.01)
print(child, flush=True)
"""

# The traced side of the rewrite tests. Each runs as nobody under the collector; a thread makes
# the call with a ctypes buffer as its argument and another thread (or process) rewrites that
# buffer in place.

# argv[1] the socket directory. Datagram sends to real.sock wait while its queue is full (the
# kernel copied the address before it waits); meanwhile the address is rewritten to name
# fake.sock, then the queue is drained and the send completes to real.sock. Four sends: sendto
# with its address rewritten; sendmsg with msg_name's bytes rewritten, with msg_name set to
# NULL, and (on a socket connected to real.sock) with msg_name set from NULL to fake.sock.
# Prints JSON: blocked, results, what each socket received (fillers left out).
BLOCKED_SENDS = BLOCKED_IN + r"""
import ctypes, json, os, socket, struct, sys, threading
d = sys.argv[1]
real, fake = os.path.join(d, "real.sock"), os.path.join(d, "fake.sock")
libc = ctypes.CDLL(None, use_errno=True)
r, f, s, c = (socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(4))
r.bind(real)
f.bind(fake)
c.connect(real)
salen = 2 + len(real) + 1
def sun(path):
    return ctypes.create_string_buffer(struct.pack("<H108s", socket.AF_UNIX, path.encode()), 110)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_char_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
def msg(data, name):
    iov = iovec(data, len(data))
    named = name is not None
    return msghdr(ctypes.addressof(name) if named else None, salen if named else 0,
                  ctypes.pointer(iov), 1, None, 0, 0)
def drain(sock):
    got = []
    while True:
        try:
            got.append(sock.recv(64, socket.MSG_DONTWAIT).decode())
        except BlockingIOError:
            return [g for g in got if g != "filler"]
out = {"blocked": [], "ret": [], "real": [], "fake": []}
def fill(sock):  # real.sock's queue full: a blocking send to it waits
    while True:
        try:
            if sock is c:
                sock.send(b"filler", socket.MSG_DONTWAIT)
            else:
                sock.sendto(b"filler", socket.MSG_DONTWAIT, real)
        except BlockingIOError:
            return
def race(sock, nr, send, rewrite):
    fill(sock)
    def go():
        ret = send()
        out["ret"].append(ret if ret >= 0 else -ctypes.get_errno())
    t = threading.Thread(target=go)
    t.start()
    out["blocked"].append(blocked_in(t.native_id, nr))
    rewrite()
    out["real"] += drain(r)
    t.join()
new = fake.encode() + b"\0"
a = sun(real)  # 44 sendto, 46 sendmsg: x86-64 numbers
race(s, 44, lambda: libc.sendto(s.fileno(), b"sendto-named", 12, 0, a, salen),
     lambda: ctypes.memmove(ctypes.addressof(a) + 2, new, len(new)))
b = sun(real)
mb = msg(b"sendmsg-name", b)
race(s, 46, lambda: libc.sendmsg(s.fileno(), ctypes.byref(mb), 0),
     lambda: ctypes.memmove(ctypes.addressof(b) + 2, new, len(new)))
n = sun(real)
mn = msg(b"sendmsg-null", n)
race(s, 46, lambda: libc.sendmsg(s.fileno(), ctypes.byref(mn), 0),
     lambda: setattr(mn, "name", None))
fk = sun(fake)
mc = msg(b"sendmsg-late", None)
def late():
    mc.name, mc.namelen = ctypes.addressof(fk), salen
race(c, 46, lambda: libc.sendmsg(c.fileno(), ctypes.byref(mc), 0), late)
out["real"] += drain(r)
out["fake"] += drain(f)
print(json.dumps(out), flush=True)
"""

# argv: the port, the iterations. Sets up sa, an IPv4 address whose host flips between
# 127.0.0.1 and 127.0.0.2 (same port), and s, a UDP socket; what follows uses them n times,
# then stop()s.
FLIPPED_ADDRESS = FLIPPER + r"""
import socket, struct, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
one, two = (socket.inet_aton("127.0.0.%d" % i) for i in (1, 2))
sa = (ctypes.c_char * 16).from_buffer(shm)
sa[:] = struct.pack("<HH4s8x", socket.AF_INET, socket.htons(port), one)
stop = flip(4, one, two)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
"""

# The main thread sends datagram i, whose payload is i.
FLIPPED_SENDTO = FLIPPED_ADDRESS + r"""
for i in range(n):
    m = b"%d" % i
    libc.sendto(s.fileno(), m, len(m), 0, sa, 16)
stop()
"""

# The main thread connects: the record's address is read at exit, its peer is the socket's as
# the kernel connected it.
FLIPPED_CONNECT = FLIPPED_ADDRESS + r"""
for i in range(n):
    libc.connect(s.fileno(), sa, 16)
stop()
"""


class AddressRewrites(CollectorCase):
    def test_address_rewritten_while_the_send_blocks(self):
        d = self.work.mkdir("sock", mode=0o777)
        self.assertLess(len(os.path.join(d, "real.sock")) + 3, 63)  # the head holds it all
        self.blocked_sends("addresses rewritten while blocked", d)

    def test_long_address_rewritten_past_its_head_while_the_send_blocks(self):
        # a unix socket address of 90 bytes and more whose rewrite (real -> fake) starts past
        # the 63 bytes kept at entry: the whole address is compared, not its head
        d = self.work.mkdir("sock", "s" * 50, mode=0o777)
        self.assertGreater(2 + len(d) + 1, 63)
        self.assertLess(len(os.path.join(d, "real.sock")), 108)  # sun_path
        self.blocked_sends("long addresses rewritten while blocked", d)

    def blocked_sends(self, tag, d):
        real, fake = os.path.join(d, "real.sock"), os.path.join(d, "fake.sock")
        p, rss = self.collector(["python3", "-c", BLOCKED_SENDS, d], stdout=subprocess.PIPE)
        line = p.stdout.readline()
        self.finish(p, rss, tag)
        out = json.loads(line)
        self.assertEqual(out["blocked"], [True] * 4, out)
        self.assertEqual(out["ret"], [12] * 4, out)
        # every datagram went where the address said at entry, none where it says at exit
        self.assertEqual(sorted(out["real"]),
                         ["sendmsg-late", "sendmsg-name", "sendmsg-null", "sendto-named"], out)
        self.assertEqual(out["fake"], [])
        evs = self.events("sendto", "sendmsg")
        fillers = [e for e in evs if e["ret"] in (len("filler"), -errno.EAGAIN)]
        self.assertGreater(len(fillers), 0)
        for e in fillers:  # not rewritten: no flag
            self.assertEqual(e["flags"] & (F_TAMPERED | F_UNCHECKED), 0, e)
        raced = [e for e in evs if e["ret"] == 12]
        self.assertEqual(len(fillers) + len(raced), len(evs), evs)
        self.assertEqual([(e["op"], e.get("addr"), e["flags"] & (F_TAMPERED | F_UNCHECKED))
                          for e in raced],
                         [("sendto", "unix:" + fake, F_TAMPERED),
                          ("sendmsg", "unix:" + fake, F_TAMPERED),
                          ("sendmsg", None, F_TAMPERED),  # recorded though it names none now
                          ("sendmsg", "unix:" + fake, F_UNCHECKED)],  # none at entry
                         raced)

    def test_send_pending_at_the_end_is_written_with_its_address(self):
        # the stash of a send holds its destination: the unfinished record carries it as the
        # address (data), not as a path (the child blocked in it is kept: killed, its send
        # would end)
        d = self.work.mkdir("pending", mode=0o777)
        real = os.path.join(d, "real.sock")
        p, rss = self.collector(["python3", "-c", PENDING_SEND, real],
                                extra=["--linger", "1", "--after-linger", "keep"],
                                stdout=subprocess.PIPE)
        child = int(p.stdout.readline())
        self.addCleanup(kill_quietly, child)
        self.finish(p, rss, "send pending at the end")
        sends = [e for e in self.events("sendto") if e["pid"] == child and e["ret"] != 6]
        unfinished = [e for e in sends if e["flags"] & F_UNFINISHED]
        self.assertEqual(len(unfinished), 1, sends)
        self.assertEqual(unfinished[0]["result"], "pending")
        self.assertEqual(unfinished[0].get("addr"), "unix:" + real, unfinished[0])
        self.assertNotIn("path", unfinished[0])

    def test_address_flipped_under_sendto(self):
        # only loopback: the two receivers are bound here, on 127.0.0.1 and 127.0.0.2
        rx = []
        self.addCleanup(lambda: [s.close() for s in rx])
        for _ in range(20):
            for s in rx:
                s.close()
            rx = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
            for s in rx:
                s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE: keep them all
            rx[0].bind(("127.0.0.1", 0))
            port = rx[0].getsockname()[1]
            try:
                rx[1].bind(("127.0.0.2", port))
                break
            except OSError:
                continue
        else:
            self.fail("no UDP port free on both 127.0.0.1 and 127.0.0.2")
        n = 300

        def run_round():
            p, rss = self.collector(["python3", "-c", FLIPPED_SENDTO, str(port), str(n)])
            self.finish(p, rss, "flipped sendto")
            got = {}
            for i, s in enumerate(rx):
                while True:
                    try:
                        got[int(s.recv(64, socket.MSG_DONTWAIT))] = "127.0.0.%d:%d" % (i + 1, port)
                    except BlockingIOError:
                        break
            sends = sorted(self.events("sendto"), key=lambda e: e["seq"])
            self.assertEqual(len(sends), n)  # one thread, in order: record i sent datagram i
            self.assertEqual(len(got), n)
            disagreed = flagged = 0
            for i, e in enumerate(sends):
                self.assertEqual(e["ret"], len(b"%d" % i), e)
                if e["addr"] != got[i]:
                    disagreed += 1
                    flagged += bool(e["flags"] & F_TAMPERED)
            return disagreed, flagged
        self.assertMostlyFlagged(*self.flip_rounds("sendto", run_round))

    def test_address_flipped_under_connect(self):
        # no datagram is sent: a UDP connect only sets the socket's peer
        n = 300

        def run_round():
            p, rss = self.collector(["python3", "-c", FLIPPED_CONNECT, "9", str(n)])
            self.finish(p, rss, "flipped connect")
            exits = [e for e in self.events("connect") if not e["flags"] & F_ENTRY]
            self.assertEqual(len(exits), n)
            disagreed = flagged = 0
            for e in exits:
                self.assertEqual(e["ret"], 0, e)
                self.assertIn(e["peer"], ("127.0.0.1:9", "127.0.0.2:9"), e)
                if e["addr"] != e["peer"]:
                    disagreed += 1
                    flagged += bool(e["flags"] & F_TAMPERED)
            return disagreed, flagged
        self.assertMostlyFlagged(*self.flip_rounds("connect", run_round))

    def test_calls_not_rewritten_carry_no_flag(self):
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(sink.close)
        sink.bind(("127.0.0.1", 0))
        port = sink.getsockname()[1]
        d = self.work.mkdir("plain", mode=0o777)
        long_sock = os.path.join(d, "u" * (100 - len(d)))  # past the head's 63 bytes
        usink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(usink.close)
        usink.bind(long_sock)
        os.chmod(long_sock, 0o666)
        script = ("import os, socket\n"
                  "p = os.path.join(%r, 'f')\n"
                  "os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o600))\n"
                  "os.chmod(p, 0o640)\n"
                  "os.rename(p, p + '2')\n"
                  "os.unlink(p + '2')\n"
                  "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                  "s.sendto(b'to', ('127.0.0.1', %d))\n"
                  "s.sendmsg([b'msg'], [], 0, ('127.0.0.1', %d))\n"
                  "s.connect(('127.0.0.1', %d))\n"
                  "socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).connect(%r)\n") % (
                      d, port, port, port, long_sock)
        p, rss = self.collector(["python3", "-c", script])
        self.finish(p, rss, "not rewritten")
        self.assertEqual(sorted(sink.recv(64) for _ in range(2)), [b"msg", b"to"])
        evs = [e for e in self.events("chmod", "rename", "unlink", "sendto", "sendmsg", "connect")
               if (e.get("path", "").startswith(d) or e["op"] in ("sendto", "sendmsg", "connect"))
               and not e["flags"] & F_ENTRY]
        self.assertEqual(sorted(e["op"] for e in evs),
                         ["chmod", "connect", "connect", "rename", "sendmsg", "sendto", "unlink"],
                         evs)
        self.assertEqual(sorted(e["addr"] for e in evs if e["op"] == "connect"),
                         ["127.0.0.1:%d" % port, "unix:" + long_sock])
        for e in evs:
            self.assertEqual(e["ret"], {"sendto": 2, "sendmsg": 3}.get(e["op"], 0), e)
            self.assertEqual(e["flags"] & (F_TAMPERED | F_UNCHECKED), 0, e)


if __name__ == "__main__":
    mwtest.main()
