"""test_quiet_default.py - the default policy is quiet on benign servers: real third-party MCP
servers from npm (@modelcontextprotocol/server-filesystem, server-memory, server-everything,
pinned in test/e2e/npm/package-lock.json, installed with `npm ci --ignore-scripts`, run with
node directly, never npx), each recorded by the real collector through a realistic session
driven by the SDK client (test/e2e/npm/client.mjs), give no finding of severity medium or
above. The server runs as nobody with its own HOME, its workspace as cwd.

    filesystem  list, read, write, overwrite, edit, move, search, directory tree, file info
    memory      create entities and relations, add observations, read the graph, search, open
    everything  echo, get-sum, a long-running operation with progress steps

Skips (exit 77) only when npm's registry cannot be reached.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

MCP = os.path.join("@modelcontextprotocol")
SERVERS = {
    "filesystem": os.path.join(MCP, "server-filesystem", "dist", "index.js"),
    "memory": os.path.join(MCP, "server-memory", "dist", "index.js"),
    "everything": os.path.join(MCP, "server-everything", "dist", "index.js"),
}
LOUD = ("medium", "high", "critical")


class QuietDefault(mwtest.E2ETestCase):
    @classmethod
    def setUpClass(cls):
        cls.npm = mwtest.npm_install("npm", SERVERS["everything"])

    def session(self, name, script, args=(), env=()):
        """Records server name through script; returns the JSON report of the default policy."""
        keys = mwtest.Keys(self.work)
        nobody = mwtest.nobody_ids()
        home = self.work.mkdir("home", owner=nobody)
        ws = self.work.mkdir("ws", owner=nobody)
        spath = self.work.write("script.json", json.dumps(script))
        trace = self.work.join("trace.mcpt")
        server = ["node", os.path.join(self.npm, "node_modules", SERVERS[name])] + list(args)
        cmd = ["node", os.path.join(self.npm, "client.mjs"), spath, "--"] + mwtest.collect_cmd(
            trace, keys, server)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ws,
                           env=dict(os.environ, HOME=home, **dict(env)))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        results = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(results), sum(len(s.get("pipeline", [s])) for s in script))
        self.assertFalse([x for x in results if x["isError"]], r.stdout)
        doc = mwtest.analyze_json(trace, keys)
        self.assertEqual(doc["trace"]["verdict"], "VALID_COMPLETE")
        self.assertGreater(doc["stats"]["events"], 100)  # the server's work was recorded
        calls = [c for c in doc["calls"] if c["method"] == "tools/call"]
        self.assertEqual(len(calls), len(results))  # every call seen on the channel
        print("%s: %d calls, %d events, findings: %s" % (name, len(calls), doc["stats"]["events"],
              {k: v for k, v in doc["summary"].items() if v}))
        return doc, ws, home

    def assert_quiet(self, doc):
        loud = ["%s %s: %s (%s)" % (f["severity"], f["rule"], f["message"], f["evidence"]["path"])
                for f in doc["findings"] if f["severity"] in LOUD]
        self.assertEqual(loud, [])

    def test_filesystem(self):
        ws = self.work.join("ws")
        p = lambda rel: os.path.join(ws, rel)  # noqa: E731
        script = [
            {"tool": "list_allowed_directories", "arguments": {}},
            {"tool": "create_directory", "arguments": {"path": p("notes")}},
            {"tool": "write_file", "arguments": {"path": p("notes/a.md"), "content": "# a\n"}},
            {"tool": "write_file", "arguments": {"path": p("notes/a.md"), "content": "# a!\n"}},
            {"tool": "read_text_file", "arguments": {"path": p("notes/a.md")}},
            {"tool": "edit_file", "arguments": {"path": p("notes/a.md"), "edits": [
                {"oldText": "a!", "newText": "b"}]}},
            {"tool": "list_directory", "arguments": {"path": ws}},
            {"tool": "directory_tree", "arguments": {"path": ws}},
            {"tool": "search_files", "arguments": {"path": ws, "pattern": "*.md"}},
            {"tool": "get_file_info", "arguments": {"path": p("notes/a.md")}},
            {"tool": "move_file", "arguments": {"source": p("notes/a.md"),
                                                "destination": p("notes/b.md")}},
            {"tool": "read_multiple_files", "arguments": {"paths": [p("notes/b.md")]}},
        ]
        doc, _, _ = self.session("filesystem", script, args=[ws])
        self.assert_quiet(doc)

    def test_memory(self):
        mem = self.work.join("ws", "memory.jsonl")
        script = [
            {"tool": "create_entities", "arguments": {"entities": [
                {"name": "Ada", "entityType": "person", "observations": ["writes programs"]},
                {"name": "Engine", "entityType": "machine", "observations": ["computes"]}]}},
            {"tool": "create_relations", "arguments": {"relations": [
                {"from": "Ada", "to": "Engine", "relationType": "programs"}]}},
            {"tool": "add_observations", "arguments": {"observations": [
                {"entityName": "Ada", "contents": ["first programmer"]}]}},
            {"tool": "read_graph", "arguments": {}},
            {"tool": "search_nodes", "arguments": {"query": "Ada"}},
            {"tool": "open_nodes", "arguments": {"names": ["Engine"]}},
        ]
        doc, _, _ = self.session("memory", script, env={"MEMORY_FILE_PATH": mem})
        self.assert_quiet(doc)

    def test_everything(self):
        script = [
            {"tool": "echo", "arguments": {"message": "hello"}},
            {"tool": "get-sum", "arguments": {"a": 2, "b": 3}},
            {"tool": "trigger-long-running-operation", "arguments": {"duration": 2, "steps": 4}},
        ]
        doc, _, _ = self.session("everything", script, args=["stdio"])
        self.assert_quiet(doc)


if __name__ == "__main__":
    mwtest.main()
