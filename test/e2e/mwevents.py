"""mwevents.py - helpers of the per-syscall event tests (test_events_*.py), falco-libs style:
trigger -> capture -> assert by pid, field by field.

One recording serves a whole test file: the trigger (mw_trigger, test/e2e/trigger*.c) runs many
steps, each in a child of its own that prints one JSON line of what it did (pid, fds, paths,
results); the test finds each step's records by that pid and asserts every field against what
the step printed and what os.stat says. Beside every recording an unrelated busy process runs
(as the same user), and no event of it, or of any process outside the traced tree, may appear.
"""
import json
import os
import shutil
import subprocess
import unittest

import mwtest

TRIGGER = os.environ.get("MW_TRIGGER", os.path.join(mwtest.BUILD_DIR, "test", "e2e", "mw_trigger"))

# bpf/events.h flags
F_TRUNC = lambda slot: 1 << slot  # noqa: E731
F_UNRES = lambda slot: 1 << (slot + 8)  # noqa: E731
S_PATH, S_ABS, S_OPENED, S_PATH2, S_ABS2, S_DATA, S_DATA2, S_PAYLOAD = range(8)
F_THREAD = 1 << 16
F_UNFINISHED = 1 << 17
F_ENTRY = 1 << 18
F_TAMPERED = 1 << 19
F_ARGV_ENTRIES = 1 << 20
F_FAULT = 1 << 21
F_UNCHECKED = 1 << 24
F_FOREIGN = 1 << 25
F_NEWNS = 1 << 26
F_MORE = 1 << 27


