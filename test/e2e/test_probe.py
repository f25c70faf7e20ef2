"""test_probe.py - mcpwitness-probe as mcp-server-fuzzer would drive it (MCPFZ_PROBE_BIN).

The harness below replays the mcpfz-probe sidecar protocol as its docs/protocol.md documents
it: the probe is started as `BIN --backend ebpf` with pipes; NDJSON control lines go to its
stdin (`scope` with pgid and generation, `mark` begin with call_id and tool, `mark` end with
call_id, `shutdown`); NDJSON events come from its stdout with `type`, `bucket`, `call_id`,
`pid`, `comm`, `ts_ns` and the fields of each type; `status` lines acknowledge `ready` at start
and echo `begin`/`end` per call (the harness waits for them, as mcpfz-probe's monitor does).
Like mcp-server-fuzzer, the harness starts the server itself, in a process group of its own,
and drives it over stdio: the bundled vulnerable example server, run as `nobody`.

Checked: the acks, each call's events attributed to that call and to no other (run_command's
shell, read_file's open of the fake key, write_file's open for writing, fetch_url's connect),
nothing for the benign tools, buckets, the signed trace (VALID_COMPLETE, the control lines in
it as raw marks, the analyzer's findings on it), a second generation in its own trace, bad
control lines, and a clean stop on shutdown followed at once by TERM (what the monitor does).
"""
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

PROBE = os.path.join(os.path.dirname(mwtest.ANALYZER), "mcpwitness-probe")
WAIT = 20  # seconds for an ack (the collector takes ~2 s to load its programs at a scope)


class Sidecar:
    """The harness's side of the protocol: control lines out, event lines in (a reader thread)."""

    def __init__(self, work, keys, extra=(), outdir=None, user=None):
        self.stderr = open(work.join("probe.stderr"), "w")
        ids = {}
        if user:
            ids = {"user": user[0], "group": user[1], "extra_groups": []}
        collector = [] if "--collector" in extra else ["--collector", mwtest.COLLECT]
        self.proc = subprocess.Popen(
            [PROBE, "--backend", "ebpf", "-o", outdir or work.path, "-k", keys.secret,
             "--pubkey", keys.public] + collector + list(extra),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
            bufsize=1, cwd=outdir or work.path, **ids)
        self.lines = queue.Queue()
        self.events = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()

    def send_raw(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pred, what, timeout=WAIT):
        """Reads lines (kept in self.events) until one satisfies pred; returns it."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                ev = self.lines.get(timeout=max(0.05, end - time.time()))
            except queue.Empty:
                break
            if ev is None:
                raise AssertionError("the probe closed its stdout while waiting for %s" % what)
            self.events.append(ev)
            if pred(ev):
                return ev
        raise AssertionError("no %s within %ds; got %s" % (what, timeout, self.events[-10:]))

    def status(self, message, call_id=None, timeout=WAIT):
        return self.wait_for(lambda e: e.get("type") == "status" and e.get("message") == message
                             and (call_id is None or e.get("call_id") == call_id),
                             "status %s %s" % (message, call_id or ""), timeout)

    def stop(self):
        """What mcpfz-probe's monitor does: shutdown, then TERM at once; then wait."""
        try:
            self.send({"op": "shutdown"})
        except (BrokenPipeError, ValueError):
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(timeout=5)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except (BrokenPipeError, OSError):
                pass
        while True:
            try:
                ev = self.lines.get_nowait()
            except queue.Empty:
                break
            if ev is not None:
                self.events.append(ev)
        self.stderr.close()
        return self.proc.returncode


class Server:
    """The example vulnerable server, started by the harness in its own process group."""

    def __init__(self, work):
        uid, gid = mwtest.nobody_ids()
        home = work.mkdir("home", owner=(uid, gid))
        work.write("home/.ssh/id_rsa", "FAKE KEY FOR THE PROBE TEST\n", owner=(uid, gid),
                   mode=0o600)
        os.chown(work.join("home", ".ssh"), uid, gid)
        ws = work.mkdir("workspace", owner=(uid, gid))
        env = {"PATH": "/usr/bin:/bin", "HOME": home}
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(mwtest.EXAMPLE_DIR, "vulnerable_server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, cwd=ws,
            env=env, user=uid, group=gid, extra_groups=[], start_new_session=True)
        self.pgid = os.getpgid(self.proc.pid)
        self.next_id = 1
        self.home = home

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                          "params": params or {}}) + "\n")
        self.proc.stdin.flush()
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if msg.get("id") == rid:
                return msg.get("result")

    def handshake(self):
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "probe-test", "version": "1"}})
        self.proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


