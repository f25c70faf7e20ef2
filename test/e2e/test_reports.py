"""test_reports.py - the report formats of `mcpwitness analyze` on one real recorded session of
the bundled vulnerable example server (test/fixtures/example), recorded once for the class:

- sarif: validates against the official SARIF 2.1.0 schema (sarif-2.1.0-rtm.5.json from the
  npm package @microsoft/jest-sarif, pinned in test/e2e/npm-sarif, installed with
  `npm ci --ignore-scripts`; only the schema file is used) with Debian's python3-jsonschema; a
  deliberately broken copy must fail the same validation, so the check is not vacuous; and
  says what the issue asks: rules with descriptions, levels and security-severity, results
  with the call as logical location, the trace as artifact with its digest.
- html: one self-contained page (no script, nothing fetched: no src/href/url()/@import, and a
  Content-Security-Policy that forbids both), rendered by headless Chromium (Debian's
  chromium, --dump-dom, no network: every host name resolves to nothing and the proxy is a
  closed local port); the rendered DOM shows every call, its effects and every finding, and the
  hostile strings only as text, never as an element.
- determinism: text, json, sarif and html are byte-identical run after run, also when the
  second run has another environment (TZ, LANG, HOME, USER) and working directory.

The session also carries hostile text: a client name (clientInfo), a tool name and an argument
holding a <script> element, and a sensitive file whose path holds one. Every format names who
and what: SARIF in runs[0].properties.identity (the JSON report's identity block, the same),
HTML in its identity section (client and server by name, the client's hostile name as text).
"""
import copy
import hashlib
import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import mwtest  # noqa: E402
from mcp_driver import Session  # noqa: E402

SCHEMA = os.path.join("@microsoft", "jest-sarif", "lib", "schemas", "sarif-2.1.0-rtm.5.json")
HOSTILE = "<script>alert(1)</script>"
CLIENT = "reports-client " + HOSTILE
SERVER = os.path.join(mwtest.EXAMPLE_DIR, "vulnerable_server.py")


def record_session(work, keys, listener):
    """Records the example server through the calls below; returns the trace path."""
    nobody = mwtest.nobody_ids()
    home = work.mkdir("home", owner=nobody)
    work.mkdir("home", ".ssh", owner=nobody, mode=0o700)
    work.write("home/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE\n"
               "-----END OPENSSH PRIVATE KEY-----\n", owner=nobody, mode=0o600)
    work.mkdir("home", ".ssh", "<script>alert(1)<", owner=nobody)
    work.write("home/.ssh/" + HOSTILE, "not a key\n", owner=nobody)
    ws = work.mkdir("workspace", owner=nobody)
    trace = work.join("trace.mcpt")
    env = dict(os.environ, HOME=home)
    s = Session(mwtest.collect_cmd(trace, keys, ["python3", SERVER]), env=env, cwd=ws)
    try:
        s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": CLIENT, "version": "7"}})
        s.notify("notifications/initialized")
        s.call("echo", {"text": HOSTILE})
        s.call("add", {"a": 2, "b": 3})
        s.call("read_file", {"path": "~/.ssh/id_rsa"})
        s.call("run_command", {"command": "id -un; uname -s"})
        s.call("write_file", {"path": "~/.bashrc", "content": "echo hi\n"})
        s.call("fetch_url", {"url": "http://127.0.0.1:%d/beacon" % listener.port})
        s.call("read_file", {"path": "~/.ssh/" + HOSTILE})
        resp = s.raw("tools/call", {"name": HOSTILE, "arguments": {}})
        assert "error" in resp, resp
    finally:
        rc = s.close()
    assert rc == 0, "the collector exited %d" % rc
    return trace


def analyze(trace, keys, fmt, extra=(), **kw):
    r = mwtest.run([mwtest.ANALYZER, "analyze", trace, "--pubkey", keys.public, "-p",
                    mwtest.DEFAULT_POLICY, "--format", fmt] + list(extra), **kw)
    if r.returncode != 0:
        raise AssertionError("analyze --format %s exited %d: %s" % (fmt, r.returncode, r.stderr))
    return r.stdout


