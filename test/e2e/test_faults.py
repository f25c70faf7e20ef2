"""test_faults.py - the collector keeps its promises when things go wrong (issue 7): killed,
out of disk, its reader gone, the server crashing or leaving children behind, signals."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwevents  # noqa: E402
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


def live_pids(matches):
    """The live processes for which matches(pid) holds (an OSError reading /proc: it does
    not, the process is gone)."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and matches(int(d)) and alive(int(d)):
                pids.append(int(d))
        except OSError:
            pass
    return pids


def token_pids(token):
    """The live processes whose argv holds token: what is left of an mw_trigger swarm."""
    def has_token(pid):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return token.encode() in f.read().split(b"\0")
    return live_pids(has_token)


def kill_token(token, timeout=30):
    """SIGKILLs every process of the swarm until none is left (its chains fork meanwhile);
    returns how many were found at first."""
    first = None
    deadline = time.time() + timeout
    while time.time() < deadline:
        pids = token_pids(token)
        first = len(pids) if first is None else first
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return first


def collector_pids():
    """Processes running the collector's binary (a guardian is one)."""
    exe = os.path.realpath(mwtest.COLLECT)
    return live_pids(lambda pid: os.readlink("/proc/%d/exe" % pid) == exe)


def wait_none(find, timeout=5):
    """Polls find() (a list of pids) until it is empty or timeout passes; returns what it
    found last."""
    deadline = time.time() + timeout
    while time.time() < deadline and find():
        time.sleep(0.05)
    return find()


def wait_collectors_gone():
    """The collector's processes left once its guardian had time to end."""
    return wait_none(collector_pids)