def call(sidecar, server, tool, arguments):
    """One tool call wrapped in marks, as the fuzzer's hooks do; returns (call_id, its events)."""
    cid = uuid.uuid4().hex
    sidecar.send({"op": "mark", "phase": "begin", "call_id": cid, "tool": tool})
    sidecar.status("begin", cid)
    server.request("tools/call", {"name": tool, "arguments": arguments})
    sidecar.send({"op": "mark", "phase": "end", "call_id": cid})
    sidecar.status("end", cid)
    return cid, [e for e in sidecar.events if e.get("call_id") == cid and e["type"] != "status"]


class Probe(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.listener = mwtest.Listener()
        self.addCleanup(self.listener.close)

    def start(self, extra=()):
        s = Sidecar(self.work, self.keys, extra)
        self.addCleanup(lambda: s.proc.poll() is None and s.stop())
        return s

    def serve(self):
        srv = Server(self.work)
        self.addCleanup(srv.close)
        return srv

    def test_calls_are_attributed_and_recorded(self):
        sc = self.start()
        ready = sc.status("ready")
        self.assertEqual(ready["backend"], "ebpf")
        self.assertEqual(ready["bucket"], "startup")
        srv = self.serve()
        sc.send({"op": "scope", "pgid": srv.pgid, "generation": 1})
        scope = sc.status("scope")
        self.assertEqual((scope["pgid"], scope["generation"]), (srv.pgid, 1))
        srv.handshake()

        echo, echo_ev = call(sc, srv, "echo", {"text": "hi"})
        sh, sh_ev = call(sc, srv, "run_command", {"command": "id -un >/dev/null; exit 0"})
        rd, rd_ev = call(sc, srv, "read_file", {"path": "~/.ssh/id_rsa"})
        wr, wr_ev = call(sc, srv, "write_file", {"path": "/tmp/mwprobe-%d" % os.getpid(),
                                                 "content": "x"})
        self.addCleanup(lambda: os.path.exists("/tmp/mwprobe-%d" % os.getpid()) and
                        os.unlink("/tmp/mwprobe-%d" % os.getpid()))
        net, net_ev = call(sc, srv, "fetch_url",
                           {"url": "http://127.0.0.1:%d/x" % self.listener.port})
        # a blocking connect (fetch_url's has a timeout: a non-blocking socket)
        bl, bl_ev = call(sc, srv, "run_command", {
            "command": "exec python3 -c 'import socket; socket.create_connection("
                       "(\"127.0.0.1\", %d)).close()'" % self.listener.port})
        self.assertEqual(sc.stop(), 0, self.stderr())  # the server still runs, as in a fuzzer
        srv.close()

        for ev in sh_ev + rd_ev + wr_ev + net_ev + bl_ev:
            for field in ("type", "bucket", "call_id", "pid", "comm", "ts_ns"):
                self.assertIn(field, ev)
            self.assertEqual(ev["bucket"], "call")
            self.assertLess(abs(ev["ts_ns"] - time.time_ns()), 600 * 10**9, ev)
        self.assertEqual([e for e in echo_ev if e["type"] in ("exec", "connect")], [])

        execs = [e for e in sh_ev if e["type"] == "exec"]
        self.assertIn(["/bin/sh", "-c", "id -un >/dev/null; exit 0"], [e["argv"] for e in execs])
        self.assertIn(["id", "-un"], [e["argv"] for e in execs])
        self.assertEqual([e["comm"] for e in execs if e["argv"][0] == "/bin/sh"], ["sh"])

        reads = [e for e in rd_ev if e["type"] == "file_open" and e["path"].endswith("/.ssh/id_rsa")]
        self.assertEqual(len(reads), 1, rd_ev)
        self.assertTrue(reads[0]["flags"].startswith("O_RDONLY"), reads[0])
        self.assertEqual(reads[0]["comm"], "python3")
        self.assertEqual(reads[0]["pid"], srv.proc.pid)

        writes = [e for e in wr_ev if e["type"] == "file_open" and e["path"].startswith("/tmp/mwprobe-")]
        self.assertEqual(len(writes), 1, wr_ev)
        self.assertIn("O_WRONLY", writes[0]["flags"])
        self.assertIn("O_CREAT", writes[0]["flags"])

        # each connect once: fetch_url's from its exit record, the blocking one from its
        # entry-time record
        for evs in (net_ev, bl_ev):
            conns = [e for e in evs if e["type"] == "connect"]
            self.assertEqual([(e["proto"], e["dst"]) for e in conns],
                             [("tcp", "127.0.0.1:%d" % self.listener.port)], evs)

        # no event of one call leaks into another
        for cid, evs in ((sh, sh_ev), (rd, rd_ev), (wr, wr_ev), (net, net_ev), (bl, bl_ev)):
            self.assertTrue(all(e["call_id"] == cid for e in evs))
        self.assertFalse([e for e in sc.events
                          if e.get("type") == "exec" and e.get("call_id") not in (sh, bl)])

        done = [e for e in sc.events if e.get("type") == "status" and e.get("message") == "trace"]
        self.assertEqual(len(done), 1, sc.events[-5:])
        self.assertEqual(done[0]["verdict"], "VALID_COMPLETE")
        self.check_trace(done[0]["trace"], sh)

    def stderr(self):
        with open(self.work.join("probe.stderr")) as f:
            return f.read()

    def check_trace(self, trace, shell_call):
        r = mwtest.verify(trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        recs = mwtest.dump_json(trace, self.keys)
        raws = [r.get("raw", "") for r in recs if r["type"] == "mark"]
        self.assertTrue(any('"op":"scope"' in x for x in raws), raws)
        self.assertTrue(any(shell_call in x and '"phase":"begin"' in x for x in raws), raws)
        self.assertTrue(any('"op":"shutdown"' in x for x in raws), raws)
        found = mwtest.analyze_json(trace, self.keys)
        rules = {f["rule"] for f in found["findings"]}
        self.assertIn("exec.unexpected", rules)
        self.assertIn("file.sensitive-read", rules)

    def test_new_generation_new_trace(self):
        sc = self.start()
        sc.status("ready")
        first = self.serve()
        sc.send({"op": "scope", "pgid": first.pgid, "generation": 1})
        sc.status("scope")
        first.handshake()
        call(sc, first, "echo", {"text": "one"})
        first.close()
        second = self.serve()
        sc.send({"op": "scope", "pgid": second.pgid, "generation": 2})
        scope2 = sc.wait_for(lambda e: e.get("message") == "scope" and e.get("generation") == 2,
                             "scope of generation 2")
        self.assertEqual(scope2["pgid"], second.pgid)
        second.handshake()
        cid, evs = call(sc, second, "run_command", {"command": "true; true"})
        self.assertTrue([e for e in evs if e["type"] == "exec"], evs)
        self.assertTrue(all(e["generation"] == 2 for e in evs))
        second.close()
        self.assertEqual(sc.stop(), 0)
        done = [e for e in sc.events if e.get("message") == "trace"]
        self.assertEqual(sorted(e["generation"] for e in done), [1, 2])
        self.assertEqual(len({e["trace"] for e in done}), 2)
        for e in done:
            self.assertEqual(e["verdict"], "VALID_COMPLETE", e)
            self.assertEqual(mwtest.verify(e["trace"], self.keys).returncode, 0)

    def test_through_sudo(self):
        """Not root, the probe runs the collector through `sudo -n -C 5` with the README's rule
        (for the user nobody, this build's collector and this test's key)."""
        if not shutil.which("sudo") or not shutil.which("visudo"):
            self.fail("sudo is missing: packaging/install-deps.sh installs it")
        rule = ("Defaults!{c} closefrom_override\n"
                "nobody ALL=(root) NOPASSWD: {c} -q --pgid * --output-fd 3 --control-fd 4 -k {k}\n"
                ).format(c=mwtest.COLLECT, k=self.keys.secret)
        path = "/etc/sudoers.d/mwtest-probe-%d" % os.getpid()
        tmp = self.work.write("sudoers", rule, mode=0o440)
        r = mwtest.run(["visudo", "-c", "-f", tmp])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        shutil.copy(tmp, path + ".tmp")
        os.chmod(path + ".tmp", 0o440)
        os.rename(path + ".tmp", path)  # sudo ignores names with a dot: in place at once
        self.addCleanup(os.unlink, path)
        uid, gid = mwtest.nobody_ids()
        out = self.work.mkdir("traces", owner=(uid, gid))
        sc = Sidecar(self.work, self.keys, outdir=out, user=(uid, gid))
        self.addCleanup(lambda: sc.proc.poll() is None and sc.stop())
        sc.status("ready")
        srv = self.serve()
        sc.send({"op": "scope", "pgid": srv.pgid, "generation": 1})
        sc.status("scope")
        srv.handshake()
        cid, evs = call(sc, srv, "run_command", {"command": "id -un >/dev/null; true"})
        self.assertIn("sh", [e["comm"] for e in evs if e["type"] == "exec"])
        self.assertEqual(sc.stop(), 0, self.stderr())
        srv.close()
        done = [e for e in sc.events if e.get("message") == "trace"]
        self.assertEqual([e["verdict"] for e in done], ["VALID_COMPLETE"])
        self.assertEqual(os.stat(done[0]["trace"]).st_uid, uid)  # the copy is the user's
        self.assertEqual(mwtest.verify(done[0]["trace"], self.keys).returncode, 0)

    def test_control_errors_and_marks_without_scope(self):
        sc = self.start()
        sc.status("ready")
        sc.send_raw("this is not json")
        self.assertIn("error", sc.status("parse_error"))
        sc.send({"op": "fly"})
        sc.status("parse_error")
        sc.send({"op": "mark", "phase": "middle", "call_id": "x"})
        self.assertEqual(sc.status("unknown_phase")["phase"], "middle")
        sc.send({"op": "scope", "pgid": "twelve", "generation": 1})
        sc.status("parse_error")
        # no scope yet: nothing is watched, the marks are acknowledged at once
        sc.send({"op": "mark", "phase": "begin", "call_id": "c0", "tool": "t"})
        sc.status("begin", "c0", timeout=5)
        sc.send({"op": "mark", "phase": "end", "call_id": "c0"})
        sc.status("end", "c0", timeout=5)
        self.assertEqual(sc.stop(), 0)

    def test_a_collector_that_cannot_run_leaves_nothing(self):
        """The collector cannot be started: one line naming it and why, an error event, and
        neither a trace event nor an empty trace file."""
        sc = self.start(["--collector", "/nonexistent/mcpwitness-collect"])
        sc.status("ready")
        sc.send({"op": "scope", "pgid": os.getpgid(0), "generation": 1})
        sc.status("error")
        self.assertEqual(sc.stop(), 0)
        self.assertEqual([e for e in sc.events if e.get("message") == "trace"], [])
        self.assertEqual([f for f in os.listdir(self.work.path) if f.endswith(".mcpt")], [])
        self.assertIn("mcpwitness: failed to run the collector /nonexistent/mcpwitness-collect:"
                      " No such file or directory\n", self.stderr())

    def test_bad_options(self):
        for args in (["--backend", "fake"], ["--grace-ms", "soon"], ["-o", "/nonexistent/dir"],
                     ["-o", "/etc/hostname"],
                     ["--pubkey", "/nonexistent.pub"], ["stray"]):
            r = mwtest.run([PROBE] + args, stdin=subprocess.DEVNULL)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertEqual(r.stdout, "")
        r = mwtest.run([mwtest.ANALYZER, "probe", "--help"])
        self.assertEqual(r.returncode, 0)
        self.assertIn("--backend", r.stdout)
        # the man page this build installs names the same default collector as --help
        default = re.search(r"\(default (/\S+/mcpwitness-collect)\)", r.stdout).group(1)
        with open(os.path.join(mwtest.BUILD_DIR, "packaging", "man", "mcpwitness.1")) as f:
            self.assertIn("(default \\fI%s\\fR)" % default, f.read())


if __name__ == "__main__":
    mwtest.main()
