"""test_attach.py - attaching (--pid) where a review found it wanting: a process that has
exited but is not reaped yet (a zombie) is never seeded (nothing would ever clear it from the
tracked set, and whatever reuses its pid would be recorded); the process seeded is the one that
was checked, not one that reused its pid while the collector waited for its FIFO's reader; a
pid with no process is called that; a collector lingering after the attached process exited
waits idle instead of spinning on the process's pidfd; and through sudo, a process is the
user's only when every uid of it is theirs."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

# Forks a child that exits at once and is left unreaped (a zombie); prints its pid; reaps it
# when a line comes on stdin, then exits.
ZOMBIE_PARENT = r"""
import os, sys
c = os.fork()
if c == 0:
    os._exit(0)
print(c, flush=True)
sys.stdin.readline()
os.waitpid(c, 0)
"""


def uids_when(pid, real, timeout=10):
    """The four uids of pid (real, effective, saved, fs) once its real uid is real (a process
    that setpriv changes takes a moment), or as they are at the timeout."""
    deadline = time.time() + timeout
    while True:
        with open("/proc/%d/status" % pid) as f:
            uids = [int(u) for line in f if line.startswith("Uid:") for u in line.split()[1:]]
        if uids[0] == real or time.time() > deadline:
            return uids
        time.sleep(0.02)


def state(pid):
    """The state letter of /proc/PID/stat, None when there is no such process."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


