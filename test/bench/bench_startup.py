"""bench_startup.py - bench.py's startup section: the collector's time from exec to the server's
first instruction, and the kernel verifier's time per program of its object (verifstat.c)."""
import os
import subprocess
import time

from benchlib import log, summary


def startup(b):
    times = []
    for _ in range(b.a.startup_reps):
        t0 = time.monotonic()
        p, trace = b.idle_collector("start")
        times.append(time.monotonic() - t0)
        b.stop(p)
        os.unlink(trace)
    s = summary(times)
    b.results["sections"]["startup"] = s
    print("\n## Collector startup: exec to the server's first instruction")
    print("median %.2f s (min %.2f, max %.2f) over %d runs" % (s["median"], s["min"],
                                                               s["max"], len(times)))
    verifier_time(b)


def verifier_time(b):
    """The verifier's time per program of the collector's object (verifstat.c): most of
    the start, spread over the loading threads."""
    tool = os.path.join(b.build, "test", "bench", "verifstat")
    obj = os.path.join(b.build, "bpf", "mcpwitness.bpf.o")
    r = subprocess.run([tool, obj], capture_output=True, text=True)
    rows = [line.split() for line in r.stdout.splitlines()]
    total = [f for f in rows if f and f[0] == "TOTAL"]
    if r.returncode or not total:
        log("verifstat failed: %s" % r.stderr.strip()[-300:])
        return
    progs = [(int(f[0]), int(f[2]), f[4]) for f in rows if len(f) == 5 and f[1] == "us"]
    n, usec, insns = int(total[0][1]), int(total[0][3]), int(total[0][5])
    b.results["sections"]["startup"]["verifier"] = {
        "programs": n, "usec": usec, "insns": insns,
        "top": [{"name": p[2], "usec": p[0], "insns": p[1]} for p in progs[:10]]}
    print("verifier (verifstat, one load of the whole object, one thread): %d programs, "
          "%.0f ms, %d instructions processed; the longest:" % (n, usec / 1000, insns))
    for us, ins, name in progs[:5]:
        print("  %8.1f ms %8d insns  %s" % (us / 1000, ins, name))
