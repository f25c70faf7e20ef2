"""bench_overhead.py - bench.py's overhead, floor and tracesize sections: what tracing costs the
workloads in the tracked tree and outside it, beside the reference tracers; what an untracked
process pays per attach kind; and the trace bytes per record of the overhead's recordings."""
import json
import os
import shutil
import subprocess

from benchlib import (STRACE_DIV, TARGET_IN, TARGET_OUT, TRACEFS, fmt, fmt_ci, log, loadavg,
                      med, other_syscall_bpf, summary, tracefs_mount, tracestat)


def overhead(b):
    wls = b.a.workloads
    variants = ["in", "out", "strace", "bpftrace", "bpfout", "ref", "refout", "floorout"]
    if not shutil.which("bpftrace"):
        log("bpftrace not installed: its columns are skipped (run.sh installs it)")
        variants = [v for v in variants if not v.startswith("bpf")]
    if not b.reftracer():
        variants = [v for v in variants if not v.startswith("ref")]
    if not os.access(b.tracefloor_bin, os.X_OK):
        log("%s is missing: no floor beside the out-of-tree ratios" % b.tracefloor_bin)
        variants.remove("floorout")
    if b.a.no_reference:
        variants = ["in", "out"]
    if ("bpftrace" in variants or "ref" in variants) and tracefs_mount():
        b.cleanups.append(lambda: subprocess.run(["umount", TRACEFS]))
    raw = {wl: {v: [] for v in ["base"] + variants} for wl in wls}
    keep_traces = {}
    loads = []
    for rep in range(b.a.reps):
        loads.append("%s/%d" % (loadavg(), other_syscall_bpf()))
        log("overhead: repetition %d/%d (load %s)" % (rep + 1, b.a.reps, loadavg()))
        for wl in wls:
            n = b.scaled(wl)
            raw[wl]["base"].append(b.run_variant(wl, "base", n)[0])
            t, trace = b.run_variant(wl, "in", n)
            raw[wl]["in"].append(t)
            if trace and wl not in keep_traces:
                keep_traces[wl] = trace
            elif trace and os.path.exists(trace):
                os.unlink(trace)
            if "strace" in variants:
                raw[wl]["strace"].append(b.run_variant(wl, "strace",
                                                       max(1, n // STRACE_DIV[wl]))[0])
            for v in ("bpftrace", "ref"):
                if v in variants:
                    raw[wl][v].append(b.run_variant(wl, v, n)[0])
        p, trace = b.idle_collector()
        for wl in wls:
            raw[wl]["out"].append(b.run_variant(wl, "out", b.scaled(wl))[0])
        b.stop(p)
        os.unlink(trace)
        for v, tracer in (("bpfout", "bpftrace"), ("refout", "reftracer"),
                          ("floorout", "tracefloor")):
            if v not in variants:
                continue
            bp, sleeper = b.idle_tracer(tracer)
            for wl in wls:
                raw[wl][v].append(b.run_variant(wl, v, b.scaled(wl))[0]
                                  if bp else (None, None))
            if bp:
                bp.terminate()
                if bp.wait() and tracer == "tracefloor":
                    # it held its programs to the end only if it exits 0 (detached cleanly)
                    log("  tracefloor --hold ended with status %d" % bp.returncode)
                sleeper.kill()
                sleeper.wait()
    b.traces = keep_traces
    tables = {}
    for k, what in ((0, "wall"), (1, "cpu")):
        table = {}
        for wl in wls:
            base = [x[k] for x in raw[wl]["base"]]
            row = {"base_ns": med(base)}
            for v in variants:
                ratios = [t[k] / u for t, u in zip(raw[wl][v], base) if t[k] and u]
                row[v] = summary(ratios)
            table[wl] = row
        tables[what] = table
    b.results["sections"]["overhead"] = {"raw_ns": raw, "ratios": tables,
                                         "reps": b.a.reps, "loads": loads}
    for what, title in (("wall", "loop wall time"),
                        ("cpu", "CPU time of the workload (its own and its children's)")):
        print("\n## Overhead, %s: traced / untraced, median (min..max) of %d repetitions"
              % (title, b.a.reps))
        print("%-9s %10s | %-18s %-18s | %-18s %-18s | %-18s %-18s %-18s | %s" % (
            "workload", "untraced", "mcpwitness in", "mcpwitness out", "minimal in",
            "minimal out", "strace -f", "bpftrace in", "bpftrace out", "empty tp_btf out"))
        for wl in wls:
            r = tables[what][wl]
            if what == "cpu" and wl == "mcp":
                continue  # the server is not the client's child in every variant
            print("%-9s %8.0fns | %-18s %-18s | %-18s %-18s | %-18s %-18s %-18s | %s" % (
                wl, r["base_ns"] or 0, fmt(r.get("in")), fmt(r.get("out")),
                fmt(r.get("ref")), fmt(r.get("refout")), fmt(r.get("strace")),
                fmt(r.get("bpftrace")), fmt(r.get("bpfout")), fmt(r.get("floorout"))))
    targets(b, raw, tables, wls)
    print("minimal: issue 8's minimal libbpf tracer built here (reftracer.c), the design "
          "its targets were set against")
    print("load average / other BPF tracing links at each repetition: %s"
          % " ".join(loads))
    print("(other collectors attach programs to the same tracepoints: a repetition that ran "
          "beside one is slowed in every column)")


def verdict(ci, target):
    """Whether the 95% interval of a median ratio clears a target ("met": all of it at or
    under; "missed": all of it over) or holds it."""
    if not ci:
        return "too few repetitions for an interval (6 or more)"
    if ci[1] <= target:
        return "met"
    if ci[0] > target:
        return "missed by %.3f-%.3f" % (ci[0] - target, ci[1] - target)
    return "the interval holds the target"


def targets(b, raw, tables, wls):
    """Each ratio issue 8 sets a target for, with the 95% confidence interval of its median
    (order statistics of the repetitions, benchlib.median_ci) and a verdict; beside the
    out-of-tree ratio, the same loops under empty tp_btf programs (the floor no program of
    ours can go under); and mcpwitness's time over the minimal tracer's and over the empty
    programs' in the same repetition (the gap to each, freed of what moves both). CPU time,
    wall for mcp."""
    print("\n## Overhead against issue 8's targets: median and its 95%% confidence interval "
          "over %d repetitions (CPU time; wall for mcp)" % b.a.reps)
    print("%-9s %-29s %-26s %7s  %s" % ("workload", "ratio", "median [95% interval]", "target",
                                        "verdict"))
    paired = {"vs_minimal": {}, "vs_floor": {}}
    for wl in wls:
        k, what = (0, "wall") if wl == "mcp" else (1, "cpu")
        r = tables[what][wl]
        for v, name, target in (("in", "mcpwitness in / untraced", TARGET_IN.get(wl)),
                                ("out", "mcpwitness out / untraced", TARGET_OUT.get(wl)),
                                ("floorout", "empty tp_btf out / untraced",
                                 TARGET_OUT.get(wl))):
            if r.get(v):
                print(("%-9s %-29s %-26s %7s  %s" % (
                    wl, name, fmt_ci(r[v]), "%.2fx" % target if target else "-",
                    verdict(r[v]["ci95"], target) if target else "")).rstrip())
        for v, ref, name, key in (
                ("in", "ref", "mcpwitness in / minimal in", "vs_minimal"),
                ("out", "refout", "mcpwitness out / minimal out", "vs_minimal"),
                ("out", "floorout", "mcpwitness out / empty tp_btf", "vs_floor")):
            if ref not in raw[wl]:
                continue
            s = summary([t[k] / u[k] for t, u in zip(raw[wl][v], raw[wl][ref])
                         if t[k] and u[k]])
            paired[key].setdefault(wl, {})[v] = s
            if s:
                print("%-9s %-29s %s" % (wl, name, fmt_ci(s)))
    print("empty tp_btf: tracefloor --hold btf-empty, programs on sys_enter and sys_exit that "
          "return at once (the kernel's syscall tracing path and the BPF run, nothing else)")
    b.results["sections"]["overhead"].update(paired)


def floor(b):
    """Untracked cost per attach kind (tracefloor.c prints the table; this keeps its JSON)."""
    print("\n## Floor: what an untracked process pays per attach kind (tracefloor)")
    iters = str(int(100000 * b.a.scale))
    tool = os.path.join(b.build, "test", "bench", "tracefloor")
    out = subprocess.run([tool, "--json", "--reps", str(b.a.reps), "--iters", iters],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    res = json.loads(out)
    b.results["sections"]["floor"] = res
    print("CPU ns per iteration (median), ratio to nothing attached (median, min-max), "
          "added ns per syscall direction; %d repetitions" % res["reps"])
    for k in res["kinds"]:
        if k.get("skipped"):
            print("%-10s  left out: cannot attach here" % k["kind"])
            continue
        print("%-10s" % k["kind"] + "".join(
            "  %s %7.1f ns %.3fx (%.3f-%.3f) %+6.1f ns/dir" % (
                loop, k[loop]["ns"], k[loop]["ratio"], k[loop]["min"], k[loop]["max"],
                k[loop]["ns_per_direction"]) for loop in ("openat+close", "getppid")))


def tracesize(b):
    traces = getattr(b, "traces", None)
    if not traces:
        log("tracesize: needs the overhead section's recordings; recording them now")
        traces = {}
        for wl in b.a.workloads:
            traces[wl] = b.run_variant(wl, "in", b.scaled(wl))[1]
    out = {}
    print("\n## Trace bytes per record (whole frames), from the in-tree recordings")
    print("(B/rec of an event class includes the value and task tables' PathDef and "
          "TaskDef records written for its events; projected: test/bench/pathproj.c's "
          "estimate of the tables, meaningful for traces written without them)")
    print("%-9s %-10s %10s %12s %8s %14s" % ("workload", "class", "records", "bytes", "B/rec",
                                             "projected B/rec"))
    for wl, trace in traces.items():
        stats = tracestat(b.j("bin", "tracestat"), trace)
        out[wl] = stats
        for cls, (n, nbytes, per) in sorted(stats.items()):
            if cls in ("header", "verdict", "lost") or cls.startswith("proj:"):
                continue
            proj = stats.get("proj:" + cls)
            print("%-9s %-10s %10d %12d %8.1f %14s" % (wl, cls, n, nbytes, per,
                                                       "%.1f" % proj[2] if proj else ""))
    b.results["sections"]["tracesize"] = out
