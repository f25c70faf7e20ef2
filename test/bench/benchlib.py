"""benchlib.py - what bench.py's sections share: the machine's paths, the workloads' iteration
counts and issue 8's targets; helpers that run a command and read its times, a trace's sizes or
the BPF programs' statistics; and the statistics of repetitions (median, its 95% confidence
interval, min and max)."""
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PY = "/usr/bin/python3"
# evgen KIND -> the tracestat class of its records
EVGEN_CLASS = {"open": "file", "bpf": "privilege", "uring": "evasion", "files": "file"}
NOBODY = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]

# Iterations per repetition: the baseline loop runs for roughly 0.3-0.6 s here.
ITERS = {"openat": 200000, "forkexec": 1500, "connect": 20000, "stdio": 200000, "mcp": 2000,
         "chmod": 200000, "sendto": 200000, "getppid": 200000, "bpf": 200000}
# Syscalls per iteration of the progstats loops (openat + close; write; socket + setsockopt +
# connect + close; chmod; sendto; getppid; bpf). chmod and sendto (wl_pathcall.c) are there for
# the cost of the tamper check's entry stash on calls other than the opens, getppid and bpf
# (wl_basecall.c) for a tracked call with no handler and for the cheapest record; no other
# section runs them.
PROGSTATS_CALLS = {"openat": 2, "stdio": 1, "connect": 4, "chmod": 1, "sendto": 1, "getppid": 1,
                   "bpf": 1}
# Issue 8's targets for the overhead ratios: in the tracked tree, and outside it (the cost to
# the rest of the host). stdio and mcp have none in the tree.
TARGET_IN = {"openat": 1.40, "forkexec": 1.05, "connect": 1.10}
TARGET_OUT = {"openat": 1.08, "forkexec": 1.03, "connect": 1.03, "stdio": 1.03, "mcp": 1.03}
# strace is 10-100x slower: fewer iterations keep a repetition under ~10 s (per-iteration
# figures are compared, so the counts need not match).
STRACE_DIV = {"openat": 20, "forkexec": 2, "connect": 10, "stdio": 20, "mcp": 4}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# The rows of the analyzer section, in the order it runs them.
ANALYZER_ROWS = ("verify", "dump", "dump-json", "analyze", "analyze-4k", "an-json", "an-sarif",
                 "calls-json")
# analyze-4k: analyze with GLIBC_TUNABLES set empty, so that it runs in 4 KiB pages where the
# host's THP mode is "madvise" (analyzer/hugepages.c), for the difference huge pages make.
NO_TUNABLES = dict(os.environ, GLIBC_TUNABLES="")


def wait_ready(stream, word="MWREADY"):
    while True:
        line = stream.readline()
        if not line:
            raise SystemExit("the traced agent did not start")
        if word.encode() in line:
            return


