"""slowdisk.py - bench.py's slowdisk section: the collector writing to a disk whose syncs are
slow (a network volume, a busy disk), emulated by slowsync.c preloaded into the collector.

The collector seals the trace every 4096 records and fdatasyncs each seal of a regular file;
it is single-threaded, so while a sync waits nobody drains the ring buffer. For each emulated
sync latency, evgen's failing opens at one offered rate: the rate the generator achieved (a
monitored process slowed down by the collector's lag shows here), the events recorded and lost,
the seals written and the syncs made (and how long they waited)."""
import os
import re
import subprocess

from benchlib import tracestat

DELAYS_MS = (0, 20, 100)


def section(b):
    rate = max([r for r in b.a.rates if r <= 500000] or [min(b.a.rates)])
    shim = os.path.join(b.build, "test", "bench", "libmw_slowsync.so")
    rows = []
    print("\n## Slow disk: syncs delayed by a preloaded shim (slowsync.c), %d s of failing "
          "opens at %d/s" % (b.a.seconds, rate))
    print("%8s %10s %10s %10s %8s %6s %6s %9s" % (
        "sync ms", "offered/s", "achieved/s", "recorded", "lost", "seals", "syncs",
        "waited s"))
    for delay in DELAYS_MS:
        trace = b.trace_path("slowdisk")
        env = dict(os.environ, LD_PRELOAD=shim, MW_SLOW_SYNC_MS=str(delay))
        evgen = [b.bin + "/evgen", str(rate), str(b.a.seconds), "1", "open"]
        r = subprocess.run(b.collect_cmd(trace, evgen), env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        achieved, syncs, waited = 0.0, 0, 0.0
        for line in r.stderr.splitlines():
            f = line.split()
            if line.startswith("RESULT evgen"):
                achieved = float(f[2])
            elif f[:1] == ["slowsync:"] and len(f) >= 5:
                syncs, waited = int(f[1]), float(f[3])
        st = tracestat(b.j("bin", "tracestat"), trace)
        v = subprocess.run([b.analyzer, "verify", trace, "--pubkey", b.pub],
                           capture_output=True, text=True)
        m = re.search(r"\((\d+) seals\)", v.stdout)
        row = {"sync_ms": delay, "offered": rate, "achieved": achieved,
               "recorded": st.get("file", (0, 0, 0))[0], "lost": st.get("lost", (0, 0, 0))[0],
               "seals": int(m.group(1)) if m else 0, "syncs": syncs, "waited_s": waited,
               "collector_status": r.returncode}
        rows.append(row)
        print("%8d %10d %10.0f %10d %8d %6d %6d %9.2f%s" % (
            delay, rate, achieved, row["recorded"], row["lost"], row["seals"], syncs, waited,
            "" if r.returncode == 0 else "  (collector exit %d)" % r.returncode))
        if os.path.exists(trace):
            os.unlink(trace)
    b.results["sections"]["slowdisk"] = rows
