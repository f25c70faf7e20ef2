"""test_events_proc.py - the process family, syscall by syscall (issue 3): fork, vfork, clone,
clone3 and threads with their clone flags; exit codes; exec with argv and its limits (64
entries, 4096 bytes), failed execs, execveat of an fd; chdir, fchdir, chroot; the setuid and
setgid families, setgroups, capset, unshare, setns, prctl(PR_SET_NAME); and double-forked
setsid daemons, one acting after its parent exited, one outliving the recording."""
import os
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwevents  # noqa: E402
from mwevents import F_ARGV_ENTRIES, F_THREAD, F_TRUNC, F_UNRES, S_DATA, S_OPENED  # noqa: E402

CLONE_THREAD = 0x10000
SIGCHLD = 17


class ProcEvents(mwevents.EventsTestCase):
    STEPS = ("fork", "vfork", "clone", "clone3", "thread", "exit_code", "exit_signal", "exec",
             "exec_many", "exec_long", "exec_failed", "execveat_fd", "execveat_failed", "chdir",
             "fchdir", "chroot", "ids", "setgroups", "capset", "unshare", "setns", "prctl_name",
             "daemon", "daemon_alive")
    EXTRA = ("--linger", "1")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # the daemon the collector should have killed: if it did not, ours to end (and the
        # test below fails on it)
        daemon = cls.rec.out.get("daemon_alive.grandchild", [{}])[0].get("pid")
        cls.daemon_survived = bool(daemon) and still_running(daemon)
        if cls.daemon_survived:
            os.kill(daemon, signal.SIGKILL)

    def fork_of(self, step):
        s = self.rec.step(step)
        ev = self.rec.one(s["pid"], "fork")
        child_exit = self.rec.one(s["child"], "exit")
        self.assertEqual(ev["child"], {"pid": s["child"], "tid": s["child"],
                                       "pstart": child_exit["pstart"], "thread": False})
        self.assertEqual(ev["flags"] & F_THREAD, 0)
        self.assertEqual(ev["args"][:3], [s["child"], s["child"], child_exit["pstart"]])
        self.assertEqual(ev["ret"], s["child"])
        # the fork defines its child's task (format bit 3), which its records can name
        self.assertIs(ev.get("child_task"), True, ev)
        return s, ev

    def test_fork(self):
        _, ev = self.fork_of("fork")
        self.assertEqual(ev["args"][3], SIGCHLD)

    def test_vfork(self):
        _, ev = self.fork_of("vfork")
        self.assertEqual(ev["args"][3], 0x4000 | 0x100 | SIGCHLD)  # CLONE_VFORK | CLONE_VM

    def test_clone(self):
        s, ev = self.fork_of("clone")
        self.assertEqual(ev["args"][3], s["flags"])

    def test_clone3(self):
        s, ev = self.fork_of("clone3")
        self.assertEqual(ev["args"][3], s["flags"])  # struct clone_args.flags

    def test_thread(self):
        s = self.rec.step("thread")
        ev = self.rec.one(s["pid"], "fork")
        self.assertTrue(ev["flags"] & F_THREAD, ev)
        self.assertEqual(ev["child"]["pid"], s["pid"])
        self.assertEqual(ev["child"]["tid"], s["thread_tid"])
        self.assertTrue(ev["child"]["thread"])
        self.assertEqual(ev["child"]["pstart"], ev["pstart"])  # the group's identity
        self.assertTrue(ev["args"][3] & CLONE_THREAD, ev)
        self.assertEqual(ev["ret"], s["thread_tid"])  # what clone returned to the caller
        # the thread's own exit: a record of its tid, the group still alive
        texit = self.rec.one(s["pid"], "exit", tid=s["thread_tid"])
        self.assertEqual(texit.get("args", []), [])  # code 0, group not dead
        gexit = self.rec.one(s["pid"], "exit", tid=s["pid"])
        self.assertEqual(gexit["args"], [0, 1])

    def test_exit_codes(self):
        s = self.rec.step("exit_code")
        self.assertEqual(self.rec.one(s["child"], "exit")["args"], [42 << 8, 1])
        s = self.rec.step("exit_signal")
        self.assertEqual(self.rec.one(s["child"], "exit")["args"], [signal.SIGKILL, 1])

    def exec_of(self, step):
        s = self.rec.step(step)
        ev = self.rec.one(s["child"], "exec")
        self.assertRecord(ev, "exec", 0, args=[s["child"], 59], path="/bin/true")  # execve
        self.assertOpened(ev, s["opened"])
        return ev

    def test_exec(self):
        ev = self.exec_of("exec")
        self.assertEqual(ev["argv"], ["true", "arg with space", "", 'x"y'])
        self.assertEqual(ev["flags"], 0)

    def test_exec_more_than_64_arguments(self):
        ev = self.exec_of("exec_many")
        self.assertEqual(ev["argv"], ["a%d" % i for i in range(64)])
        self.assertEqual(ev["flags"], F_ARGV_ENTRIES)

    def test_exec_more_than_4096_bytes(self):
        ev = self.exec_of("exec_long")
        full = [c * 1000 for c in "ABCD"]
        self.assertEqual(ev["argv"], full + ["E" * (4096 - 4 * 1001)])
        self.assertEqual(ev["flags"], F_TRUNC(S_DATA))

    def test_exec_failed(self):
        s = self.rec.step("exec_failed")
        ev = self.rec.one(s["pid"], "exec_failed")
        self.assertRecord(ev, "exec_failed", -2, args=[-100], errno="ENOENT",
                          path="nonexistent-prog", abs_path=self.rec.path("nonexistent-prog"))

    def test_execveat_of_an_fd(self):
        s = self.rec.step("execveat_fd")
        ev = self.rec.one(s["child"], "exec")
        self.assertRecord(ev, "exec", 0, args=[s["child"], 322],  # execveat
                          path="/dev/fd/%d" % s["fd"], opened_path="/usr/bin/true")
        self.assertEqual((ev["dev"], ev["ino"]), (s["dev"], s["ino"]))
        self.assertEqual(ev["argv"], ["true-by-fd"])

    def test_execveat_failed(self):
        s = self.rec.step("execveat_failed")
        ev = self.rec.one(s["pid"], "exec_failed")
        self.assertRecord(ev, "exec_failed", -2, args=[s["dirfd"]], path="missing",
                          abs_path=self.rec.path("execveat.d", "missing"))

    def test_chdir_fchdir_chroot(self):
        s = self.rec.step("chdir")
        ev = self.rec.one(s["pid"], "chdir")
        # resolved at exit, after the cwd moved: still the directory entered, not chdir.d/chdir.d
        self.assertRecord(ev, "chdir", 0, args=[], path="chdir.d",
                          abs_path=self.rec.path("chdir.d"), flags=0)
        self.assertOpened(ev, self.rec.path("chdir.d"))
        s = self.rec.step("fchdir")
        ev = self.rec.one(s["pid"], "fchdir")
        self.assertRecord(ev, "fchdir", 0, args=[s["fd"]], path=None)
        self.assertOpened(ev, self.rec.path("fchdir.d"))
        s = self.rec.step("chroot")
        self.assertRecord(self.rec.one(s["pid"], "chroot"), "chroot", -1, errno="EPERM",
                          path="chroot.d", abs_path=self.rec.path("chroot.d"), flags=0)

    def test_setuid_setgid_families(self):
        s = self.rec.step("ids")
        uid, gid, pid = s["uid"], s["gid"], s["pid"]
        expect = {"setuid": [uid], "setgid": [gid], "setreuid": [-1, -1], "setregid": [-1, -1],
                  "setresuid": [-1, uid, -1], "setresgid": [-1, gid, -1],
                  "setfsuid": [uid], "setfsgid": [gid]}
        for op, args in expect.items():
            self.assertRecord(self.rec.one(pid, op), op, s[op], args=args)
            self.assertEqual(self.rec.one(pid, op)["uid"], uid)

    def test_setgroups(self):
        s = self.rec.step("setgroups")
        ev = self.rec.one(s["pid"], "setgroups")
        self.assertRecord(ev, "setgroups", -1, args=[2], errno="EPERM",
                          data=mwevents.escape(struct.pack("<2I", s["g0"], 4242)))

    def test_capset(self):
        s = self.rec.step("capset")
        ev = self.rec.one(s["pid"], "capset")
        caps = struct.pack("<6I", s["effective0"], 0, 0, 0, 0, 0)  # nobody: no capability
        self.assertRecord(ev, "capset", 0, args=[], data=mwevents.escape(caps))

    def test_unshare(self):
        s = self.rec.step("unshare")
        evs = self.rec.of(s["pid"], "unshare")
        self.assertEqual([(e["args"], e["ret"]) for e in evs],
                         [([0x20000], s["ret_ns"]), ([0x10000000], s["ret_user"])])
        self.assertEqual(s["ret_ns"], -1)  # nobody may not: EPERM, and recorded as such

    def test_setns(self):
        s = self.rec.step("setns")
        ev = self.rec.one(s["pid"], "setns")
        self.assertRecord(ev, "setns", s["ret"], args=[s["fd"], 0x04000000], opened_path=None)
        # the namespace file has no path below the task's root: unresolved, never a guess
        self.assertEqual(ev["flags"], F_UNRES(S_OPENED))
        self.assertEqual((ev["dev"], ev["ino"]), (s["dev"], s["ino"]))

    def test_prctl_set_name(self):
        s = self.rec.step("prctl_name")
        ev = self.rec.one(s["pid"], "prctl")
        self.assertRecord(ev, "prctl", 0, data="mwtrig-named")
        self.assertEqual(ev["args"][0], 15)  # PR_SET_NAME

    def test_double_forked_daemon_acts_after_its_parent_exited(self):
        s = self.rec.step("daemon")
        d = self.rec.step("daemon.grandchild")
        self.assertEqual(d["sid"], s["middle"])  # the session its parent made with setsid
        self.assertNotEqual(d["ppid"], s["middle"])  # reparented: its parent had exited
        self.assertEqual(d["ppid"], self.rec.header["collector_pid"])  # to the subreaper
        self.assertIn(d["pid"], self.rec.tree)
        middle_exit = self.rec.one(s["middle"], "exit")
        ev = self.rec.one(d["pid"], "openat")
        self.assertRecord(ev, "openat", d["ret"], path="daemon.f",
                          abs_path=self.rec.path("daemon.f"))
        self.assertGreater(ev["seq"], middle_exit["seq"])
        self.assertGreater(ev["ts"], middle_exit["ts"])
        self.assertEqual(self.rec.one(d["pid"], "exit")["args"], [0, 1])

    def test_daemon_outliving_linger_is_killed_and_listed(self):
        """A launched server's default (--after-linger kill): the daemon still running when the
        linger ran out is killed, its exit (SIGKILL) recorded before the list that names it
        killed."""
        d = self.rec.step("daemon_alive.grandchild")
        self.assertFalse(self.daemon_survived, "the daemon outlived the recording")
        self.assertIn(d["pid"], self.rec.tree)
        opens = [e for e in self.rec.of(d["pid"], "openat") if e["path"] == "daemon_alive.f"]
        self.assertEqual(len(opens), 1)
        self.assertRecord(opens[0], "openat", d["ret"], abs_path=self.rec.path("daemon_alive.f"))
        self.assertEqual(self.rec.one(d["pid"], "exit")["args"], [signal.SIGKILL, 1])
        alive = [r for r in self.rec.records if r["type"] == "proc" and r["kind"] == "ALIVE_AT_END"]
        self.assertEqual([(r["pid"], r["killed"]) for r in alive], [(d["pid"], True)])
        self.assertGreater(alive[0]["index"], max(e["index"] for e in self.rec.of(d["pid"])))
        self.assertNotIn(self.rec.step("daemon.grandchild")["pid"], [r["pid"] for r in alive])
        self.assertIn("killed 1 recorded process(es) still running 1 s after the server exited",
                      self.rec.result.stderr)


