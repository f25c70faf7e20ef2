"""test_calls.py - calls reconstructed from the real MCP channel and every event attributed to
the call that caused it (issue 4), on the real kernel with the real collector.

sequential: one tool per behaviour (shell out, read a fake ~/.ssh key, write outside the
  workspace and /tmp, connect to a 127.0.0.1 listener, a daemon acting after the response, a
  thread doing the work, benign echo): each finding names the right call and the right rule
  (lineage, window), the benign calls have none, and `calls` shows each call's processes.
pipelined: two requests in one write, answered out of order by a concurrent server: the
  reads are attributed by evidence, the shell a call ran by its argv (evidence), the read both
  calls make of /etc/hostname is ambiguous naming both - never the wrong call.
determinism: `calls` and `analyze` give the same bytes run after run.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import mwtest  # noqa: E402
from mcp_driver import Session  # noqa: E402

SERVER = os.path.join(mwtest.SOURCE_DIR, "test", "fixtures", "mcp_test_server.py")
FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE KEY FOR A TEST\n-----END OPENSSH PRIVATE KEY-----\n"


def calls_json(trace, keys):
    r = mwtest.run([mwtest.ANALYZER, "calls", trace, "--pubkey", keys.public, "--json"])
    if r.returncode != 0:
        raise AssertionError("calls failed (%d): %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)


def effects(call, group):
    return call["effects"][group]


def find_effect(call, group, needle):
    return [e for e in effects(call, group) if needle in e["effect"]]


class Calls(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.nobody = mwtest.nobody_ids()
        self.home = self.work.mkdir("home", owner=self.nobody)
        self.work.mkdir("home", ".ssh", owner=self.nobody, mode=0o700)
        self.secret = self.work.write("home/.ssh/id_rsa", FAKE_KEY, owner=self.nobody, mode=0o600)
        self.ws = self.work.mkdir("ws", owner=self.nobody)
        self.outside = tempfile.mkdtemp(prefix="mwtest-calls.", dir="/var/lib")
        os.chown(self.outside, *self.nobody)
        self.addCleanup(shutil.rmtree, self.outside, True)
        self.trace = self.work.join("trace.mcpt")
        self.env = dict(os.environ, HOME=self.home)

    def session(self, *server_args, extra=()):
        cmd = mwtest.collect_cmd(self.trace, self.keys,
                                 ["/usr/bin/python3", SERVER] + list(server_args), extra=extra)
        s = Session(cmd, env=self.env, cwd=self.ws)
        self.addCleanup(self._end, s)
        s.initialize()
        return s

    @staticmethod
    def _end(s):
        """A failed test must not leave the collector running (it holds BPF programs)."""
        if s.proc.poll() is None:
            try:
                s.proc.stdin.close()
                s.proc.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                s.proc.kill()
                s.proc.wait()
        s.proc.stdout.close()

    def test_sequential_behaviours(self):
        listener = mwtest.Listener()
        self.addCleanup(listener.close)
        daemon_out = os.path.join(self.outside, "daemon.txt")
        s = self.session()
        ids = {}
        ids["echo"], _ = s.call("echo", {"text": "hello"})
        ids["shell"], _ = s.call("shell", {"command": "id -un"})
        ids["read"], r = s.call("read_file", {"path": "~/.ssh/id_rsa"})
        self.assertFalse(r["isError"], r)
        ids["write"], r = s.call("write_file", {"path": os.path.join(self.outside, "out.txt")})
        self.assertFalse(r["isError"], r)
        ids["connect"], r = s.call("connect", {"host": "127.0.0.1", "port": listener.port})
        self.assertFalse(r["isError"], r)
        ids["daemon"], _ = s.call("daemon", {"path": daemon_out, "delay": 0.6})
        ids["thread"], r = s.call("threaded", {"path": os.path.join(self.outside, "thread.txt")})
        self.assertFalse(r["isError"], r)
        ids["echo2"], _ = s.call("echo", {"text": "still benign"})
        deadline = time.time() + 10
        while time.time() < deadline and not os.path.exists(daemon_out):
            time.sleep(0.05)
        self.assertTrue(os.path.exists(daemon_out), "the daemon never wrote")
        self.assertEqual(s.close(), 0)

        cj = calls_json(self.trace, self.keys)
        by_id = {c["id"]: c for c in cj["calls"]}
        call = {k: by_id[str(v)] for k, v in ids.items()}
        self.assertEqual(cj["session"]["protocol"], "2025-06-18")
        self.assertEqual([c["method"] for c in cj["calls"][:2]], ["initialize", "tools/call"])
        for k, c in call.items():
            self.assertIsNone(c["incomplete"], (k, c))
            self.assertEqual(c["status"], "ok", (k, c))
        # the shell call created /bin/sh and id, by lineage
        procs = call["shell"]["processes"]
        self.assertEqual([p["exe"] for p in procs], ["/bin/sh", "/usr/bin/id"])
        self.assertTrue(all(p["binding"] == "lineage" for p in procs))
        # the daemon belongs to the daemon call, and wrote after its response
        dproc = call["daemon"]["processes"]
        self.assertTrue(dproc and dproc[0]["binding"] == "lineage", dproc)
        late = find_effect(call["daemon"], "files", daemon_out)
        self.assertEqual(len(late), 1, effects(call["daemon"], "files"))
        self.assertEqual(late[0]["rules"], ["lineage"])
        # the thread's write: a thread of the server, by window
        tw = find_effect(call["thread"], "files", "thread.txt")
        self.assertEqual(tw[0]["rules"], ["window"])
        for k in ("echo", "echo2"):
            for g in ("files", "network", "processes"):
                self.assertFalse([e for e in effects(call[k], g) if "daemon.txt" in e["effect"]],
                                 "the daemon's write went to %s" % k)

        report = mwtest.analyze_json(self.trace, self.keys)
        findings = report["findings"]
        by_call = {}
        for f in findings:
            c = f["call"]
            self.assertIsNotNone(c)
            key = c["call"]["id"] if c["call"] else c["bucket"] or c["rule"]
            by_call.setdefault(key, []).append(f)

        def of(name):
            return by_call.get(str(ids[name]), [])

        self.assertEqual(of("echo"), [])
        self.assertEqual(of("echo2"), [])
        shell = [(f["rule"], f["evidence"]["path"], f["call"]["rule"]) for f in of("shell")]
        self.assertIn(("exec.unexpected", "/bin/sh", "lineage"), shell)
        self.assertIn(("exec.unexpected", "/usr/bin/id", "lineage"), shell)
        read = [f for f in of("read") if f["rule"] == "file.sensitive-read"]
        self.assertEqual([(f["evidence"]["path"], f["call"]["rule"]) for f in read],
                         [(self.secret, "window")])
        self.assertEqual(read[0]["call"]["call"]["tool"], "read_file")
        self.assertEqual(read[0]["call"]["call"]["method"], "tools/call")
        self.assertEqual(len(read[0]["call"]["call"]["arguments_digest"]), 16)
        write = [f for f in of("write") if f["rule"] == "file.write-outside-workspace"]
        self.assertEqual([f["call"]["rule"] for f in write], ["window"])
        conn = [f for f in of("connect") if f["rule"] == "net.connect-loopback"]
        self.assertTrue(conn and all(f["call"]["rule"] == "window" for f in conn), of("connect"))
        self.assertEqual(conn[0]["evidence"]["addr"], "127.0.0.1:%d" % listener.port)
        dw = [f for f in of("daemon") if f["rule"] == "file.write-outside-workspace"]
        self.assertEqual([(f["evidence"]["path"], f["call"]["rule"]) for f in dw],
                         [(daemon_out, "lineage")])
        tw = [f for f in of("thread") if f["rule"] == "file.write-outside-workspace"]
        self.assertEqual(len(tw), 1)
        self.assertNotEqual(tw[0]["process"]["tid"], tw[0]["process"]["pid"])
        # findings are sorted by call
        orders = [f["call"]["call"]["index"] for f in findings if f["call"]["call"]]
        self.assertEqual(orders, sorted(orders))
        # text names the call
        r = mwtest.run([mwtest.ANALYZER, "analyze", self.trace, "--pubkey", self.keys.public,
                        "-p", mwtest.DEFAULT_POLICY])
        self.assertIn("  call: call %d tools/call read_file (id %d) by window" %
                      (call["read"]["index"], ids["read"]), r.stdout)
        # deterministic, byte for byte
        for cmd in (["calls", self.trace], ["calls", self.trace, "--json"],
                    ["analyze", self.trace, "-p", mwtest.DEFAULT_POLICY, "--format", "json"]):
            a = mwtest.run([mwtest.ANALYZER] + cmd + ["--pubkey", self.keys.public])
            b = mwtest.run([mwtest.ANALYZER] + cmd + ["--pubkey", self.keys.public])
            self.assertEqual(a.stdout, b.stdout, cmd)
            self.assertIn(a.returncode, (0, 1), a.stderr)

    def test_pipelined_out_of_order(self):
        a_txt = self.work.write("ws/a.txt", "A", owner=self.nobody)
        b_txt = self.work.write("ws/b.txt", "B", owner=self.nobody)
        s = self.session("--concurrent")
        results, (ida, idb) = s.pipeline([
            ("work", {"path": a_txt, "before": 0.15, "after": 0.6,
                      "command": "cat " + a_txt + " > /dev/null"}),
            ("work", {"path": b_txt, "before": 0.3, "after": 0.0}),
        ])
        self.assertEqual(s.arrival[-2:], [idb, ida], "the server answered in order")
        self.assertEqual(s.close(), 0)

        # both requests arrived in the same frame
        frames = [r for r in mwtest.dump_json(self.trace, self.keys) if r.get("type") == "stdio"]
        both = [f for f in frames if f.get("dir") == "READ" and '"id": %d' % ida in f.get("data", "")
                and '"id": %d' % idb in f.get("data", "")]
        self.assertEqual(len(both), 1, "the two requests were not written at once")

        cj = calls_json(self.trace, self.keys)
        by_id = {c["id"]: c for c in cj["calls"]}
        ca, cb = by_id[str(ida)], by_id[str(idb)]
        self.assertLess(cb["window"]["end"], ca["window"]["end"])
        ra = find_effect(ca, "files", a_txt)
        rb = find_effect(cb, "files", b_txt)
        self.assertTrue(ra and rb, (effects(ca, "files"), effects(cb, "files")))
        self.assertEqual(set(e["rules"][0] for e in find_effect(ca, "files", "openat " + a_txt)),
                         {"evidence"})
        self.assertEqual(rb[0]["rules"], ["evidence"])
        self.assertFalse(find_effect(cb, "files", a_txt), "a.txt attributed to the wrong call")
        self.assertFalse(find_effect(ca, "files", b_txt), "b.txt attributed to the wrong call")
        # the shell of call A, forked while both windows were open: bound by its argv
        procs = ca["processes"]
        self.assertTrue(procs, ca)
        self.assertEqual(procs[0]["exe"], "/bin/sh")
        self.assertEqual(procs[0]["binding"], "evidence")
        self.assertEqual(cb["processes"], [])
        # both read /etc/hostname while both were open: ambiguous, under both, never one alone
        ha = find_effect(ca, "files", "/etc/hostname")
        hb = find_effect(cb, "files", "/etc/hostname")
        self.assertTrue(ha and hb)
        self.assertEqual(ha[0]["rules"], ["ambiguous"])
        self.assertEqual(hb[0]["rules"], ["ambiguous"])

    @staticmethod
    def pids_matching(needle):
        """The live (not zombie) processes whose command line holds needle."""
        for pid in (int(d) for d in os.listdir("/proc") if d.isdigit()):
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    cmdline = f.read()
                with open("/proc/%d/stat" % pid) as f:
                    zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
            except (OSError, IndexError):
                continue
            if needle.encode() in cmdline and not zombie:
                yield pid

    def kill_matching(self, needle):
        """Ends, by pid, every process whose command line holds needle."""
        for pid in self.pids_matching(needle):
            try:
                os.kill(pid, 9)
            except OSError:
                pass

    def test_a_call_in_flight_at_the_attach_is_a_call_of_its_own(self):
        """Attached (--pid) to a server while a request is in flight: its response names a call
        of its own (method unknown, incomplete: 'request before the attach'), whose window runs
        from the start of the trace to the response, so what the server did for it meanwhile is
        its effect, by window, and the findings are that call's. Before, the response was a
        channel note and those effects fell in the startup bucket."""
        gate = os.path.join(self.outside, "gate")
        os.mkfifo(gate)
        os.chown(gate, *self.nobody)
        s = Session(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                     "/usr/bin/python3", SERVER], env=self.env, cwd=self.ws)
        self.addCleanup(self._end, s)
        s.initialize()
        wid, req = s._request("tools/call", {"name": "work", "arguments": {
            "path": gate, "command": "cat %s" % self.secret}})
        s._write([req])  # the server now waits on the gate, in open(2)
        coll = subprocess.Popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace,
                                 "--pid", str(s.proc.pid), "-v"], stderr=subprocess.PIPE,
                                text=True)
        self.addCleanup(lambda: coll.poll() is None and (coll.kill(), coll.wait()))
        self.addCleanup(coll.stderr.close)
        mwtest.wait_attached(coll)
        with open(gate, "wb") as g:  # opens the gate: the work goes on, recorded
            g.write(b"go")
        self.assertEqual(s.wait([wid])[wid]["content"][0]["text"], "worked")
        rid, r = s.call("read_file", {"path": "/etc/hostname"})
        self.assertFalse(r["isError"], r)
        self.assertEqual(s.close(), 0)
        self.assertEqual(coll.wait(timeout=60), 0, coll.stderr.read())

        cj = calls_json(self.trace, self.keys)
        self.assertEqual([n for n in cj["channel_notes"] if "pending" in n], [])
        by_id = {c["id"]: c for c in cj["calls"]}
        before, later = by_id[str(wid)], by_id[str(rid)]
        self.assertEqual((before["method"], before["incomplete"], before["status"],
                          before["stream_offset"], before["window"]["record"]),
                         (None, "request before the attach", "ok", None, None))
        self.assertEqual((later["method"], later["incomplete"]), ("tools/call", None))
        self.assertLess(before["window"]["begin"], later["window"]["begin"])
        self.assertLess(before["window"]["end"], later["window"]["begin"])
        # the work's read of /etc/hostname and its shell are the call's, by window and
        # lineage; the later read_file's own read of /etc/hostname is the later call's
        self.assertEqual([e["rules"] for e in find_effect(before, "files", "/etc/hostname")],
                         [["window"]])
        self.assertEqual([(p["binding"], p["exit_code"], p["exit_signal"])
                          for p in before["processes"]],
                         [("lineage", 0, None)] * 2)  # the shell and its cat
        self.assertEqual([e["rules"] for e in find_effect(later, "files", "/etc/hostname")],
                         [["window"]])
        self.assertFalse(cj["startup"]["files"], cj["startup"])
        found = [f for f in mwtest.analyze_json(self.trace, self.keys)["findings"]
                 if f["rule"] == "file.sensitive-read"]
        self.assertEqual([(f["call"]["call"]["id"], f["call"]["rule"]) for f in found],
                         [(str(wid), "lineage")], found)
        text = mwtest.run([mwtest.ANALYZER, "calls", self.trace, "--pubkey", self.keys.public])
        self.assertIn("== call %d (method unknown) (id %d): ok ==" % (before["index"], wid),
                      text.stdout)
        self.assertIn("from the start of the trace: the request came before the attach\n",
                      text.stdout)

    def test_a_daemon_outliving_the_server_is_named_with_its_call(self):
        """A process the server started and left running after it exited (here a daemon that
        waits 60 s), kept running (--after-linger keep), is unrecorded from the end of the
        trace on: `calls` marks it under its call and lists it, `analyze` names it under
        coverage. A server whose children all exited in time has no such list."""
        late = os.path.join(self.outside, "late.txt")
        self.addCleanup(self.kill_matching, late)
        s = self.session(extra=["--linger", "1", "--after-linger", "keep"])
        did, _ = s.call("daemon", {"path": late, "delay": 60})
        eid, _ = s.call("echo", {"text": "benign"})
        self.assertEqual(s.close(), 0)

        cj = calls_json(self.trace, self.keys)
        by_id = {c["id"]: c for c in cj["calls"]}
        dproc = by_id[str(did)]["processes"]
        self.assertEqual([(p["binding"], p["still_running"]) for p in dproc],
                         [("lineage", True)], dproc)
        self.assertFalse(cj["server_still_running"])
        self.assertEqual([(p["pid"], p["exe"], p["call"]["id"] if p["call"] else None,
                           p["killed"]) for p in cj["still_running"]],
                         [(dproc[0]["pid"], dproc[0]["exe"], str(did), False)])
        text = mwtest.run([mwtest.ANALYZER, "calls", self.trace, "--pubkey", self.keys.public])
        self.assertIn("== still running after the server exited (not recorded after the end "
                      "of the trace) ==", text.stdout)
        self.assertIn("pid %d %s" % (dproc[0]["pid"], dproc[0]["exe"]), text.stdout)
        self.assertIn(", still running when recording stopped\n", text.stdout)

        cov = mwtest.analyze_json(self.trace, self.keys)["coverage"]
        self.assertTrue(cov["complete"])
        self.assertEqual([(p["pid"], p["binding"], p["call"]["id"])
                          for p in cov["outlived_server"]],
                         [(dproc[0]["pid"], "lineage", str(did))])
        # the default policy's rule: one finding, medium, attributed to the call by lineage,
        # the same whether the trace is read once (the default policy) or twice
        once = mwtest.analyze_json(self.trace, self.keys)["findings"]
        twice = mwtest.analyze_json(self.trace, self.keys,
                                    extra=["--verify-before-release"])["findings"]
        self.assertEqual(once, twice)
        found = [f for f in once if f["rule"] == "coverage.outlived-server"]
        self.assertEqual([(f["severity"], f["call"]["call"]["id"], f["call"]["rule"],
                           f["process"]["pid"]) for f in found],
                         [("medium", str(did), "lineage", dproc[0]["pid"])], found)
        rep = mwtest.run([mwtest.ANALYZER, "analyze", self.trace, "--pubkey", self.keys.public,
                          "-p", mwtest.DEFAULT_POLICY])
        self.assertIn("  still running after the server exited, not recorded from the end of "
                      "the trace on:\n    pid %d " % dproc[0]["pid"], rep.stdout)
        self.assertRegex(rep.stdout, r"call \d+ tools/call daemon \(id %d\) \(lineage\)\n" % did)
        self.kill_matching(late)

        # the default for a launched server (--after-linger kill): the daemon is killed when
        # the linger runs out, its exit recorded, and every report says it was
        os.unlink(self.trace)
        s = self.session(extra=["--linger", "1"])
        did, _ = s.call("daemon", {"path": late, "delay": 60})
        self.assertEqual(s.close(), 0)
        cj = calls_json(self.trace, self.keys)
        dproc = {c["id"]: c for c in cj["calls"]}[str(did)]["processes"]
        self.assertEqual([(p["binding"], p["still_running"], p["killed"], p["exit_signal"])
                          for p in dproc], [("lineage", False, True, "SIGKILL")], dproc)
        self.assertEqual([(p["pid"], p["killed"]) for p in cj["still_running"]],
                         [(dproc[0]["pid"], True)])
        self.assertFalse([pid for pid in self.pids_matching(late)], "the daemon outlived it")
        text = mwtest.run([mwtest.ANALYZER, "calls", self.trace, "--pubkey", self.keys.public])
        self.assertIn("== still running after the server exited (killed by the collector when "
                      "the linger ran out) ==", text.stdout)
        self.assertIn(" (killed by the collector when the linger ran out)\n", text.stdout)
        doc = mwtest.analyze_json(self.trace, self.keys)
        self.assertEqual([(p["pid"], p["killed"]) for p in doc["coverage"]["outlived_server"]],
                         [(dproc[0]["pid"], True)])
        found = [f for f in doc["findings"] if f["rule"] == "coverage.outlived-server"]
        self.assertEqual(len(found), 1, found)
        self.assertIn("until the collector killed it when the linger ran out",
                      found[0]["message"])
        rep = mwtest.run([mwtest.ANALYZER, "analyze", self.trace, "--pubkey", self.keys.public,
                          "-p", mwtest.DEFAULT_POLICY])
        self.assertIn("  still running after the server exited, killed by the collector when "
                      "the linger ran out:\n    pid %d " % dproc[0]["pid"], rep.stdout)

        # the same server, its daemon done before the end: nothing outlived it
        os.unlink(self.trace)
        s = self.session()
        s.call("daemon", {"path": late, "delay": 0})
        self.assertEqual(s.close(), 0)
        deadline = time.time() + 10
        while time.time() < deadline and not os.path.exists(late):
            time.sleep(0.05)
        cj = calls_json(self.trace, self.keys)
        self.assertEqual(cj["still_running"], [])
        doc = mwtest.analyze_json(self.trace, self.keys)
        self.assertEqual(doc["coverage"]["outlived_server"], [])
        self.assertFalse([f for f in doc["findings"] if f["rule"] == "coverage.outlived-server"])


if __name__ == "__main__":
    mwtest.main()