class DomText(html.parser.HTMLParser):
    """The tags and the text of a document, and the text of each element with an id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.ids, self.open = set(), [], {}, []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        ident = dict(attrs).get("id")
        if tag not in ("meta", "br"):
            self.open.append(ident)
        if ident:
            self.ids[ident] = []

    def handle_endtag(self, tag):
        if tag not in ("meta", "br") and self.open:
            self.open.pop()

    def handle_data(self, data):
        self.text.append(data)
        for ident in self.open:
            if ident:
                self.ids[ident].append(data)


def chromium_dom(work, page):
    """The DOM of page as headless Chromium built it. No packet can leave: host names resolve
    to nothing and the proxy is a closed port on 127.0.0.1; background services are off."""
    exe = shutil.which("chromium")
    if not exe:
        raise AssertionError("chromium is missing: packaging/install-deps.sh installs it")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--user-data-dir=" + work.join("chromium"), "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-default-apps",
           "--disable-domain-reliability", "--disable-breakpad",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
           "--dump-dom", "file://" + page]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if p.returncode != 0 or "<html" not in out:
        raise AssertionError("chromium exited %s: %s" % (p.returncode, err[-2000:]))
    return out


class Reports(mwtest.E2ETestCase):
    @classmethod
    def setUpClass(cls):
        cls.cwork = mwtest.Workdir("mwreports.")
        cls.keys = mwtest.Keys(cls.cwork)
        listener = mwtest.Listener()
        try:
            cls.trace = record_session(cls.cwork, cls.keys, listener)
        finally:
            listener.close()
        cls.json = json.loads(analyze(cls.trace, cls.keys, "json"))

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("MW_KEEP"):
            cls.cwork.cleanup()

    def test_the_session_has_its_findings(self):
        rules = {f["rule"] for f in self.json["findings"]}
        for rule in ("file.sensitive-read", "exec.unexpected", "file.persistence-write",
                     "mcp.private-key-in-response"):
            self.assertIn(rule, rules)
        with open(self.trace, "rb") as f:
            self.assertEqual(self.json["trace"]["file_blake2b_256"],
                             hashlib.blake2b(f.read(), digest_size=32).hexdigest())

    def test_sarif_validates_and_says_what_it_must(self):
        import jsonschema
        with open(os.path.join(mwtest.npm_install("npm-sarif", SCHEMA), "node_modules",
                               SCHEMA)) as f:
            schema = json.load(f)
        validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
        doc = json.loads(analyze(self.trace, self.keys, "sarif"))
        errors = ["%s: %s" % (list(e.absolute_path), e.message) for e in validator.iter_errors(doc)]
        self.assertEqual(errors, [])
        broken = copy.deepcopy(doc)
        broken["runs"][0]["results"][0]["level"] = "severe"
        self.assertTrue(list(validator.iter_errors(broken)), "the schema check accepts anything")

        self.assertEqual(doc["version"], "2.1.0")
        run = doc["runs"][0]
        driver = run["tool"]["driver"]
        self.assertEqual(driver["name"], "mcpwitness")
        self.assertTrue(driver["version"])
        rules = {r["id"]: r for r in driver["rules"]}
        sread = rules["file.sensitive-read"]
        self.assertTrue(sread["fullDescription"]["text"])
        self.assertEqual(sread["defaultConfiguration"]["level"], "error")
        self.assertEqual(sread["properties"]["security-severity"], "9.5")
        self.assertEqual(rules["net.connect-loopback"]["defaultConfiguration"]["level"], "note")
        # the trace is artifact 0 with its digest; the policy is an artifact too
        art = run["artifacts"][0]
        self.assertEqual(art["roles"], ["analysisTarget"])
        self.assertEqual(art["hashes"]["blake2b-256"], self.json["trace"]["file_blake2b_256"])
        self.assertEqual(art["length"], os.path.getsize(self.trace))
        self.assertEqual(art["location"]["uri"], "file://" + self.trace)
        self.assertEqual(run["artifacts"][1]["roles"], ["policy"])
        # who and what: the identity block of the JSON report, whole
        ident = run["properties"]["identity"]
        self.assertEqual(ident, self.json["identity"])
        self.assertEqual(ident["client"]["name"], CLIENT)
        self.assertEqual(ident["server"]["name"], "mcpwitness-vulnerable-example")
        self.assertEqual(ident["trace_id"], self.json["trace"]["id"])
        inv = run["invocations"][0]
        self.assertTrue(inv["executionSuccessful"])
        self.assertIn("VALID_COMPLETE", inv["toolExecutionNotifications"][0]["message"]["text"])
        # every finding is a result; its logical location is the call it was attributed to
        self.assertEqual(len(run["results"]), len(self.json["findings"]))
        locs = run["logicalLocations"]
        for res, f in zip(run["results"], self.json["findings"]):
            self.assertEqual(res["ruleId"], f["rule"])
            self.assertEqual(driver["rules"][res["ruleIndex"]]["id"], f["rule"])
            loc = res["locations"][0]
            self.assertEqual(loc["physicalLocation"]["artifactLocation"]["index"], 0)
            if f["call"]["call"]:
                ref = locs[loc["logicalLocations"][0]["index"]]
                self.assertEqual(ref["properties"]["index"], f["call"]["call"]["index"])
                self.assertTrue(ref["fullyQualifiedName"].startswith(
                    "call %d " % f["call"]["call"]["index"]))
        sensitive = [r for r in run["results"] if r["ruleId"] == "file.sensitive-read" and
                     "id_rsa" in r["message"]["text"]]
        self.assertTrue(sensitive)
        ref = locs[sensitive[0]["locations"][0]["logicalLocations"][0]["index"]]
        self.assertEqual(ref["name"], "read_file")

    def test_html_is_self_contained_and_shows_calls_and_findings(self):
        page = analyze(self.trace, self.keys, "html")
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertIn("Content-Security-Policy", page)
        self.assertIn("default-src 'none'", page)
        for bad in (r"<script", r"<link", r"<img", r"<iframe", r"<object", r"<embed",
                    r"\bsrc\s*=", r"\bhref\s*=", r"url\(", r"@import"):
            self.assertIsNone(re.search(bad, page, re.I), bad)
        path = self.work.write("report.html", page)
        dom = DomText()
        dom.feed(chromium_dom(self.work, path))
        self.assertNotIn("script", dom.tags)  # the hostile strings made no element
        text = "".join(dom.text)
        self.assertIn("VALID_COMPLETE", "".join(dom.ids["verdict"]))
        # the identity section: the client's hostile name as text, the server, its digest
        ident = self.json["identity"]
        self.assertEqual("".join(dom.ids["identity-client"]), CLIENT + " 7 (initialize)")
        server = "".join(dom.ids["identity-server"])
        self.assertTrue(server.startswith("mcpwitness-vulnerable-example 1.0 (initialize)"),
                        server)
        self.assertIn("blake2b-256:" + ident["server"]["exe_blake2b_256"], server)
        self.assertIn("uid %d" % ident["user"]["uid"], "".join(dom.ids["identity-user"]))
        self.assertIn(ident["host"]["kernel"], "".join(dom.ids["identity-host"]))
        calls = self.json["calls"]
        self.assertEqual(len(calls), 9)  # initialize and 8 tools/call
        for c in calls:
            block = "".join(dom.ids["call-%d" % c["index"]])
            self.assertIn("call %d %s" % (c["index"], c["method"]), block)
            if c["tool"]:
                self.assertIn(c["tool"], block)
        hostile_call = [c for c in calls if c["tool"] == HOSTILE]
        self.assertEqual(len(hostile_call), 1)  # the tool name, shown as text
        self.assertIn(HOSTILE, "".join(dom.ids["call-%d" % hostile_call[0]["index"]]))
        for f in self.json["findings"]:
            self.assertIn(f["message"], "".join(dom.ids["findings"]))
            call = f["call"]["call"]
            if call:  # each finding also stands in its call's block of the timeline
                block = "".join(dom.ids["call-%d" % call["index"]])
                self.assertIn(f["rule"], block)
                self.assertIn(f["message"], block)
        hostile_read = [f for f in self.json["findings"] if f["rule"] == "file.sensitive-read"
                        and HOSTILE in (f["evidence"]["path"] or "")]
        self.assertTrue(hostile_read, "the hostile path was not found")
        # effects: the shell-out of run_command shows its execs
        run_cmd = [c for c in calls if c["tool"] == "run_command"][0]
        self.assertIn("/usr/bin/uname", "".join(dom.ids["call-%d" % run_cmd["index"]]))
        self.assertIn("findings:", "".join(dom.ids["summary"]))
        self.assertIn(HOSTILE, text)

    def test_every_format_is_deterministic(self):
        other = dict(os.environ, TZ="Asia/Kathmandu", LANG="de_DE.UTF-8", LC_ALL="de_DE.UTF-8",
                     HOME="/nonexistent", USER="someone-else")
        for fmt in ("text", "json", "sarif", "html"):
            first = analyze(self.trace, self.keys, fmt)
            second = analyze(self.trace, self.keys, fmt)
            third = analyze(self.trace, self.keys, fmt, env=other, cwd="/")
            self.assertGreater(len(first), 1000, fmt)
            self.assertEqual(first, second, fmt)
            self.assertEqual(first, third, fmt)


if __name__ == "__main__":
    mwtest.main()
