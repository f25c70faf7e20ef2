"""test_channel_tamper.py - a server that rewrites a response's bytes while the write carrying
them is blocked cannot pass off the rewritten bytes as what the client received: the collector
checks the buffer of each write on the server's stdout at the call's entry against its exit
(per 16 KiB chunk), flags a mismatch TAMPERED, and the default policy raises
evasion.tampered-message on it. The server is mw_chan_tamper (chan_tamper.c): it answers one
request with a ~300 KiB line carrying "-----BEGIN OPENSSH PRIVATE KEY-----"; the client holds
off reading stdout for HOLD_OFF s, so the write fills the 64 KiB pipe (the key already copied
into it) and blocks, and 300 ms in another thread of the server rewrites the key's header in
place with harmless text of the same length. The trace's copy, read at the write's exit, holds
the harmless text, so mcp.private-key-in-response cannot see the key the client got.

write: the attack through one write(): the client receives the key, the trace holds the
  harmless text, a stdout frame is flagged TAMPERED (mcpwitness dump) and the analyzer raises
  evasion.tampered-message (severity high).
writev: the same through writev() with the line over three iovecs (the key in the first).
shorten: writev() of the head and key, then the rest; while it is blocked the other thread cuts
  the first iovec to the head and interrupts the write (it returns what it moved). A capture
  that reads the iovecs again at the exit shifts what follows the head, and the key is gone
  from the trace with every chunk's bytes intact: the chunks must also start where the entry's
  did, and only the call's final chunk may end early.
dup2: one write() of the line; while it is blocked the other thread points fd 1 at /dev/null:
  the write goes on into the pipe it began on, so its exit records it on the channel (the
  entry found the stdout object; looking fd 1 up again lost the whole write) and
  mcp.private-key-in-response sees the key.
benign: the same line, not rewritten: the trace holds it exactly, no frame is flagged TAMPERED
  or UNCHECKED, no evasion.tampered-message, evasion.unchecked-message or
  evasion.tampered-argument, and mcp.private-key-in-response does see the key in a message of
  this size (so its absence in the attack is the rewrite's doing, not the size's).
nonblock: benign with stdout O_NONBLOCK, written as Node/libuv do (partial writes, poll() on
  EAGAIN), with the client reading 4 000 bytes every 2 ms: partial writes whose lengths are not
  multiples of 16 KiB, a chunk hashed at entry but only partly written, raise no
  tampered or unchecked finding either.
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

CHAN_TAMPER = os.environ.get("MW_CHAN_TAMPER",
                             os.path.join(mwtest.BUILD_DIR, "test", "e2e", "mw_chan_tamper"))
KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----"
HARMLESS = b"-----BEGIN HARMLESS DATA BLOCK-----"
HEAD = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'
FILL = 300 * 1024 + 7
LINE = HEAD + KEY + b"A" * FILL + b'"}]}}\n'  # what chan_tamper.c writes
REQUEST = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
           b'"params":{"name":"read_key","arguments":{}}}\n')
HOLD_OFF = 1.0  # s the client waits before reading: the write blocks, the rewrite (300 ms) lands
READ_SIZE = 4000  # the client's reads: small and not page-sized, for uneven partial writes
READ_PAUSE = 0.002  # s between two reads in nonblock mode: each frees about one page, so the
                    # server's next partial write is 4 KiB, not a drained pipe's 64 KiB
CHUNK = 16384  # MW_DATA_MAX: the collector's chunk (and hash) size
MW_F_TAMPERED = 1 << 19
MW_F_UNCHECKED = 1 << 24
TAMPERED_RULE = "evasion.tampered-message"
UNCHECKED_RULE = "evasion.unchecked-message"


class ChannelTamper(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.assertTrue(os.access(CHAN_TAMPER, os.X_OK), "%s is not built" % CHAN_TAMPER)
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def record(self, mode, pause=0.0):
        """Runs chan_tamper MODE under the collector as its client: sends the request, waits
        for the server to say it is writing, holds off HOLD_OFF s, then reads stdout to its
        end. Returns (bytes received, the server's chan_tamper: lines on stderr)."""
        cmd = mwtest.collect_cmd(self.trace, self.keys, [CHAN_TAMPER, mode],
                                 extra=["--linger", "0"])
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        err, writing = [], threading.Event()

        def drain():  # the collector's and the server's stderr, to its end
            for line in p.stderr:
                err.append(line.decode(errors="replace"))
                if line.startswith(b"chan_tamper: writing"):
                    writing.set()
        t = threading.Thread(target=drain, daemon=True)
        t.start()
        got = b""
        try:  # the collector ends here, by its Popen, before tearDown looks for its programs
            p.stdin.write(REQUEST)
            p.stdin.close()
            if not writing.wait(60):
                self.fail("the server never started its response: %s" % "".join(err))
            time.sleep(HOLD_OFF)
            while True:
                b = os.read(p.stdout.fileno(), READ_SIZE)
                if not b:
                    break
                got += b
                time.sleep(pause)
            rc = p.wait(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            t.join(60)
            for f in (p.stdin, p.stdout, p.stderr):
                if not f.closed:
                    f.close()
        self.assertEqual(rc, 0, "".join(err))
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)
        return got, [ln.strip() for ln in err if ln.startswith("chan_tamper:")]

    def stdout_frames(self):
        return [f for f in mwtest.dump_json(self.trace, self.keys)
                if f.get("type") == "stdio" and f["dir"] == "WRITE"]

    def findings(self):
        """The findings of the default policy on the trace."""
        return mwtest.analyze_json(self.trace, self.keys)["findings"]

    def check_attack(self, mode, rewritten=HARMLESS):
        got, said = self.record(mode)
        # the attack happened: the client got the key, the server rewrote it mid-write ...
        self.assertEqual(got, LINE, "the client did not receive the original line")
        self.assertIn("chan_tamper: rewrote while the write was blocked", said)
        # ... and the trace's copy (read at exit) holds the harmless text (or nothing) instead
        frames = self.stdout_frames()
        data = "".join(f["data"] for f in frames).encode()
        if rewritten:
            self.assertIn(rewritten, data, "the trace does not hold the rewritten bytes")
        self.assertNotIn(KEY, data)
        tampered = [f["seq"] for f in frames if f["flags"] & MW_F_TAMPERED]
        findings = self.findings()
        rules = sorted({f["rule"] for f in findings})
        self.assertNotIn("mcp.private-key-in-response", rules)
        hits = [f for f in findings if f["rule"] == TAMPERED_RULE]
        self.assertTrue(hits, "the rewrite went unnoticed: no %s finding (stdout frames flagged "
                        "TAMPERED: %s); findings: %s" % (TAMPERED_RULE, tampered, rules))
        self.assertEqual({f["severity"] for f in hits}, {"high"})
        self.assertTrue(tampered, "no stdout frame is flagged TAMPERED")

    def check_benign(self, mode, pause=0.0):
        got, said = self.record(mode, pause)
        self.assertEqual(got, LINE, "the client did not receive the line")
        frames = self.stdout_frames()
        self.assertEqual("".join(f["data"] for f in frames), LINE.decode().replace("\n", "\\n"),
                         "the trace's copy differs (dump escapes the newline)")
        flagged = [(f["seq"], f["flags"]) for f in frames
                   if f["flags"] & (MW_F_TAMPERED | MW_F_UNCHECKED)]
        self.assertEqual(flagged, [], "benign frames flagged TAMPERED or UNCHECKED")
        rules = {f["rule"] for f in self.findings()}
        for rule in (TAMPERED_RULE, UNCHECKED_RULE, "evasion.tampered-argument"):
            self.assertNotIn(rule, rules)
        self.assertIn("mcp.private-key-in-response", rules)
        return said

    def test_write(self):
        self.check_attack("write")

    def test_writev(self):
        self.check_attack("writev")

    def test_shorten(self):
        self.check_attack("shorten", rewritten=None)

    def test_dup2(self):
        got, said = self.record("dup2")
        self.assertEqual(got, LINE)
        self.assertIn("chan_tamper: rewrote while the write was blocked", said)
        rules = {f["rule"] for f in self.findings()}
        self.assertIn("mcp.private-key-in-response", rules)
        self.assertNotIn(TAMPERED_RULE, rules)

    def test_benign(self):
        self.check_benign("benign")

    def test_nonblock(self):
        said = self.check_benign("nonblock", READ_PAUSE)
        parts = [ln for ln in said if ln.startswith("chan_tamper: partial writes:")]
        self.assertEqual(len(parts), 1, said)
        lengths = [int(n) for n in parts[0].split(":")[2].split()]
        self.assertEqual(sum(lengths), len(LINE))
        self.assertTrue(any(n % CHUNK for n in lengths[:-1]),
                        "no partial write before the last is off a 16 KiB multiple: %s"
                        % lengths)


if __name__ == "__main__":
    mwtest.main()
