"""collectorcase.py - what the e2e tests that run the collector on hostile workloads share
(test_hostile.py, test_rewrites.py, test_rewrites_addresses.py): a collector started on a
command with its peak RSS sampled, its end checked (exit status, RSS at most a fixed allowance
above what the same collector peaks at on an idle command), the events of its trace, rounds of
a race against a flipping process and their tally; and three helpers the traced scripts also
get as source (BLOCKED_IN, UFFD_PAGE, FLIPPER): whether a thread is blocked in a syscall, a page
whose first kernel access waits on a userfaultfd, and a process flipping a word of shared memory.
"""
import ctypes
import fcntl
import inspect
import mmap
import os
import signal
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

# What a hostile workload may add to the collector's peak RSS over its peak on `sleep` (the
# ring buffer is mapped, not counted). Relative, not absolute: the load dominates the peak, and
# under AddressSanitizer, whose quarantine keeps every freed block, the peak is everything the
# load ever allocated (~136 MiB against ~43 MiB without it).
RSS_ALLOWANCE_KB = 48 * 1024
_baseline_kb = []


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


def blocked_in(tid, nr, timeout=60):
    """Whether thread tid (of this process) is blocked in syscall nr within timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            if f.read().split()[0] == str(nr):
                return True
        time.sleep(0.01)
    return False


# the traced scripts below have it too
BLOCKED_IN = "import time\n" + inspect.getsource(blocked_in)


def uffd_page(libc, size=4096):
    """A userfaultfd and an anonymous mapping of size bytes registered with it for missing
    pages: an access to it, the kernel's too (as root), waits until the fault is resolved
    (UFFDIO_COPY) or the userfaultfd is closed (the page is then zero-filled). libc is
    ctypes.CDLL(None, use_errno=True). x86-64. Returns (uffd, address)."""
    libc.syscall.restype = ctypes.c_long
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long)
    uffd = libc.syscall(323, os.O_CLOEXEC)  # userfaultfd
    if uffd < 0:
        raise OSError(ctypes.get_errno(), "userfaultfd")
    addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    fcntl.ioctl(uffd, 0xc018aa3f, bytearray(struct.pack("QQQ", 0xAA, 0, 0)))  # UFFDIO_API
    fcntl.ioctl(uffd, 0xc020aa00, bytearray(  # UFFDIO_REGISTER, MODE_MISSING
        struct.pack("QQQQ", addr, size, 1, 0)))
    return uffd, addr


UFFD_PAGE = "import ctypes, fcntl, mmap, os, struct\n" + inspect.getsource(uffd_page)


# The flipping side: flip(at, one, two) starts a child process that stores one and two in turn
# into the aligned 4-byte word at offset at of the page shm, shared with it, until stop() (or
# the parent's death). A process of its own, so that neither side waits for the other's GIL,
# on a CPU of its own, so that the flips run while the calls do, not between them.
FLIPPER = r"""
import ctypes, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
shm = mmap.mmap(-1, 4096)
def flip(at, one, two):
    word, done = ctypes.c_uint32.from_buffer(shm, at), ctypes.c_uint32.from_buffer(shm, 2048)
    a, b = int.from_bytes(one, "little"), int.from_bytes(two, "little")
    cpus = sorted(os.sched_getaffinity(0))
    pid = os.fork()
    if pid == 0:
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        os.sched_setaffinity(0, cpus[-1:])
        while not done.value:
            word.value = a
            word.value = b
        os._exit(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, cpus[:1])
    def stop():
        done.value = 1
        os.waitpid(pid, 0)
    return stop
"""


class CollectorCase(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def baseline_peak_kb(self):
        """The collector's peak RSS recording `sleep 0.3`, its load included (measured once per
        test process)."""
        if not _baseline_kb:
            trace = self.work.join("baseline.mcpt")
            p = subprocess.Popen(mwtest.collect_cmd(trace, self.keys, ["/bin/sleep", "0.3"]),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            rss = PeakRss(p.pid)
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            rss.thread.join(timeout=5)
            self.assertGreater(rss.peak, 0)
            _baseline_kb.append(rss.peak)
        return _baseline_kb[0]

    def collector(self, command, extra=(), stdout=subprocess.DEVNULL, user="nobody"):
        p = subprocess.Popen(mwtest.collect_cmd(self.trace, self.keys, command, user=user,
                                                extra=extra),
                             stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.addCleanup(lambda: [f.close() for f in (p.stdout, p.stderr) if f])
        return p, PeakRss(p.pid)

    def finish(self, p, rss, name, expect_rc=0):
        rc = p.wait(timeout=600)
        err = p.stderr.read().decode(errors="replace")
        self.assertEqual(rc, expect_rc, err)
        rss.thread.join(timeout=5)
        base = self.baseline_peak_kb()
        print("%s: collector peak RSS %d KiB (%d on sleep)" % (name, rss.peak, base))
        self.assertGreater(rss.peak, 0)
        self.assertLess(rss.peak, base + RSS_ALLOWANCE_KB)
        return err

    def events(self, *ops):
        return [r for r in mwtest.dump_json(self.trace, self.keys)
                if r.get("type") == "event" and r.get("op") in ops]

    def flip_rounds(self, tag, run_round, want=350, rounds=20, budget=120):
        """Runs run_round() -> (records that disagree with what the kernel did, of them those
        flagged TAMPERED), each round with a trace of its own, until want records disagreed;
        at least rounds rounds, more while budget seconds have not passed (a loaded machine
        lets the flipping process win the race less often: one CI run beside a compile got
        199 in 20 rounds); returns the totals."""
        disagreed = flagged = i = 0
        start = time.monotonic()
        while i < rounds or time.monotonic() - start < budget:
            self.trace = self.work.join("%s-%d.mcpt" % (tag, i))
            d, f = run_round()
            disagreed, flagged = disagreed + d, flagged + f
            i += 1
            if disagreed >= want:
                break
        print("%s: %d of %d records that disagree with the result flagged TAMPERED after %d "
              "rounds" % (tag, flagged, disagreed, i))
        self.assertGreaterEqual(disagreed, want, "the flipping process seldom won the race")
        return disagreed, flagged

    def assertMostlyFlagged(self, disagreed, flagged):
        # A flip between the entry program's read and the kernel's own copy (a few hundred ns
        # later) is invisible to a check at exit: entry and exit then read the same bytes while
        # the kernel used the others. Such records disagree unflagged; a flip after the kernel's
        # copy (the syscall's whole run) is caught. So many are flagged, not all: one round
        # flagged 32 to 100 in 100 here (the lower on a loaded machine), and a previous build
        # none. With the three reads at random the check would catch half; a quarter is
        # asserted, over enough rounds (flip_rounds' want) that one round's share does not
        # decide. Where the rewrite is certain to come after the kernel's copy, every record is
        # flagged: the blocking tests of test_rewrites.py and test_rewrites_addresses.py.
        self.assertGreater(flagged, 0)
        self.assertGreaterEqual(flagged * 4, disagreed)
