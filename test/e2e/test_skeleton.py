"""test_skeleton.py - the walking skeleton end to end (issue 2): a real process tree recorded
by the real collector on this kernel, verified with the public key, analyzed with the default
policy; the collector as a transparent wrapper (exit status, signals) and its refusals."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE KEY FOR A TEST\n-----END OPENSSH PRIVATE KEY-----\n"


def events(records):
    return [r for r in records if r.get("type") == "event"]


def tree_pids(records, root):
    """pids of root and every process forked below it, from the trace's fork records."""
    pids = {root}
    for r in events(records):
        if r.get("op") == "fork" and r.get("pid") in pids and r.get("args"):
            pids.add(r["args"][0])
    return pids


class Skeleton(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.nobody = mwtest.nobody_ids()
        self.home = self.work.mkdir("home", owner=self.nobody)
        self.work.mkdir("home", ".ssh", owner=self.nobody, mode=0o700)
        self.secret = self.work.write("home/.ssh/id_rsa", FAKE_KEY, owner=self.nobody, mode=0o600)
        self.trace = self.work.join("trace.mcpt")
        self.env = dict(os.environ, HOME=self.home)

    def record_script(self, script, **kw):
        r = mwtest.record(self.trace, self.keys, ["/bin/bash", "-c", script], env=self.env, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_script_findings(self):
        listener = mwtest.Listener()
        self.addCleanup(listener.close)
        # an unrelated busy process beside the recording: none of its events may appear
        busy = subprocess.Popen(["/bin/sh", "-c", "while :; do cat /etc/hostname >/dev/null; done"])
        self.addCleanup(lambda: (busy.kill(), busy.wait()))
        self.record_script('cat "$HOME/.ssh/id_rsa" >/dev/null; /bin/true; '
                           'exec 3<>/dev/tcp/127.0.0.1/%d; exec 3>&-' % listener.port)

        r = mwtest.verify(self.trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VALID_COMPLETE", r.stdout)

        records = mwtest.dump_json(self.trace, self.keys)
        header = records[0]
        self.assertEqual(header["type"], "header")
        target = header["target"]
        self.assertEqual(target["uid"], self.nobody[0])
        self.assertEqual(target["home"], self.home)
        self.assertEqual(target["exe"], "/usr/bin/bash")
        server = target["pid"]
        pids = tree_pids(records, server)
        self.assertNotIn(busy.pid, pids)
        for ev in events(records):
            self.assertIn(ev["pid"], pids, "event of an untracked process: %r" % ev)

        execs = {e["path"]: e for e in events(records) if e["op"] == "exec"}
        self.assertEqual(execs["/bin/true"]["argv"], ["/bin/true"])
        self.assertEqual(execs["/bin/true"]["opened_path"], "/usr/bin/true")
        self.assertEqual(execs["/usr/bin/cat"]["argv"], ["cat", self.secret])
        opens = [e for e in events(records) if e["op"] == "openat" and e.get("path") == self.secret]
        self.assertEqual(len(opens), 1)
        self.assertEqual(opens[0]["result"], "success")
        self.assertEqual(opens[0]["opened_path"], self.secret)
        self.assertEqual(opens[0]["pid"], execs["/usr/bin/cat"]["pid"])
        # bash's /dev/tcp resolves "127.0.0.1" through NSS, which on a host with nscd configured
        # first tries the unix socket /var/run/nscd/socket: only the inet connects are the script's
        connects = [e for e in events(records) if e["op"] == "connect" and e["result"] != "pending"
                    and not e["addr"].startswith("unix:")]
        self.assertEqual([c["addr"] for c in connects], ["127.0.0.1:%d" % listener.port])
        self.assertEqual(connects[0]["result"], "success")
        self.assertEqual(connects[0]["pid"], server)
        self.assertGreaterEqual(listener.accepted, 1)

        report = mwtest.analyze_json(self.trace, self.keys)
        self.assertEqual(report["trace"]["verdict"], "VALID_COMPLETE")
        by_rule = {}
        for f in report["findings"]:
            by_rule.setdefault(f["rule"], []).append(f)
        read = by_rule["file.sensitive-read"]
        self.assertEqual(len(read), 1)
        self.assertEqual(read[0]["severity"], "critical")
        self.assertEqual(read[0]["evidence"]["path"], self.secret)
        self.assertEqual(read[0]["process"]["pid"], execs["/usr/bin/cat"]["pid"])
        self.assertEqual(read[0]["process"]["argv"], ["cat", self.secret])
        self.assertEqual(read[0]["process"]["lineage"][-1]["pid"], server)
        exec_paths = sorted(f["evidence"]["path"] for f in by_rule["exec.unexpected"])
        self.assertEqual(exec_paths, ["/bin/true", "/usr/bin/cat"])
        true_exec = [f for f in by_rule["exec.unexpected"] if f["evidence"]["path"] == "/bin/true"][0]
        self.assertEqual(true_exec["process"]["argv"], ["/bin/true"])
        net = by_rule["net.connect-loopback"]
        self.assertEqual([f["evidence"]["addr"] for f in net], ["127.0.0.1:%d" % listener.port])
        self.assertEqual(net[0]["process"]["pid"], server)

    def test_benign_command_has_no_findings(self):
        self.record_script("/bin/true")
        report = mwtest.analyze_json(self.trace, self.keys)
        self.assertEqual(report["findings"], [], report["findings"])

    def test_exit_status_and_signals(self):
        r = mwtest.record(self.trace, self.keys, ["/bin/sh", "-c", "exit 7"])
        self.assertEqual(r.returncode, 7, r.stderr)
        os.unlink(self.trace)
        r = mwtest.record(self.trace, self.keys, ["/bin/sh", "-c", "kill -KILL $$"])
        self.assertEqual(r.returncode, 128 + signal.SIGKILL, r.stderr)
        os.unlink(self.trace)
        # TERM to the collector reaches the server, which exits by it; FINAL seal says SIGNAL
        p = subprocess.Popen(mwtest.collect_cmd(self.trace, self.keys, ["sleep", "30"]),
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        deadline = time.time() + 20
        while time.time() < deadline and not self._has_sleep_child(p.pid):
            time.sleep(0.05)
        os.kill(p.pid, signal.SIGTERM)
        self.assertEqual(p.wait(timeout=20), 128 + signal.SIGTERM, p.stderr.read())
        r = mwtest.verify(self.trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("end reason SIGNAL", r.stdout)

    @staticmethod
    def _has_sleep_child(pid):
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            for k in kids:
                with open("/proc/%s/comm" % k) as f:
                    if f.read().strip() == "sleep":
                        return True
        except OSError:
            pass
        return False

    def test_collector_refusals(self):
        # root without --allow-root, an existing output file, a missing key: one line, exit 2
        env = {k: v for k, v in os.environ.items() if k not in ("SUDO_UID", "SUDO_GID")}
        r = mwtest.record(self.trace, self.keys, ["/bin/true"], user=None, env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("refusing to run COMMAND as root", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.trace))
        self.work.write("trace.mcpt", "keep me")
        r = mwtest.record(self.trace, self.keys, ["/bin/true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("refusing to overwrite", r.stderr)
        with open(self.trace) as f:
            self.assertEqual(f.read(), "keep me")
        r = mwtest.run([mwtest.COLLECT, "-o", self.work.join("t2"), "-k", self.work.join("nokey"),
                        "--user", "nobody", "--", "/bin/true"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("nokey", r.stderr)
        self.assertFalse(os.path.exists(self.work.join("t2")))

    def test_bad_traces_give_one_line_errors(self):
        self.record_script("/bin/true")
        with open(self.trace, "rb") as f:
            data = f.read()
        cut = self.work.join("cut.mcpt")
        with open(cut, "wb") as f:
            f.write(data[:len(data) - 40])
        r = mwtest.verify(cut, self.keys)
        self.assertEqual(r.returncode, 5, r.stdout + r.stderr)  # a valid prefix at best
        self.assertIn("no FINAL seal", r.stdout)
        r = mwtest.run([mwtest.ANALYZER, "analyze", cut, "--pubkey", self.keys.public,
                        "-p", mwtest.DEFAULT_POLICY])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        other = mwtest.Keys.__new__(mwtest.Keys)
        other.dir = self.work.join("other")
        mwtest.run([mwtest.ANALYZER, "keygen", "-o", other.dir])
        other.public = os.path.join(other.dir, "signing.pub")
        r = mwtest.verify(self.trace, other)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        notatrace = self.work.write("notatrace", "hello\n")
        for cmd in (["verify", notatrace, "--pubkey", self.keys.public],
                    ["dump", notatrace],
                    ["analyze", notatrace, "--pubkey", self.keys.public, "-p", mwtest.DEFAULT_POLICY],
                    ["dump", self.work.join("missing")]):
            r = mwtest.run([mwtest.ANALYZER] + cmd)
            self.assertNotEqual(r.returncode, 0, cmd)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (cmd, r.stderr))
            self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    mwtest.main()
