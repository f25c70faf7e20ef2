"""test_bench_floor.py - `tracefloor --hold`, which the overhead benchmark runs the out-of-tree
loops beside (the floor of empty tp_btf programs), on the real kernel: it refuses a kind it
cannot hold with a one-line error and exit 2; holding btf-empty, it says MWREADY once both
programs are attached (and no file of its loops is made), the host's syscalls run them, and it
detaches everything and exits 0 when its stdin ends or it gets SIGTERM, unmounting tracefs if
it was the one that mounted it.
The benchmark trusts that exit status to say the floor was held to the end.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

TRACEFLOOR = os.path.join(mwtest.BUILD_DIR, "test", "bench", "tracefloor")
TRACEFS = "/sys/kernel/tracing"


def tracefs_mounted():
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == TRACEFS for line in f)


def attached_prog_ids(pid):
    """The programs pid keeps attached: the prog_id of each of its BPF link fds (the skeleton's
    other programs are loaded, held by program fds, not attached)."""
    return {int(i["prog_id"]) for i in mwtest.fdinfos(pid) if "link_type" in i and "prog_id" in i}


def run_counts(ids):
    """run_cnt of each program in ids, from bpftool."""
    r = mwtest.run(["bpftool", "prog", "show", "--json"])
    if r.returncode:
        raise AssertionError("bpftool prog show: " + r.stderr)
    return {p["id"]: p.get("run_cnt", 0) for p in json.loads(r.stdout or "[]") if p["id"] in ids}


def stats_on(test):
    """kernel.bpf_stats_enabled=1 for the test (run_cnt counts only then), restored after."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(path) as f:
        before = f.read().strip()

    def restore():
        with open(path, "w") as f:
            f.write(before)
    test.addCleanup(restore)
    with open(path, "w") as f:
        f.write("1")


class TracefloorHold(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        if not os.access(TRACEFLOOR, os.X_OK):
            self.skipTest("%s is not built (a build without MW_TESTS)" % TRACEFLOOR)
        mounted_before = tracefs_mounted()

        def clean():
            # after every other cleanup (the first registered runs last): tracefloor ended
            if mwtest.leftover_programs("floor_"):
                time.sleep(1)  # the kernel frees programs after the last fd closes
            self.assertEqual(mwtest.leftover_programs("floor_"), [], "tracefloor left programs")
            if tracefs_mounted() and not mounted_before:
                subprocess.run(["umount", TRACEFS])  # tracefloor was killed (a failed test)
                self.fail("tracefs left mounted")
        self.addCleanup(clean)

    def hold(self):
        files = set(glob.glob("/tmp/mw-floor-*"))
        p = self.popen([TRACEFLOOR, "--hold", "btf-empty"], stdin=subprocess.PIPE)
        line = p.stdout.readline()
        self.assertEqual(line, "MWREADY btf-empty\n", p.stderr.read() if not line else line)
        # no file of its loops: nothing to leave behind if it is killed
        self.assertEqual(set(glob.glob("/tmp/mw-floor-*")), files)
        return p

    def test_refuses_a_kind_it_cannot_hold(self):
        for kind, why in (("nope", "no such kind"), ("btf-ring", "a ring nobody drains"),
                          ("none", "nothing to hold")):
            r = mwtest.run([TRACEFLOOR, "--hold", kind])
            self.assertEqual(r.returncode, 2, "%s (%s): %s" % (kind, why, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn("'%s'" % kind, r.stderr)
        r = mwtest.run([TRACEFLOOR, "--hold"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage:", r.stderr)

    def test_holds_until_sigterm(self):
        p = self.hold()
        ids = attached_prog_ids(p.pid)
        self.assertEqual(len(ids), 2, "the sys_enter and sys_exit programs")
        stats_on(self)
        before = run_counts(ids)
        for _ in range(1000):
            os.getppid()  # a process nobody tracks: the programs run all the same
        after = run_counts(ids)
        self.assertEqual(set(after), ids, "bpftool does not list the held programs")
        for i in ids:
            self.assertGreaterEqual(after[i] - before.get(i, 0), 1000, "program %d" % i)
        time.sleep(0.2)
        self.assertIsNone(p.poll(), "it stopped holding on its own")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), 0, p.stderr.read())

    def test_holds_until_stdin_ends(self):
        p = self.hold()
        time.sleep(0.2)
        self.assertIsNone(p.poll(), "it stopped holding on its own")
        p.stdin.close()
        self.assertEqual(p.wait(timeout=30), 0, p.stderr.read())


if __name__ == "__main__":
    mwtest.main()
