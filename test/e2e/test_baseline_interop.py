"""test_baseline_interop.py - a baseline of a real third-party server: the reference
@modelcontextprotocol/server-filesystem (pinned, installed by mwtest.npm_install() with
npm ci --ignore-scripts into the build directory, run as node .../dist/index.js), driven by the
SDK client of test/e2e/npm/client.mjs, recorded by the real collector.

`policy learn` from one session; a different benign session of the same tools (other files,
other directories of the workspace) gives no drift finding and nothing new in `diff`; a
session in which read_text_file also reads a file outside the learned prefixes (in a second
allowed directory, outside the workspace) gives exactly one drift finding, drift.read of that
file in that tool, and in `diff` exactly that read and the new edge to the extra call.
Skips (exit 77) only when npm's registry cannot be reached.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
import test_interop  # noqa: E402


class BaselineInterop(mwtest.E2ETestCase):
    @classmethod
    def setUpClass(cls):
        mwtest.npm_install("npm", test_interop.SERVER_JS)

    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        nobody = mwtest.nobody_ids()
        self.ws = self.work.mkdir("ws", owner=nobody)
        self.other = self.work.mkdir("other", owner=nobody)
        for rel in ("ws/docs/a.txt", "ws/docs/b.txt", "ws/notes/n.txt", "other/x.txt"):
            self.work.write(rel, "text of %s\n" % rel, owner=nobody)
        for d in ("ws/docs", "ws/notes"):
            os.chown(self.work.join(d), *nobody)

    def session(self, name, script):
        spath = self.work.write(name + ".json", json.dumps(script))
        trace = self.work.join(name + ".mcpt")
        cmd = ["node", os.path.join(test_interop.NPM_DIR, "client.mjs"), spath, "--"] + \
            mwtest.collect_cmd(trace, self.keys, ["node", test_interop.SERVER, self.ws,
                                                  self.other])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=self.ws)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        results = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(results), len(script), r.stdout)
        self.assertFalse([x for x in results if x["isError"]], r.stdout)
        return trace

    def ws_path(self, *parts):
        return os.path.join(self.ws, *parts)

    def drift(self, trace, baseline):
        doc = mwtest.analyze_json(trace, self.keys, (mwtest.DEFAULT_POLICY, baseline))
        return [f for f in doc["findings"] if f["category"] == "drift"], \
            sorted(set(f["rule"] for f in doc["findings"] if f["category"] != "drift"))

    def diff_new(self, bases, trace):
        r = mwtest.run([mwtest.ANALYZER, "diff", "--json", "--pubkey", self.keys.public,
                        "-p", mwtest.DEFAULT_POLICY] + bases + ["--", trace])
        self.assertIn(r.returncode, (0, 1), r.stderr)
        doc = json.loads(r.stdout)
        return r.returncode, [(s["name"], n["text"]) for s in doc["scopes"] for n in s["new"]]

    def test_filesystem_server(self):
        def learning(note):
            return [
                {"tool": "read_text_file", "arguments": {"path": self.ws_path("docs", "a.txt")}},
                {"tool": "list_directory", "arguments": {"path": self.ws_path("docs")}},
                {"tool": "write_file", "arguments": {"path": self.ws_path("notes", note),
                                                     "content": "one\n"}},
                {"tool": "read_text_file", "arguments": {"path": self.ws_path("notes", "n.txt")}},
            ]
        # learned from two sessions, as a user would: node's own start-up is not the same
        # every time (it opens its executable at start, but not always: one CI run's replay
        # drifted on it against a single learned session)
        learned = [self.session("learned", learning("n1.txt")),
                   self.session("learned2", learning("n1b.txt"))]
        def benign(note):  # write_file creates a new file, as in the learned session (an
            # overwrite goes through a temp file and a rename: behaviour the baseline never saw)
            return [
                {"tool": "read_text_file", "arguments": {"path": self.ws_path("docs", "b.txt")}},
                {"tool": "list_directory", "arguments": {"path": self.ws_path("notes")}},
                {"tool": "write_file", "arguments": {"path": self.ws_path("docs", note),
                                                     "content": "two\n"}},
                {"tool": "read_text_file", "arguments": {"path": self.ws_path("docs", "a.txt")}},
            ]
        replay = self.session("replay", benign("n2.txt"))
        outside = os.path.join(self.other, "x.txt")
        reads_out = self.session("outside", benign("n3.txt") + [
            {"tool": "read_text_file", "arguments": {"path": outside}}])

        bl = self.work.join("baseline.yaml")
        r = mwtest.run([mwtest.ANALYZER, "policy", "learn"] + learned + ["-o", bl,
                        "-p", mwtest.DEFAULT_POLICY, "--pubkey", self.keys.public])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(bl) as f:
            text = f.read()
        self.assertIn("bl.tool.read_text_file.read:", text)
        self.assertIn("/npm-e2e/node_modules/**\"  # t1", text)  # the runtime's package tree

        drift, others = self.drift(replay, bl)
        self.assertEqual(drift, [])
        self.assertEqual(self.diff_new(learned, replay), (0, []))

        drift, others2 = self.drift(reads_out, bl)
        self.assertEqual([(f["rule"], f["call"]["call"]["tool"], f["evidence"]["path"])
                          for f in drift], [("drift.read", "read_text_file", outside)], drift)
        self.assertEqual(others2, others)  # the default policy's own findings, unchanged
        code, new = self.diff_new(learned, reads_out)
        # the read, and the step to the extra call (a sequence, not a sequence drift: neither
        # call read a secret or sent data)
        self.assertEqual((code, new), (1, [("read_text_file", "read ${tmp}/**"),
                                           (None, "read_text_file -> read_text_file")]), new)


if __name__ == "__main__":
    mwtest.main()
