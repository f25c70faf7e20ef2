"""test_rewrites.py - paths rewritten by another thread while the kernel acts on them (opens,
unlink, chmod, chdir, the mount calls; the new name of rename and link, a symlink's target; a
mount's source), also past the 63 bytes of their head: read back at exit, the path names
something else than what the kernel used, and the record must say so (TAMPERED). Where the call
can be made to block after the kernel copied its path (a FIFO, a directory held locked), the
rewrite is certain and every such record is checked; a thread flipping the path in a loop shows
the same on calls that do not block. Long paths not rewritten carry no flag. Destination
addresses rewritten under connect, sendto and sendmsg: test_rewrites_addresses.py."""
import ctypes
import errno
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
from collectorcase import (BLOCKED_IN, FLIPPER, CollectorCase, blocked_in,  # noqa: E402
                           uffd_page)
from mwevents import F_TAMPERED, F_UNCHECKED  # noqa: E402


class DirLock:
    """Holds a directory's inode lock (shared) from this process, which is not traced, until
    release(): a getdents64 into a buffer registered with userfaultfd stops at the first byte it
    writes, inside iterate_dir. A call that needs the lock exclusively (unlink of an entry, chmod
    of the directory itself) then blocks after the kernel copied its path argument. x86-64."""

    SYS_GETDENTS64 = 217
    SIZE = 4096

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        self.uffd, self.buf = uffd_page(self.libc, self.SIZE)
        self.dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        self.thread = threading.Thread(target=self.libc.syscall, daemon=True, args=(
            self.SYS_GETDENTS64, self.dfd, ctypes.c_void_p(self.buf), self.SIZE))
        self.thread.start()
        if not blocked_in(self.thread.native_id, self.SYS_GETDENTS64, timeout=10):
            self.release()
            raise AssertionError("getdents64 into a userfaultfd page did not block")

    def release(self):
        """Closing the userfaultfd resolves the fault: getdents64 returns, the lock is free."""
        if self.uffd < 0:
            return
        os.close(self.uffd)
        self.uffd = -1
        self.thread.join(timeout=30)
        os.close(self.dfd)
        self.libc.munmap(self.buf, self.SIZE)


# The traced side of the rewrite tests. Each runs as nobody under the collector; a thread makes
# the call with a ctypes buffer as its argument and another thread (or process) rewrites that
# buffer in place.

# run_blocked(calls), calls [[name, syscall nr, [args], i, new], ...]: each call is made (a
# string argument as a buffer of its own, a number or None as it is) in a thread of its own while
# the test holds a lock it needs; once all are blocked (after the kernel copied their paths)
# argument i is rewritten to new and "rewritten" is printed; the test then frees the lock. Last
# line: JSON {name: result or -errno, "blocked": [...]}. x86-64 numbers.
BLOCKED_CALLS = BLOCKED_IN + r"""
import ctypes, json, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def run_blocked(calls):
    out, threads = {"blocked": []}, []
    for name, nr, args, i, new in calls:
        args = [ctypes.create_string_buffer(a.encode(), 512) if isinstance(a, str) else a
                for a in args]
        def call(name=name, nr=nr, args=args):
            r = libc.syscall(nr, *args)
            out[name] = -ctypes.get_errno() if r < 0 else r
        t = threading.Thread(target=call)
        t.start()
        threads.append((t, nr, args[i], new))
    for t, nr, buf, new in threads:
        out["blocked"].append(blocked_in(t.native_id, nr))
        ctypes.memmove(buf, new.encode() + b"\0", len(new) + 1)
    print("rewritten", flush=True)
    for t, *_ in threads:
        t.join()
    print(json.dumps(out), flush=True)
"""

# argv[1]: the calls of run_blocked, as JSON.
BLOCKED_PATHS = BLOCKED_CALLS + r"""
run_blocked(json.loads(sys.argv[1]))
"""

