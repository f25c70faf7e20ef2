"""mwtest.py - shared helpers of the end-to-end tests: the real collector on the real kernel.

Each test file is a unittest module run by CTest as `python3 test_x.py`. A test that cannot run
here because the kernel or the machine lacks something exits 77 after printing `SKIP: reason`
(CTest SKIP_RETURN_CODE); not being root is the only such reason today, and CI runs as root.

Conventions: every process a test starts is ended by its pid (ProcessGuard), every temporary
file lives under a per-test directory that is removed afterwards, no packet leaves the machine
(listeners and peers are on 127.0.0.1). MW_KEEP=1 keeps the per-test directories (traces,
keys) for a look afterwards.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SOURCE_DIR = os.environ.get("MW_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("MW_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
COLLECT = os.environ.get("MW_COLLECT", os.path.join(BUILD_DIR, "collector", "mcpwitness-collect"))
ANALYZER = os.environ.get("MW_ANALYZER", os.path.join(BUILD_DIR, "analyzer", "mcpwitness"))
DEFAULT_POLICY = os.path.join(SOURCE_DIR, "policies", "default.yaml")
EXAMPLE_DIR = os.path.join(SOURCE_DIR, "test", "fixtures", "example")
SKIP = 77


def require_root():
    """Exits 77 (skip) unless we can load BPF programs, which needs root."""
    if os.geteuid() != 0:
        print("SKIP: end-to-end tests load BPF programs and need root")
        sys.exit(SKIP)


def nobody_ids():
    import pwd
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def run(cmd, timeout=120, **kw):
    """Runs cmd to completion, capturing output (text)."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


class Workdir:
    """A temporary directory world-readable enough for a server running as nobody."""

    def __init__(self, prefix="mwtest."):
        self.path = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.path, 0o755)

    def join(self, *parts):
        return os.path.join(self.path, *parts)

    def mkdir(self, *parts, owner=None, mode=0o755):
        p = self.join(*parts)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        if owner:
            os.chown(p, *owner)
        return p

    def write(self, rel, content, owner=None, mode=0o644):
        p = self.join(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(content)
        os.chmod(p, mode)
        if owner:
            os.chown(p, *owner)
        return p

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


class Keys:
    """A signing key pair made by `mcpwitness keygen` into dir/keys."""

    def __init__(self, work):
        self.dir = work.join("keys")
        r = run([ANALYZER, "keygen", "-o", self.dir])
        if r.returncode != 0:
            raise AssertionError("keygen failed: %s" % r.stderr)
        self.secret = os.path.join(self.dir, "signing.key")
        self.public = os.path.join(self.dir, "signing.pub")


class Listener:
    """A TCP listener on 127.0.0.1 that accepts and closes connections, in a thread."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self):
        self.sock.close()


def collect_cmd(trace, keys, command, user="nobody", extra=()):
    """The collector's command line; trace None = the output is given in extra."""
    cmd = [COLLECT, "-k", keys.secret] + (["-o", trace] if trace else [])
    if user:
        cmd += ["--user", user]
    return cmd + list(extra) + ["--"] + list(command)


def record(trace, keys, command, user="nobody", extra=(), env=None, cwd=None, timeout=120,
           stdin=subprocess.DEVNULL):
    """Runs COMMAND under the collector to completion; returns the CompletedProcess."""
    return subprocess.run(collect_cmd(trace, keys, command, user, extra), capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=cwd, stdin=stdin)


def wait_attached(collector):
    """Reads a collector's stderr (run with -v, text mode) until it says it attached: the
    recording runs from there on. AssertionError when it ends first."""
    for line in collector.stderr:
        if "attached to" in line:
            return
    raise AssertionError("the collector ended before attaching: rc %s"
                         % collector.wait(timeout=60))


def verify(trace, keys):
    return run([ANALYZER, "verify", trace, "--pubkey", keys.public])


def dump_json(trace, keys=None):
    """Every record of the trace as a list of dicts (mcpwitness dump --json)."""
    cmd = [ANALYZER, "dump", trace, "--json"]
    if keys:
        cmd += ["--pubkey", keys.public]
    r = run(cmd)
    if r.returncode != 0:
        raise AssertionError("dump failed (%d): %s" % (r.returncode, r.stderr))
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def analyze_json(trace, keys, policies=(DEFAULT_POLICY,), extra=()):
    cmd = [ANALYZER, "analyze", trace, "--pubkey", keys.public, "--format", "json"]
    for p in policies:
        cmd += ["-p", p]
    r = run(cmd + list(extra))
    if r.returncode not in (0, 1):
        raise AssertionError("analyze failed (%d): %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)


def npm_install(src, want):
    """npm ci --ignore-scripts of the pinned lock in test/e2e/SRC into BUILD_DIR/SRC-e2e, once
    (kept while the lock is the same, and while the file want, relative to node_modules, is
    there); returns that directory. No package's install script runs. Exits 77 (skip) when npm's
    registry is unreachable."""
    src_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), src)
    dest = os.path.join(BUILD_DIR, src + "-e2e")
    stamp = os.path.join(dest, ".lock-installed")
    with open(os.path.join(src_dir, "package-lock.json"), "rb") as f:
        lock = f.read()
    if os.path.exists(os.path.join(dest, "node_modules", want)) and os.path.exists(stamp):
        with open(stamp, "rb") as f:
            if f.read() == lock:
                return dest
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for name in os.listdir(src_dir):
        shutil.copy(os.path.join(src_dir, name), dest)
    r = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=dest,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        text = r.stdout + r.stderr
        if any(k in text for k in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT",
                                   "ECONNRESET", "network")):
            print("SKIP: npm's registry is unreachable: %s" % text.strip().splitlines()[-1])
            sys.exit(SKIP)
        raise AssertionError("npm ci in %s failed: %s" % (dest, text))
    with open(stamp, "wb") as f:
        f.write(lock)
    os.chmod(dest, 0o755)
    return dest


