"""collectorcase.py - what the e2e tests that run the collector on hostile workloads share
(test_hostile.py, test_rewrites.py): a collector started on a command with its peak RSS
sampled, its end checked (exit status, RSS under a generous ceiling), the events of its trace.
"""
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

RSS_CEILING_KB = 96 * 1024  # the ring buffer is mapped, not counted; the rest is small


def vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class PeakRss:
    """Samples the collector's VmHWM until it exits (root can read it despite non-dumpable)."""

    def __init__(self, pid):
        self.pid, self.peak = pid, 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while True:
            try:
                self.peak = max(self.peak, vm_hwm_kb(self.pid))
            except (OSError, ValueError):
                return
            time.sleep(0.05)


class CollectorCase(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def collector(self, command, extra=(), stdout=subprocess.DEVNULL):
        p = subprocess.Popen(mwtest.collect_cmd(self.trace, self.keys, command, extra=extra),
                             stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.addCleanup(lambda: [f.close() for f in (p.stdout, p.stderr) if f])
        return p, PeakRss(p.pid)

    def finish(self, p, rss, name, expect_rc=0):
        rc = p.wait(timeout=600)
        err = p.stderr.read().decode(errors="replace")
        self.assertEqual(rc, expect_rc, err)
        rss.thread.join(timeout=5)
        print("%s: collector peak RSS %d KiB" % (name, rss.peak))
        self.assertGreater(rss.peak, 0)
        self.assertLess(rss.peak, RSS_CEILING_KB)
        return err
    def events(self, *ops):
        return [r for r in mwtest.dump_json(self.trace, self.keys)
                if r.get("type") == "event" and r.get("op") in ops]