# argv: the directory to bind, the mount point, a name that does not exist. In a user and mount
# namespace of its own: a bind mount whose source is rewritten to the missing name, one whose
# target is, and a move_mount of a detached clone of the directory whose target is, each
# blocked on the mount point's lock (run_blocked).
BLOCKED_MOUNTS = BLOCKED_CALLS + r"""
src, d, fake = sys.argv[1:4]
if libc.unshare(0x10000000 | 0x20000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
tree = libc.syscall(428, -100, src.encode(), 1 | os.O_CLOEXEC)  # open_tree(OPEN_TREE_CLONE)
if tree < 0:
    sys.exit("open_tree: " + os.strerror(ctypes.get_errno()))
run_blocked([["mount_source", 165, [src, d, None, 4096, None], 0, fake],  # MS_BIND
             ["mount_target", 165, [src, d, None, 4096, None], 1, fake],
             ["move_mount", 429, [tree, "", -100, d, 4], 3, fake]])  # MOVE_MOUNT_F_EMPTY_PATH
"""

# argv: a real path, a fake one (differing only within one aligned 4-byte word), the iterations.
# Sets up buf, whose word flips between the two; what follows uses it n times, then stop()s.
FLIPPED_PATH_BUF = FLIPPER + r"""
import sys
real, fake, n = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
at = [i for i in range(len(real)) if real[i] != fake[i]][0] & ~3
buf = (ctypes.c_char * 256).from_buffer(shm)
buf.value = real
stop = flip(at, real[at:at + 4], fake[at:at + 4])
"""

# The main thread recreates the real file, chmods and unlinks it through the flipped buffer.
FLIPPED_PATHS = FLIPPED_PATH_BUF + r"""
for _ in range(n):
    os.close(os.open(real, os.O_WRONLY | os.O_CREAT, 0o600))
    libc.chmod(buf, 0o640)
    libc.unlink(buf)
stop()
"""

# With two directories: the main thread changes into the one the flipped buffer names.
FLIPPED_CHDIR = FLIPPED_PATH_BUF + r"""
for _ in range(n):
    libc.chdir(buf)
stop()
"""


