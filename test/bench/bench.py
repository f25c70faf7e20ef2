#!/usr/bin/python3
"""bench.py - the mcpwitness benchmarks: they print figures, they assert nothing.

Run through test/bench/run.sh (which builds first). Sections, each selectable with --only:

  overhead    loop time of each workload (wl_*.c) traced / untraced: in the tracked tree
              (launched by mcpwitness-collect), outside it while the collector records an idle
              server (the cost to the rest of the host), under `strace -f`, under a bpftrace
              script doing the same tracing (in its filter, and outside it), and under issue 8's
              minimal libbpf tracer (reftracer.c: classic tracepoints, an in-kernel tree
              filter, a ring buffer drained in batches; in its tree, and outside it). Measured
              interleaved: every repetition runs the untraced baseline and then each variant,
              and a ratio is variant / baseline of the same repetition. Median and min..max
              over the repetitions.
  floor       what an untracked process pays per syscall once tracing is on, by attach kind
              (tracefloor.c: tp_btf, raw_tp, classic per-syscall tracepoints, empty programs,
              the collector's membership test, and an empty pair that reserves and discards a
              ring slot at each exit), on an openat+close loop and a getppid
              loop, rotated per repetition: the out-of-tree overhead's floor.
  progstats   per BPF program run_time_ns / run_cnt (kernel.bpf_stats_enabled=1), for tracked
              and untracked tasks (enabled for this section only: stats cost time themselves),
              on the openat, stdio and connect loops, on two loops of its own (wl_pathcall.c:
              chmod, sendto) whose calls have the tamper check's entry stash, and on two that
              price a tracked syscall's base costs (wl_basecall.c: getppid, which has no
              handler; bpf, refused at once, whose record holds integers only).
              Unless --no-reference, also the minimal tracer's programs on the openat loop, and
              both tracers' BPF time per loop iteration.
  throughput  collector: events/s sustained with zero loss for 10 s with default buffers, CPU
              per million events, peak RSS; for each --evgen kind (failing opens with a path,
              refused bpf() calls with integers only: the cheapest recorded syscall; opens of
              64 files in turn, with the file opened: a value definition each; uring, no-op
              io_uring requests, 31 a syscall, for rates the syscalls cannot offer). The
              minimal tracer gets the same runs for the opens (unless --no-reference).
  tracesize   trace bytes per event, by family, of the overhead section's recordings.
  analyzer    verify / dump (text, --json) / analyze (default policy; text, json, sarif) /
              calls --json: events/s and peak RSS on synthetic traces of 1 M and 5 M events
              written by the real trace writer (gentrace.c). run.sh has this section and
              icount time the packaged build's analyzer (see --analyzer).
  icount      instructions per event of verify and analyze under callgrind on a 200 000-event
              trace: unlike times, not moved by the machine's load (compare builds with it).
  startup     collector: time from exec to the server's first instruction (= first event),
              and what the kernel's verifier spends on each of its programs (verifstat.c).
  slowdisk    collector writing to a disk with slow syncs (slowdisk.py: 0, 20, 100 ms per sync,
              emulated by slowsync.c preloaded into it): the generator's achieved rate, events
              recorded and lost, seals and syncs, at the highest --rates up to 500 000/s.

All workloads run as `nobody`. Everything is written under one temporary directory, removed at
the end unless --keep. The machine's load average and any other BPF program attached to the
syscall tracepoints (another collector) are reported, since both skew the figures.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import slowdisk

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PY = "/usr/bin/python3"
EVGEN_CLASS = {"open": "file", "bpf": "privilege", "uring": "evasion", "files": "file"}  # evgen KIND -> tracestat class
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
# strace is 10-100x slower: fewer iterations keep a repetition under ~10 s (per-iteration
# figures are compared, so the counts need not match).
STRACE_DIV = {"openat": 20, "forkexec": 2, "connect": 10, "stdio": 20, "mcp": 4}

BPFTRACE_SCRIPT = r"""
BEGIN { @t[SEED] = 1; printf("MWREADY\n"); }
tracepoint:sched:sched_process_fork /@t[args->parent_pid]/ {
  @t[args->child_pid] = 1; printf("%llu fork %d %d\n", nsecs, args->parent_pid, args->child_pid); }
tracepoint:sched:sched_process_exec /@t[pid]/ {
  printf("%llu exec %d %s\n", nsecs, pid, str(args->filename)); }
tracepoint:sched:sched_process_exit /@t[pid]/ {
  printf("%llu exit %d %d\n", nsecs, pid, tid); if (pid == tid) { delete(@t[pid]); } }