class Attach(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def kill_later(self, pid):
        self.addCleanup(lambda: state(pid) not in (None, "Z", "X") and
                        os.kill(pid, signal.SIGKILL))

    def attach(self, pid, *extra):
        """A collector attached to pid (-v), once it says so: (process, its 'attached' line)."""
        coll = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace, "--pid",
                           str(pid), "-v"] + list(extra))
        for line in coll.stderr:
            if "attached to" in line:
                return coll, line
        self.fail("the collector ended before attaching: rc %s" % coll.wait(timeout=60))

    def assert_refused_through_sudo(self, extra, message):
        """The collector, run as through sudo by nobody with extra, refuses with message
        (one line, exit 2) and creates no trace."""
        nobody = mwtest.nobody_ids()
        env = dict(os.environ, SUDO_UID=str(nobody[0]), SUDO_GID=str(nobody[1]),
                   SUDO_USER="nobody")
        r = subprocess.run([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace] + extra,
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(), ["mcpwitness-collect: " + message])
        self.assertFalse(os.path.exists(self.trace))

    def test_a_zombie_below_the_target_is_not_seeded(self):
        parent = self.popen([sys.executable, "-c", ZOMBIE_PARENT], stdin=subprocess.PIPE)
        zombie = int(parent.stdout.readline())
        deadline = time.time() + 10
        while state(zombie) != "Z" and time.time() < deadline:
            time.sleep(0.01)
        self.assertEqual(state(zombie), "Z")
        coll, line = self.attach(parent.pid, "--linger", "30")
        self.assertIn("attached to %d and 0 process(es) below it" % parent.pid, line)
        parent.stdin.write("\n")
        parent.stdin.close()
        self.assertEqual(parent.wait(timeout=60), 0)
        # the tracked set is empty once the parent is gone: the linger ends at once
        start = time.monotonic()
        self.assertEqual(coll.wait(timeout=60), 0, coll.stderr.read())
        self.assertLess(time.monotonic() - start, 20, "the collector lingered for a zombie")
        recs = mwtest.dump_json(self.trace, self.keys)
        procs = [(r.get("kind"), r["pid"]) for r in recs if r.get("type") == "proc"]
        self.assertIn(("TARGET", parent.pid), procs)
        self.assertEqual([p for p in procs if p[1] == zombie], [], procs)

    def test_a_pid_reused_before_the_seeding_is_not_recorded(self):
        """The collector checks the target, then waits for its FIFO's reader before it loads
        BPF and seeds: a pid reused meanwhile names another process, which must not be
        recorded in the target's place."""
        fifo = self.work.join("out.fifo")
        os.mkfifo(fifo)
        target = self.popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             "sleep", "60"])
        coll = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", fifo, "--pid",
                           str(target.pid)])
        deadline = time.time() + 30
        while time.time() < deadline:  # until it waits in open() for the reader
            with open("/proc/%d/syscall" % coll.pid) as f:
                if f.read().split()[0] in ("2", "257"):
                    break
            time.sleep(0.02)
        target.kill()
        target.wait()
        other = None
        for _ in range(20):  # the next pid is pid - 1 + 1; another fork may take it first
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(target.pid - 1))
            p = subprocess.Popen(["sleep", "60"])
            if p.pid == target.pid:
                other = p
                self.addCleanup(lambda: other.poll() is None and (other.kill(), other.wait()))
                break
            p.kill()
            p.wait()
        self.assertIsNotNone(other, "could not reuse pid %d" % target.pid)
        reader = self.popen(["cat", fifo])
        rc = coll.wait(timeout=60)
        err = coll.stderr.read()
        reader.wait(timeout=60)
        other.kill()
        other.wait()
        self.assertEqual(rc, 2, err)
        self.assertIn("--pid %d: the process exited before it could be attached" % target.pid,
                      err)

    def test_through_sudo_every_process_of_the_group_must_be_the_users(self):
        """--pgid through sudo: the watched member is the user's, another member is root's:
        refused before anything is recorded."""
        sh = self.popen(["/bin/sh", "-c", "setpriv --reuid=nobody --regid=nogroup "
                         "--clear-groups sleep 60 & echo $!; sleep 60 & echo $!"],
                        start_new_session=True)
        mine, roots = int(sh.stdout.readline()), int(sh.stdout.readline())
        self.addCleanup(lambda: [os.kill(p, signal.SIGKILL) for p in (mine, roots)
                                 if state(p) not in (None, "Z", "X")])
        sh.wait(timeout=60)
        if mine > roots:
            self.skipTest("pids wrapped: the user's sleep is not the group's lowest")
        nobody = mwtest.nobody_ids()
        self.assertEqual(uids_when(mine, nobody[0]), [nobody[0]] * 4)
        self.assert_refused_through_sudo(
            ["--pgid", str(sh.pid)], "--pgid %d: process %d of the group belongs to uid 0: "
            "through sudo, uid %d may attach only to its own processes"
            % (sh.pid, roots, nobody[0]))

    def test_through_sudo_a_set_user_id_program_is_not_the_users(self):
        """--pid through sudo: a process whose real uid is the user's but whose effective and
        saved uids are root's (what a set-user-ID program the user started runs as) is not
        their own: refused, as the kernel's ptrace check would refuse it."""
        nobody = mwtest.nobody_ids()
        suid = self.popen(["setpriv", "--ruid=%d" % nobody[0], "sleep", "60"])
        self.assertEqual(uids_when(suid.pid, nobody[0]), [nobody[0], 0, 0, 0])
        self.assert_refused_through_sudo(
            ["--pid", str(suid.pid)], "process %d belongs to uid 0: through sudo, uid %d may "
            "attach only to its own processes" % (suid.pid, nobody[0]))

    def test_a_pid_without_a_process_is_called_so(self):
        gone = subprocess.Popen(["true"])
        gone.wait()
        r = subprocess.run([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace, "--pid",
                            str(gone.pid)], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["mcpwitness-collect: --pid %d: no such process" % gone.pid])
        self.assertFalse(os.path.exists(self.trace))

    def test_lingering_after_the_attached_process_is_idle(self):
        """The attached shell exits and leaves a child running: the collector lingers 3 s for
        it. The shell's pidfd stays readable once it has exited; watched, it would wake every
        wait of the linger at once (a busy loop, ~3 s of CPU). Wide bound: the load itself
        takes well under one second of CPU."""
        sh = self.popen(["/bin/sh", "-c", "read go; sleep 60 & echo $!"],
                        stdin=subprocess.PIPE)
        coll, _ = self.attach(sh.pid, "--linger", "3")
        sh.stdin.write("go\n")
        sh.stdin.close()
        child = int(sh.stdout.readline())
        self.kill_later(child)
        self.assertEqual(sh.wait(timeout=60), 0)
        _, status, ru = os.wait4(coll.pid, 0)
        coll.returncode = os.waitstatus_to_exitcode(status)
        os.kill(child, 0)  # attached: kept running by default (--after-linger keep)
        os.kill(child, signal.SIGKILL)
        self.assertEqual(coll.returncode, 0, coll.stderr.read())
        cpu = ru.ru_utime + ru.ru_stime
        self.assertLess(cpu, 2.0, "the collector used %.2f s of CPU in a 3 s linger" % cpu)
        alive = [r for r in mwtest.dump_json(self.trace, self.keys)
                 if r.get("type") == "proc" and r.get("kind") == "ALIVE_AT_END"]
        self.assertEqual([(r["pid"], r["killed"]) for r in alive], [(child, False)])

    def test_after_linger_kill_when_attached(self):
        """--after-linger kill, asked for: the child the attached shell left running is killed
        when the linger runs out, its exit recorded, and listed as killed."""
        sh = self.popen(["/bin/sh", "-c", "read go; sleep 60 & echo $!"],
                        stdin=subprocess.PIPE)
        coll, _ = self.attach(sh.pid, "--linger", "1", "--after-linger", "kill")
        sh.stdin.write("go\n")
        sh.stdin.close()
        child = int(sh.stdout.readline())
        self.kill_later(child)
        self.assertEqual(sh.wait(timeout=60), 0)
        self.assertEqual(coll.wait(timeout=60), 0)
        self.assertIn("killed 1 recorded process(es)", coll.stderr.read())
        records = mwtest.dump_json(self.trace, self.keys)
        alive = [r for r in records if r.get("type") == "proc" and r.get("kind") == "ALIVE_AT_END"]
        self.assertEqual([(r["pid"], r["killed"]) for r in alive], [(child, True)])
        exits = [e["args"] for e in records
                 if e.get("type") == "event" and e.get("op") == "exit" and e["pid"] == child]
        self.assertEqual(exits, [[signal.SIGKILL, 1]])


if __name__ == "__main__":
    mwtest.main()