class PathRewrites(CollectorCase):
    def rewritten_open(self, tag, new_path):
        """An open blocks on a FIFO; meanwhile another thread rewrites the path buffer to
        new_path(fifo), so the record, read at exit, names new_path while the kernel opened the
        FIFO. Returns (the FIFO, that open's record)."""
        fifo_dir = self.work.mkdir("fifo", mode=0o777)
        fifo = os.path.join(fifo_dir, "f")
        os.mkfifo(fifo)
        os.chmod(fifo, 0o666)  # not through mkfifo's mode: the umask would cut it
        new = new_path(fifo).encode() + b"\x00"
        script = ("import ctypes, os, threading, time\n"
                  "buf = ctypes.create_string_buffer(%r, 256)\n"
                  "libc = ctypes.CDLL(None)\n"
                  "t = threading.Thread(target=lambda: libc.open(buf, 0), daemon=True); t.start()\n"
                  "time.sleep(0.5)\n"
                  "ctypes.memmove(buf, %r, %d)\n"
                  "w = os.open(%r, os.O_WRONLY); t.join(); os.close(w)\n") % (
                      fifo.encode(), new, len(new), fifo)
        p, rss = self.collector(["python3", "-c", script])
        self.finish(p, rss, tag)
        opens = [r for r in mwtest.dump_json(self.trace, self.keys)
                 if r.get("type") == "event" and r.get("op") == "openat"
                 and r.get("opened_path") == fifo and r.get("path") != fifo]
        self.assertEqual(len(opens), 1, opens)
        self.assertNotEqual(opens[0]["tid"], opens[0]["pid"])
        return fifo, opens[0]

    def test_argument_rewritten_under_the_kernel(self):
        _, ev = self.rewritten_open("rewritten argument", lambda fifo: "/etc/shadow")
        self.assertEqual(ev["path"], "/etc/shadow")
        self.assertTrue(ev["flags"] & (1 << 19), ev)  # MW_F_TAMPERED

    def test_same_length_rewrite_of_the_last_byte(self):
        # the length alone does not tell: the bytes are compared, the last ones too
        fifo, ev = self.rewritten_open("last byte rewritten", lambda fifo: fifo[:-1] + "g")
        self.assertLess(len(fifo), 63)
        self.assertEqual(ev["path"], fifo[:-1] + "g")
        self.assertTrue(ev["flags"] & (1 << 19), ev)  # MW_F_TAMPERED

    def test_same_length_rewrite_of_the_first_byte(self):
        fifo, ev = self.rewritten_open("first byte rewritten", lambda fifo: "X" + fifo[1:])
        self.assertEqual(ev["path"], "X" + fifo[1:])
        self.assertTrue(ev["flags"] & (1 << 19), ev)  # MW_F_TAMPERED

    def blocked_rewrites(self, tag, d, calls):
        """Runs calls (as BLOCKED_PATHS takes them) while d's lock is held here, so that each
        blocks after the kernel copied its paths and sees one of them rewritten; checks that
        each call blocked and succeeded (acting on what the kernel copied, so the rewritten
        names must not exist), and that its one record shows the rewritten argument in field
        (of path, path2) and is TAMPERED. Returns the records by call."""
        lock = DirLock(d)
        self.addCleanup(lock.release)
        p, rss = self.collector(["python3", "-c", BLOCKED_PATHS, json.dumps(calls)],
                                stdout=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b"rewritten\n")
        lock.release()
        out = json.loads(p.stdout.readline())
        self.finish(p, rss, tag)
        want = {name: 0 for name, *_ in calls}
        want["blocked"] = [True] * len(calls)
        self.assertEqual(out, want)
        evs, recs = self.events(*(name for name, *_ in calls)), {}
        for name, _, args, i, new in calls:
            ev = [e for e in evs if e["op"] == name]
            self.assertEqual(len(ev), 1, evs)
            field = "path" if i == self.PATH_ARG[name] else "path2"
            self.assertEqual((ev[0][field], ev[0]["ret"]), (new, 0), ev)
            self.assertTrue(ev[0]["flags"] & F_TAMPERED, ev)
            recs[name] = ev[0]
        return recs

    # the argument each call's record keeps in PATH (symlink: the new link, its second)
    PATH_ARG = {"unlink": 0, "chmod": 0, "rename": 0, "link": 0, "symlink": 1}

    def test_path_rewritten_while_the_call_blocks(self):
        # unlink(d/real) and chmod(d) wait for d's lock, held here, after the kernel copied
        # their paths; the paths are then rewritten to names that do not exist
        base = self.work.mkdir("blocked", mode=0o777)
        d = self.work.mkdir("blocked", "d", owner=mwtest.nobody_ids(), mode=0o777)
        real = self.work.write("blocked/d/real", "", owner=mwtest.nobody_ids())
        self.blocked_rewrites("paths rewritten while blocked", d, [
            ["unlink", 87, [real], 0, os.path.join(d, "fake")],  # x86-64 numbers
            ["chmod", 90, [d, 0o700], 0, os.path.join(base, "e")]])
        self.assertFalse(os.path.exists(real))  # the kernel acted on the real paths
        self.assertEqual(os.stat(d).st_mode & 0o777, 0o700)

    def test_long_path_rewritten_past_its_head_while_the_call_blocks(self):
        # as above with paths of 100 bytes and more, rewritten only past the 63 bytes kept at
        # entry (the same length, the same head): one byte in the middle, the last one
        base = self.work.mkdir("blocked", mode=0o777)
        d = self.work.mkdir("blocked", "d" * 80, owner=mwtest.nobody_ids(), mode=0o777)
        real = self.work.write("blocked/%s/real" % ("d" * 80), "", owner=mwtest.nobody_ids())
        calls = [["unlink", 87, [real], 0, real[:70] + "e" + real[71:]],
                 ["chmod", 90, [d, 0o700], 0, d[:-1] + "e"]]
        for _, _, args, _, new in calls:
            self.assertGreater(len(args[0]), 100)
            self.assertEqual((len(new), new[:70]), (len(args[0]), args[0][:70]))
            self.assertNotEqual(new, args[0])
        self.blocked_rewrites("long paths rewritten past the head while blocked", d, calls)
        self.assertFalse(os.path.exists(real))
        self.assertEqual(os.stat(d).st_mode & 0o777, 0o700)
        self.assertEqual(sorted(os.listdir(base)), ["d" * 80])

    def test_second_path_rewritten_while_the_call_blocks(self):
        # rename's and link's new name and symlink's target, rewritten while each waits for the
        # lock of d (where it creates its name): a short one and one past the first 63 bytes
        d = self.work.mkdir("blocked", "d", owner=mwtest.nobody_ids(), mode=0o777)
        for f in ("src", "old"):
            self.work.write("blocked/d/" + f, f, owner=mwtest.nobody_ids())
        j = lambda name: os.path.join(d, name)  # noqa: E731
        target = "/etc/" + "x" * 70 + "/motd"
        calls = [["rename", 82, [j("src"), j("dst")], 1, j("bad")],  # x86-64 numbers
                 ["link", 86, [j("old"), j("lnk")], 1, j("lnx")],
                 ["symlink", 88, [target, j("sym")], 0, target[:-4] + "fake"]]
        recs = self.blocked_rewrites("second paths rewritten while blocked", d, calls)
        # the kernel used the names it copied
        self.assertEqual(sorted(os.listdir(d)), ["dst", "lnk", "old", "sym"])
        self.assertEqual(os.readlink(j("sym")), target)
        self.assertEqual((recs["rename"]["path"], recs["link"]["path"], recs["symlink"]["path"]),
                         (j("src"), j("old"), j("sym")))

    def test_mount_paths_rewritten_while_the_call_blocks(self):
        # a bind mount's source and target and a move_mount's target, rewritten while each
        # waits for the mount point's lock (taken after the kernel copied the paths) in a user
        # and mount namespace of the traced process: the record shows the missing name, the
        # kernel mounted the real ones (every call succeeds), and each record is TAMPERED
        src = self.work.mkdir("mnt", "src", mode=0o777)
        d = self.work.mkdir("mnt", "d", mode=0o777)
        fake = self.work.join("mnt", "fake")
        lock = DirLock(d)
        self.addCleanup(lock.release)
        p, rss = self.collector(["python3", "-c", BLOCKED_MOUNTS, src, d, fake],
                                stdout=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b"rewritten\n")
        lock.release()
        out = json.loads(p.stdout.readline())
        self.finish(p, rss, "mount paths rewritten while blocked")
        self.assertEqual(out, {"mount_source": 0, "mount_target": 0, "move_mount": 0,
                               "blocked": [True] * 3})
        self.assertFalse(os.path.ismount(d))  # only ever in the traced process's namespace
        mounts = sorted(self.events("mount"), key=lambda e: e.get("path") == fake)
        self.assertEqual([(e["ret"], e.get("path"), e.get("path2"), e["flags"] & F_TAMPERED)
                          for e in mounts],
                         [(0, src, fake, F_TAMPERED), (0, fake, d, F_TAMPERED)], mounts)
        moves = [e for e in self.events("move_mount") if e.get("path2") == fake]
        self.assertEqual(len(moves), 1, self.events("move_mount"))
        self.assertEqual((moves[0]["ret"], moves[0]["flags"] & F_TAMPERED), (0, F_TAMPERED),
                         moves[0])

    def test_path_flipped_under_unlink_and_chmod(self):
        # the last component flips between real (recreated each time) and fake (never there),
        # aligned so that the flip is one 4-byte store
        top = self.work.mkdir("flip", mode=0o777)
        d = self.work.mkdir("flip", "d" * (4 - (len(top) + 2) % 4), mode=0o777)
        real, fake = os.path.join(d, "real"), os.path.join(d, "fake")
        self.assertEqual((len(d) + 1) % 4, 0)
        self.assertLess(len(real), 63)

        def run_round():
            p, rss = self.collector(["python3", "-c", FLIPPED_PATHS, real, fake, "300"])
            self.finish(p, rss, "flipped paths")
            disagreed = flagged = 0
            for e in self.events("unlink", "chmod"):
                if e.get("path") not in (real, fake):
                    continue  # a torn read, or a call of the interpreter's own
                # success acted on real; ENOENT on fake (real existed for both calls)
                self.assertIn(e["ret"], (0, -errno.ENOENT), e)
                if (e["ret"] == 0) != (e["path"] == real):
                    disagreed += 1
                    flagged += bool(e["flags"] & F_TAMPERED)
            return disagreed, flagged
        self.assertMostlyFlagged(*self.flip_rounds("unlink-chmod", run_round))

    def test_path_flipped_under_chdir(self):
        # chdir through a buffer that flips between two directories: the record's opened_path
        # is the directory entered (read from the task at exit), its path the buffer at exit
        top = self.work.mkdir("flipcd", mode=0o777)
        pad = "d" * (4 - (len(top) + 1) % 4)
        one, two = (self.work.mkdir("flipcd", pad + x, mode=0o777) for x in ("aaaa", "bbbb"))
        self.assertEqual(len(one), len(two))

        def run_round():
            p, rss = self.collector(["python3", "-c", FLIPPED_CHDIR, one, two, "300"])
            self.finish(p, rss, "flipped chdir")
            disagreed = flagged = 0
            for e in self.events("chdir"):
                if e.get("path") not in (one, two):
                    continue  # a torn read
                self.assertEqual(e["ret"], 0, e)
                if e["opened_path"] != e["path"]:
                    disagreed += 1
                    flagged += bool(e["flags"] & F_TAMPERED)
            return disagreed, flagged
        self.assertMostlyFlagged(*self.flip_rounds("chdir", run_round))

    def test_long_paths_not_rewritten_carry_no_flag(self):
        # paths past the 63 bytes of the head (absolute and relative), two-path calls with
        # both paths long, and a path longer than the 4096 bytes kept (the kernel refuses it):
        # each whole path is compared and found the same
        d = self.work.mkdir("plain", mode=0o777)
        script = ("import os, sys\n"
                  "d = os.path.join(%r, 'l' * 90)\n"
                  "os.mkdir(d)\n"
                  "p = os.path.join(d, 'f' * 70)\n"
                  "os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o600))\n"
                  "os.chmod(p, 0o640)\n"
                  "os.rename(p, p + '2')\n"
                  "os.link(p + '2', p + '3')\n"
                  "os.symlink(p + '2', p + '4')\n"
                  "os.chdir(d)\n"
                  "os.chmod('f' * 70 + '3', 0o600)\n"
                  "for s in '234': os.unlink(p + s)\n"
                  "try: os.unlink(d + '/' + 'x' * 5000)\n"
                  "except OSError as e: assert e.errno == 36, e\n"  # ENAMETOOLONG
                  "os.rmdir(d)\n") % d
        p, rss = self.collector(["python3", "-c", script])
        self.finish(p, rss, "long paths not rewritten")
        evs = [e for e in mwtest.dump_json(self.trace, self.keys)
               if e.get("type") == "event" and e["family"] == "file"
               and e.get("path", "").startswith((d, "f" * 70))]
        at = {"mkdirat": "mkdir", "open": "openat", "fchmodat": "chmod", "fchmodat2": "chmod",
              "renameat": "rename", "renameat2": "rename", "linkat": "link",
              "symlinkat": "symlink", "unlinkat": "unlink"}  # whichever libc chose
        self.assertEqual(sorted(at.get(e["op"], e["op"]) for e in evs),
                         ["chmod", "chmod", "link", "mkdir", "openat", "rename", "rmdir",
                          "symlink", "unlink", "unlink", "unlink", "unlink"],
                         [(e["op"], e["path"][:120]) for e in evs])
        for e in evs:
            self.assertGreater(len(e["path"]), 63, e["op"])
            self.assertEqual(e["ret"], -36 if "x" * 100 in e["path"] else
                             3 if e["op"] in ("open", "openat") else 0, e["op"])
            self.assertEqual(e["flags"] & (F_TAMPERED | F_UNCHECKED), 0, e["op"])
        self.assertEqual([e["op"] for e in evs if e["flags"] & 1], ["unlink"])  # 5000 bytes: cut


if __name__ == "__main__":
    mwtest.main()
