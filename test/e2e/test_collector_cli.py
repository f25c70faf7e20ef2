"""test_collector_cli.py - the collector's command line and setup, where an audit found it
wanting: who owns the trace through sudo (the server must not rewrite its own evidence), a FIFO
without a reader (a signal ends the wait, no BPF program is attached meanwhile), attaching to an
ancestor of the collector (the collector never records itself), what a failure to start leaves
behind (nothing it created), inherited descriptors (checked before the collector opens its own;
a control channel that fails is dropped, not spun on), and the wording of option errors and
--help."""
import errno
import json
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

MAN_PAGE = os.path.join(mwtest.SOURCE_DIR, "packaging", "man", "mcpwitness-collect.8.scd")

# Run by the server (as the sudo invoker, nobody): waits for the trace to hold records, then
# tries to rewrite it every way a file's owner could, and prints what each attempt gave.
TAMPER = r"""
import json, os, sys, time
path = sys.argv[1]
while os.path.getsize(path) == 0:
    time.sleep(0.05)
res = {}
def attempt(name, fn):
    try:
        fn()
        res[name] = "done"
    except OSError as e:
        res[name] = e.errno
attempt("truncate", lambda: os.truncate(path, 0))
attempt("open_write", lambda: os.close(os.open(path, os.O_WRONLY)))
attempt("chmod", lambda: os.chmod(path, 0o666))
attempt("read", lambda: os.close(os.open(path, os.O_RDONLY)))
print(json.dumps(res), flush=True)
"""


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


