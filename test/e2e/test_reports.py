"""test_reports.py - the report formats of `mcpwitness analyze` on one real recorded session of
the bundled vulnerable example server (test/fixtures/example), recorded once for the class:

- sarif: validates against the official SARIF 2.1.0 schema (sarif-2.1.0-rtm.5.json from the
  npm package @microsoft/jest-sarif, pinned in test/e2e/npm-sarif, installed with
  `npm ci --ignore-scripts`; only the schema file is used) with Debian's python3-jsonschema; a
  deliberately broken copy must fail the same validation, so the check is not vacuous; and
  says what the issue asks: rules with descriptions, levels and security-severity, results
  with the call as logical location, the trace as artifact with its digest.

The session also carries hostile text: a tool name and an argument holding a <script> element,
and a sensitive file whose path holds one.
"""
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import mwtest  # noqa: E402
from mcp_driver import Session  # noqa: E402

SCHEMA = os.path.join("@microsoft", "jest-sarif", "lib", "schemas", "sarif-2.1.0-rtm.5.json")
HOSTILE = "<script>alert(1)</script>"
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
        s.initialize()
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


def analyze(trace, keys, fmt, extra=()):
    r = mwtest.run([mwtest.ANALYZER, "analyze", trace, "--pubkey", keys.public, "-p",
                    mwtest.DEFAULT_POLICY, "--format", fmt] + list(extra))
    if r.returncode != 0:
        raise AssertionError("analyze --format %s exited %d: %s" % (fmt, r.returncode, r.stderr))
    return r.stdout


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


if __name__ == "__main__":
    mwtest.main()
