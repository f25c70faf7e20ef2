"""test_hardening.py - the collector's least privilege, observed from outside while it records
(issue 7): its uid, capabilities, no_new_privs, seccomp; what the monitored user cannot do to
it; the syscalls its loop really makes against the allow-list in collector/sandbox.c; and the
signing key appearing nowhere."""
import base64
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

CAP_KILL_ONLY = 1 << 5


def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def wait_sandboxed(pid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if status(pid).get("Seccomp") == "2":
                return status(pid)
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError("collector %d never entered its sandbox" % pid)


def as_user(uid, gid, fn):
    """Runs fn() in a child process with uid/gid; returns what it returns (picklable)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            os.write(w, repr(fn()).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return eval(data.decode())  # our own repr of a tuple of strings and ints


def attempts(cpid):
    """What an unprivileged user tries against the collector; each returns an errno name."""
    import errno as E
    out = {}
    try:
        os.kill(cpid, 0)
        out["kill"] = "ok"
    except OSError as e:
        out["kill"] = E.errorcode[e.errno]
    for name in ("mem", "environ", "maps"):
        try:
            with open("/proc/%d/%s" % (cpid, name), "rb") as f:
                f.read(1)
            out[name] = "ok"
        except OSError as e:
            out[name] = E.errorcode[e.errno]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    PTRACE_ATTACH = 16
    rc = libc.ptrace(PTRACE_ATTACH, cpid, None, None)
    out["ptrace"] = "ok" if rc == 0 else E.errorcode[ctypes.get_errno()]
    return out


def sandbox_allow_list():
    with open(os.path.join(mwtest.SOURCE_DIR, "collector", "sandbox.c")) as f:
        src = f.read()
    block = src[src.index("static const char *const allowed[]"):]
    block = block[:block.index("};")]
    return set(re.findall(r'"([a-z0-9_]+)"', block)) | {"bpf"}


class Hardening(mwtest.E2ETestCase):
    def setUp(self):
        super().setUp()
        self.keys = mwtest.Keys(self.work)
        self.trace = self.work.join("trace.mcpt")

    def start(self, command, extra=(), **kw):
        p = subprocess.Popen(mwtest.collect_cmd(self.trace, self.keys, command, extra=extra),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, **kw)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def test_sandbox_while_recording(self):
        p = self.start(["sleep", "30"])
        st = wait_sandboxed(p.pid)
        nobody = mwtest.nobody_ids()
        uids = [int(x) for x in st["Uid"].split()]
        gids = [int(x) for x in st["Gid"].split()]
        self.assertEqual(len(set(uids)), 1, st["Uid"])
        self.assertNotIn(uids[0], (0, nobody[0]))
        self.assertNotIn(gids[0], (0, nobody[1]))
        self.assertEqual(st["Groups"], "")
        for field in ("CapEff", "CapPrm", "CapBnd"):
            self.assertEqual(int(st[field], 16), CAP_KILL_ONLY, (field, st[field]))
        self.assertEqual(int(st["CapInh"], 16), 0)
        self.assertEqual(int(st["CapAmb"], 16), 0)
        self.assertEqual(st["NoNewPrivs"], "1")
        self.assertEqual(st["Seccomp"], "2")
        # non-dumpable: the kernel hands its /proc files to root
        self.assertEqual(os.stat("/proc/%d/mem" % p.pid).st_uid, 0)
        got = as_user(nobody[0], nobody[1], lambda: attempts(p.pid))
        self.assertEqual(got, {"kill": "EPERM", "mem": "EACCES", "environ": "EACCES",
                               "maps": "EACCES", "ptrace": "EPERM"})
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), 128 + signal.SIGTERM)
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)

    def test_loop_syscalls_are_in_the_allow_list(self):
        listener = mwtest.Listener()
        self.addCleanup(listener.close)
        log = self.work.join("strace.log")
        client = os.path.join(mwtest.EXAMPLE_DIR, "client.py")
        server = os.path.join(mwtest.EXAMPLE_DIR, "vulnerable_server.py")
        home = self.work.mkdir("home", owner=mwtest.nobody_ids())
        ctl = self.work.join("ctl.fifo")
        cmd = ["strace", "-f", "-qq", "-o", log, "--"] + mwtest.collect_cmd(
            self.trace, self.keys, ["python3", server], extra=["--control", ctl])
        # the client drives the server through the collector; a writer feeds marks meanwhile
        env = dict(os.environ, HOME=home)
        drv = subprocess.Popen(["python3", client, "--listener", "--"] + cmd, env=env,
                               cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: drv.poll() is None and (drv.kill(), drv.wait()))
        deadline = time.time() + 60
        while not os.path.exists(ctl) and time.time() < deadline and drv.poll() is None:
            time.sleep(0.05)
        if os.path.exists(ctl):
            with open(ctl, "w") as f:
                f.write('{"op":"mark","phase":"begin","call_id":"c1","tool":"echo"}\n')
        out, err = drv.communicate(timeout=120)
        self.assertEqual(drv.returncode, 0, out + err)
        used, collector = set(), None
        seen_filter = False
        with open(log) as f:
            for line in f:
                m = re.match(r"(\d+)\s+([a-z0-9_]+)\(", line)
                if not m:
                    continue
                pid, name = int(m.group(1)), m.group(2)
                if collector is None and name == "execve" and "mcpwitness-collect" in line:
                    collector = pid
                if pid != collector:
                    continue
                # libseccomp first probes with NULL filters (EFAULT); the install carries one
                if name == "seccomp" and "filter=" in line:
                    seen_filter = True
                    continue
                if seen_filter:
                    used.add(name)
        with open(log) as f:
            sec = [l.strip() for l in f if "seccomp(" in l][-3:]
        self.assertTrue(seen_filter, "no seccomp filter by collector %r: %s" % (collector, sec))
        print("syscalls of the collector's loop and teardown:", " ".join(sorted(used)))
        self.assertLessEqual(used, sandbox_allow_list())
        self.assertEqual(mwtest.verify(self.trace, self.keys).returncode, 0)

    def test_server_runs_as_the_user_with_nothing_of_ours(self):
        report = ("import json,os\n"
                  "st=dict(l.split(':',1) for l in open('/proc/self/status'))\n"
                  "print(json.dumps({'fds': sorted(int(f) for f in os.listdir('/proc/self/fd')),"
                  "'ids': [os.getresuid(), os.getresgid()], 'groups': sorted(os.getgroups()),"
                  "'nnp': st['NoNewPrivs'].strip(), 'capeff': st['CapEff'].strip(),"
                  "'env': dict(os.environ)}))\n")
        # LC_ALL set: python would otherwise add LC_CTYPE itself (PEP 538)
        env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "MW_PROBE": "x y", "LC_ALL": "C.UTF-8"}
        ctl = self.work.join("ctl.fifo")
        r = subprocess.run(mwtest.collect_cmd(self.trace, self.keys, ["python3", "-c", report],
                                              extra=["--control", ctl]),
                           env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        uid, gid = mwtest.nobody_ids()
        self.assertEqual(got["ids"], [[uid] * 3, [gid] * 3])
        self.assertEqual(got["groups"], sorted(os.getgrouplist("nobody", gid)))
        self.assertEqual(got["nnp"], "1")
        self.assertEqual(int(got["capeff"], 16), 0)
        # 0-2 and the listing's own directory fd; nothing of the collector (trace, key,
        # BPF maps, ring, signalfd, epoll, control FIFO)
        self.assertEqual(len(got["fds"]), 4, got["fds"])
        self.assertEqual(got["fds"][:3], [0, 1, 2])
        self.assertEqual(got["env"], env)

    def test_through_sudo_the_user_gets_no_more_than_their_own_rights(self):
        # what sudo sets for a user: the collector reads nothing else to know who asked
        uid, gid = mwtest.nobody_ids()
        env = dict(os.environ, SUDO_UID=str(uid), SUDO_GID=str(gid), SUDO_USER="nobody")
        mine = self.work.mkdir("mine", owner=(uid, gid), mode=0o755)

        def collect(out, extra=(), user=None, command=("/bin/true",)):
            cmd = [mwtest.COLLECT, "-k", self.keys.secret, "-o", out] + list(extra)
            if user:
                cmd += ["--user", user]
            return subprocess.run(cmd + ["--"] + list(command), env=env, capture_output=True,
                                  text=True, timeout=120)

        r = collect(os.path.join(mine, "a.mcpt"), extra=["--allow-root"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--allow-root is refused through sudo", r.stderr)
        r = collect(os.path.join(mine, "b.mcpt"), user="root")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--user root is refused through sudo", r.stderr)
        # root could create a file in /etc/cron.d (with channel bytes in it); nobody cannot
        root_only = self.work.mkdir("rootonly", mode=0o755)
        r = collect(os.path.join(root_only, "c.mcpt"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("Permission denied", r.stderr)
        self.assertEqual(os.listdir(root_only), [])
        r = collect(os.path.join(mine, "d.mcpt"),
                    extra=["--control", os.path.join(root_only, "ctl")])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(os.listdir(root_only), [])
        # where the user may write, the trace is created, root's with the user's group: the
        # user reads it, the server (running as the user) cannot rewrite it
        out = os.path.join(mine, "e.mcpt")
        r = collect(out, extra=["--control", os.path.join(mine, "ctl")])
        self.assertEqual(r.returncode, 0, r.stderr)
        st = os.stat(out)
        self.assertEqual((st.st_uid, st.st_gid, st.st_mode & 0o777), (0, gid, 0o640))
        self.assertEqual(os.stat(os.path.join(mine, "ctl")).st_uid, uid)
        self.assertEqual(mwtest.verify(out, self.keys).returncode, 0)

    def test_key_appears_nowhere(self):
        with open(self.keys.secret) as f:
            blob = base64.b64decode(f.read().splitlines()[1])
        seed = blob[12:44]  # "Ed" "S1" key_id[8] seed[32] chk[32]
        self.assertEqual(len(seed), 32)
        forms = [seed, seed.hex().encode(), base64.b64encode(seed)[:40]]
        r = mwtest.record(self.trace, self.keys, ["/bin/sh", "-c", "echo hi; cat /etc/hostname"],
                          extra=["-vvv"])
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs = [r.stdout.encode(), r.stderr.encode()]
        with open(self.trace, "rb") as f:
            outputs.append(f.read())
        for cmd in (["dump", self.trace, "--json"], ["verify", self.trace, "--json"],
                    ["analyze", self.trace, "--format", "json", "-p", mwtest.DEFAULT_POLICY]):
            a = subprocess.run([mwtest.ANALYZER] + cmd + ["--pubkey", self.keys.public],
                               capture_output=True)
            outputs += [a.stdout, a.stderr]
        for out in outputs:
            for form in forms:
                self.assertNotIn(form, out)


if __name__ == "__main__":
    mwtest.main()