def wait_token_gone(token):
    """The swarm's processes left once it had time to be killed."""
    return wait_none(lambda: token_pids(token))


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

    def swarm_trigger(self):
        """mw_trigger where nobody can run it, and a token no other swarm has (what is left
        of the swarm is killed at cleanup)."""
        trigger = self.work.join("mw_trigger")
        if not os.path.exists(trigger):
            shutil.copy(mwevents.TRIGGER, trigger)
            os.chmod(trigger, 0o755)
        token = "mw-swarm-%d-%d" % (os.getpid(), time.monotonic_ns())
        self.addCleanup(kill_token, token)
        return trigger, token

    def start_swarm(self, pausers, chains, extra=(), own_sessions=False):
        """mw_trigger swarm under the collector (its stdout is the swarm's, as a server's
        is): returns the collector, once the swarm is up, and the swarm's token. With
        own_sessions the collector leads a process group of its own and each pauser and chain
        of the swarm starts a session of its own."""
        trigger, token = self.swarm_trigger()
        swarm = [trigger, "swarm", str(pausers), str(chains), token]
        cmd = mwtest.collect_cmd(self.trace, self.keys,
                                 swarm + (["setsid"] if own_sessions else []), extra=extra)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             process_group=0 if own_sessions else None)
        self.addCleanup(p.stderr.close)
        self.addCleanup(p.stdout.close)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        line = p.stdout.readline()
        if '"swarm"' not in line:
            p.kill()
            self.fail("the swarm did not start: %r %s" % (line, p.stderr.read()))
        return p, token

    def force_stop(self, p):
        """TERM every 0.3 s until the collector ends: the third it reads ends the recording
        without waiting, which kills the tree (signals of one kind that are pending together
        merge into one, so three sent cannot be counted on as three read)."""
        deadline = time.time() + 60
        while p.poll() is None and time.time() < deadline:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=0.3)
            except subprocess.TimeoutExpired:
                pass
        return p.wait(timeout=10)

    def test_forced_stop_kills_and_lists_every_process(self):
        # more processes than the collector once listed in one scan (4096)
        p, token = self.start_swarm(5000, 0, extra=["--linger", "60"])
        rc = self.force_stop(p)
        err = p.stderr.read()
        self.assertEqual(rc, 128 + signal.SIGTERM, err)
        left = wait_token_gone(token)
        self.assertEqual(len(left), 0, "process(es) of the tree outlived the stop")
        records = mwtest.dump_json(self.trace, self.keys)
        alive_at_end = [r for r in records if r.get("type") == "proc"
                        and r.get("kind") == "ALIVE_AT_END"]
        self.assertEqual(len(alive_at_end), 5000)
        # killed before the list was written (and their exits drained into the trace), so
        # listed as killed, not as left running
        self.assertEqual({r["killed"] for r in alive_at_end}, {True})
        exited = {e["pid"] for e in records if e.get("type") == "event" and e.get("op") == "exit"}
        self.assertEqual({r["pid"] for r in alive_at_end} - exited, set())
        self.assertEqual(self.final_reason(), "SIGNAL")

    def test_forced_stop_kills_a_tree_that_keeps_forking(self):
        # each chain's newest process forks every millisecond: one pass of kills misses the
        # children made between its scan and their parent's kill
        # (8 chains of at most 1000: what escapes stays far below any pid_max)
        p, token = self.start_swarm(0, 8, extra=["--linger", "60"])
        self.force_stop(p)
        left = wait_token_gone(token)
        self.assertEqual(len(left), 0, "process(es) of the tree outlived the stop")

    def test_collector_killed_kills_the_whole_tree(self):
        # PR_SET_PDEATHSIG reaches the server alone; the guardian process kills the rest
        p, token = self.start_swarm(200, 8)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        left = wait_token_gone(token)
        self.assertEqual(len(left), 0, "process(es) of the tree outlived the killed collector")
        self.assertIn("the recorded processes were killed", p.stderr.read())
        # and the guardian itself ends, so the programs it kept attached go
        self.assertEqual(wait_collectors_gone(), [])

    def test_collector_group_killed_kills_the_tree(self):
        # a signal to the collector's whole process group (a job's timeout, a terminal's quit
        # key) ends the server, and so the recording. SIGKILL ends the collector too: the
        # guardian, in a group of its own, ignores all but SIGKILL and kills what the server
        # left in sessions of its own. QUIT is a stop like INT (forwarded, counted): the
        # collector seals the trace and kills what outlived the server after --linger.
        for sig in (signal.SIGKILL, signal.SIGQUIT):
            with self.subTest(signal=sig.name):
                self.trace = self.work.join("group-%s.mcpt" % sig.name)
                p, token = self.start_swarm(50, 4, own_sessions=True)
                guardians = [g for g in collector_pids() if g != p.pid]
                self.assertEqual(len(guardians), 1)
                with open("/proc/%d/comm" % guardians[0]) as f:
                    self.assertEqual(f.read(), "mw-guardian\n")
                with open("/proc/%d/cmdline" % guardians[0], "rb") as f:
                    self.assertEqual(f.read().rstrip(b"\0"), b"mw-guardian")
                self.assertEqual(os.getpgid(guardians[0]), guardians[0])
                os.killpg(p.pid, sig)
                p.wait(timeout=30)
                left = wait_token_gone(token)
                self.assertEqual(len(left), 0, "process(es) of the tree outlived the collector")
                if sig == signal.SIGKILL:
                    self.assertIn("the recorded processes were killed", p.stderr.read())
                else:
                    self.assertRegex(p.stderr.read(), r"killed \d+ recorded process\(es\) "
                                     r"still running")
                    self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)
                self.assertEqual(wait_collectors_gone(), [])  # and the guardian ends

    def test_collector_killed_kills_an_attached_tree_when_asked(self):
        trigger, token = self.swarm_trigger()
        swarm = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                  "--clear-groups", trigger, "swarm", "50", "0", token],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.addCleanup(swarm.stdout.close)
        self.addCleanup(lambda: swarm.poll() is None and (swarm.kill(), swarm.wait()))
        self.assertIn('"swarm"', swarm.stdout.readline())
        p = subprocess.Popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace,
                              "--pid", str(swarm.pid), "--on-collector-exit", "kill", "-v"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(p.stderr.close)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        mwtest.wait_attached(p)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        left = wait_token_gone(token)
        self.assertEqual(len(left), 0, "process(es) of the tree outlived the killed collector")
        swarm.wait(timeout=10)

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
        # one child acts within --linger and is recorded; one outlives it, is killed (the
        # default for a launched server: --after-linger kill) and listed as killed
        r = mwtest.record(self.trace, self.keys, [
            "/bin/sh", "-c", "(sleep 0.3; cat /etc/hostname >/dev/null) & "
                             "setsid sleep 30 & exit 3"], extra=["--linger", "1"])
        self.assertEqual(r.returncode, 3, r.stderr)
        records = mwtest.dump_json(self.trace, self.keys)
        late = [e for e in records if e.get("type") == "event" and e.get("op") == "openat"
                and e.get("path") == "/etc/hostname"]
        self.assertEqual(len(late), 1)
        alive_at_end = [(rec["pid"], rec["killed"]) for rec in records
                        if rec.get("type") == "proc" and rec.get("kind") == "ALIVE_AT_END"]
        for pid, _ in alive_at_end:
            self.kill_later(pid)
        self.assertEqual([k for _, k in alive_at_end], [True], records[-5:])
        exits = [e for e in records if e.get("type") == "event" and e.get("op") == "exit"
                 and e["pid"] == alive_at_end[0][0]]
        self.assertEqual([e["args"] for e in exits], [[signal.SIGKILL, 1]])
        self.assertIn("killed 1 recorded process(es)", r.stderr)
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