def escape(data):
    """The analyzer's escaping of bytes in dump output (analyzer/strbuf.c strbuf_escape): valid
    UTF-8 kept (C1 controls and bidi marks as \\uXXXX), other bytes and ASCII controls as
    \\xNN, backslash doubled, \\n \\r \\t."""
    out, i = [], 0
    while i < len(data):
        c = data[i]
        if c < 0x80:
            out.append({0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"}.get(
                c, "\\x%02x" % c if c < 0x20 or c == 0x7f else chr(c)))
            i += 1
            continue
        for n in (2, 3, 4):
            try:
                ch = data[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            cp = ord(ch)
            deceptive = 0x80 <= cp <= 0x9f or cp in (0x200e, 0x200f, 0xfeff) or \
                0x2028 <= cp <= 0x202e or 0x2066 <= cp <= 0x2069
            out.append("\\u%04x" % cp if deceptive else ch)
            i += n
            break
        else:
            out.append("\\x%02x" % c)
            i += 1
    return "".join(out)


def events(records):
    return [r for r in records if r.get("type") == "event"]


def tree_pids(records, roots):
    """roots and every process forked below them, from the trace's fork records (in order)."""
    pids = set(roots)
    for r in events(records):
        if r["op"] == "fork" and r["pid"] in pids and not r["child"]["thread"]:
            pids.add(r["child"]["pid"])
    return pids


class Busy:
    """An unrelated process opening a file in a loop, as user (same uid as the traced tree)."""

    def __init__(self, trigger, user="nobody"):
        cmd = [trigger, "busy"]
        if user:
            cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups"] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        line = json.loads(self.proc.stdout.readline())  # it runs once it has printed
        self.pid = line["pid"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


class Recording:
    """mw_trigger STEPS recorded by the real collector in dir (its cwd); the trigger's JSON lines
    by step name (a list per name), the trace's records, and the traced tree."""

    def __init__(self, work, keys, steps, user="nobody", extra=(), env=None, busy=True):
        self.dir = work.mkdir("run-" + user, mode=0o777)
        self.trigger = os.path.join(self.dir, "mw_trigger")
        shutil.copy(TRIGGER, self.trigger)  # reachable by nobody wherever the build tree is
        os.chmod(self.trigger, 0o755)
        self.trace = work.join("trace-%s.mcpt" % user)
        self.keys = keys
        flags = list(extra) + (["--allow-root"] if user == "root" else [])
        self.busy = Busy(self.trigger) if busy else None
        if self.busy:  # the process outside the tree that steps may aim at (trigger_ns.c)
            env = dict(env if env is not None else os.environ, MW_FOREIGN_PID=str(self.busy.pid))
        try:
            self.result = mwtest.record(self.trace, keys, [self.trigger] + list(steps), user=user,
                                        extra=flags, env=env, cwd=self.dir)
        finally:
            if self.busy:
                self.busy.stop()
        self.out = {}
        for line in self.result.stdout.splitlines():
            d = json.loads(line)
            self.out.setdefault(d["step"], []).append(d)
        self.records = mwtest.dump_json(self.trace, keys)
        self.header = self.records[0]
        self.events = events(self.records)
        self.root = self.header["target"]["pid"]
        self.tree = tree_pids(self.records, [self.root])

    def step(self, name):
        """The one JSON line a step printed."""
        lines = self.out.get(name)
        if not lines or len(lines) != 1:
            raise AssertionError("step %s printed %r (trigger stderr: %s)" %
                                 (name, lines, self.result.stderr))
        return lines[0]

    def of(self, pid, op=None, tid=None, entry=None):
        """Events of pid (and tid), of op, in trace order; entry: only / never entry records."""
        evs = [e for e in self.events if e["pid"] == pid and (op is None or e["op"] == op)
               and (tid is None or e["tid"] == tid)]
        if entry is not None:
            evs = [e for e in evs if bool(e["flags"] & F_ENTRY) == entry]
        return evs

    def one(self, pid, op, **kw):
        evs = self.of(pid, op, **kw)
        if len(evs) != 1:
            raise AssertionError("expected one %s record of pid %d, got %r" % (op, pid, evs))
        return evs[0]

    def path(self, *parts):
        return os.path.join(self.dir, *parts)


class EventsTestCase(mwtest.E2ETestCase):
    """One recording per test class (made in setUpClass by record()), a fresh leftover check
    after each test, and the checks every recording must pass: it verifies, it ends cleanly, and
    no event comes from outside the traced tree (the busy process beside it above all)."""

    STEPS = ()
    USER = "nobody"
    EXTRA = ()

    @classmethod
    def setUpClass(cls):
        cls.cwork = mwtest.Workdir()
        cls.keys = mwtest.Keys(cls.cwork)
        cls.rec = Recording(cls.cwork, cls.keys, cls.STEPS, user=cls.USER, extra=cls.EXTRA)

    @classmethod
    def tearDownClass(cls):
        cls.cwork.cleanup()

    def test_recording_is_complete_and_contained(self):
        rec = self.rec
        self.assertEqual(rec.result.returncode, 0, rec.result.stderr)
        r = mwtest.verify(rec.trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VALID_COMPLETE", r.stdout)
        self.assertNotIn(rec.busy.pid, rec.tree)
        outside = [e for e in rec.events if e["pid"] not in rec.tree]
        self.assertEqual(outside, [], "events of untracked processes")
        self.assertEqual([r for r in rec.records if r["type"] == "loss"], [])

    # ---- assertion helpers ----

    def assertRecord(self, ev, op, ret, args=None, **fields):
        """op, ret (and errno), args, and each named field; a field given as None must be
        absent from the record."""
        self.assertEqual(ev["op"], op, ev)
        self.assertEqual(ev["ret"], ret, ev)
        expect = "success" if ret >= 0 else "failure"
        if ev["flags"] & (F_ENTRY | F_UNFINISHED):  # no result yet
            expect = "pending"
        self.assertEqual(ev["result"], expect, ev)
        if args is not None:
            self.assertEqual(ev.get("args", []), args, ev)
        for k, v in fields.items():
            if v is None:
                self.assertNotIn(k, ev, ev)
            else:
                self.assertEqual(ev.get(k), v, "%s of %r" % (k, ev))

    def assertOpened(self, ev, path, st=None):
        """The record names the file actually opened: path, device and inode (from os.stat)."""
        st = st or os.stat(path)
        self.assertEqual(ev["opened_path"], path, ev)
        self.assertEqual((ev["dev"], ev["ino"]), (st.st_dev, st.st_ino), ev)


def main():
    mwtest.require_root()
    unittest.main(verbosity=2)