tracepoint:syscalls:sys_enter_openat /@t[pid]/ { @a[tid] = (uint64)args->filename; }
tracepoint:syscalls:sys_exit_openat /@t[pid]/ {
  printf("%llu openat %d %d %s %d\n", nsecs, pid, tid, str(@a[tid]), args->ret); delete(@a[tid]); }
tracepoint:syscalls:sys_enter_connect /@t[pid]/ { @a[tid] = (uint64)args->uservaddr; }
tracepoint:syscalls:sys_exit_connect /@t[pid]/ {
  printf("%llu connect %d %d %r %d\n", nsecs, pid, tid, buf(@a[tid], 16), args->ret);
  delete(@a[tid]); }
tracepoint:syscalls:sys_enter_write /@t[pid] && args->fd == 1/ { @a[tid] = (uint64)args->buf; }
tracepoint:syscalls:sys_exit_write /@t[pid] && @a[tid] != 0/ {
  printf("%llu write %d %d %d %r\n", nsecs, pid, tid, args->ret, buf(@a[tid], 128));
  delete(@a[tid]); }
tracepoint:syscalls:sys_enter_read /@t[pid] && args->fd == 0/ { @a[tid] = (uint64)args->buf; }
tracepoint:syscalls:sys_exit_read /@t[pid] && @a[tid] != 0/ {
  printf("%llu read %d %d %d %r\n", nsecs, pid, tid, args->ret, buf(@a[tid], 128));
  delete(@a[tid]); }
END { clear(@t); clear(@a); }
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# The rows of the analyzer section, in the order it runs them.
ANALYZER_ROWS = ("verify", "dump", "dump-json", "analyze", "analyze-4k", "an-json", "an-sarif",
                 "calls-json")
# analyze-4k: analyze with GLIBC_TUNABLES set empty, so that it runs in 4 KiB pages where the
# host's THP mode is "madvise" (analyzer/hugepages.c), for the difference huge pages make.
NO_TUNABLES = dict(os.environ, GLIBC_TUNABLES="")


