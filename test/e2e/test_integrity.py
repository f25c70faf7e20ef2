"""test_integrity.py - trace integrity with the real collector (issue 6): live verification of a
trace streamed through a FIFO (-o FIFO) and through a pipe (--output-fd), with seals verified
while the collector still runs; a collector killed with SIGKILL leaves a valid prefix; evidence
for tickets (an excerpt of a recorded event and the DSSE envelope of the FINAL seal) checked by
mcpwitness and by the independent Python verifier of test/fixtures/golden."""
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

sys.path.insert(0, os.path.join(mwtest.SOURCE_DIR, "test", "fixtures", "golden"))
import independent_check  # noqa: E402
import independent_evidence  # noqa: E402

# A server that keeps doing something observable for about `n` tenths of a second.
BUSY = 'i=0; while [ $i -lt %d ]; do cat /etc/hostname >/dev/null; sleep 0.1; i=$((i+1)); done'


def kill_quietly(p):
    if p.poll() is None:
        p.kill()
        p.wait(timeout=10)


class Integrity(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def start(self, cmd, **kw):
        p = subprocess.Popen(cmd, **kw)
        self.addCleanup(kill_quietly, p)
        return p

    def collect_fd(self, fd, script):
        return [mwtest.COLLECT, "--output-fd", str(fd), "-k", self.keys.secret, "--user", "nobody",
                "--", "/bin/sh", "-c", script]

    def read_progress(self, verifier, collector, deadline):
        """stderr lines of a `verify --progress`; asserts the first seal line arrives while
        the collector is still recording. Returns all stderr text."""
        seen_live, text = False, ""
        while time.time() < deadline:
            ready, _, _ = select.select([verifier.stderr], [], [], 0.2)
            if not ready:
                continue
            line = verifier.stderr.readline()
            if not line:
                break
            text += line
            if " verified: records through " in line and collector.poll() is None:
                seen_live = True
        self.assertTrue(seen_live, "no seal verified while the collector ran:\n" + text)
        return text

    def test_fifo_live_verify(self):
        fifo = self.work.join("live.fifo")
        os.mkfifo(fifo, 0o600)
        verifier = self.start(["/bin/sh", "-c", 'exec "$0" verify - --pubkey "$1" --progress < "$2"',
                               mwtest.ANALYZER, self.keys.public, fifo],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        collector = self.start(mwtest.collect_cmd(fifo, self.keys, ["/bin/sh", "-c", BUSY % 40]),
                               stderr=subprocess.DEVNULL)
        progress = self.read_progress(verifier, collector, time.time() + 60)
        self.assertEqual(collector.wait(timeout=60), 0)
        out, err = verifier.communicate(timeout=60)
        self.assertEqual(verifier.returncode, 0, out + progress + err)
        self.assertTrue(out.startswith("VALID_COMPLETE: all "), out)
        self.assertIn("end reason TARGET_EXITED", out)

    def test_pipe_live_analyze_and_kill(self):
        # --output-fd into a pipe read by `analyze - --verify-before-release`
        r, w = os.pipe()
        analyzer = self.start([mwtest.ANALYZER, "analyze", "-", "--pubkey", self.keys.public,
                               "-p", mwtest.DEFAULT_POLICY, "--verify-before-release",
                               "--format", "json"],
                              stdin=r, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        collector = self.start(self.collect_fd(w, BUSY % 15), pass_fds=(w,),
                               stderr=subprocess.DEVNULL)
        os.close(r)
        os.close(w)
        self.assertEqual(collector.wait(timeout=60), 0)
        out, err = analyzer.communicate(timeout=60)
        self.assertEqual(analyzer.returncode, 0, err)
        report = json.loads(out)
        self.assertEqual(report["trace"]["verdict"], "VALID_COMPLETE")
        self.assertTrue(report["trace"]["verify_before_release"])
        self.assertEqual(report["trace"]["records_not_released"], 0)

        # the same through a pipe, but the collector is killed: the reader sees a valid prefix
        r, w = os.pipe()
        verifier = self.start([mwtest.ANALYZER, "verify", "-", "--pubkey", self.keys.public,
                               "--progress"],
                              stdin=r, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        collector = self.start(self.collect_fd(w, BUSY % 600), pass_fds=(w,),
                               stderr=subprocess.DEVNULL)
        os.close(r)
        os.close(w)
        self.read_progress(verifier, collector, time.time() + 60)
        os.kill(collector.pid, signal.SIGKILL)
        collector.wait(timeout=20)
        out, err = verifier.communicate(timeout=60)
        self.assertEqual(verifier.returncode, 5, out + err)
        self.assertRegex(out, r"^VALID_PREFIX: verified through record [1-9]\d*")

    def test_sigkill_leaves_valid_prefix(self):
        collector = self.start(mwtest.collect_cmd(self.trace, self.keys,
                                                  ["/bin/sh", "-c", BUSY % 600]),
                               stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        seals = 0
        while time.time() < deadline and seals < 3:  # a few seconds of recording: 3 seals
            time.sleep(0.5)
            r = mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey", self.keys.public,
                            "--json"])
            if r.stdout.strip():
                seals = json.loads(r.stdout)["seals_verified"]
        self.assertGreaterEqual(seals, 3, "the collector sealed nothing in 30 s")
        self.assertIsNone(collector.poll())
        os.kill(collector.pid, signal.SIGKILL)
        self.assertEqual(collector.wait(timeout=20), -signal.SIGKILL)

        r = mwtest.verify(self.trace, self.keys)
        self.assertEqual(r.returncode, 5, r.stdout + r.stderr)
        m = re.match(r"VALID_PREFIX: verified through record (\d+)", r.stdout)
        self.assertTrue(m, r.stdout)
        through = int(m.group(1))
        self.assertGreater(through, 0)
        self.assertIn("no FINAL seal", r.stdout)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        report = json.loads(mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey",
                                        self.keys.public, "--json"]).stdout)
        self.assertEqual(report["verdict"], "VALID_PREFIX")
        self.assertEqual(report["verified_through_record"], through)
        self.assertFalse(report["final"])
        self.assertEqual(report["bad_segments"], [])

        # the server died with its collector (PR_SET_PDEATHSIG), and nothing of ours is left
        header = mwtest.dump_json(self.trace)[0]
        server = header["target"]["pid"]
        for _ in range(50):
            if not os.path.exists("/proc/%d" % server) or _zombie(server):
                break
            time.sleep(0.1)
        self.assertTrue(not os.path.exists("/proc/%d" % server) or _zombie(server))

        # analyze refuses the incomplete trace (exit 3) unless told to accept it
        r = mwtest.run([mwtest.ANALYZER, "analyze", self.trace, "--pubkey", self.keys.public,
                        "-p", mwtest.DEFAULT_POLICY])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("trace incomplete", r.stderr)
        report = mwtest.analyze_json(self.trace, self.keys, extra=["--allow-incomplete"])
        self.assertEqual(report["trace"]["verdict"], "VALID_PREFIX")

        # a record of the verified prefix can still be proven to a third party
        records = mwtest.dump_json(self.trace, self.keys)
        event = next(r for r in records if r.get("type") == "event" and r["index"] < through)
        out = self.work.join("prefix.mcpx")
        r = mwtest.run([mwtest.ANALYZER, "export", self.trace, "--record", str(event["index"]),
                        "-o", out, "--pubkey", self.keys.public])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = mwtest.verify(out, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(r.stdout.startswith("PROVEN: record %d " % event["index"]), r.stdout)

    def test_evidence_of_a_real_trace(self):
        secret = self.work.write("secret.txt", "s3cr3t\n", owner=mwtest.nobody_ids(), mode=0o600)
        r = mwtest.record(self.trace, self.keys, ["/bin/sh", "-c", "cat %s >/dev/null" % secret])
        self.assertEqual(r.returncode, 0, r.stderr)
        records = mwtest.dump_json(self.trace, self.keys)
        opens = [x for x in records if x.get("type") == "event" and x.get("op") == "openat"
                 and x.get("path") == secret]
        self.assertEqual(len(opens), 1, opens)
        index = opens[0]["index"]
        out = self.work.join("open.mcpx")
        r = mwtest.run([mwtest.ANALYZER, "export", self.trace, "--record", str(index), "-o", out,
                        "--pubkey", self.keys.public])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(os.path.getsize(out), 64 * 1024)
        r = mwtest.run([mwtest.ANALYZER, "verify", out, "--pubkey", self.keys.public, "--json"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["verdict"], "PROVEN")
        self.assertEqual(doc["content"]["path"], secret)
        self.assertLessEqual(doc["index_min"], index)
        self.assertGreaterEqual(doc["index_max"], index)

        # the same excerpt and the DSSE envelope, checked from the spec alone
        key_id, pub = independent_check.load_pub(self.keys.public)
        with open(out, "rb") as f:
            got, _ = independent_evidence.check_excerpt(f.read(), key_id, pub)
        self.assertEqual(got, index)
        env = self.work.join("final.json")
        r = mwtest.run([mwtest.ANALYZER, "export", self.trace, "--dsse", "-o", env, "--pubkey",
                        self.keys.public])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.trace, "rb") as f:
            data = f.read()
        with open(env) as f:
            envelope = json.load(f)
        independent_evidence.check_envelope(envelope, list(independent_check.frames(data)),
                                            key_id, pub)
        r = mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey", self.keys.public,
                        "--envelope", env])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("the FINAL seal of this trace, signature verified", r.stdout)


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


if __name__ == "__main__":
    mwtest.main()
