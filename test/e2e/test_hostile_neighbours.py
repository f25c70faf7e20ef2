"""test_hostile_neighbours.py - what a local user who may write to the directories the collector
is told to use, and a server sharing the collector's terminal, can try against it as root
(a review on 2026-12-04 found each of these open):

- a symbolic link at the name of -o is never followed, to a file or to a FIFO, and a FIFO
  swapped for one while the collector waits for its reader is not followed either (before,
  root wrote the trace into the link's target, whatever it was);
- --control through a symbolic link at its name is refused, and the FIFO it creates is the
  user's, with one link;
- QUIT is a stop signal like INT, TERM and HUP (forwarded, counted), not the collector's death:
  a server that types ^\\ into the terminal they share (TIOCSTI) can no longer end the
  recording without a seal;
- a server that fills the stderr pipe it shares with the collector, which nobody reads, and
  then makes the collector warn, no longer stalls the recording: the line is dropped.
"""
import os
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

PRECIOUS = "precious root-owned content\n"


class HostileNeighbours(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.nobody = mwtest.nobody_ids()
        # a directory another user may write to, and a file of root's they may not
        self.theirs = self.work.mkdir("theirs", owner=self.nobody, mode=0o755)
        self.victim = self.work.write("victim.txt", PRECIOUS, mode=0o644)

    def assert_one_line(self, err, want):
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(want, lines[0])

    def assert_victim_intact(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), PRECIOUS)

    def test_a_symlink_at_the_output_name_is_never_followed(self):
        fifo = self.work.join("elsewhere.fifo")
        os.mkfifo(fifo)
        for target in (self.victim, fifo):
            with self.subTest(target=target):
                out = os.path.join(self.theirs, "t.mcpt")
                os.symlink(target, out)
                r = mwtest.record(out, self.keys, ["/bin/true"], timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assert_one_line(r.stderr, "failed to create trace %s: it is a symbolic link"
                                     % out)
                os.unlink(out)
        self.assert_victim_intact()

    def test_a_fifo_swapped_for_a_symlink_while_waiting_is_not_followed(self):
        out = os.path.join(self.theirs, "t.mcpt")
        os.mkfifo(out)
        os.chown(out, *self.nobody)
        p = self.popen(mwtest.collect_cmd(out, self.keys, ["/bin/true"]))
        time.sleep(1.0)  # well into the wait for a reader
        self.assertIsNone(p.poll(), p.stderr.read() if p.poll() is not None else "")
        os.unlink(out)  # what the directory's owner may do
        os.symlink(self.victim, out)
        rc = p.wait(timeout=10)
        err = p.stderr.read()
        self.assertEqual(rc, 2, err)
        self.assert_one_line(err, "failed to open FIFO %s: it became a symbolic link" % out)
        self.assert_victim_intact()

    def test_control_through_a_symlink_is_refused_and_a_new_fifo_is_the_users(self):
        trace = self.work.join("t.mcpt")
        ctl = os.path.join(self.theirs, "ctl")
        fifo = self.work.join("root.fifo")
        os.mkfifo(fifo, 0o600)
        os.symlink(fifo, ctl)
        r = mwtest.record(trace, self.keys, ["/bin/true"], extra=["--control", ctl], timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assert_one_line(r.stderr, "failed to open control FIFO %s" % ctl)
        self.assertEqual(os.stat(fifo).st_uid, 0)  # not given away
        os.unlink(ctl)
        r = mwtest.record(trace, self.keys, ["/bin/true"], extra=["--control", ctl], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = os.lstat(ctl)
        self.assertTrue(stat.S_ISFIFO(st.st_mode))
        self.assertEqual((st.st_uid, st.st_gid, st.st_nlink), (*self.nobody, 1))

    def test_quit_is_forwarded_as_a_stop(self):
        script = ("import signal,sys,time\n"
                  "signal.signal(signal.SIGQUIT, lambda n,f: sys.exit(43))\n"
                  "print('ready', flush=True)\n"
                  "time.sleep(60)\n")
        trace = self.work.join("t.mcpt")
        p = self.popen(mwtest.collect_cmd(trace, self.keys, ["python3", "-c", script]))
        self.assertEqual(p.stdout.readline().strip(), "ready")
        p.send_signal(signal.SIGQUIT)
        self.assertEqual(p.wait(timeout=30), 43, p.stderr.read())
        r = mwtest.verify(trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_server_typing_quit_into_the_terminal_cannot_end_the_recording(self):
        try:
            with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
                if f.read().strip() == "0":
                    self.skipTest("the kernel refuses TIOCSTI (dev.tty.legacy_tiocsti = 0): "
                                  "no server can type into a terminal here")
        except FileNotFoundError:
            pass  # kernels before 6.2 always allow it
        import pty
        trace = self.work.join("t.mcpt")
        marker = self.work.join("after-quit")
        server = ("import fcntl, os, signal, termios\n"
                  "signal.signal(signal.SIGQUIT, signal.SIG_IGN)\n"
                  "tty = os.open('/dev/tty', os.O_RDWR)\n"
                  "fcntl.ioctl(tty, termios.TIOCSTI, b'\\x1c')\n"  # ^\: QUIT to the group
                  "import time; time.sleep(0.5)\n"
                  "open(%r).close()\n"
                  "print('done', flush=True)\n" % marker)
        with open(marker, "w"):
            pass
        pid, master = pty.fork()
        if pid == 0:  # a session of its own, the pty its terminal
            os.execv(mwtest.COLLECT, [mwtest.COLLECT, "-k", self.keys.secret, "-o", trace,
                                      "--user", "nobody", "--", "python3", "-c", server])
        self.addCleanup(lambda: os.path.exists("/proc/%d" % pid) and os.kill(pid, 9))
        self.addCleanup(os.close, master)
        out = b""
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                chunk = os.read(master, 1024)
            except OSError:  # EIO: every process of the terminal is gone
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, out)
        self.assertIn(b"done", out)
        r = mwtest.verify(trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        opened = [e for e in mwtest.dump_json(trace, self.keys)
                  if e.get("type") == "event" and e.get("path") == marker]
        self.assertTrue(opened, "the open after the QUIT is not in the trace")

    def test_a_full_shared_stderr_does_not_stall_the_recording(self):
        trace = self.work.join("t.mcpt")
        marker = self.work.write("after-warning", "")
        server = ("import fcntl, os, time\n"
                  "fl = fcntl.fcntl(2, fcntl.F_GETFL)\n"
                  "fcntl.fcntl(2, fcntl.F_SETFL, fl | os.O_NONBLOCK)\n"
                  "try:\n"
                  "    while True:\n"
                  "        os.write(2, b'x' * 4096)\n"
                  "except BlockingIOError:\n"
                  "    pass\n"
                  "fcntl.fcntl(2, fcntl.F_SETFL, fl)\n"  # blocking again, for whoever writes
                  "src = os.open('/etc/hostname', os.O_RDONLY)\n"
                  "os.sendfile(1, src, 0, 4)\n"  # bytes the channel capture cannot see
                  "time.sleep(1.5)\n"  # the collector flushes its losses, and warns
                  "open(%r).close()\n"
                  "print('done', flush=True)\n" % marker)
        rfd, wfd = os.pipe()  # the collector's stderr: read by nobody until the end
        self.addCleanup(os.close, rfd)
        p = self.popen(mwtest.collect_cmd(trace, self.keys, ["python3", "-c", server]),
                       stderr=wfd)
        os.close(wfd)
        lines = []  # the bytes sendfile moved, then done (not EOF: the collector holds stdout)
        while not lines or lines[-1] not in ("done\n", ""):
            lines.append(p.stdout.readline())
        self.assertEqual(lines[-1], "done\n")
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.fail("the collector is stuck writing to the full stderr (wchan %s)" %
                      open("/proc/%d/wchan" % p.pid).read())
        self.assertEqual(rc, 0)
        r = mwtest.verify(trace, self.keys)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        records = mwtest.dump_json(trace, self.keys)
        self.assertTrue([e for e in records if e.get("type") == "loss"], records[-3:])
        self.assertTrue([e for e in records
                         if e.get("type") == "event" and e.get("path") == marker])


if __name__ == "__main__":
    mwtest.main()
