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
              over the repetitions; then each ratio issue 8 sets a target for, with the 95%
              confidence interval of its median (order statistics, from 6 repetitions) and
              whether all of it is under the target, over it, or holds it, and mcpwitness's
              time over the minimal tracer's in the same repetition (the gap to it). Outside
              the tree, the floor beside them: the loops under empty tp_btf sys_enter and
              sys_exit programs (tracefloor --hold btf-empty), and mcpwitness's time over
              theirs in the same repetition (what our programs add to an untracked process).
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

Each section is a module of its own (bench_overhead.py: overhead, floor, tracesize;
bench_progstats.py; bench_throughput.py; bench_analyzer.py: analyzer, icount;
bench_startup.py; slowdisk.py); benchlib.py holds what they share, this file the work
directory, the workloads' commands and the command line.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import bench_analyzer
import bench_overhead
import bench_progstats
import bench_startup
import bench_throughput
import slowdisk
from benchlib import (ANALYZER_ROWS, EVGEN_CLASS, NOBODY, PROGSTATS_CALLS, ITERS, PY,
                      SRC, loadavg, log, machine_info, other_syscall_bpf, wait_ready)

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


class Bench:
    def __init__(self, args):
        self.a = args
        self.build = os.path.abspath(args.build)
        self.collect = os.path.join(self.build, "collector", "mcpwitness-collect")
        self.reftracer_bin = os.path.join(self.build, "test", "bench", "reftracer")
        self.tracefloor_bin = os.path.join(self.build, "test", "bench", "tracefloor")
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
        drain = threading.Thread(target=lambda: shutil.copyfileobj(p.stdout,
                                                                   open(os.devnull, "wb")))
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
        or "tracefloor" holding empty tp_btf programs (the floor), for the loops outside it.
        Ready once it printed MWREADY (bpftrace's BEGIN probe; the others once attached), i.e.
        every probe is attached: read from a pipe, which all flush per line (bpftrace's -o
        file is written only at exit). (None, None) if it did not start."""
        sleeper = subprocess.Popen(NOBODY + ["/bin/sleep", "100000"])
        if name == "bpftrace":
            cmd = self.bpftrace_cmd(None, str(sleeper.pid))
        elif name == "reftracer":
            cmd = self.reftracer_cmd(self.j("reftracer-idle.out"), seed=sleeper.pid)
        else:  # the floor: empty tp_btf programs, no filter to seed
            cmd = [self.tracefloor_bin, "--hold", "btf-empty"]
        # tracefloor holds its programs until its stdin ends: a pipe kept open until it stops
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE if name == "tracefloor" else None,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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

    def scaled(self, wl):
        return max(1, int(ITERS[wl] * self.a.scale))


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
            {"overhead": bench_overhead.overhead, "floor": bench_overhead.floor,
             "tracesize": bench_overhead.tracesize, "progstats": bench_progstats.progstats,
             "throughput": bench_throughput.throughput, "analyzer": bench_analyzer.analyzer_bench,
             "icount": bench_analyzer.analyzer_icount, "startup": bench_startup.startup,
             "slowdisk": slowdisk.section}[sec](b)
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
