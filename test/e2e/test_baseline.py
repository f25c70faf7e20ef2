"""test_baseline.py - baselines and drift with the real collector and the test MCP server
(test/fixtures/mcp_test_server.py), as root:

- `policy learn` from two recorded sessions of benign tools (echo, read_file, write_file in the
  workspace, connect to a 127.0.0.1 listener, work without a command, resolve
  api.example.test); a third benign session analysed with the default policy and the
  baseline: no finding at all
- a session in which `work` also shells out and `connect` contacts 127.0.0.1 on another port:
  exactly those two drift findings (drift.exec in work, drift.connect in connect), nothing else,
  each carrying the W3C traceparent its request sent in _meta: in JSON
  (call.call.trace_context), in SARIF (result.properties.traceparent, the same for the same
  finding) and in the HTML timeline; SARIF and HTML name the client and the server
- `diff` of the same: exactly those two new items; nothing new for a benign session whose
  read_file read the processor count (/sys/devices/system/cpu/online) instead of a.txt; a
  session calling connect right after echo (an edge never seen, to a tool that sends data): one
  sequence drift with its sequence
- DNS names end to end: the baseline holds the name resolve asked for (its DNS datagram to
  port 53, decoded from the payload the collector keeps); a benign session whose resolve asks
  for new.example.test instead gives exactly one finding, drift.dns naming it, and `diff` lists
  that name as new and the learned one as gone
- learn and diff rerun give byte-identical output; a tampered trace is refused with one line,
  exit 3, and no output file
Every packet stays on 127.0.0.1: the test holds 127.0.0.1:53 (UDP) itself, so the DNS queries
reach it and nothing else, and checks that it received exactly the names asked.
"""
import errno
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import mwtest  # noqa: E402
from mcp_driver import Session  # noqa: E402

SERVER = os.path.join(mwtest.SOURCE_DIR, "test", "fixtures", "mcp_test_server.py")
TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
NAME, NEW_NAME = "api.example.test", "new.example.test"
CPU_COUNT = "/sys/devices/system/cpu/online"
DNS_ENTRY = "  bl_dns:\n    any:\n      - {tool: resolve, dns: %s}  # t1 call 7 (id 7), record "


def dns_sink():
    """A UDP socket bound to 127.0.0.1:53, so the queries of resolve reach the test and nothing
    else. Another test (test_events_net) may hold the port for a moment: wait for it; if it
    stays held (a resolver), fail rather than query it."""
    deadline = time.monotonic() + 30
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("127.0.0.1", 53))
            s.settimeout(0)
            return s
        except OSError as e:
            s.close()
            if e.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                raise AssertionError("cannot hold 127.0.0.1:53 for the DNS queries: %s" % e)
            time.sleep(0.5)


def received_names(sink):
    """The query names of every datagram waiting on the sink (labels of the first question)."""
    names = []
    while True:
        try:
            q = sink.recv(512)
        except BlockingIOError:
            return names
        labels, i = [], 12
        while q[i]:
            labels.append(q[i + 1:i + 1 + q[i]].decode())
            i += 1 + q[i]
        names.append(".".join(labels))


