"""test_events_modes.py - the collector's modes and failure paths (issue 3):
- attach (--pid) to a running process with a child: both seeded (ProcInfo), events of the
  existing child and of a new one recorded; the accept and the connect blocked for a while are
  written as entry records (by the collector, from their stash) and, still blocked when SIGTERM
  stops the recording, as UNFINISHED records;
- a burst while the collector is stopped, past the hot ring into the spill ring: nothing lost,
  each thread's records in the order it made them;
- a flood that overflows a 1 MiB ring on purpose: Loss records whose counts and sequence ranges
  account for every missing record, verify's W_LOSS, and what analyze says of coverage;
- a kernel lacking a hook (MCPWITNESS_HIDE_HOOKS): that program disabled with a note in the
  header and on stderr, the rest recording;
- missing privileges: one line naming the missing capability, exit 2, no trace;
- the handlers verified in parallel (one copy of the object per CPU) fill the dispatch arrays
  exactly as a load on one CPU does.
Beside every recording an unrelated busy process runs; no event of it may appear."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwevents  # noqa: E402
import mwtest  # noqa: E402
from mwevents import F_ENTRY, F_UNFINISHED  # noqa: E402

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
SYS_CONNECT, SYS_ACCEPT, SYS_OPENAT = 42, 43, 257


def copy_trigger(work):
    d = work.mkdir("run", mode=0o777)
    path = os.path.join(d, "mw_trigger")
    with open(mwevents.TRIGGER, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    os.chmod(path, 0o755)
    return d, path


def in_syscall(pid, tid, nr):
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            return f.read().split()[0] == str(nr)
    except (OSError, IndexError):
        return False


class Attach(mwtest.E2ETestCase):
    """--pid on a running process that already has a child."""

    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.dir, self.trigger = copy_trigger(self.work)
        self.trace = self.work.join("attach.mcpt")

    def start(self, cmd, **kw):
        p = subprocess.Popen(cmd, text=True, **kw)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def read_lines(self, stream, names):
        """Reads JSON lines until every step in names has printed; returns them by step."""
        got = {}
        while not set(names) <= set(got):
            line = stream.readline()
            self.assertTrue(line, "the target ended early; have %r" % got)
            d = json.loads(line)
            got[d["step"]] = d
        return got

    def test_attach_seeds_records_and_leaves_pending_calls_unfinished(self):
        target = self.start(NOBODY + [self.trigger, "hold"], cwd=self.dir,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        first = self.read_lines(target.stdout, ["hold", "hold.existing"])
        hold, existing = first["hold"]["pid"], first["hold.existing"]["pid"]
        self.addCleanup(lambda: self.kill_quietly(existing))
        busy = mwevents.Busy(self.trigger)
        self.addCleanup(busy.stop)
        coll = self.start([mwtest.COLLECT, "-o", self.trace, "-k", self.keys.secret,
                           "--pid", str(hold), "-v"], stderr=subprocess.PIPE)
        mwtest.wait_attached(coll)  # recording from here on
        target.stdin.write("go\n")
        target.stdin.flush()
        got = self.read_lines(target.stdout, ["hold.existing.go", "hold.accept", "hold.fifo",
                                              "hold.connect", "hold.new", "hold.go"])
        accept_tid = got["hold.accept"]["tid"]
        self.wait_blocked(existing, got)
        coll.send_signal(signal.SIGTERM)
        self.assertEqual(coll.wait(timeout=60), 0, coll.stderr.read())
        coll.stderr.close()
        # attached, not launched: the collector leaves the processes running
        os.kill(hold, 0)
        os.kill(existing, 0)

        r = mwtest.verify(self.trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("end reason SIGNAL", r.stdout)
        records = mwtest.dump_json(self.trace, self.keys)
        procs = {(p["kind"], p["pid"]): p for p in records if p["type"] == "proc"}
        self.assertIn(("TARGET", hold), procs)
        self.assertEqual(procs[("SEEDED", existing)]["ppid"], hold)
        nobody_uid = mwtest.nobody_ids()[0]  # both run as nobody: read from /proc at attach
        self.assertEqual(procs[("TARGET", hold)]["uid"], nobody_uid)
        self.assertEqual(procs[("SEEDED", existing)]["uid"], nobody_uid)
        self.assertTrue(records[0]["target"]["attached"])
        tree = mwevents.tree_pids(records, [hold, existing])
        evs = mwevents.events(records)
        self.assertEqual([e for e in evs if e["pid"] not in tree], [])
        self.assertNotIn(busy.pid, tree)

        def of(pid, op, tid=None):
            return [e for e in evs if e["pid"] == pid and e["op"] == op and
                    (tid is None or e["tid"] == tid)]

        ex = got["hold.existing.go"]
        opens = [e for e in of(existing, "openat") if e.get("path") == "attach.existing.f"]
        self.assertEqual([(e["ret"], e["abs_path"]) for e in opens],
                         [(ex["ret"], os.path.join(self.dir, "attach.existing.f"))])
        new = got["hold.new"]["pid"]
        self.assertEqual([f["child"]["pid"] for f in of(hold, "fork")], [new])
        self.assertEqual([e["ret"] for e in of(new, "openat") if e.get("path") == "attach.new.f"],
                         [got["hold.new"]["ret"]])
        self.assertEqual(sorted(f["child"]["tid"] for f in of(existing, "fork")),
                         sorted([accept_tid, got["hold.fifo"]["tid"]]))

        self.assertPending(evs, first["hold.existing"], existing, got)
        # no MCP handshake on this channel: the reports say it may have come before the attach
        c = mwtest.run([mwtest.ANALYZER, "calls", self.trace, "--pubkey", self.keys.public])
        self.assertEqual(c.returncode, 0, c.stderr)
        heads = [ln for ln in c.stdout.splitlines() if ln.split(":")[0] in ("client", "protocol")]
        self.assertEqual(heads, ["client: unknown (no clientInfo on the channel since the attach)",
                                 "protocol: unknown (no handshake since the attach)"])
        # and no startup: the server started before the trace; what it did is between calls
        self.assertIn("== startup (none: the server was attached to, its start not recorded) ==\n"
                      "  (no events)\n", c.stdout)
        cj = json.loads(mwtest.run([mwtest.ANALYZER, "calls", self.trace, "--pubkey",
                                    self.keys.public, "--json"]).stdout)
        self.assertEqual([g for g in ("files", "network", "processes") if cj["startup"][g]], [])
        self.assertIn("attach.existing.f", json.dumps(cj["ambient"]["files"]))

    def wait_blocked(self, existing, got):
        deadline = time.monotonic() + 60  # a guard against hanging, not a timed assertion
        while not (in_syscall(existing, got["hold.accept"]["tid"], SYS_ACCEPT) and
                   in_syscall(existing, got["hold.fifo"]["tid"], SYS_OPENAT) and
                   in_syscall(existing, existing, SYS_CONNECT)):
            self.assertLess(time.monotonic(), deadline, "the calls never blocked")
            time.sleep(0.01)
        # the collector writes a connect or accept blocked for 50 ms as an entry-time record
        # at its next loop turn (at most 50 ms later): a second leaves room on a loaded machine
        time.sleep(1)

    def assertPending(self, evs, info, existing, got):
        """The accept and the connect still blocked when recording stopped: an entry record and
        an UNFINISHED record each, and no exit record; the FIFO open an UNFINISHED record."""
        def of(pid, op, tid):
            return [e for e in evs if e["pid"] == pid and e["op"] == op and e["tid"] == tid]

        accept_tid = got["hold.accept"]["tid"]
        fifo = [e for e in of(existing, "openat", got["hold.fifo"]["tid"])]
        self.assertEqual([(e["flags"], e["result"], e.get("args")) for e in fifo],
                         [(F_UNFINISHED, "pending", [-100, 0o2000000])])  # AT_FDCWD, O_CLOEXEC

        # both written from the stash: the socket's kind (stream, inet), the caller's uid,
        # the entry time
        uids = {e["uid"] for e in evs if e["pid"] == existing and
                not e["flags"] & (F_ENTRY | F_UNFINISHED)}
        self.assertEqual(len(uids), 1, uids)
        accept = of(existing, "accept", accept_tid)
        self.assertEqual([(e["flags"], e["result"]) for e in accept],
                         [(F_ENTRY, "pending"), (F_UNFINISHED, "pending")])
        for e in accept:
            self.assertEqual(e["args"], [info["accept_fd"], 0, 1, 2])
            self.assertEqual((e["uid"], e["ts"]), (min(uids), accept[0]["ts"]))
        full = "127.0.0.1:%d" % info["full_port"]
        # (in launch mode the connect that filled the backlog was recorded too: not this one)
        connect = [e for e in of(existing, "connect", existing)
                   if e["args"][0] == info["connect_fd"]]
        self.assertEqual([(e["flags"], e["result"]) for e in connect],
                         [(F_ENTRY, "pending"), (F_UNFINISHED, "pending")])
        for e in connect:
            self.assertEqual(e["addr"], full)  # the stash's head of the address
            self.assertEqual(e["args"], [info["connect_fd"], 16, 1, 2])
            self.assertEqual((e["uid"], e["ts"]), (min(uids), connect[0]["ts"]))

    def test_launch_mode_pending_calls_of_a_descendant(self):
        # TERM reaches the server (hold), which dies of it; its child, blocked in accept and
        # connect and not signalled, outlives --linger and is kept (--after-linger keep): both
        # calls are written unfinished and the child is listed alive at the end
        busy = mwevents.Busy(self.trigger)
        self.addCleanup(busy.stop)
        coll = self.start(mwtest.collect_cmd(self.trace, self.keys, [self.trigger, "hold"],
                                             extra=["--linger", "1", "--after-linger", "keep"]),
                          cwd=self.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
        first = self.read_lines(coll.stdout, ["hold", "hold.existing"])
        existing = first["hold.existing"]["pid"]
        self.addCleanup(lambda: self.kill_quietly(existing))
        coll.stdin.write("go\n")
        coll.stdin.flush()
        got = self.read_lines(coll.stdout, ["hold.existing.go", "hold.accept", "hold.fifo",
                                            "hold.connect", "hold.go"])
        self.wait_blocked(existing, got)
        coll.send_signal(signal.SIGTERM)
        self.assertEqual(coll.wait(timeout=60), 128 + signal.SIGTERM)
        os.kill(existing, 0)  # still blocked, still ours to end
        records = mwtest.dump_json(self.trace, self.keys)
        evs = mwevents.events(records)
        self.assertPending(evs, first["hold.existing"], existing, got)
        tree = mwevents.tree_pids(records, [records[0]["target"]["pid"]])
        self.assertEqual([e for e in evs if e["pid"] not in tree], [])
        self.assertNotIn(busy.pid, tree)
        alive = [p for p in records if p["type"] == "proc" and p["kind"] == "ALIVE_AT_END"]
        self.assertEqual([p["pid"] for p in alive], [existing])
        self.assertIsNone(alive[0]["uid"])  # not known at the end: null, never a false 0

    @staticmethod
    def kill_quietly(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Flood(mwevents.EventsTestCase):
    """4 processes x 4 threads x 5000 failing openat of a 2 KiB path, into a 1 MiB ring."""
    STEPS = ("flood", "4", "4", "5000")
    EXTRA = ("--ringbuf-size", "1")

    def test_recording_is_complete_and_contained(self):
        rec = self.rec
        self.assertEqual(rec.result.returncode, 0, rec.result.stderr)
        outside = [e for e in rec.events if e["pid"] not in rec.tree]
        self.assertEqual(outside, [])
        self.assertNotIn(rec.busy.pid, rec.tree)

    def test_losses_are_counted_with_their_sequence_ranges(self):
        rec = self.rec
        losses = [r for r in rec.records if r["type"] == "loss"]
        self.assertTrue(losses, "the ring never overflowed")
        cumulative = {}
        for loss in losses:
            self.assertGreater(loss["delta"], 0)
            self.assertLessEqual(loss["first_seq"], loss["last_seq"])
            cumulative[loss["src"]] = cumulative.get(loss["src"], 0) + loss["delta"]
            self.assertEqual(loss["cumulative"], cumulative[loss["src"]])
        self.assertIn("RINGBUF_RESERVE_FAIL", cumulative)
        self.assertIn("lost (RINGBUF_RESERVE_FAIL)", rec.result.stderr)
        # every record is numbered before it is reserved: the numbers missing from the trace
        # are exactly the lost ones, and each lies in the range of a Loss record
        numbered = {r["seq"] for r in rec.records if r["type"] in ("event", "stdio")}
        missing = set(range(max(numbered) + 1)) - numbered
        lost = cumulative.get("RINGBUF_RESERVE_FAIL", 0) + cumulative.get("RECORD_TOO_LARGE", 0)
        self.assertLessEqual(len(missing), lost)
        self.assertGreater(len(missing), 0)
        for seq in missing:
            self.assertTrue(any(l["first_seq"] <= seq <= l["last_seq"] for l in losses),
                            "lost record %d outside every Loss range %r" % (seq, losses))
        calls = rec.step("flood")["calls"]
        opens = [e for e in rec.events if e["op"] == "openat" and e.get("path", "")[:1] == "F"]
        self.assertLess(len(opens), calls)
        self.assertGreaterEqual(len(opens) + lost, calls)

    def test_verify_warns_of_losses(self):
        r = mwtest.verify(self.rec.trace, self.keys)
        lost = sum(l["delta"] for l in self.rec.records if l["type"] == "loss")
        self.assertIn("W_LOSS: %d lost" % lost, r.stdout)

    def test_analyze_counts_the_loss_records(self):
        report = mwtest.analyze_json(self.rec.trace, self.keys)
        self.assertGreater(report["trace"]["loss_records"], 0)

    def test_analyze_reports_incomplete_coverage(self):
        # "the analyzer reports the calls whose coverage is incomplete" and "a trace with
        # losses never reads as clean": a coverage statement in every format, and a finding of
        # the default policy for each Loss record
        report = mwtest.analyze_json(self.rec.trace, self.keys)
        cov = report["coverage"]
        self.assertFalse(cov["complete"], cov)
        self.assertEqual(cov["loss_records"], report["trace"]["loss_records"])
        lost = sum(l["delta"] for l in self.rec.records if l["type"] == "loss")
        self.assertEqual(cov["events_lost"], lost)
        found = [f for f in report["findings"] if f["rule"] == "coverage.events-lost"]
        self.assertEqual(len(found), report["trace"]["loss_records"])
        self.assertIn("events lost", found[0]["message"])
        self.assertEqual(found[0]["severity"], "high")
        r = mwtest.run([mwtest.ANALYZER, "analyze", self.rec.trace, "--pubkey", self.keys.public,
                        "-p", mwtest.DEFAULT_POLICY])
        self.assertIn("coverage: INCOMPLETE: %d events lost" % lost, r.stdout)


class MissingHook(mwevents.EventsTestCase):
    """The io_uring submission hook treated as missing: its program is disabled before load,
    said in the header and on stderr, and everything else is recorded."""
    STEPS = ("uring", "open")

    @classmethod
    def setUpClass(cls):
        cls.cwork = mwtest.Workdir()
        cls.keys = mwtest.Keys(cls.cwork)
        env = dict(os.environ, MCPWITNESS_HIDE_HOOKS="io_uring_submit_req")
        cls.rec = mwevents.Recording(cls.cwork, cls.keys, cls.STEPS, env=env)

    def test_program_disabled_with_a_note(self):
        note = ("program handle_io_uring_submit_req disabled: this kernel has no hook "
                "tp_btf/io_uring_submit_req (hidden by MCPWITNESS_HIDE_HOOKS)")
        self.assertEqual(self.rec.header["collector_notes"], [note])
        self.assertIn("warning: " + note, self.rec.result.stderr)

    def test_the_rest_records(self):
        s = self.rec.step("uring")
        self.assertEqual([e["op"] for e in self.rec.of(s["pid"]) if e["op"].startswith("io_")],
                         ["io_uring_setup", "io_uring_enter", "io_uring_register"])
        s = self.rec.step("open")
        self.assertEqual(self.rec.one(s["pid"], "open")["ret"], s["ret"])


class SpillRing(mwtest.E2ETestCase):
    """A burst while the collector is stopped: more than the 1 MiB hot ring holds goes on into
    the spill ring, nothing is lost, and each thread's records come out in the order it made
    them (their sequence numbers rise in trace order), though they went to both rings."""

    PER_THREAD = 8000
    SERVER = ("import os, sys, threading\n"
              "def burst(tag):\n"
              "    for i in range(%d):\n"
              "        try: os.open('/nonexistent-mw-spill/%%s/%%06d' %% (tag, i), os.O_RDONLY)\n"
              "        except OSError: pass\n"
              "print('ready', flush=True)\n"
              "sys.stdin.readline()\n"
              "ts = [threading.Thread(target=burst, args=(t,)) for t in 'ab']\n"
              "for t in ts: t.start()\n"
              "for t in ts: t.join()\n"
              "print('done', flush=True)\n"
              "sys.stdin.readline()\n") % PER_THREAD

    def test_a_burst_past_the_hot_ring_is_whole_and_in_order(self):
        keys = mwtest.Keys(self.work)
        trace = self.work.join("t.mcpt")
        p = self.popen(mwtest.collect_cmd(trace, keys, ["python3", "-c", self.SERVER],
                                          extra=["--linger", "0", "-v"]),
                       stdin=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), "ready\n")
        os.kill(p.pid, signal.SIGSTOP)
        try:
            p.stdin.write("go\n")
            p.stdin.flush()
            self.assertEqual(p.stdout.readline(), "done\n")
        finally:
            os.kill(p.pid, signal.SIGCONT)
        p.stdin.close()
        err = p.stderr.read()
        self.assertEqual(p.wait(timeout=60), 0, err)
        recs = mwtest.dump_json(trace, keys)
        self.assertEqual([r for r in recs if r["type"] == "loss"], [])
        # the closing line counts what went through the spill ring
        m = re.search(r"(\d+) events recorded; (\d+) ring records came through the spill ring",
                      err)
        self.assertIsNotNone(m, err)
        self.assertGreater(int(m.group(2)), 0, err)
        self.assertLess(int(m.group(2)), int(m.group(1)), err)
        burst = {"a": [], "b": []}
        for r in recs:
            path = r.get("path", "") if r["type"] == "event" else ""
            if path.startswith("/nonexistent-mw-spill/"):
                burst[path.split("/")[2]].append(r)
        for tag, opens in burst.items():
            self.assertEqual(len(opens), self.PER_THREAD, tag)
            self.assertEqual([r["path"] for r in opens],
                             ["/nonexistent-mw-spill/%s/%06d" % (tag, i)
                              for i in range(self.PER_THREAD)], tag)
        # the headers alone are more than the hot ring holds: the rest went to the spill ring
        self.assertGreater(2 * self.PER_THREAD * 120, 1 << 20)
        last = {}
        for r in recs:
            if "seq" in r and "tid" in r:
                self.assertGreater(r["seq"], last.get(r["tid"], -1), r)
                last[r["tid"]] = r["seq"]


class MissingPrivileges(mwtest.E2ETestCase):
    """Without CAP_BPF the collector says which capability is missing, in one line, exit 2."""

    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("t.mcpt")

    def collect(self, prefix):
        return mwtest.run(prefix + [mwtest.COLLECT, "-o", self.trace, "-k", self.keys.secret,
                                    "--user", "nobody", "--", "/bin/true"])

    def test_root_without_cap_bpf(self):
        r = self.collect(["setpriv", "--inh-caps=-bpf", "--bounding-set=-bpf"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["mcpwitness-collect: missing privileges: CAP_BPF "
                          "(run as root, e.g. with sudo)"])
        self.assertFalse(os.path.exists(self.trace))

    def test_unprivileged_user(self):
        os.chmod(self.work.path, 0o777)
        r = self.collect(NOBODY + ["--inh-caps=-all", "--bounding-set=-all"])
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("missing privileges: CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN", lines[0])
        self.assertFalse(os.path.exists(self.trace))


def prog_arrays(pid):
    """The dispatch arrays of the running collector pid, from the map fds it holds:
    array name -> {syscall number: program id}."""
    arrays = {}
    for info in mwtest.fdinfos(pid):
        if info.get("map_type") != "3":  # BPF_MAP_TYPE_PROG_ARRAY
            continue
        map_id = info["map_id"]
        name = json.loads(mwtest.run(["bpftool", "map", "show", "id", map_id, "--json"]).stdout)
        dump = json.loads(mwtest.run(["bpftool", "map", "dump", "id", map_id, "--json"]).stdout)
        arrays[name["name"]] = {e["formatted"]["key"]: e["formatted"]["value"] for e in dump}
    return arrays


class ParallelLoad(mwtest.E2ETestCase):
    """The collector verifies its syscall handlers in copies of the object, one per CPU it may
    run on; pinned to one CPU it loads them all in the one object. Both must fill the
    dispatchers' program arrays with the same syscalls, each with a program of its own."""

    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)

    def arrays_of_a_collector(self, cpus):
        trace = self.work.join("t%d.mcpt" % len(cpus))
        p = subprocess.Popen([mwtest.COLLECT, "-o", trace, "-k", self.keys.secret, "--user", "nobody",
                              "--", "sleep", "60"], stdin=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        try:
            children = "/proc/%d/task/%d/children" % (p.pid, p.pid)
            for _ in range(300):  # the server starts once the arrays are filled and attached
                with open(children) as f:
                    if f.read().strip():
                        break
                self.assertIsNone(p.poll(), "collector exited early")
                time.sleep(0.05)
            arrays = prog_arrays(p.pid)
        finally:
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertEqual(err, "")
        return arrays

    def test_a_parallel_load_places_what_a_single_load_does(self):
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("one CPU: the collector loads in one object only")
        single = self.arrays_of_a_collector({cpus[0]})
        parallel = self.arrays_of_a_collector(set(cpus))
        names = ["shared_progs", "sys_enter_progs", "sys_exit_progs"]
        self.assertEqual(sorted(single), names)
        self.assertEqual(sorted(parallel), names)
        self.assertGreater(len(single["sys_exit_progs"]), 90)
        self.assertGreater(len(single["sys_enter_progs"]), 30)
        # the exits shared by several calls: the one-path calls' and the two-path calls'
        self.assertEqual(len(single["shared_progs"]), 2)
        for name in single:
            self.assertEqual(sorted(parallel[name]), sorted(single[name]), name)
        ids = [i for name in names for i in parallel[name].values()]
        self.assertEqual(len(set(ids)), len(ids), "a program placed twice")


if __name__ == "__main__":
    mwevents.main()
