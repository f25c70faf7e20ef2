"""test_faults.py - the collector keeps its promises when things go wrong (issue 7): killed,
out of disk, its reader gone, the server crashing or leaving children behind, signals."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

# A server that says its pid on stderr, then works until told to stop: the open loop makes
# records, so a small disk fills and a pipe reader sees data.
BUSY = "import os,sys,time\nprint(os.getpid(), file=sys.stderr, flush=True)\n" \
       "while True:\n    open('/etc/hostname').close(); time.sleep(0.001)\n"


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline and alive(pid):
        time.sleep(0.05)
    return not alive(pid)


def child_pids(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Faults(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def kill_later(self, pid):
        self.addCleanup(lambda: alive(pid) and os.kill(pid, signal.SIGKILL))

    def start_busy(self, output=None, extra=(), pass_fds=()):
        cmd = mwtest.collect_cmd(output, self.keys, ["python3", "-c", BUSY], extra=extra)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, pass_fds=pass_fds)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        server = int(p.stderr.readline())  # the server's first words: its pid
        self.kill_later(server)
        return p, server

    def test_collector_killed_stops_the_server_by_default(self):
        p, server = self.start_busy(output=self.trace)
        time.sleep(1.5)  # some seals are down
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        self.assertTrue(wait_gone(server), "server %d outlived the killed collector" % server)
        r = mwtest.verify(self.trace, self.keys)
        self.assertEqual(r.returncode, 5, r.stdout)  # a valid prefix, never complete
        self.assertIn("no FINAL seal", r.stdout)

    def test_collector_killed_keeps_the_server_when_asked(self):
        p, server = self.start_busy(extra=["--on-collector-exit", "keep"], output=self.trace)
        time.sleep(0.5)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        time.sleep(0.5)
        self.assertTrue(alive(server))
        os.kill(server, signal.SIGKILL)

    def test_disk_full(self):
        mnt = self.work.mkdir("small")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", mnt],
                       check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", mnt])
        out = os.path.join(mnt, "trace.mcpt")
        p, server = self.start_busy(output=out)
        rc = p.wait(timeout=120)
        err = p.stderr.read()
        self.assertEqual(rc, 2, err)
        self.assertIn("No space left on device", err)
        self.assertTrue(wait_gone(server))
        r = mwtest.verify(out, self.keys)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("VALID_COMPLETE", r.stdout)

    def test_output_reader_gone(self):
        rfd, wfd = os.pipe()
        reader = subprocess.Popen(["head", "-c", "20000"], stdin=rfd, stdout=subprocess.DEVNULL)
        os.close(rfd)
        p, server = self.start_busy(extra=["--output-fd", str(wfd)], pass_fds=(wfd,))
        os.close(wfd)
        reader.wait(timeout=60)
        rc = p.wait(timeout=60)
        err = p.stderr.read()
        self.assertEqual(rc, 2, err)
        self.assertIn("Broken pipe", err)
        self.assertTrue(wait_gone(server))

    def final_reason(self):
        r = mwtest.run([mwtest.ANALYZER, "verify", self.trace, "--pubkey", self.keys.public,
                        "--json"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return json.loads(r.stdout)["end_reason"]

    def test_server_crash_and_kill_pass_the_status(self):
        r = mwtest.record(self.trace, self.keys,
                          ["python3", "-c", "import os,signal; os.kill(os.getpid(), signal.SIGSEGV)"])
        self.assertEqual(r.returncode, 128 + signal.SIGSEGV, r.stderr)
        self.assertEqual(self.final_reason(), "TARGET_EXITED")

    def test_children_outliving_the_server(self):
        # one child acts within --linger and is recorded; one outlives it and is listed alive
        r = mwtest.record(self.trace, self.keys, [
            "/bin/sh", "-c", "(sleep 0.3; cat /etc/hostname >/dev/null) & "
                             "setsid sleep 30 & exit 3"], extra=["--linger", "1"])
        self.assertEqual(r.returncode, 3, r.stderr)
        records = mwtest.dump_json(self.trace, self.keys)
        late = [e for e in records if e.get("type") == "event" and e.get("op") == "openat"
                and e.get("path") == "/etc/hostname"]
        self.assertEqual(len(late), 1)
        alive_at_end = [rec["pid"] for rec in records
                        if rec.get("type") == "proc" and rec.get("kind") == "ALIVE_AT_END"]
        self.assertEqual(len(alive_at_end), 1, records[-5:])
        for pid in alive_at_end:
            self.kill_later(pid)
        self.assertEqual(self.final_reason(), "TARGET_EXITED")

    def test_int_and_hup_are_forwarded(self):
        script = ("import signal,sys,time\n"
                  "got=[]\n"
                  "for s in (signal.SIGINT, signal.SIGHUP):\n"
                  "    signal.signal(s, lambda n,f: got.append(n))\n"
                  "print('ready', flush=True)\n"
                  "while len(got) < 2: time.sleep(0.01)\n"
                  "sys.exit(40 + len(got))\n")
        p = subprocess.Popen(mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", script]),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.assertEqual(p.stdout.readline().strip(), "ready")
        p.send_signal(signal.SIGINT)
        time.sleep(0.2)
        p.send_signal(signal.SIGHUP)
        self.assertEqual(p.wait(timeout=30), 42, p.stderr.read())
        self.assertEqual(self.final_reason(), "SIGNAL")


if __name__ == "__main__":
    mwtest.main()