class Bench:
    def __init__(self, args):
        self.a = args
        self.build = os.path.abspath(args.build)
        self.collect = os.path.join(self.build, "collector", "mcpwitness-collect")
        self.reftracer_bin = os.path.join(self.build, "test", "bench", "reftracer")
        self.analyzer = os.path.abspath(args.analyzer) if args.analyzer else \
            os.path.join(self.build, "analyzer", "mcpwitness")
        for tool in (self.collect, self.analyzer):
            if not os.access(tool, os.X_OK):
                raise SystemExit("bench.py: %s is missing: build the tree first (--build)" % tool)
        self.work = tempfile.mkdtemp(prefix="mwbench.")
        try:
            self.prepare()
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise

    def prepare(self):
        """The work directory's programs, files and keys, and the connect loop's listener."""
        os.chmod(self.work, 0o755)
        self.bin = self.j("bin")
        os.mkdir(self.bin)
        for name in ("wl_openat", "wl_forkexec", "wl_connect", "wl_stdio", "wl_mcp",
                     "wl_pathcall", "wl_basecall", "evgen", "bench_listener", "gentrace",
                     "tracestat"):
            shutil.copy(os.path.join(self.build, "test", "bench", name), self.bin)
        shutil.copy(os.path.join(SRC, "test", "bench", "mcp_server.py"), self.bin)
        os.chmod(self.bin, 0o755)
        self.data = self.j("data")
        os.mkdir(self.data)
        os.chmod(self.data, 0o755)
        for i in range(8):
            with open(os.path.join(self.data, "file%d.txt" % i), "w") as f:
                f.write("x" * 4096)
        with open(os.path.join(self.data, "chmod.txt"), "w"):
            pass  # the chmod loop's file: the workloads' user owns it
        shutil.chown(os.path.join(self.data, "chmod.txt"), "nobody", "nogroup")
        r = subprocess.run([self.analyzer, "keygen", "-o", self.j("keys")], capture_output=True,
                           text=True)
        if r.returncode:
            raise SystemExit("keygen failed: " + r.stderr)
        self.key = self.j("keys", "signing.key")
        self.pub = self.j("keys", "signing.pub")
        self.listener = subprocess.Popen([self.j("bin", "bench_listener")], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)
        self.port = self.listener.stdout.readline().strip()
        self.results = {"machine": machine_info(), "sections": {}}
        self.ntrace = 0
        self.cleanups = []  # run by close(), last first

    def j(self, *p):
        return os.path.join(self.work, *p)

    def close(self):
        self.listener.stdin.close()
        self.listener.wait()
        for undo in reversed(self.cleanups):
            undo()
        if self.a.keep:
            log("kept", self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    # ---- workloads -----------------------------------------------------------------------

    def wl_cmd(self, wl, iters):
        b = self.bin
        if wl == "openat":
            return [b + "/wl_openat", str(iters), self.data + "/file0.txt"]
        if wl == "forkexec":
            return [b + "/wl_forkexec", str(iters), "/bin/true"]
        if wl == "connect":
            return [b + "/wl_connect", str(iters), self.port]
        if wl == "stdio":
            return [b + "/wl_stdio", str(iters), "128"]
        if wl == "chmod":
            return [b + "/wl_pathcall", str(iters), "chmod", self.data + "/chmod.txt"]
        if wl == "sendto":
            return [b + "/wl_pathcall", str(iters), "sendto"]
        if wl in ("getppid", "bpf"):
            return [b + "/wl_basecall", str(iters), wl]
        raise ValueError(wl)

    def trace_path(self, tag):
        self.ntrace += 1
        return self.j("trace-%s-%d.mcpt" % (tag, self.ntrace))

    def collect_cmd(self, trace, cmd, verbose=False):
        """verbose: info lines too (the closing line's counts), else errors only."""
        return [self.collect, "-v" if verbose else "-q", "-o", trace, "-k", self.key,
                "--user", "nobody", "--linger", "0", "--"] + cmd

    def bpftrace_cmd(self, out, seed, cmd=None):
        script = self.j("trace.bt")
        with open(script, "w") as f:
            f.write(BPFTRACE_SCRIPT.replace("SEED", seed))
        c = ["bpftrace"] + (["-o", out] if out else []) + [script]
        if cmd:
            c += ["-c", " ".join(cmd)]
        return c

    def reftracer(self):
        """Whether the build has the minimal tracer (logged when not)."""
        if os.access(self.reftracer_bin, os.X_OK):
            return True
        log("%s is missing (a build without MW_TESTS?): no minimal tracer figures"
            % self.reftracer_bin)
        return False

    def reftracer_cmd(self, out, cmd=None, seed=None):
        """The minimal tracer writing to out, running cmd or seeded with the pid seed."""
        return [self.reftracer_bin, "-o", out] + (["--", *cmd] if cmd else ["--pid", str(seed)])

    def run_variant(self, wl, variant, iters):
        """Runs one workload once; returns its ns per iteration (or None) and the trace."""
        trace = None
        if wl == "mcp":
            server = [PY, self.bin + "/mcp_server.py", self.data]
            if variant == "in":
                trace = self.trace_path("mcp")
                server = self.collect_cmd(trace, server)
            elif variant == "strace":
                server = ["strace", "-f", "-qq", "-o", "/dev/null"] + NOBODY + server
            elif variant == "bpftrace":
                trace = self.j("bpftrace.out")
                server = self.bpftrace_cmd(trace, "cpid", NOBODY + server)
            elif variant == "ref":
                trace = self.j("reftracer.out")
                server = self.reftracer_cmd(trace, NOBODY + server)
            else:
                server = NOBODY + server
            cmd = [self.bin + "/wl_mcp", str(iters), "--"] + server
        else:
            w = self.wl_cmd(wl, iters)
            if variant == "in":
                trace = self.trace_path(wl)
                cmd = self.collect_cmd(trace, w)
            elif variant == "strace":
                cmd = ["strace", "-f", "-qq", "-o", "/dev/null"] + NOBODY + w
            elif variant == "bpftrace":
                trace = self.j("bpftrace.out")
                cmd = self.bpftrace_cmd(trace, "cpid", NOBODY + w)
            elif variant == "ref":
                trace = self.j("reftracer.out")
                cmd = self.reftracer_cmd(trace, NOBODY + w)
            else:
                cmd = NOBODY + w
        env = dict(os.environ, BPFTRACE_STRLEN="200")
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
        drain = threading.Thread(target=lambda: shutil.copyfileobj(p.stdout, open(os.devnull, "wb")))
        drain.start()
        err = p.stderr.read().decode(errors="replace")
        p.wait()
        drain.join()
        for line in err.splitlines():
            f = line.split()
            if line.startswith("RESULT ") and len(f) >= 5:
                return (float(f[2]), float(f[4])), trace
        log("  %s/%s failed (exit %d): %s" % (wl, variant, p.returncode, err.strip()[-400:]))
        return (None, None), trace

    # ---- idle sessions: the cost to processes outside the tracked tree --------------------

    def idle_collector(self, tag="idle"):
        trace = self.trace_path(tag)
        p = subprocess.Popen(self.collect_cmd(trace, ["/bin/sh", "-c",
                                                      "echo MWREADY >&2; exec cat >/dev/null"]),
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        wait_ready(p.stderr)
        return p, trace

    def stop(self, p):
        p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = status
        threading.Thread(target=p.stderr.read, daemon=True).start()
        return ru

    def idle_tracer(self, name):
        """A reference tracer ("bpftrace" or "reftracer") with its filter seeded with a sleeper,
        for the loops outside it. Ready once it printed MWREADY (bpftrace's BEGIN probe; the
        reftracer once attached), i.e. every probe is attached: read from a pipe, which both
        flush per line (bpftrace's -o file is written only at exit). (None, None) if it did
        not start."""
        sleeper = subprocess.Popen(NOBODY + ["/bin/sleep", "100000"])
        cmd = self.bpftrace_cmd(None, str(sleeper.pid)) if name == "bpftrace" else \
            self.reftracer_cmd(self.j("reftracer-idle.out"), seed=sleeper.pid)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready = threading.Event()

        def watch():
            for line in p.stdout:
                if line.startswith(b"MWREADY"):
                    ready.set()
            # the rest (nothing outside the filter) is drained until bpftrace ends

        threading.Thread(target=watch, daemon=True).start()
        if ready.wait(30) and p.poll() is None:
            threading.Thread(target=p.stderr.read, daemon=True).start()
            return p, sleeper
        # not tracing: its "out" column would time untraced loops under its name
        p.kill()
        p.wait()
        err = p.stderr.read().decode(errors="replace").strip()
        log("  %s (out of its filter) did not start (exit %s): %s" % (name, p.returncode,
                                                                      err[-300:]))
        sleeper.kill()
        sleeper.wait()
        return None, None

    # ---- sections ------------------------------------------------------------------------

    def overhead(self):
        wls = self.a.workloads
        variants = ["in", "out", "strace", "bpftrace", "bpfout", "ref", "refout"]
        if not shutil.which("bpftrace"):
            log("bpftrace not installed: its columns are skipped (run.sh installs it)")
            variants = [v for v in variants if not v.startswith("bpf")]
        if not self.reftracer():
            variants = [v for v in variants if not v.startswith("ref")]
        if self.a.no_reference:
            variants = ["in", "out"]
        if ("bpftrace" in variants or "ref" in variants) and tracefs_mount():
            self.cleanups.append(lambda: subprocess.run(["umount", TRACEFS]))
        raw = {wl: {v: [] for v in ["base"] + variants} for wl in wls}
        keep_traces = {}
        self.loads = []
        for rep in range(self.a.reps):
            self.loads.append("%s/%d" % (loadavg(), other_syscall_bpf()))
            log("overhead: repetition %d/%d (load %s)" % (rep + 1, self.a.reps, loadavg()))
            for wl in wls:
                n = self.scaled(wl)
                raw[wl]["base"].append(self.run_variant(wl, "base", n)[0])
                t, trace = self.run_variant(wl, "in", n)
                raw[wl]["in"].append(t)
                if trace and wl not in keep_traces:
                    keep_traces[wl] = trace
                elif trace and os.path.exists(trace):
                    os.unlink(trace)
                if "strace" in variants:
                    raw[wl]["strace"].append(self.run_variant(wl, "strace",
                                                              max(1, n // STRACE_DIV[wl]))[0])
                for v in ("bpftrace", "ref"):
                    if v in variants:
                        raw[wl][v].append(self.run_variant(wl, v, n)[0])
            p, trace = self.idle_collector()
            for wl in wls:
                raw[wl]["out"].append(self.run_variant(wl, "out", self.scaled(wl))[0])
            self.stop(p)
            os.unlink(trace)
            for v, tracer in (("bpfout", "bpftrace"), ("refout", "reftracer")):
                if v not in variants:
                    continue
                bp, sleeper = self.idle_tracer(tracer)
                for wl in wls:
                    raw[wl][v].append(self.run_variant(wl, v, self.scaled(wl))[0]
                                      if bp else (None, None))
                if bp:
                    bp.terminate()
                    bp.wait()
                    sleeper.kill()
                    sleeper.wait()
        self.traces = keep_traces
        tables = {}
        for k, what in ((0, "wall"), (1, "cpu")):
            table = {}
            for wl in wls:
                base = [x[k] for x in raw[wl]["base"]]
                row = {"base_ns": med(base)}
                for v in variants:
                    ratios = [t[k] / b for t, b in zip(raw[wl][v], base) if t[k] and b]
                    row[v] = summary(ratios)
                table[wl] = row
            tables[what] = table
        self.results["sections"]["overhead"] = {"raw_ns": raw, "ratios": tables,
                                                "reps": self.a.reps, "loads": self.loads}
        for what, title in (("wall", "loop wall time"),
                            ("cpu", "CPU time of the workload (its own and its children's)")):
            print("\n## Overhead, %s: traced / untraced, median (min..max) of %d repetitions"
                  % (title, self.a.reps))
            print("%-9s %10s | %-18s %-18s | %-18s %-18s | %-18s %-18s %-18s" % (
                "workload", "untraced", "mcpwitness in", "mcpwitness out", "minimal in",
                "minimal out", "strace -f", "bpftrace in", "bpftrace out"))
            for wl in wls:
                r = tables[what][wl]
                if what == "cpu" and wl == "mcp":
                    continue  # the server is not the client's child in every variant
                print("%-9s %8.0fns | %-18s %-18s | %-18s %-18s | %-18s %-18s %-18s" % (
                    wl, r["base_ns"] or 0, fmt(r.get("in")), fmt(r.get("out")),
                    fmt(r.get("ref")), fmt(r.get("refout")), fmt(r.get("strace")),
                    fmt(r.get("bpftrace")), fmt(r.get("bpfout"))))
        print("minimal: issue 8's minimal libbpf tracer built here (reftracer.c), the design "
              "its targets were set against")
        print("load average / other BPF tracing links at each repetition: %s"
              % " ".join(self.loads))
        print("(other collectors attach programs to the same tracepoints: a repetition that ran "
              "beside one is slowed in every column)")

    def scaled(self, wl):
        return max(1, int(ITERS[wl] * self.a.scale))

    def tracesize(self):
        traces = getattr(self, "traces", None)
        if not traces:
            log("tracesize: needs the overhead section's recordings; recording them now")
            traces = {}
            for wl in self.a.workloads:
                traces[wl] = self.run_variant(wl, "in", self.scaled(wl))[1]
        out = {}
        print("\n## Trace bytes per record (whole frames), from the in-tree recordings")
        print("(B/rec of an event class includes the value and task tables' PathDef and "
              "TaskDef records written for its events; projected: test/bench/pathproj.c's "
              "estimate of the tables, meaningful for traces written without them)")
        print("%-9s %-10s %10s %12s %8s %14s" % ("workload", "class", "records", "bytes", "B/rec",
                                                 "projected B/rec"))
        for wl, trace in traces.items():
            stats = tracestat(self.j("bin", "tracestat"), trace)
            out[wl] = stats
            for cls, (n, b, per) in sorted(stats.items()):
                if cls in ("header", "verdict", "lost") or cls.startswith("proj:"):
                    continue
                proj = stats.get("proj:" + cls)
                print("%-9s %-10s %10d %12d %8.1f %14s" % (wl, cls, n, b, per,
                                                           "%.1f" % proj[2] if proj else ""))
        self.results["sections"]["tracesize"] = out

    def progstats(self):
        """Per-program average run time, tracked (in-tree openat loop) vs untracked."""
        set_bpf_stats(1)
        try:
            rows = {}
            for wl in self.a.progstats_loops:
                rows[wl] = self.progstats_one(wl)
            ref = self.progstats_minimal() if not self.a.no_reference and self.reftracer() \
                and "openat" in rows else None
        finally:
            set_bpf_stats(0)
        self.results["sections"]["progstats"] = rows
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
                est = tracked_only(r, self.tracked_calls(wl)) if r else None
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
            self.progstats_minimal_print(ref, rows["openat"])

    def progstats_minimal(self):
        """The minimal tracer's programs on the same in-tree openat loop (stats on): name ->
        (run_time_ns, run_cnt) over the loop."""
        n = self.scaled("openat") // 2
        agent = "echo MWREADY >&2; read x; %s; echo MWDONE >&2; read x" % " ".join(
            self.wl_cmd("openat", n))
        out = self.j("ref-stats.bin")
        p = subprocess.Popen(self.reftracer_cmd(out, NOBODY + ["/bin/sh", "-c", agent]),
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        wait_ready(p.stderr)
        s1, s2 = self.stats_window(p)
        if os.path.exists(out):
            os.unlink(out)
        return {name: delta(s1, s2, name) for name in s2}

    def progstats_minimal_print(self, ref, ours):
        """The minimal tracer's openat programs beside ours per loop iteration: where the extra
        cost of the in-tree openat is spent."""
        self.results["sections"]["progstats_minimal"] = ref
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
            self.results["sections"]["progstats_minimal_per_iter"] = {
                "mcpwitness_ns": ns, "minimal_ns": per_iter}

    def floor(self):
        """Untracked cost per attach kind (tracefloor.c prints the table; this keeps its JSON)."""
        print("\n## Floor: what an untracked process pays per attach kind (tracefloor)")
        iters = str(int(100000 * self.a.scale))
        tool = os.path.join(self.build, "test", "bench", "tracefloor")
        out = subprocess.run([tool, "--json", "--reps", str(self.a.reps), "--iters", iters],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        res = json.loads(out)
        self.results["sections"]["floor"] = res
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

    def tracked_calls(self, wl):
        """Syscalls the progstats loop of wl makes (wl_run adds a tenth for warm-up)."""
        n = self.scaled(wl) // 2
        return (n + n // 10 + 1) * PROGSTATS_CALLS[wl]

    def stats_window(self, p):
        """Lets the agent p (waiting after MWREADY) run its loop; the stats of p's BPF programs
        before and after it."""
        before = prog_stats(p.pid)
        p.stdin.write(b"go\n")
        p.stdin.flush()
        wait_ready(p.stderr, "MWDONE")
        after = prog_stats(p.pid)
        self.stop(p)
        return before, after

    def progstats_one(self, wl):
        n = self.scaled(wl) // 2
        w = self.wl_cmd(wl, n)
        agent = "echo MWREADY >&2; read x; %s; echo MWDONE >&2; read x" % " ".join(w)
        trace = self.trace_path("stats")
        p = subprocess.Popen(self.collect_cmd(trace, ["/bin/sh", "-c", agent]),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        threading.Thread(target=lambda: shutil.copyfileobj(p.stdout, open(os.devnull, "wb")),
                         daemon=True).start()
        wait_ready(p.stderr)
        s0 = prog_stats(p.pid)
        # untracked: the same loop outside the tree while the collector records the agent
        subprocess.run(NOBODY + self.wl_cmd(wl, n), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        s1, s2 = self.stats_window(p)
        os.unlink(trace)
        rows = {}
        for name in s2:
            rows[name] = {"untracked": delta(s0, s1, name), "tracked": delta(s1, s2, name)}
        return rows

    def evgen_files(self):
        """The directory of evgen's files kind: f00 to f63, readable by the generator."""
        d = self.j("evgen-files")
        if not os.path.isdir(d):
            os.mkdir(d)
            os.chmod(d, 0o755)
            for i in range(64):
                with open(os.path.join(d, "f%02d" % i), "w") as f:
                    f.write("x")
                os.chmod(os.path.join(d, "f%02d" % i), 0o644)
        return d

    def throughput(self):
        rates = self.a.rates
        rows = []
        print("\n## Collector throughput: %d s at each offered rate, default buffers" %
              self.a.seconds)
        print("(minimal: issue 8's minimal libbpf tracer, reftracer.c, which records the failing "
              "opens of kind open and writes raw records)")
        print("%-10s %5s %10s %10s %8s %10s %8s %10s %10s %8s %9s %6s" % (
            "tracer", "kind", "offered/s", "achieved/s", "threads", "recorded", "lost",
            "spilled", "CPU s/M ev", "CPU %", "peak RSS", "B/ev"))
        print("(B/ev: the whole output file, headers, seals and tables included, per event "
              "recorded; spilled: records that found the 1 MiB hot ring full and went to the "
              "spill ring, from the collector's closing line)")
        minimal = not self.a.no_reference and self.reftracer()
        runs = [(t, k, r) for k in self.a.evgen for r in rates
                for t in ("mcpwitness", "minimal")
                if t == "mcpwitness" or (k == "open" and minimal)]
        for tracer, kind, rate in runs:
            threads = 1 if rate <= 300000 else 2
            trace = self.trace_path("rate")
            evgen = [self.bin + "/evgen", str(rate), str(self.a.seconds), str(threads), kind]
            if kind == "files":
                evgen.append(self.evgen_files())
            cmd = self.collect_cmd(trace, evgen, verbose=True) if tracer == "mcpwitness" else \
                self.reftracer_cmd(trace, evgen)
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
                st = tracestat(self.j("bin", "tracestat"), trace)
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
        self.results["sections"]["throughput"] = rows

    def analyzer_bench(self):
        policy = os.path.join(SRC, "policies", "default.yaml")
        rows = []
        print("\n## Analyzer on synthetic traces written by the real trace writer (gentrace)")
        print("analyzer: %s" % self.analyzer)
        print("%10s %8s %-10s %8s %12s %12s %9s %9s" % ("events", "MiB", "command", "wall s",
                                                      "events/s", "ev/CPU s", "peak RSS",
                                                      "faults"))
        for n in self.a.analyzer_events:
            trace = self.j("synth-%d.mcpt" % n)
            subprocess.run([self.bin + "/gentrace", trace, self.key, str(n)], check=True,
                           stdout=subprocess.DEVNULL)
            size = os.path.getsize(trace) / 2**20
            analyze = [self.analyzer, "analyze", trace, "--pubkey", self.pub, "-p", policy]
            cmds = {
                "verify": [self.analyzer, "verify", trace, "--pubkey", self.pub],
                "dump": [self.analyzer, "dump", trace],
                "dump-json": [self.analyzer, "dump", trace, "--json"],
                "analyze": analyze,
                "analyze-4k": analyze,
                # the machine-readable reports name every call: their memory and time on top
                "an-json": analyze + ["--format", "json"],
                "an-sarif": analyze + ["--format", "sarif"],
                "calls-json": [self.analyzer, "calls", trace, "--pubkey", self.pub, "--json"],
            }
            assert tuple(cmds) == ANALYZER_ROWS
            for name, cmd in cmds.items():
                if self.a.analyzer_commands and name not in self.a.analyzer_commands:
                    continue
                best = None
                for _ in range(self.a.analyzer_reps):
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
        self.results["sections"]["analyzer"] = rows

    def analyzer_icount(self):
        """Instructions per event of verify and analyze (callgrind), which the machine's load
        does not change: the figure to compare two builds on a busy machine."""
        policy = os.path.join(SRC, "policies", "default.yaml")
        n = self.a.icount_events
        print("\n## Analyzer instructions per event (callgrind, %d-event gentrace trace)" % n)
        if not shutil.which("valgrind"):
            print("skipped: valgrind is not installed (run.sh installs it)")
            return
        trace = self.j("icount-%d.mcpt" % n)
        subprocess.run([self.bin + "/gentrace", trace, self.key, str(n)], check=True,
                       stdout=subprocess.DEVNULL)
        cmds = {
            "verify": [self.analyzer, "verify", trace, "--pubkey", self.pub],
            "analyze": [self.analyzer, "analyze", trace, "--pubkey", self.pub, "-p", policy],
        }
        rows = []
        for name, cmd in cmds.items():
            out = self.j("callgrind.out")
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
        self.results["sections"]["icount"] = rows

    def startup(self):
        times = []
        for _ in range(self.a.startup_reps):
            t0 = time.monotonic()
            p, trace = self.idle_collector("start")
            times.append(time.monotonic() - t0)
            self.stop(p)
            os.unlink(trace)
        s = summary(times)
        self.results["sections"]["startup"] = s
        print("\n## Collector startup: exec to the server's first instruction")
        print("median %.2f s (min %.2f, max %.2f) over %d runs" % (s["median"], s["min"],
                                                                  s["max"], len(times)))
        self.verifier_time()

    def verifier_time(self):
        """The verifier's time per program of the collector's object (verifstat.c): most of
        the start, spread over the loading threads."""
        tool = os.path.join(self.build, "test", "bench", "verifstat")
        obj = os.path.join(self.build, "bpf", "mcpwitness.bpf.o")
        r = subprocess.run([tool, obj], capture_output=True, text=True)
        rows = [line.split() for line in r.stdout.splitlines()]
        total = [f for f in rows if f and f[0] == "TOTAL"]
        if r.returncode or not total:
            log("verifstat failed: %s" % r.stderr.strip()[-300:])
            return
        progs = [(int(f[0]), int(f[2]), f[4]) for f in rows if len(f) == 5 and f[1] == "us"]
        n, usec, insns = int(total[0][1]), int(total[0][3]), int(total[0][5])
        self.results["sections"]["startup"]["verifier"] = {
            "programs": n, "usec": usec, "insns": insns,
            "top": [{"name": p[2], "usec": p[0], "insns": p[1]} for p in progs[:10]]}
        print("verifier (verifstat, one load of the whole object, one thread): %d programs, "
              "%.0f ms, %d instructions processed; the longest:" % (n, usec / 1000, insns))
        for us, ins, name in progs[:5]:
            print("  %8.1f ms %8d insns  %s" % (us / 1000, ins, name))


# ---- helpers -------------------------------------------------------------------------------

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


def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def fmt(s):
    if not s:
        return "-"
    return "%.2fx (%.2f-%.2f)" % (s["median"], s["min"], s["max"])


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--only", default="startup,overhead,floor,tracesize,progstats,throughput,"
                    "slowdisk,analyzer,icount",
                    help="sections to run, comma-separated, in this order (default: all: "
                         "%(default)s; each is described at the top of bench.py)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply iteration counts")
    ap.add_argument("--workloads", default="openat,forkexec,connect,stdio,mcp")
    ap.add_argument("--progstats-loops", default=",".join(PROGSTATS_CALLS),
                    help="progstats: the loops to run (default: all, %(default)s; getppid and "
                    "bpf are the baselines its summary lines compare with)")
    ap.add_argument("--rates", default="100000,200000,400000,600000,800000,1000000")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--evgen", default="open,bpf,files,uring",
                    help="throughput: event kinds to generate (open: failing openat records "
                         "with a path; bpf: refused bpf(-1, NULL, 0) records, integers only; "
                         "files: opens of 64 files in turn, path and opened file, a value "
                         "definition each; uring: no-op io_uring requests, a record each, 31 "
                         "to a syscall)")
    ap.add_argument("--analyzer", help="the analyzer the analyzer and icount sections time "
                    "(default: BUILD/analyzer/mcpwitness; e.g. the packaged build's, "
                    "build-deb/analyzer/mcpwitness)")
    ap.add_argument("--analyzer-events", default="1000000,5000000")
    ap.add_argument("--analyzer-commands", default="",
                    help="analyzer: only these rows, comma-separated (%s; default: all)"
                         % ", ".join(ANALYZER_ROWS))
    ap.add_argument("--analyzer-reps", type=int, default=1)
    ap.add_argument("--icount-events", type=int, default=200000,
                    help="icount: events of the trace callgrind runs verify and analyze on")
    ap.add_argument("--startup-reps", type=int, default=3)
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-reference", action="store_true",
                    help="mcpwitness only: no minimal tracer, strace or bpftrace columns in "
                         "overhead, no minimal tracer in throughput")
    a = ap.parse_args()
    sections = ("startup", "overhead", "floor", "tracesize", "progstats", "throughput",
                "slowdisk", "analyzer", "icount")
    if any(x not in sections for x in a.only.split(",")):
        ap.error("--only: sections are %s" % ", ".join(sections))
    a.workloads = a.workloads.split(",")
    a.progstats_loops = a.progstats_loops.split(",")
    if any(w not in PROGSTATS_CALLS for w in a.progstats_loops):
        ap.error("--progstats-loops: loops are %s" % ", ".join(PROGSTATS_CALLS))
    a.rates = [int(x) for x in a.rates.split(",")]
    a.evgen = [k for k in a.evgen.split(",") if k]
    if any(k not in EVGEN_CLASS for k in a.evgen):
        ap.error("--evgen: kinds are %s" % ", ".join(sorted(EVGEN_CLASS)))
    a.analyzer_events = [int(x) for x in a.analyzer_events.split(",")]
    a.analyzer_commands = [c for c in a.analyzer_commands.split(",") if c]
    if any(c not in ANALYZER_ROWS for c in a.analyzer_commands):
        ap.error("--analyzer-commands: rows are %s" % ", ".join(ANALYZER_ROWS))
    if os.geteuid() != 0:
        raise SystemExit("the benchmarks load BPF programs: run as root")
    b = Bench(a)
    m = b.results["machine"]
    print("# mcpwitness benchmarks: %s, %d CPUs (%s), load average %s at start" % (
        m["kernel"], m["cpus"], m["cpu"], m["load_start"]))
    links = other_syscall_bpf()
    if links:
        print("# note: %d BPF tracing link(s) of other programs were attached at start "
              "(another collector?): every figure pays for them" % links)
    try:
        for sec in a.only.split(","):
            {"overhead": b.overhead, "floor": b.floor, "tracesize": b.tracesize,
             "progstats": b.progstats,
             "throughput": b.throughput, "analyzer": b.analyzer_bench,
             "icount": b.analyzer_icount, "startup": b.startup,
             "slowdisk": lambda: slowdisk.section(b, tracestat)}[sec]()
            sys.stdout.flush()
    finally:
        b.results["machine"]["load_end"] = loadavg()
        print("\n# load average at end: %s" % b.results["machine"]["load_end"])
        if a.json:
            with open(a.json, "w") as f:
                json.dump(b.results, f, indent=1)
        b.close()


if __name__ == "__main__":
    main()
