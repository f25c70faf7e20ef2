"""bench_progstats.py - bench.py's progstats section: each BPF program's run_time_ns / run_cnt
(kernel.bpf_stats_enabled=1) for tracked and untracked tasks, per tracked call, and beside the
minimal tracer's programs on the same openat loop."""
import os
import shutil
import subprocess
import threading

from benchlib import (NOBODY, PROGSTATS_CALLS, delta, fmtns, prog_stats, set_bpf_stats,
                      tracked_only, wait_ready)


def progstats(b):
    """Per-program average run time, tracked (in-tree openat loop) vs untracked."""
    set_bpf_stats(1)
    try:
        rows = {}
        for wl in b.a.progstats_loops:
            rows[wl] = progstats_one(b, wl)
        ref = progstats_minimal(b) if not b.a.no_reference and b.reftracer() \
            and "openat" in rows else None
    finally:
        set_bpf_stats(0)
    b.results["sections"]["progstats"] = rows
    print("\n## BPF programs: run_time_ns / run_cnt (kernel.bpf_stats_enabled=1)")
    print("Handlers run by tail call are accounted to the dispatcher that called them.")
    print("%-9s %-28s %14s %10s %14s %10s" % ("workload", "program", "tracked ns/run",
                                              "runs", "untracked ns/run", "runs"))
    for wl, progs in rows.items():
        for name, r in sorted(progs.items()):
            if not r["tracked"][1] and not r["untracked"][1]:
                continue
            print("%-9s %-28s %14s %10d %14s %10d" % (
                wl, name, fmtns(r["tracked"]), r["tracked"][1], fmtns(r["untracked"]),
                r["untracked"][1]))
    print("\nThe dispatchers also run for every other syscall on the host while the tracked "
          "loop runs,\nso 'tracked ns/run' mixes in untracked runs (more of them the busier "
          "the machine).\nPer tracked syscall, with the window's other runs charged at the "
          "untracked rate:")
    print("%-9s %-28s %16s %12s %14s" % ("workload", "program", "ns/tracked call", "calls",
                                         "ns/iteration"))
    for wl, progs in rows.items():
        for name in ("mw_dispatch_enter", "mw_dispatch_exit"):
            r = progs.get(name)
            est = tracked_only(r, tracked_calls(b, wl)) if r else None
            if est:
                print("%-9s %-28s %16.0f %12d %14.0f" % (wl, name, est[0], est[1],
                                                         est[0] * PROGSTATS_CALLS[wl]))
                r["tracked_only"] = est
    base = [rows.get(wl, {}).get("mw_dispatch_exit", {}).get("tracked_only")
            for wl in ("getppid", "bpf")]
    if all(base):
        print("A record of integers (bpf) costs its exit %.0f ns more than a tracked call "
              "with no handler (getppid): begun, copied into the ring, committed." %
              (base[1][0] - base[0][0]))
    if ref:
        progstats_minimal_print(b, ref, rows["openat"])


def progstats_one(b, wl):
    n = b.scaled(wl) // 2
    w = b.wl_cmd(wl, n)
    agent = "echo MWREADY >&2; read x; %s; echo MWDONE >&2; read x" % " ".join(w)
    trace = b.trace_path("stats")
    p = subprocess.Popen(b.collect_cmd(trace, ["/bin/sh", "-c", agent]),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    threading.Thread(target=lambda: shutil.copyfileobj(p.stdout, open(os.devnull, "wb")),
                     daemon=True).start()
    wait_ready(p.stderr)
    s0 = prog_stats(p.pid)
    # untracked: the same loop outside the tree while the collector records the agent
    subprocess.run(NOBODY + b.wl_cmd(wl, n), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    s1, s2 = stats_window(b, p)
    os.unlink(trace)
    rows = {}
    for name in s2:
        rows[name] = {"untracked": delta(s0, s1, name), "tracked": delta(s1, s2, name)}
    return rows


def tracked_calls(b, wl):
    """Syscalls the progstats loop of wl makes (wl_run adds a tenth for warm-up)."""
    n = b.scaled(wl) // 2
    return (n + n // 10 + 1) * PROGSTATS_CALLS[wl]


def stats_window(b, p):
    """Lets the agent p (waiting after MWREADY) run its loop; the stats of p's BPF programs
    before and after it."""
    before = prog_stats(p.pid)
    p.stdin.write(b"go\n")
    p.stdin.flush()
    wait_ready(p.stderr, "MWDONE")
    after = prog_stats(p.pid)
    b.stop(p)
    return before, after


def progstats_minimal(b):
    """The minimal tracer's programs on the same in-tree openat loop (stats on): name ->
    (run_time_ns, run_cnt) over the loop."""
    n = b.scaled("openat") // 2
    agent = "echo MWREADY >&2; read x; %s; echo MWDONE >&2; read x" % " ".join(
        b.wl_cmd("openat", n))
    out = b.j("ref-stats.bin")
    p = subprocess.Popen(b.reftracer_cmd(out, NOBODY + ["/bin/sh", "-c", agent]),
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    wait_ready(p.stderr)
    s1, s2 = stats_window(b, p)
    if os.path.exists(out):
        os.unlink(out)
    return {name: delta(s1, s2, name) for name in s2}


def progstats_minimal_print(b, ref, ours):
    """The minimal tracer's openat programs beside ours per loop iteration: where the extra
    cost of the in-tree openat is spent."""
    b.results["sections"]["progstats_minimal"] = ref
    per_iter = 0.0
    print("\nThe minimal tracer on the same openat loop (its openat programs also run for other "
          "tasks' opens):")
    for name in sorted(ref):
        t, c = ref[name]
        if c and "openat" in name:
            print("%-9s %-28s %14s %10d" % ("openat", name, fmtns(ref[name]), c))
            per_iter += t / c
    mine = [ours.get(x, {}).get("tracked_only") for x in ("mw_dispatch_enter",
                                                          "mw_dispatch_exit")]
    if all(mine) and per_iter:
        # ours: per tracked syscall, two syscalls (openat, close) an iteration
        ns = 2 * (mine[0][0] + mine[1][0])
        print("BPF time per loop iteration: mcpwitness %.0f ns (openat and close), minimal "
              "tracer %.0f ns (openat only)" % (ns, per_iter))
        b.results["sections"]["progstats_minimal_per_iter"] = {
            "mcpwitness_ns": ns, "minimal_ns": per_iter}