def leftover_programs(prefix="handle_"):
    """Our BPF programs (by name prefix) still held by a process of this test (a collector that
    did not exit), or pinned in bpffs. A program nobody holds and nobody pinned is being freed
    (the kernel releases it asynchronously after its last reference, e.g. another collector on
    the machine that just exited): it cannot stay, so it is not a leak. Programs of other
    collectors running at the same time are not counted."""
    r = run(["bpftool", "prog", "show", "--json"])
    if r.returncode != 0:
        return []
    progs = [p for p in json.loads(r.stdout or "[]") if p.get("name", "").startswith(prefix)]
    holders = None
    if progs and not any("pids" in p for p in progs):
        holders = _prog_holders()  # a bpftool built without its pid iterator lists no owners
    me = os.getpid()
    left = []
    for p in progs:
        owners = holders.get(p["id"], []) if holders is not None else \
            [o["pid"] for o in p.get("pids", [])]
        if any(_descends_from(pid, me) for pid in owners):
            left.append((p["name"], owners))
    return left + _our_pins(prefix)


def _our_pins(prefix):
    """Programs of ours pinned anywhere under /sys/fs/bpf (the collector never pins)."""
    pins = []
    for root, _, files in os.walk("/sys/fs/bpf"):
        pins += [("pinned", os.path.join(root, f)) for f in files if f.startswith(prefix)]
    return pins


def fdinfos(pid):
    """The /proc/PID/fdinfo of each fd pid holds, as a dict of its fields (values stripped):
    a BPF program's has prog_id, a link's link_type and prog_id, a map's map_type and map_id.
    An fd closed meanwhile, or a process gone, gives nothing."""
    try:
        fds = os.listdir("/proc/%s/fdinfo" % pid)
    except OSError:
        return
    for fd in fds:
        try:
            with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                lines = f.readlines()
        except OSError:
            continue
        yield {k: v.strip() for k, v in (line.split(":", 1) for line in lines if ":" in line)}


def _prog_holders():
    """prog id -> pids of the processes holding it through a program or link fd, from
    /proc/PID/fdinfo (what bpftool's pid iterator reports, where bpftool has one)."""
    holders = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for info in fdinfos(pid):
            if info.get("prog_id", "").isdigit():
                holders.setdefault(int(info["prog_id"]), []).append(int(pid))
    return holders


def _descends_from(pid, ancestor):
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


class E2ETestCase(unittest.TestCase):
    """Base class: a Workdir per test, removed afterwards, and a check that no BPF program of
    ours stays loaded once the collector is gone."""

    def setUp(self):
        self.work = Workdir()
        if not os.environ.get("MW_KEEP"):
            self.addCleanup(self.work.cleanup)

    def popen(self, cmd, **kw):
        """Starts cmd (text mode; stdin empty, stdout and stderr piped unless given); the
        cleanup ends it by its Popen, never by a bare pid another process may have taken."""
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        p = subprocess.Popen(cmd, text=True, **kw)

        def end():
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdin, p.stdout, p.stderr):
                if f:
                    f.close()
        self.addCleanup(end)
        return p

    def tearDown(self):
        for _ in range(50):  # the kernel frees programs asynchronously after the last fd closes
            if not leftover_programs():
                break
            time.sleep(0.1)
        self.assertEqual(leftover_programs(), [], "BPF programs left attached")


def main():
    require_root()
    unittest.main(verbosity=2)