class Baseline(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.nobody = mwtest.nobody_ids()
        self.ws = self.work.mkdir("ws", owner=self.nobody)
        self.work.write("ws/a.txt", "hello\n", owner=self.nobody)
        self.l1, self.l2 = mwtest.Listener(), mwtest.Listener()
        self.addCleanup(self.l1.close)
        self.addCleanup(self.l2.close)

    def record(self, name, calls):
        """One session of calls (tool, arguments[, traceparent]); returns the trace path."""
        trace = self.work.join(name + ".mcpt")
        cmd = mwtest.collect_cmd(trace, self.keys, ["/usr/bin/python3", SERVER])
        s = Session(cmd, cwd=self.ws)
        try:
            s.initialize()
            for c in calls:
                params = {"name": c[0], "arguments": c[1]}
                if len(c) > 2:
                    params["_meta"] = {"traceparent": c[2]}
                _, r = s.request("tools/call", params)
                self.assertFalse(r["isError"], (c, r))
            self.assertEqual(s.close(), 0)
        finally:
            if s.proc.poll() is None:  # a failed call must not leave the collector running
                s.proc.kill()
                s.proc.wait()
        return trace

    def benign(self, name, out, dns=NAME, read=None):
        return self.record(name, [
            ("echo", {"text": "hi"}),
            ("read_file", {"path": read or os.path.join(self.ws, "a.txt")}),
            ("write_file", {"path": os.path.join(self.ws, out), "content": "x"}),
            ("connect", {"host": "127.0.0.1", "port": self.l1.port}),
            ("work", {"path": os.path.join(self.ws, "a.txt")}),
            ("resolve", {"name": dns}),  # last: the drift session's work follows connect too
        ])

    def mw(self, *args, codes=(0,)):
        r = mwtest.run([mwtest.ANALYZER] + list(args))
        self.assertIn(r.returncode, codes, r.stderr)
        return r

    def learn(self, traces, out):
        self.mw("policy", "learn", *traces, "-o", out, "-p", mwtest.DEFAULT_POLICY,
                "--pubkey", self.keys.public)
        with open(out, "rb") as f:
            return f.read()

    def findings(self, trace, baseline):
        doc = mwtest.analyze_json(trace, self.keys, (mwtest.DEFAULT_POLICY, baseline))
        return doc["findings"]

    def diff(self, base, trace, *extra):
        return self.mw("diff", "--pubkey", self.keys.public, "-p", mwtest.DEFAULT_POLICY,
                       *extra, *base, "--", trace, codes=(0, 1))

    def test_learn_drift_diff(self):
        self.sink = dns_sink()
        self.addCleanup(self.sink.close)
        base = [self.benign("b1", "out1.txt"), self.benign("b2", "out2.txt")]
        # the processor count a runtime may read at any time: never drift, never new in diff
        replay = self.benign("replay", "out3.txt", read=CPU_COUNT)
        drift = self.record("drift", [
            ("echo", {"text": "hi"}),
            ("read_file", {"path": os.path.join(self.ws, "a.txt")}),
            ("write_file", {"path": os.path.join(self.ws, "out4.txt"), "content": "y"}),
            ("connect", {"host": "127.0.0.1", "port": self.l2.port}, TP),
            ("work", {"path": os.path.join(self.ws, "a.txt"), "command": "true"}, TP),
        ])
        seq = self.record("seq", [
            ("echo", {"text": "hi"}),
            ("connect", {"host": "127.0.0.1", "port": self.l1.port}),
        ])
        dns = self.benign("dns", "out5.txt", dns=NEW_NAME)
        # every query reached the sink: b1, b2, replay, then the drifted one
        self.assertEqual(received_names(self.sink), [NAME] * 3 + [NEW_NAME])

        # learn: readable, provenance per entry, stable
        bl = self.work.join("baseline.yaml")
        text = self.learn(base, bl)
        again = self.work.mkdir("again")
        self.assertEqual(self.learn(base, os.path.join(again, "baseline.yaml")), text)
        t = text.decode()
        self.assertIn("{tool: connect, addr: \"127.0.0.1\", port: %d}" % self.l1.port, t)
        self.assertIn("bl.tool.read_file.read:\n    - \"${workspace}/**\"  # t1 call", t)
        self.assertRegex(t, r"# t1: trace [0-9a-f]{32}, VALID_COMPLETE")
        self.mw("policy", "check", mwtest.DEFAULT_POLICY, bl)

        # the baseline's own traces and another benign session: nothing at all
        for tr in base + [replay]:
            self.assertEqual(self.findings(tr, bl), [], tr)

        # exactly the two drifts, with the traceparent of their requests
        got = self.findings(drift, bl)
        self.assertEqual(sorted((f["rule"], f["call"]["call"]["tool"]) for f in got),
                         [("drift.connect", "connect"), ("drift.exec", "work")], got)
        for f in got:
            self.assertEqual(f["category"], "drift")
            self.assertEqual(f["call"]["call"]["trace_context"]["traceparent"], TP)
        conn = [f for f in got if f["rule"] == "drift.connect"][0]
        self.assertEqual(conn["evidence"]["addr"], "127.0.0.1:%d" % self.l2.port)
        ex = [f for f in got if f["rule"] == "drift.exec"][0]
        self.assertEqual(ex["evidence"]["path"], "/bin/sh")
        self.check_sarif_html(drift, bl, got)

        # diff: the same two are new; stable in text and JSON
        r = self.diff(base, drift, "--json")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(self.diff(base, drift, "--json").stdout, r.stdout)
        doc = json.loads(r.stdout)
        new = sorted((s["name"], n["kind"], n["text"]) for s in doc["scopes"] for n in s["new"])
        self.assertEqual(new, [("connect", "connect", "connect 127.0.0.1:%d" % self.l2.port),
                               ("work", "exec", "exec /bin/sh: /bin/sh -c true")], new)
        self.assertEqual(doc["sequence_drift"], [])
        txt = self.diff(base, drift).stdout
        self.assertEqual(self.diff(base, drift).stdout, txt)
        self.assertIn("  + network   connect 127.0.0.1:%d  (call " % self.l2.port, txt)
        doc = json.loads(self.diff(base, replay, "--json").stdout)
        self.assertEqual([n for s in doc["scopes"] for n in s["new"]], [])
        # what replay's read_file did not read is gone; the count it read is not an item
        self.assertEqual([(s["name"], n["text"]) for s in doc["scopes"] for n in s["gone"]],
                         [("read_file", "read ${workspace}/**")])

        # sequence drift: echo -> connect was never seen, and connect sends data
        doc = json.loads(self.diff(base, seq, "--json").stdout)
        self.assertEqual([(q["from"], q["to"], q["sends_data"], q["sequence"])
                          for q in doc["sequence_drift"]],
                         [("echo", "connect", True, "echo -> connect")])
        self.check_dns_drift(base, bl, t, dns)

    def check_dns_drift(self, base, bl, learned, trace):
        """The learned name is in the baseline; another name is one drift.dns and one new
        item of diff, the learned name one gone item."""
        self.assertIn(DNS_ENTRY % NAME, learned)
        self.assertNotIn(NEW_NAME, learned)
        got = self.findings(trace, bl)
        self.assertEqual([(f["rule"], f["call"]["call"]["tool"], f["evidence"]["dns"])
                          for f in got], [("drift.dns", "resolve", NEW_NAME)], got)
        self.assertIn(NEW_NAME, got[0]["message"])
        r = self.diff(base, trace, "--json")
        self.assertEqual(r.returncode, 1)
        doc = json.loads(r.stdout)
        self.assertEqual([(s["name"], n["kind"], n["text"]) for s in doc["scopes"]
                          for n in s["new"]], [("resolve", "dns", "dns " + NEW_NAME)])
        self.assertEqual([(s["name"], n["kind"], n["text"]) for s in doc["scopes"]
                          for n in s["gone"]], [("resolve", "dns", "dns " + NAME)])
        self.assertEqual(doc["sequence_drift"], [])
        self.assertIn("dns " + NEW_NAME, self.diff(base, trace).stdout)

    def report(self, trace, baseline, fmt):
        r = self.mw("analyze", trace, "--pubkey", self.keys.public, "-p", mwtest.DEFAULT_POLICY,
                    "-p", baseline, "--format", fmt, "--fail-on", "info", codes=(1,))
        return r.stdout

    def check_sarif_html(self, trace, baseline, findings):
        """SARIF and HTML of the drift session carry what its JSON findings carry."""
        run = json.loads(self.report(trace, baseline, "sarif"))["runs"][0]
        self.assertEqual(len(run["results"]), len(findings))
        for res, f in zip(run["results"], findings):
            self.assertEqual(res["ruleId"], f["rule"])
            self.assertEqual(res["properties"]["traceparent"],
                             f["call"]["call"]["trace_context"]["traceparent"])
            self.assertEqual(res["properties"]["traceparent"], TP)
        ident = run["properties"]["identity"]
        self.assertEqual((ident["client"]["name"], ident["client"]["from"]),
                         ("mcp_driver", "initialize"))
        self.assertEqual(ident["server"]["name"], "mcpwitness-test-server")
        self.assertEqual(ident["server"]["command"], ["/usr/bin/python3", SERVER])
        page = self.report(trace, baseline, "html")
        self.assertRegex(page, r'id="identity-client">mcp_driver 1 \(initialize\)</dd>')
        self.assertRegex(page, r'id="identity-server">mcpwitness-test-server 1\.0 '
                         r'\(initialize\); command &quot;/usr/bin/python3&quot;')
        self.assertEqual(page.count("traceparent <code>%s</code>" % TP), 2)

    def test_refuses_bad_traces(self):
        good = self.record("t", [("echo", {"text": "hi"})])
        bad = self.work.join("bad.mcpt")
        with open(good, "rb") as f:
            data = bytearray(f.read())
        data[len(data) // 2] ^= 0x40
        with open(bad, "wb") as f:
            f.write(data)
        out = self.work.join("out.yaml")
        other = mwtest.Workdir()
        self.addCleanup(other.cleanup)
        wrong = mwtest.Keys(other).public
        for trace, key in ((bad, self.keys.public), (good, wrong)):
            r = mwtest.run([mwtest.ANALYZER, "policy", "learn", trace, "-o", out,
                            "-p", mwtest.DEFAULT_POLICY, "--pubkey", key])
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(trace, r.stderr)
            self.assertFalse(os.path.exists(out))
            r = mwtest.run([mwtest.ANALYZER, "diff", "--pubkey", key, "-p",
                            mwtest.DEFAULT_POLICY, good, "--", trace])
            self.assertEqual(r.returncode, 3, r.stderr)
        r = mwtest.run([mwtest.ANALYZER, "diff", good, good])
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing -- TRACE", r.stderr)


if __name__ == "__main__":
    mwtest.main()