class CollectorCli(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")
        self.nobody = mwtest.nobody_ids()

    def kill_later(self, pid):
        self.addCleanup(lambda: alive(pid) and os.kill(pid, signal.SIGKILL))

    def collect(self, args, command=("/bin/true",), user="nobody", env=None, **kw):
        cmd = [mwtest.COLLECT, "-k", self.keys.secret] + list(args)
        if user:
            cmd += ["--user", user]
        return subprocess.run(cmd + ["--"] + list(command), capture_output=True, text=True,
                              timeout=120, env=env, **kw)

    def assert_one_line(self, err, want):
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(want, lines[0])

    # 1 ----------------------------------------------------------------------------------------
    def test_through_sudo_the_server_cannot_rewrite_its_trace(self):
        uid, gid = self.nobody
        env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER="nobody")
        mine = self.work.mkdir("mine", owner=(uid, gid), mode=0o755)
        out = os.path.join(mine, "tamper.mcpt")
        r = self.collect(["-o", out], ["python3", "-c", TAMPER, out], user=None, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        for attempt in ("truncate", "open_write", "chmod"):
            self.assertIn(got[attempt], (1, 13), "the server could %s its trace: %s"
                          % (attempt, got))  # EPERM or EACCES
        self.assertEqual(got["read"], "done", "the invoking user must be able to read it")
        st = os.stat(out)
        self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (0, gid, 0o640))
        v = mwtest.verify(out, self.keys)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def test_through_sudo_nothing_is_created_where_the_invoker_cannot(self):
        uid, gid = self.nobody
        env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER="nobody")
        root_only = self.work.mkdir("rootonly", mode=0o755)
        closed = self.work.mkdir("closed", mode=0o700)
        self.work.mkdir("closed", "sub", mode=0o777)
        for out in (os.path.join(root_only, "a.mcpt"), os.path.join(closed, "sub", "b.mcpt")):
            r = self.collect(["-o", out], user=None, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assert_one_line(r.stderr, "Permission denied")
        self.assertEqual(os.listdir(root_only), [])
        self.assertEqual(os.listdir(os.path.join(closed, "sub")), [])

    # 2 ----------------------------------------------------------------------------------------
    def test_fifo_without_reader_ends_on_a_signal_with_nothing_attached(self):
        fifo = self.work.join("out.fifo")
        os.mkfifo(fifo)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            p = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", fifo, "--user",
                            "nobody", "--", "/bin/true"])
            time.sleep(1.0)  # well into the wait
            self.assertIsNone(p.poll(), p.stderr.read() if p.poll() is not None else "")
            self.assertEqual(mwtest.leftover_programs(), [],
                             "BPF programs attached while waiting for a reader")
            p.send_signal(sig)
            rc = p.wait(timeout=10)
            err = p.stderr.read()
            self.assertEqual(rc, 2, err)
            self.assert_one_line(err, "failed to open FIFO %s: signal %d" % (fifo, sig))
            self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def wait_open(self, pid, path, timeout=10):
        """Until process pid has path open (its open returned)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == path:
                        return
                except OSError:
                    pass  # closed meanwhile
            time.sleep(0.002)
        self.fail("process %d never opened %s" % (pid, path))

    def test_a_stop_while_loading_starts_no_server(self):
        """INT right after the FIFO's reader came: the collector is loading its programs (half a
        second), no server exists yet. It must not start one it would then have to be stopped
        again for: exit 2, one line, COMMAND never run, no trace, nothing attached."""
        fifo = self.work.join("out.fifo")
        os.mkfifo(fifo)
        marker = self.work.join("ran")
        p = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", fifo, "--allow-root",
                        "--", "/bin/sh", "-c", "touch '%s'; sleep 30" % marker])
        time.sleep(0.5)  # waiting for a reader
        # the reader is this process, not a `cat` whose start (slow on a loaded machine) could
        # let the INT come before the collector's open and leave cat waiting for a writer;
        # O_NONBLOCK: the open returns at once, and a read after the collector's end is EOF
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            self.wait_open(p.pid, fifo)  # the collector's open returned: now loading
            p.send_signal(signal.SIGINT)
            rc = p.wait(timeout=60)
            err = p.stderr.read()
            os.set_blocking(reader, True)
            while os.read(reader, 65536):
                pass
        finally:
            os.close(reader)
        self.assertEqual(rc, 2, err)
        self.assert_one_line(err, "signal %d came before COMMAND was started: nothing recorded"
                             % signal.SIGINT)
        self.assertFalse(os.path.exists(marker), "COMMAND ran")
        self.assertEqual(mwtest.leftover_programs(), [])

    def test_fifo_reader_coming_late_gets_the_trace(self):
        fifo = self.work.join("late.fifo")
        os.mkfifo(fifo)
        p = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", fifo, "--user", "nobody",
                        "--", "/bin/sh", "-c", "ls / >/dev/null"])
        time.sleep(0.7)
        copy = self.work.join("late.mcpt")
        with open(copy, "wb") as f:
            reader = self.popen(["cat", fifo], stdout=f)
            rc = p.wait(timeout=60)
            reader.wait(timeout=30)
        self.assertEqual(rc, 0, p.stderr.read())
        v = mwtest.verify(copy, self.keys)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    # 3 ----------------------------------------------------------------------------------------
    def attach_from_below(self, mode):
        """A shell runs the collector in the background, attached (mode --pid or --pgid) to the
        shell itself or its group, and prints the collector's pid; returns (shell, collector
        pid, records)."""
        script = '"$0" -k "$1" -o "$2" %s $$ & echo $!; wait $!; echo "rc=$?"' % mode
        sh = self.popen(["/bin/sh", "-c", script, mwtest.COLLECT, self.keys.secret, self.trace],
                        start_new_session=True)  # so that $$ is also the group's id
        self.kill_later(sh.pid)
        collector = int(sh.stdout.readline())
        self.kill_later(collector)
        deadline = time.time() + 60
        while time.time() < deadline and not (os.path.exists(self.trace) and
                                              os.path.getsize(self.trace) > 0):
            time.sleep(0.05)
        time.sleep(0.5)  # the collector reads, calls bpf() and drops privileges meanwhile
        os.kill(collector, signal.SIGINT)
        out, err = sh.communicate(timeout=60)
        self.assertIn("rc=0", out, err)
        v = mwtest.verify(self.trace, self.keys)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        return sh, collector, mwtest.dump_json(self.trace)

    def test_attaching_to_an_ancestor_never_records_the_collector(self):
        for mode in ("--pid", "--pgid"):
            with self.subTest(mode=mode):
                if os.path.exists(self.trace):
                    os.unlink(self.trace)
                sh, collector, recs = self.attach_from_below(mode)
                procs = {r["pid"]: r["kind"] for r in recs if r.get("type") == "proc" and
                         r.get("kind") in ("TARGET", "SEEDED")}
                self.assertEqual(procs.get(sh.pid), "TARGET", procs)
                self.assertNotIn(collector, procs)
                mine = [r for r in recs if r.get("pid") == collector]
                self.assertEqual(mine, [], "the collector's own actions are in the trace")

    def test_attach_refuses_a_thread(self):
        ready = threading.Event()
        tid = []

        def worker():
            tid.append(threading.get_native_id())
            ready.set()
            time.sleep(2)
        t = threading.Thread(target=worker)
        t.start()
        self.addCleanup(t.join)
        ready.wait(5)
        r = subprocess.run([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace, "--pid",
                            str(tid[0])], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assert_one_line(r.stderr, "--pid %d is a thread of process %d, not a process"
                             % (tid[0], os.getpid()))
        self.assertFalse(os.path.exists(self.trace))

    # 4 ----------------------------------------------------------------------------------------
    def test_a_failure_to_start_leaves_no_trace_behind(self):
        for extra, want in ((["--control", self.work.path], "Is a directory"),
                            (["--control", "/nonexistent/ctl"], "No such file or directory")):
            r = self.collect(["-o", self.trace] + extra)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assert_one_line(r.stderr, want)
            self.assertFalse(os.path.exists(self.trace), "a failed start left %s" % self.trace)
        r = self.collect(["-o", self.trace])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)

    def test_a_pid_namespace_of_its_own_is_refused(self):
        # in a container without the host's PID namespace the programs would see other pids
        # than the collector: it would follow the wrong process (and kill the wrong ones at
        # the end), so it refuses before creating anything
        r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", mwtest.COLLECT,
                            "-k", self.keys.secret, "-o", self.trace, "--user", "nobody",
                            "--", "/bin/true"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assert_one_line(r.stderr, "runs in a PID namespace of its own")
        self.assertFalse(os.path.exists(self.trace))

    def test_after_linger_takes_kill_or_keep(self):
        r = self.collect(["-o", self.trace, "--after-linger", "later"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assert_one_line(r.stderr, "--after-linger is kill or keep, not 'later' (see --help)")
        self.assertFalse(os.path.exists(self.trace))
        r = mwtest.run([mwtest.COLLECT, "--help"])
        self.assertIn("--after-linger kill|keep", r.stdout)

    def test_a_failure_to_start_removes_nothing_it_did_not_create(self):
        existing = self.work.write("existing.mcpt", "evidence\n")
        r = self.collect(["-o", existing])
        self.assertEqual(r.returncode, 2)
        self.assert_one_line(r.stderr, "File exists (refusing to overwrite an existing file)")
        with open(existing) as f:
            self.assertEqual(f.read(), "evidence\n")
        r = self.collect(["-o", self.work.path])
        self.assertEqual(r.returncode, 2)
        self.assert_one_line(r.stderr, "failed to create trace %s: Is a directory"
                             % self.work.path)
        fifo = self.work.join("out.fifo")
        os.mkfifo(fifo)
        reader = self.popen(["cat", fifo], stdout=subprocess.DEVNULL)
        r = self.collect(["-o", fifo, "--control", "/nonexistent/ctl"])
        self.assertEqual(r.returncode, 2, r.stderr)
        reader.wait(timeout=30)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        rfd, wfd = os.pipe()
        self.addCleanup(os.close, rfd)
        r = self.collect(["--output-fd", str(wfd), "--control", "/nonexistent/ctl"],
                         pass_fds=(wfd,))
        os.close(wfd)
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_the_header_digest_is_of_the_file_that_ran(self):
        """The server renames another file over its own path, or puts a FIFO there, as soon
        as it runs, then exits: the header's digest is still of the executable that ran
        (taken through /proc/PID/exe at once), and a FIFO never blocks the collector."""
        import hashlib
        d = self.work.mkdir("srv", mode=0o777)
        srv = os.path.join(d, "srv")
        want = hashlib.blake2b(open("/bin/sh", "rb").read(), digest_size=32).hexdigest()
        for step in ('mv -f "$0.other" "$0"', 'rm -f "$0"; mkfifo "$0"'):
            with self.subTest(step=step):
                for f in (srv, self.trace):
                    if os.path.exists(f):
                        os.unlink(f)
                shutil.copy("/bin/sh", srv)
                shutil.copy("/bin/true", srv + ".other")
                r = self.collect(["-o", self.trace], command=(srv, "-c", step + "; read x"),
                                 input="\n")
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = mwtest.analyze_json(self.trace, self.keys)
                self.assertEqual(doc["identity"]["server"]["exe_blake2b_256"], want)

    def test_a_script_without_an_interpreter_line_runs_as_execvp_would(self):
        """execvp runs a file the kernel will not execute (ENOEXEC) with /bin/sh; MCP clients
        start servers that way, so the collector does too, by path and through PATH."""
        d = self.work.mkdir("scripts", mode=0o755)
        script = self.work.write("scripts/nosb", 'echo "ran $0 $1"\n')
        os.chmod(script, 0o755)
        env = dict(os.environ, PATH=d + ":" + os.environ["PATH"])
        for command in ((script, "one"), ("nosb", "one")):
            with self.subTest(command=command):
                if os.path.exists(self.trace):
                    os.unlink(self.trace)
                r = self.collect(["-o", self.trace], command=command, env=env)
                self.assertEqual((r.returncode, r.stdout), (0, "ran %s one\n" % script),
                                 r.stderr)
                doc = mwtest.analyze_json(self.trace, self.keys)
                self.assertEqual(doc["identity"]["server"]["exe"],
                                 os.path.realpath("/bin/sh"))

    # 5 ----------------------------------------------------------------------------------------
    def test_inherited_fds_are_checked_before_anything_is_opened(self):
        rfd, wfd = os.pipe()
        self.addCleanup(os.close, rfd)
        self.addCleanup(os.close, wfd)
        cases = (
            (["-o", self.trace, "--control-fd", "9"], (), "--control-fd 9 is not an open file"),
            (["--output-fd", "9"], (), "--output-fd 9 is not an open file descriptor"),
            (["-o", self.trace, "--control-fd", str(wfd)], (wfd,),
             "--control-fd %d is not open for reading" % wfd),
            (["--output-fd", str(rfd)], (rfd,), "--output-fd %d is not open for writing" % rfd),
            (["--output-fd", str(wfd), "--control-fd", str(wfd)], (wfd,),
             "--output-fd and --control-fd name the same descriptor %d" % wfd),
        )
        for args, fds, want in cases:
            with self.subTest(args=args):
                r = self.collect(args, pass_fds=fds)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assert_one_line(r.stderr, want)
                self.assertFalse(os.path.exists(self.trace))
            if os.path.exists(self.trace):  # keeps a failure from cascading into the next
                os.unlink(self.trace)

    def test_a_failing_control_fd_is_dropped_once(self):
        # a pty's master whose slave side is closed: every read fails with EIO, and epoll
        # keeps reporting it ready
        master, slave = os.openpty()
        self.addCleanup(os.close, master)
        os.close(slave)
        r = self.collect(["-o", self.trace, "--control-fd", str(master)],
                         ["/bin/sh", "-c", "sleep 1"], pass_fds=(master,))
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assert_one_line(r.stderr, "failed to read the control channel: Input/output error")
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)

    # 6 ----------------------------------------------------------------------------------------
    def test_command_keeps_the_signals_its_caller_ignored(self):
        """nohup (HUP ignored) reaches COMMAND as it would without the collector; every other
        signal starts at its default, whatever the collector does with it."""
        script = 'trap "" HUP; exec "$0" "$@"'
        cmd = ["/bin/sh", "-c", script, mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace,
               "--user", "nobody", "--", "/bin/sh", "-c", "grep -E '^Sig(Ign|Cgt)' /proc/$$/status"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        masks = dict(line.split(":\t") for line in r.stdout.splitlines())
        ign = int(masks["SigIgn"], 16)
        self.assertTrue(ign & (1 << (signal.SIGHUP - 1)), r.stdout)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):  # the collector's own
            self.assertFalse(ign & (1 << (sig - 1)), "%s ignored: %s" % (sig, r.stdout))

    def test_ctrl_c_reaches_a_server_in_a_process_group_of_its_own(self):
        """Under a terminal, ^C signals the foreground process group. A server that made a
        group of its own (setpgid) is not in it: the collector forwards the INT (it skips only
        what the server already got), and exits with the server's 128+2."""
        import pty
        server = "import os, time\nos.setpgid(0, 0)\nprint('ready', flush=True)\ntime.sleep(30)\n"
        pid, master = pty.fork()
        if pid == 0:  # the child: a session of its own, the pty its terminal
            os.execv(mwtest.COLLECT, [mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace,
                                      "--user", "nobody", "--", "python3", "-c", server])
        self.addCleanup(lambda: alive(pid) and os.kill(pid, signal.SIGKILL))
        self.addCleanup(os.close, master)
        out = b""
        deadline = time.time() + 60
        while b"ready" not in out and time.time() < deadline:
            out += os.read(master, 1024)
        self.assertIn(b"ready", out)
        os.write(master, b"\x03")  # ^C
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 130, out)

    def test_through_sudo_the_server_gets_its_users_login_variables(self):
        """sudo sets HOME, USER and LOGNAME for root: COMMAND, run as the invoker, gets the
        invoker's instead (as sudo -u would set them), and the trace's home is theirs, with
        the digest of the environment COMMAND really got. A value the caller chose passes
        unchanged; so does an unset one."""
        uid, gid = self.nobody
        me, them = pwd.getpwuid(os.getuid()), pwd.getpwuid(uid)
        mine = self.work.mkdir("mine", owner=(uid, gid), mode=0o755)
        sudo_env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER="nobody",
                        HOME=me.pw_dir, USER=me.pw_name, LOGNAME=me.pw_name)
        show = ["/bin/sh", "-c", 'printf "%s|%s|%s|" "$HOME" "$USER" "${LOGNAME-unset}"; '
                                 'b2sum -l 256 </proc/$$/environ']
        chosen = dict(sudo_env, HOME=self.work.path, USER="someone-else")
        del chosen["LOGNAME"]
        for i, (env, want) in enumerate((
                (sudo_env, [them.pw_dir, them.pw_name, them.pw_name]),
                (chosen, [self.work.path, "someone-else", "unset"]))):
            with self.subTest(want=want):
                out = os.path.join(mine, "env%d.mcpt" % i)
                r = self.collect(["-o", out], show, user=None, env=env)
                self.assertEqual(r.returncode, 0, r.stderr)
                got = r.stdout.split("|")
                self.assertEqual(got[:3], want)
                target = mwtest.dump_json(out, self.keys)[0]["target"]
                self.assertEqual((target["home"], target["passwd_home"], target["user"]),
                                 (want[0], them.pw_dir, them.pw_name))
                with open(out, "rb") as f:  # the header holds the digest of what it got
                    self.assertIn(bytes.fromhex(got[3].split()[0]), f.read(4096))
                # reports give the password entry's home where the server's HOME is another
                c = mwtest.run([mwtest.ANALYZER, "calls", out, "--pubkey", self.keys.public])
                self.assertEqual(c.returncode, 0, c.stderr)
                user = [ln for ln in c.stdout.splitlines() if ln.startswith("user: ")]
                other = ' (password entry: "%s")' % them.pw_dir if i else ""
                self.assertEqual(user, ['user: nobody (uid %d gid %d) home "%s"%s'
                                        % (uid, gid, want[0], other)])

    def need_i386_entry(self):
        """Skips unless this kernel has an i386 syscall entry. Some x86-64 kernels have none
        (ia32_emulation=0, or a guest whose hypervisor does not deliver int $0x80, as on one of
        our CI hosts): there the instruction faults with SIGSEGV before any syscall, traced or
        not."""
        if os.uname().machine != "x86_64":
            self.skipTest("the i386 entry exists on x86-64 only")
        import mwevents
        native = subprocess.run([mwevents.TRIGGER, "int80"], capture_output=True, text=True,
                                cwd=self.work.path, timeout=60)
        if "step int80 failed (status 0x%x)" % signal.SIGSEGV in native.stderr:
            self.skipTest("this kernel has no i386 syscall entry: int $0x80 faults (SIGSEGV) "
                          "without the collector")
        self.assertEqual(native.returncode, 0, native.stderr)

    def launched_foreign(self, step):
        """A launched server is killed by SIGSYS at its first syscall of another ABI, and the
        trace says so: its exit, and nothing else of that process."""
        import mwevents
        rec = mwevents.Recording(self.work, self.keys, [step], busy=False)
        self.assertIn("step %s failed (status 0x1f)" % step, rec.result.stderr)  # SIGSYS
        step_pids = [e["pid"] for e in rec.events if e["op"] == "exit" and e["args"][0] == 31]
        self.assertEqual(len(step_pids), 1, rec.result.stderr)
        self.assertEqual([e["op"] for e in rec.of(step_pids[0]) if e["op"] != "exit"], [])
        # the default policy makes that death a finding: the process, killed by SIGSYS
        found = [(f["rule"], f["severity"], f["message"], f["process"]["pid"])
                 for f in mwtest.analyze_json(rec.trace, self.keys)["findings"]
                 if f["category"] == "evasion"]
        self.assertEqual(found, [("evasion.killed-by-seccomp", "medium",
                                  "%s killed by SIGSYS" % rec.trigger, step_pids[0])])
        calls = mwtest.run([mwtest.ANALYZER, "calls", rec.trace, "--pubkey", self.keys.public])
        self.assertIn("    exit signal SIGSYS [bucket] pid %d record " % step_pids[0], calls.stdout)

    def test_a_foreign_abi_syscall_kills_the_server_instead_of_escaping(self):
        """An i386 syscall (int $0x80) would be read by the dispatchers as the x86-64 call of
        the same number (getpid 20 as writev) or escape the trace."""
        self.need_i386_entry()
        self.launched_foreign("int80")

    def test_an_x32_syscall_kills_the_server_instead_of_escaping(self):
        """An x32 syscall (the number with __X32_SYSCALL_BIT) has no handler: it would escape
        the trace on a kernel built with x32. Killed whether or not this kernel has it."""
        if os.uname().machine != "x86_64":
            self.skipTest("the x32 ABI exists on x86-64 only")
        self.launched_foreign("x32")

    def attached_foreign(self, step):
        """mw_trigger STEP run by a shell the collector attached to (--pid), as nobody: not
        under the collector's seccomp filter. Returns (the step's JSON line, the trace's
        foreign_abi records as (pid, number, ABI), evasion.foreign-abi findings as (severity,
        message))."""
        import mwevents
        d = self.work.mkdir("attached", mode=0o777)
        trigger = os.path.join(d, "mw_trigger")
        shutil.copy(mwevents.TRIGGER, trigger)
        os.chmod(trigger, 0o755)
        sh = self.popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                         "/bin/sh", "-c", 'read go && exec "$0" "$1"', trigger, step],
                        stdin=subprocess.PIPE, cwd=d)
        coll = self.popen([mwtest.COLLECT, "-k", self.keys.secret, "-o", self.trace, "--pid",
                           str(sh.pid), "--linger", "0", "-v"])
        mwtest.wait_attached(coll)
        sh.stdin.write("go\n")
        sh.stdin.close()
        out = [json.loads(ln) for ln in sh.stdout.read().splitlines()]
        self.assertEqual(sh.wait(timeout=60), 0)
        self.assertEqual(coll.wait(timeout=60), 0, coll.stderr.read())
        self.assertEqual([o["step"] for o in out], [step])
        v = mwtest.verify(self.trace, self.keys)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        recs = mwtest.dump_json(self.trace, self.keys)
        foreign = sorted((e["pid"], e["args"][0], e["args"][1])
                         for e in recs if e.get("op") == "foreign_abi")
        doc = mwtest.analyze_json(self.trace, self.keys)
        found = sorted((f["severity"], f["message"]) for f in doc["findings"]
                       if f["rule"] == "evasion.foreign-abi")
        return out[0], foreign, found

    def test_an_attached_process_is_recorded_making_x32_syscalls(self):
        """An attached process's x32 syscalls are recorded as made (foreign_abi: the number in
        that ABI and the ABI, once per process, ABI and number) and are findings of
        evasion.foreign-abi. On a kernel without x32 (as here) they fail with ENOSYS; the
        record is made at entry all the same."""
        if os.uname().machine != "x86_64":
            self.skipTest("the x32 ABI exists on x86-64 only")
        import mwevents
        native = subprocess.run([mwevents.TRIGGER, "x32"], capture_output=True, text=True,
                                cwd=self.work.path, timeout=60)
        self.assertEqual(native.returncode, 0, native.stderr)
        native = json.loads(native.stdout)
        got, foreign, found = self.attached_foreign("x32")
        x32_here = native["getpid"] == native["pid"]  # else ENOSYS: a kernel without x32
        self.assertEqual((got["getpid"], got["getpid2"]),
                         (got["pid"],) * 2 if x32_here else (-errno.ENOSYS,) * 2)
        self.assertEqual(foreign, [(got["pid"], 39, 2), (got["pid"], 257, 2)])
        self.assertEqual(found, [("high", "syscall 257 (openat) of the x32 ABI, not recorded"),
                                 ("high", "syscall 39 (getpid) of the x32 ABI, not recorded")])

    def test_an_attached_process_is_recorded_making_i386_syscalls(self):
        self.need_i386_entry()
        got, foreign, found = self.attached_foreign("int80")
        self.assertEqual(got["ret"], got["pid"])  # getpid through int $0x80
        self.assertEqual(foreign, [(got["pid"], 20, 1)])
        self.assertEqual(found, [("high", "syscall 20 (getpid) of the i386 ABI, not recorded")])

    def test_option_errors_name_the_bad_option(self):
        for args, want in ((["-o", "t", "-vZq", "--", "true"], "unknown option '-Z'"),
                           (["-o"], "option '-o' needs an argument"),
                           (["--output"], "option '--output' needs an argument"),
                           (["-o", "t", "--quiet=1"], "option '--quiet' takes no argument"),
                           (["-o", "t", "--bogus", "--", "true"], "unknown or ambiguous option "
                                                                  "'--bogus'")):
            with self.subTest(args=args):
                r = mwtest.run([mwtest.COLLECT] + args, cwd=self.work.path)
                self.assertEqual(r.returncode, 2)
                self.assert_one_line(r.stderr, want)
        self.assertFalse(os.path.exists(self.work.join("t")))

    def test_help_and_version_that_cannot_be_written_fail(self):
        """A full disk or a closed standard output is one line and exit 2, not a silent 0."""
        for opt in ("--help", "--version"):
            for cause, how in (("No space left on device", "full"),
                               ("Bad file descriptor", "closed")):
                close = (lambda: os.close(1)) if how == "closed" else None
                with self.subTest(opt=opt, how=how), open("/dev/full", "w") as full:
                    r = subprocess.run([mwtest.COLLECT, opt], stdout=full, stderr=subprocess.PIPE,
                                       text=True, timeout=30, preexec_fn=close)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assert_one_line(r.stderr, "mcpwitness-collect: failed to write the "
                                         "output: " + cause)

    def test_help_and_man_page_say_what_happens(self):
        helptext = mwtest.run([mwtest.COLLECT, "--help"]).stdout
        with open(MAN_PAGE, encoding="utf-8") as f:
            page = f.read()
        flat = lambda s: " ".join(s.split())  # noqa: E731
        for text in (flat(helptext), flat(page)):
            self.assertIn("MCPWITNESS_HIDE_HOOKS", text)
            self.assertNotIn("PID and its descendants have exited", text)
            self.assertNotIn("_PID_ and its descendants have exited", text)
            self.assertIn("a guardian", text)  # what a SIGKILL of the collector does
        self.assertRegex(flat(helptext), r"--pid and --pgid: 0 when the recording ended")
        self.assertNotIn("the collector killed)", flat(page))
        self.assertIn("owned by root and the server user's group, mode 0640", flat(page))


if __name__ == "__main__":
    mwtest.main()
