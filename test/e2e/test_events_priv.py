"""test_events_priv.py - injection, privilege and evasion, syscall by syscall (issue 3): ptrace
and process_vm_readv/writev on a child; kill/tkill/tgkill aimed outside the caller's process
(recorded) and inside it, from the main thread and from another (never recorded); mount and
umount2; init_module and finit_module (ENOSYS: this kernel has no module support, and the
attempt is still recorded); bpf; memfd_create and an exec of the memfd; io_uring setup, enter,
register and each submission's opcode and fd.

Two recordings: the server as nobody (most calls fail for want of privilege, and that is
recorded), and as root for what needs it, harmlessly: the mount inside a private mount
namespace of the step's own, chroot/setns/setgroups/unshare in a short-lived child."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwevents  # noqa: E402
from mwevents import F_UNRES, S_OPENED  # noqa: E402

MS_NOSUID, MS_REC, MS_PRIVATE, MNT_DETACH = 0x2, 0x4000, 0x40000, 0x2
IORING_OP_NOP, IORING_OP_READ, IORING_REGISTER_FILES = 0, 22, 2


class PrivEvents(mwevents.EventsTestCase):
    STEPS = ("ptrace", "process_vm", "kill_out", "kill_in", "mount", "init_module",
             "finit_module", "bpf", "memfd", "exec_memfd", "uring")

    def test_ptrace(self):
        s = self.rec.step("ptrace")
        evs = self.rec.of(s["pid"], "ptrace")
        self.assertEqual([(e["args"], e["ret"]) for e in evs],
                         [([16, s["child"]], s["attach"]),  # PTRACE_ATTACH
                          ([2, s["child"], s["addr"], s["data"]], s["peek"]),  # PEEKDATA
                          ([17, s["child"]], s["detach"])])  # PTRACE_DETACH
        self.assertEqual(s["attach"], 0)

    def test_process_vm_readv_writev(self):
        s = self.rec.step("process_vm")
        self.assertEqual(s["read"], "mw-secret")
        self.assertRecord(self.rec.one(s["pid"], "process_vm_readv"), "process_vm_readv", 9,
                          args=[s["child"], 1, 1])
        self.assertRecord(self.rec.one(s["pid"], "process_vm_writev"), "process_vm_writev", 9,
                          args=[s["child"], 1, 1])

    def test_signals_outside_the_process(self):
        s = self.rec.step("kill_out")
        self.assertRecord(self.rec.one(s["pid"], "kill"), "kill", 0, args=[s["a"], 15])
        self.assertRecord(self.rec.one(s["pid"], "tkill"), "tkill", 0, args=[s["b"], 9])
        self.assertRecord(self.rec.one(s["pid"], "tgkill"), "tgkill", 0, args=[s["c"], s["c"], 9])

    def test_signals_inside_the_process_are_not_recorded(self):
        s = self.rec.step("kill_in")
        self.assertNotEqual(s["thread_tid"], s["pid"])
        for k in ("kill_self", "tkill_self", "tkill_thread", "tgkill_thread", "thread_kill",
                  "thread_tkill_main"):
            self.assertEqual(s[k], 0, k)  # every one was delivered
        for op in ("kill", "tkill", "tgkill"):
            self.assertEqual(self.rec.of(s["pid"], op), [], op)

    def test_mount_unprivileged(self):
        s = self.rec.step("mount")
        self.assertRecord(self.rec.one(s["pid"], "mount"), "mount", -1, args=[MS_NOSUID],
                          errno="EPERM", path="mwtrig-tmpfs", path2="mnt",
                          abs_path2=self.rec.path("mnt"), data="tmpfs", flags=0)
        self.assertRecord(self.rec.one(s["pid"], "umount2"), "umount2", -1, args=[MNT_DETACH],
                          errno="EPERM", path="mnt", abs_path=self.rec.path("mnt"))

    def test_module_loads_without_module_support(self):
        s = self.rec.step("init_module")
        self.assertRecord(self.rec.one(s["pid"], "init_module"), "init_module", -38,
                          args=[16], errno="ENOSYS", data="mw=1")
        s = self.rec.step("finit_module")
        ev = self.rec.one(s["pid"], "finit_module")
        self.assertRecord(ev, "finit_module", -38, args=[s["fd"]], errno="ENOSYS", data="mw=2")
        self.assertOpened(ev, "/etc/hostname")

    def test_bpf(self):
        s = self.rec.step("bpf")
        self.assertRecord(self.rec.one(s["pid"], "bpf"), "bpf", s["ret"], args=[0, s["size"]])
        self.assertEqual(s["ret"], -1)  # EPERM: unprivileged bpf is disabled here

    def test_memfd_create(self):
        s = self.rec.step("memfd")
        self.assertRecord(self.rec.one(s["pid"], "memfd_create"), "memfd_create", s["ret"],
                          args=[3], data="mwtrig-memfd")  # MFD_CLOEXEC | MFD_ALLOW_SEALING

    def test_exec_of_a_memfd(self):
        s = self.rec.step("exec_memfd")
        self.assertRecord(self.rec.one(s["pid"], "memfd_create"), "memfd_create", s["fd"],
                          args=[1], data="mwtrig-exec")
        ev = self.rec.one(s["child"], "exec")
        # no path on any filesystem: unresolved, never a guess; the inode still identifies it
        self.assertRecord(ev, "exec", 0, args=[s["child"], 322], path="/dev/fd/%d" % s["fd"],
                          opened_path=None, flags=F_UNRES(S_OPENED),
                          argv=["true-from-memfd"])
        self.assertEqual((ev["dev"], ev["ino"]), (s["dev"], s["ino"]))

    def test_io_uring(self):
        s = self.rec.step("uring")
        pid, ring = s["pid"], s["ring_fd"]
        self.assertRecord(self.rec.one(pid, "io_uring_setup"), "io_uring_setup", ring, args=[4])
        subs = self.rec.of(pid, "io_uring_submit")
        self.assertEqual(len(subs), 2)
        # the kernel reads an sqe's fd only for opcodes that take a file (io_init_req: NOP's -1
        # is never read, so the request holds 0): compare the fd where it means something
        self.assertEqual(subs[0]["args"][0::2], [IORING_OP_NOP, 0x1111])
        self.assertEqual(subs[1]["args"], [IORING_OP_READ, s["null_fd"], 0x2222])
        enter = self.rec.one(pid, "io_uring_enter")
        self.assertRecord(enter, "io_uring_enter", 2, args=[ring, 2, 2, 1])  # GETEVENTS
        self.assertLess(subs[-1]["seq"], enter["seq"])  # submitted inside the enter
        self.assertRecord(self.rec.one(pid, "io_uring_register"), "io_uring_register", 0,
                          args=[ring, IORING_REGISTER_FILES, 1])


class PrivRootEvents(mwevents.EventsTestCase):
    USER = "root"
    STEPS = ("mount", "chroot", "setns", "open_by_handle_at", "setgroups", "unshare")

    def test_mount_in_a_private_namespace(self):
        s = self.rec.step("mount")
        self.assertEqual(s["private"], 1)
        evs = self.rec.of(s["pid"], "mount")
        self.assertEqual(len(evs), 2)
        # mount(NULL, "/", NULL, MS_REC|MS_PRIVATE): NULL pointers are absent, not faults
        self.assertRecord(evs[0], "mount", 0, args=[MS_REC | MS_PRIVATE], path=None,
                          path2="/", data=None, flags=0)
        self.assertRecord(evs[1], "mount", 0, args=[MS_NOSUID], path="mwtrig-tmpfs", path2="mnt",
                          abs_path2=self.rec.path("mnt"), data="tmpfs", flags=0)
        self.assertRecord(self.rec.one(s["pid"], "umount2"), "umount2", 0, args=[MNT_DETACH],
                          path="mnt", abs_path=self.rec.path("mnt"))
        self.assertFalse(os.path.ismount(self.rec.path("mnt")))  # never in our namespace

    def test_chroot(self):
        s = self.rec.step("chroot")
        ev = self.rec.one(s["pid"], "chroot")
        # the new root is no longer below the task's root: its path from the top of the tree
        self.assertRecord(ev, "chroot", 0, path="chroot.d", abs_path=self.rec.path("chroot.d"))
        self.assertOpened(ev, self.rec.path("chroot.d"))

    def test_setns(self):
        s = self.rec.step("setns")
        ev = self.rec.one(s["pid"], "setns")
        self.assertRecord(ev, "setns", 0, args=[s["fd"], 0x04000000])
        self.assertEqual((ev["dev"], ev["ino"]), (s["dev"], s["ino"]))

    def test_open_by_handle_at(self):
        s = self.rec.step("open_by_handle_at")
        ev = self.rec.one(s["pid"], "open_by_handle_at")
        self.assertRecord(ev, "open_by_handle_at", s["ret"], args=[s["mount_fd"], 0o2000000])
        self.assertGreaterEqual(s["ret"], 0)
        self.assertOpened(ev, self.rec.path("obh.f"))

    def test_setgroups_and_unshare(self):
        s = self.rec.step("setgroups")
        self.assertRecord(self.rec.one(s["pid"], "setgroups"), "setgroups", 0, args=[2])
        s = self.rec.step("unshare")
        self.assertEqual([(e["args"], e["ret"]) for e in self.rec.of(s["pid"], "unshare")],
                         [([0x20000], 0), ([0x10000000], s["ret_user"])])


if __name__ == "__main__":
    mwevents.main()
