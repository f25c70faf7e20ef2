"""test_interop.py - real third-party MCP software from npm, recorded and attributed: the
reference @modelcontextprotocol/server-filesystem, driven by a client built on
@modelcontextprotocol/sdk (test/e2e/npm/client.mjs), both at the versions pinned in
test/e2e/npm/package-lock.json, installed with `npm ci --ignore-scripts` into the build
directory and run with node directly.

Each of write_file, read_text_file, list_directory, move_file and edit_file gets its own file
events (an overwrite's temp file and rename included) attributed to it, never to another call;
then four calls at once (Node does the file work on libuv pool threads): each one's file is
attributed to it by evidence or window, never to one of the other three.
Skips (exit 77) only when npm's registry cannot be reached.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

NPM_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npm")
NPM_DIR = os.path.join(mwtest.BUILD_DIR, "npm-e2e")
SERVER = os.path.join(NPM_DIR, "node_modules", "@modelcontextprotocol", "server-filesystem",
                      "dist", "index.js")


def install():
    """npm ci of the pinned lock into the build directory (once: kept while the lock is the
    same). Exits 77 when the registry is unreachable."""
    stamp = os.path.join(NPM_DIR, ".lock-installed")
    with open(os.path.join(NPM_SRC, "package-lock.json"), "rb") as f:
        lock = f.read()
    if os.path.exists(SERVER) and os.path.exists(stamp):
        with open(stamp, "rb") as f:
            if f.read() == lock:
                return
    shutil.rmtree(NPM_DIR, ignore_errors=True)
    os.makedirs(NPM_DIR)
    for name in ("package.json", "package-lock.json", "client.mjs"):
        shutil.copy(os.path.join(NPM_SRC, name), NPM_DIR)
    r = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=NPM_DIR,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        text = r.stdout + r.stderr
        if any(k in text for k in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT",
                                   "ECONNRESET", "network")):
            print("SKIP: npm's registry is unreachable: %s" % text.strip().splitlines()[-1])
            sys.exit(mwtest.SKIP)
        raise AssertionError("npm ci failed: %s" % text)
    with open(stamp, "wb") as f:
        f.write(lock)
    os.chmod(NPM_DIR, 0o755)


def by_args(calls, tool, key, value):
    found = [c for c in calls if c["tool"] == tool and c["arguments"] and
             json.loads(c["arguments"]).get(key) == value]
    assert len(found) == 1, (tool, value, [(c["tool"], c["arguments"]) for c in calls])
    return found[0]


def files(call):
    return call["effects"]["files"]


def attributed(call, needle):
    """Effects naming needle, attributed to call for sure (not ambiguously)."""
    return [e for e in files(call) if needle in e["effect"] and e["rules"] != ["ambiguous"]]


class Interop(mwtest.E2ETestCase):
    @classmethod
    def setUpClass(cls):
        install()

    def test_server_filesystem(self):
        keys = mwtest.Keys(self.work)
        nobody = mwtest.nobody_ids()
        ws = self.work.mkdir("ws", owner=nobody)
        sub = self.work.mkdir("ws", "sub", owner=nobody)
        other = self.work.write("ws/other.txt", "other", owner=nobody)
        notes, moved = os.path.join(ws, "notes.txt"), os.path.join(ws, "moved.txt")
        p1 = os.path.join(ws, "p1.txt")
        script = [
            {"tool": "write_file", "arguments": {"path": notes, "content": "hello again\n"}},
            {"tool": "write_file", "arguments": {"path": notes, "content": "hello again!\n"}},
            {"tool": "read_text_file", "arguments": {"path": notes}},
            {"tool": "list_directory", "arguments": {"path": sub}},
            {"tool": "edit_file", "arguments": {"path": notes, "edits": [
                {"oldText": "again!", "newText": "there"}]}},
            {"tool": "move_file", "arguments": {"source": notes, "destination": moved}},
            {"pipeline": [
                {"tool": "read_text_file", "arguments": {"path": moved}},
                {"tool": "list_directory", "arguments": {"path": ws}},
                {"tool": "write_file", "arguments": {"path": p1, "content": "p1\n"}},
                {"tool": "read_text_file", "arguments": {"path": other}},
            ]},
        ]
        spath = self.work.write("script.json", json.dumps(script))
        trace = self.work.join("trace.mcpt")
        cmd = ["node", os.path.join(NPM_DIR, "client.mjs"), spath, "--"] + mwtest.collect_cmd(
            trace, keys, ["node", SERVER, ws])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ws)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        results = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(results), 10, r.stdout)
        self.assertFalse([x for x in results if x["isError"]], r.stdout)

        out = mwtest.run([mwtest.ANALYZER, "calls", trace, "--pubkey", keys.public, "--json"])
        self.assertEqual(out.returncode, 0, out.stderr)
        doc = json.loads(out.stdout)
        calls = [c for c in doc["calls"] if c["method"] == "tools/call"]
        self.assertEqual(len(calls), 10)
        self.assertTrue(all(c["incomplete"] is None for c in calls), calls)
        first, second = [c for c in calls if c["tool"] == "write_file"][:2]
        # a new file: created in place
        self.assertTrue([e for e in attributed(first, "openat " + notes + " (write)")],
                        files(first))
        # the overwrite: a temp file next to it, then renamed over it
        tmp = [e for e in attributed(second, notes + ".") if ".tmp" in e["effect"]]
        self.assertTrue(tmp, files(second))
        ren = [e for e in attributed(second, "rename") if notes in e["effect"]]
        self.assertTrue(ren, files(second))
        read = by_args(calls, "read_text_file", "path", notes)
        self.assertTrue(attributed(read, "openat " + notes + " (read)"), files(read))
        lst = by_args(calls, "list_directory", "path", sub)
        self.assertTrue(attributed(lst, "openat " + sub), files(lst))
        edit = [c for c in calls if c["tool"] == "edit_file"][0]
        self.assertTrue(attributed(edit, "openat " + notes + " (read)"), files(edit))
        self.assertTrue([e for e in attributed(edit, "rename") if ".tmp" in e["effect"]],
                        files(edit))
        move = by_args(calls, "move_file", "source", notes)
        self.assertTrue([e for e in attributed(move, "rename") if moved in e["effect"]],
                        files(move))
        # the four at once: each its own file, never another's
        four = [by_args(calls, "read_text_file", "path", moved),
                by_args(calls, "list_directory", "path", ws),
                by_args(calls, "write_file", "path", p1),
                by_args(calls, "read_text_file", "path", other)]
        paths = [moved, ws, p1, other]
        for c, p in zip(four, paths):
            mine = [e for e in attributed(c, "openat " + p + " ") if e["effect"].startswith("openat")]
            self.assertTrue(mine, (p, files(c)))
            for c2, p2 in zip(four, paths):
                if p2 != p and p2 != ws:
                    self.assertFalse(attributed(c, "openat " + p2 + " "),
                                     "%s's file attributed to the call of %s" % (p2, p))
        for c in calls:  # the file of one sequential call is never attributed to another
            for e in attributed(c, moved):
                if "rename" not in e["effect"]:
                    self.assertIn(c["tool"], ("read_text_file",), (c["tool"], e))


if __name__ == "__main__":
    mwtest.main()