def still_running(pid):
    """Whether pid exists and is no zombie (a killed daemon is init's to reap)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class ProcEventsKeep(mwevents.EventsTestCase):
    """--after-linger keep: the daemon still running when the linger ran out is left running,
    listed alive and not killed, and nothing of it is recorded after the end."""
    STEPS = ("daemon_alive",)
    EXTRA = ("--linger", "1", "--after-linger", "keep")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        daemon = cls.rec.out.get("daemon_alive.grandchild", [{}])[0].get("pid")
        cls.was_alive = bool(daemon) and still_running(daemon)
        if cls.was_alive:  # ours to end (init's child by now)
            os.kill(daemon, signal.SIGKILL)

    def test_daemon_outliving_linger_is_kept_and_listed_alive(self):
        d = self.rec.step("daemon_alive.grandchild")
        self.assertTrue(self.was_alive, "the daemon did not outlive the recording")
        self.assertEqual(self.rec.of(d["pid"], "exit"), [])
        alive = [r for r in self.rec.records if r["type"] == "proc" and r["kind"] == "ALIVE_AT_END"]
        self.assertEqual([(r["pid"], r["killed"]) for r in alive], [(d["pid"], False)])
        self.assertNotIn("killed", self.rec.result.stderr)


if __name__ == "__main__":
    mwevents.main()
