"""bench_analyzer.py - bench.py's analyzer and icount sections: verify, dump, analyze and calls
on synthetic traces written by the real trace writer (events/s, peak RSS), and the instructions
per event of verify and analyze under callgrind."""
import os
import re
import shutil
import subprocess

from benchlib import ANALYZER_ROWS, NO_TUNABLES, SRC, timed


def analyzer_bench(b):
    policy = os.path.join(SRC, "policies", "default.yaml")
    rows = []
    print("\n## Analyzer on synthetic traces written by the real trace writer (gentrace)")
    print("analyzer: %s" % b.analyzer)
    print("%10s %8s %-10s %8s %12s %12s %9s %9s" % ("events", "MiB", "command", "wall s",
                                                    "events/s", "ev/CPU s", "peak RSS",
                                                    "faults"))
    for n in b.a.analyzer_events:
        trace = b.j("synth-%d.mcpt" % n)
        subprocess.run([b.bin + "/gentrace", trace, b.key, str(n)], check=True,
                       stdout=subprocess.DEVNULL)
        size = os.path.getsize(trace) / 2**20
        analyze = [b.analyzer, "analyze", trace, "--pubkey", b.pub, "-p", policy]
        cmds = {
            "verify": [b.analyzer, "verify", trace, "--pubkey", b.pub],
            "dump": [b.analyzer, "dump", trace],
            "dump-json": [b.analyzer, "dump", trace, "--json"],
            "analyze": analyze,
            "analyze-4k": analyze,
            # the machine-readable reports name every call: their memory and time on top
            "an-json": analyze + ["--format", "json"],
            "an-sarif": analyze + ["--format", "sarif"],
            "calls-json": [b.analyzer, "calls", trace, "--pubkey", b.pub, "--json"],
        }
        assert tuple(cmds) == ANALYZER_ROWS
        for name, cmd in cmds.items():
            if b.a.analyzer_commands and name not in b.a.analyzer_commands:
                continue
            best = None
            for _ in range(b.a.analyzer_reps):
                t = timed(cmd, NO_TUNABLES if name == "analyze-4k" else None)
                if best is None or t[0] < best[0]:
                    best = t
            wall, cpu, rss, rc, faults = best
            row = {"events": n, "mib": size, "command": name, "wall_s": wall, "cpu_s": cpu,
                   "events_per_s": n / wall, "events_per_cpu_s": n / cpu,
                   "maxrss_kib": rss, "minor_faults": faults, "exit": rc}
            rows.append(row)
            print("%10d %8.0f %-10s %8.2f %12.0f %12.0f %7.1fMiB %9d%s" % (
                n, size, name, wall, n / wall, n / cpu, rss / 1024, faults,
                "" if rc in (0, 1) else "  (exit %d)" % rc))
        os.unlink(trace)
    b.results["sections"]["analyzer"] = rows


def analyzer_icount(b):
    """Instructions per event of verify and analyze (callgrind), which the machine's load
    does not change: the figure to compare two builds on a busy machine."""
    policy = os.path.join(SRC, "policies", "default.yaml")
    n = b.a.icount_events
    print("\n## Analyzer instructions per event (callgrind, %d-event gentrace trace)" % n)
    if not shutil.which("valgrind"):
        print("skipped: valgrind is not installed (run.sh installs it)")
        return
    trace = b.j("icount-%d.mcpt" % n)
    subprocess.run([b.bin + "/gentrace", trace, b.key, str(n)], check=True,
                   stdout=subprocess.DEVNULL)
    cmds = {
        "verify": [b.analyzer, "verify", trace, "--pubkey", b.pub],
        "analyze": [b.analyzer, "analyze", trace, "--pubkey", b.pub, "-p", policy],
    }
    rows = []
    for name, cmd in cmds.items():
        out = b.j("callgrind.out")
        # GLIBC_TUNABLES set: no re-execution, which callgrind would not follow
        r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                           + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, env=NO_TUNABLES)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if not m:
            raise SystemExit("callgrind gave no total for %s" % name)
        ins = int(m.group(1))
        rows.append({"command": name, "events": n, "instructions": ins})
        print("%-8s %14d instructions, %7.0f per event" % (name, ins, ins / n))
        os.unlink(out)
    os.unlink(trace)
    b.results["sections"]["icount"] = rows
