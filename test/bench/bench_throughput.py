"""bench_throughput.py - bench.py's throughput section: the collector's events/s sustained with
zero loss for --seconds at each offered rate with default buffers, its CPU per million events and
peak RSS, for each evgen kind, and the minimal tracer's on the same failing opens."""
import os
import re
import subprocess
import threading
import time

from benchlib import EVGEN_CLASS, proc_cpu, proc_hwm, tracestat, wait_ready


def throughput(b):
    rates = b.a.rates
    rows = []
    print("\n## Collector throughput: %d s at each offered rate, default buffers" %
          b.a.seconds)
    print("(minimal: issue 8's minimal libbpf tracer, reftracer.c, which records the failing "
          "opens of kind open and writes raw records)")
    print("%-10s %5s %10s %10s %8s %10s %8s %10s %10s %8s %9s %6s" % (
        "tracer", "kind", "offered/s", "achieved/s", "threads", "recorded", "lost",
        "spilled", "CPU s/M ev", "CPU %", "peak RSS", "B/ev"))
    print("(B/ev: the whole output file, headers, seals and tables included, per event "
          "recorded; spilled: records that found the 1 MiB hot ring full and went to the "
          "spill ring, from the collector's closing line)")
    minimal = not b.a.no_reference and b.reftracer()
    runs = [(t, k, r) for k in b.a.evgen for r in rates
            for t in ("mcpwitness", "minimal")
            if t == "mcpwitness" or (k == "open" and minimal)]
    for tracer, kind, rate in runs:
        threads = 1 if rate <= 300000 else 2
        trace = b.trace_path("rate")
        evgen = [b.bin + "/evgen", str(rate), str(b.a.seconds), str(threads), kind]
        if kind == "files":
            evgen.append(evgen_files(b))
        cmd = b.collect_cmd(trace, evgen, verbose=True) if tracer == "mcpwitness" else \
            b.reftracer_cmd(trace, evgen)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        wait_ready(p.stderr, "MWSTART")  # BPF loaded, the server runs: steady state
        # The collector's own CPU and peak RSS, sampled from /proc until it exits: wait4's
        # rusage would add its waited-for children (the load generator itself).
        t0, cpu0 = time.monotonic(), proc_cpu(p.pid)
        last = {"cpu": cpu0, "hwm": 0}
        err = []
        threading.Thread(target=lambda: err.append(p.stderr.read().decode()),
                         daemon=True).start()
        while p.poll() is None:
            try:
                last["cpu"] = proc_cpu(p.pid)
                last["hwm"] = max(last["hwm"], proc_hwm(p.pid))
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.05)
        wall = time.monotonic() - t0
        time.sleep(0.1)
        achieved, recorded, lost, spilled = 0.0, 0, 0, None
        for line in "".join(err).splitlines():
            f = line.split()
            m = re.search(r"(\d+) ring records came through the spill ring", line)
            if m:
                spilled = int(m.group(1))
            if line.startswith("RESULT evgen"):
                achieved = float(f[2])
            elif line.startswith("reftracer: ") and len(f) >= 9:
                # "reftracer: N events, B bytes, L lost, O opens"
                lost, recorded = int(f[5]), int(f[7])
        if tracer == "mcpwitness":
            st = tracestat(b.j("bin", "tracestat"), trace)
            recorded = st.get(EVGEN_CLASS[kind], (0, 0, 0))[0]
            lost = st.get("lost", (0, 0, 0))[0]
        cpu = last["cpu"] - cpu0  # from the first event to its last 50 ms
        size = os.path.getsize(trace) if os.path.exists(trace) else 0
        row = {"tracer": tracer, "kind": kind, "offered": rate, "achieved": achieved,
               "threads": threads, "recorded": recorded, "lost": lost,
               "spilled": spilled, "cpu_s": cpu,
               "wall_s": wall, "cpu_s_per_M": cpu / max(recorded, 1) * 1e6,
               "maxrss_kib": last["hwm"], "trace_bytes": size}
        rows.append(row)
        print("%-10s %5s %10d %10.0f %8d %10d %8d %10s %10.2f %7.0f%% %7.1fMiB %6.1f" % (
            tracer, kind, rate, achieved, threads, recorded, lost,
            "-" if spilled is None else spilled, row["cpu_s_per_M"],
            100 * cpu / wall, last["hwm"] / 1024, size / max(recorded, 1)))
        if os.path.exists(trace):
            os.unlink(trace)
    for tracer, kind in sorted({(t, k) for t, k, _ in runs}):
        ok = [r["achieved"] for r in rows if r["tracer"] == tracer and r["kind"] == kind
              and r["lost"] == 0 and r["recorded"] > 0]
        print("%s %s: highest rate with zero loss: %.0f events/s" % (
            tracer, kind, max(ok) if ok else 0))
    b.results["sections"]["throughput"] = rows


def evgen_files(b):
    """The directory of evgen's files kind: f00 to f63, readable by the generator."""
    d = b.j("evgen-files")
    if not os.path.isdir(d):
        os.mkdir(d)
        os.chmod(d, 0o755)
        for i in range(64):
            with open(os.path.join(d, "f%02d" % i), "w") as f:
                f.write("x")
            os.chmod(os.path.join(d, "f%02d" % i), 0o644)
    return d