def timed(cmd, env=None):
    """Wall and CPU seconds, peak RSS (KiB), exit status and minor page faults of cmd. The
    peak is VmHWM sampled every 20 ms: wait4's ru_maxrss would report the forking Python's own
    size when that is larger (it carries over across exec)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    hwm = [0]

    def sample():
        while True:
            try:
                hwm[0] = max(hwm[0], proc_hwm(p.pid))
            except (OSError, ValueError):
                return
            time.sleep(0.02)
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, ru = os.wait4(p.pid, 0)
    return time.monotonic() - t0, ru.ru_utime + ru.ru_stime, hwm[0], status >> 8, ru.ru_minflt


def tracestat(tool, trace):
    r = subprocess.run([tool, trace], capture_output=True, text=True)
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "STAT":
            out[f[1]] = (int(f[2]), int(f[3]), float(f[4]))
        elif len(f) == 5 and f[0] == "PROJ":
            out["proj:" + f[1]] = (int(f[2]), int(f[3]), float(f[4]))
        elif len(f) == 3 and f[0] == "STAT" and f[1] == "lost":
            out["lost"] = (int(f[2]), 0, 0.0)
    return out


def prog_ids(pid):
    """Ids of the BPF programs whose fds process pid holds (from /proc/PID/fdinfo)."""
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            for line in open(os.path.join(d, fd)):
                if line.startswith("prog_id:"):
                    ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(pid):
    """name -> (run_time_ns, run_cnt) of the BPF programs held by process pid."""
    ids = prog_ids(pid)
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    out = {}
    for prog in json.loads(r.stdout or "[]"):
        if prog.get("id") not in ids:
            continue
        name = prog.get("name", "?")
        t, c = out.get(name, (0, 0))
        out[name] = (t + prog.get("run_time_ns", 0), c + prog.get("run_cnt", 0))
    return out


def proc_hwm(pid):
    """Peak resident set size of a process (VmHWM), in KiB."""
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def proc_cpu(pid):
    """utime + stime of a process, in seconds."""
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def delta(a, b, name):
    t0, c0 = a.get(name, (0, 0))
    t1, c1 = b.get(name, (0, 0))
    return (t1 - t0, c1 - c0)


def tracked_only(r, calls):
    """(ns per tracked run, tracked runs) of a dispatcher from its two windows: the tracked
    window's runs beyond the loop's own calls are other tasks', charged at the untracked rate."""
    (tt, tc), (ut, uc) = r["tracked"], r["untracked"]
    if not uc or tc < calls:
        return None
    other = tc - calls
    return ((tt - other * ut / uc) / calls, calls)


def set_bpf_stats(v):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(str(v))


def fmtns(tc):
    t, c = tc
    return "%.0f" % (t / c) if c else "-"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def median_ci(xs, conf=0.95):
    """A distribution-free confidence interval of the median of xs: the order statistics
    x(k) and x(n+1-k), k the largest whose coverage 1 - 2 P(Binomial(n, 1/2) <= k - 1) is at
    least conf. (lo, hi, coverage), or None when even [min, max] covers less (under 6 values
    for 95%)."""
    xs = sorted(x for x in xs if x is not None)
    n, below, best = len(xs), 0.0, None
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n  # P(Binomial(n, 1/2) <= k - 1)
        if 1 - 2 * below < conf:
            break
        best = (xs[k - 1], xs[n - k], 1 - 2 * below)
    return best


def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs),
            "ci95": median_ci(xs)}


def fmt(s):
    if not s:
        return "-"
    return "%.2fx (%.2f-%.2f)" % (s["median"], s["min"], s["max"])


def fmt_ci(s):
    """The median and its 95% confidence interval, "-" without one."""
    if not s or not s.get("ci95"):
        return "-"
    return "%.3fx [%.3f, %.3f]" % (s["median"], s["ci95"][0], s["ci95"][1])


TRACEFS = "/sys/kernel/tracing"


def tracefs_mount():
    """bpftrace attaches tracepoints through tracefs, which a machine may not mount at boot (the
    collector and the reftracer mount it themselves when they need it). Mounts it if absent;
    True if it did."""
    if os.path.isdir(TRACEFS + "/events"):
        return False
    r = subprocess.run(["mount", "-t", "tracefs", "tracefs", TRACEFS], capture_output=True,
                       text=True)
    if r.returncode != 0:
        log("tracefs is not mounted and mounting it failed (%s): bpftrace will not attach" %
            r.stderr.strip())
        return False
    return True


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def other_syscall_bpf():
    """BPF programs attached to the syscall path that are not ours (another collector)."""
    r = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True)
    n = 0
    try:
        for link in json.loads(r.stdout or "[]"):
            if link.get("type") in ("raw_tracepoint", "tracing", "perf_event"):
                n += 1
    except ValueError:
        pass
    return n


def machine_info():
    u = os.uname()
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"kernel": u.release, "cpus": os.cpu_count(), "cpu": cpu, "load_start": loadavg()}
