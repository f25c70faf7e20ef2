/*
 * syscalls.c - the syscall numbers of this architecture for the BPF handlers, by the name their
 * program carries (handle_sys_exit_<name>): the collector puts each handler in the program
 * array slot of its syscall. A name this architecture has no syscall for is not in the table.
 */
#include <string.h>
#include <sys/syscall.h>

#include "syscalls.h"

struct sysname {
	const char *name;
	long nr;
};

static const struct sysname table[] = {
#ifdef SYS_accept
	{ "accept", SYS_accept },
#endif
#ifdef SYS_accept4
	{ "accept4", SYS_accept4 },
#endif
#ifdef SYS_bind
	{ "bind", SYS_bind },
#endif
#ifdef SYS_bpf
	{ "bpf", SYS_bpf },
#endif
#ifdef SYS_capset
	{ "capset", SYS_capset },
#endif
#ifdef SYS_chdir
	{ "chdir", SYS_chdir },
#endif
#ifdef SYS_chmod
	{ "chmod", SYS_chmod },
#endif
#ifdef SYS_chown
	{ "chown", SYS_chown },
#endif
#ifdef SYS_chroot
	{ "chroot", SYS_chroot },
#endif
#ifdef SYS_connect
	{ "connect", SYS_connect },
#endif
#ifdef SYS_copy_file_range
	{ "copy_file_range", SYS_copy_file_range },
#endif
#ifdef SYS_creat
	{ "creat", SYS_creat },
#endif
#ifdef SYS_execve
	{ "execve", SYS_execve },
#endif
#ifdef SYS_execveat
	{ "execveat", SYS_execveat },
#endif
#ifdef SYS_fchdir
	{ "fchdir", SYS_fchdir },
#endif
#ifdef SYS_fchmod
	{ "fchmod", SYS_fchmod },
#endif
#ifdef SYS_fchmodat
	{ "fchmodat", SYS_fchmodat },
#endif
#ifdef SYS_fchmodat2
	{ "fchmodat2", SYS_fchmodat2 },
#elif defined(__x86_64__)
	{ "fchmodat2", 452 },
#endif
#ifdef SYS_fchown
	{ "fchown", SYS_fchown },
#endif
#ifdef SYS_fchownat
	{ "fchownat", SYS_fchownat },
#endif
#ifdef SYS_finit_module
	{ "finit_module", SYS_finit_module },
#endif
#ifdef SYS_fsconfig
	{ "fsconfig", SYS_fsconfig },
#elif defined(__x86_64__)
	{ "fsconfig", 431 },
#endif
#ifdef SYS_fsmount
	{ "fsmount", SYS_fsmount },
#elif defined(__x86_64__)
	{ "fsmount", 432 },
#endif
#ifdef SYS_fsopen
	{ "fsopen", SYS_fsopen },
#elif defined(__x86_64__)
	{ "fsopen", 430 },
#endif
#ifdef SYS_fspick
	{ "fspick", SYS_fspick },
#elif defined(__x86_64__)
	{ "fspick", 433 },
#endif
#ifdef SYS_ftruncate
	{ "ftruncate", SYS_ftruncate },
#endif
#ifdef SYS_init_module
	{ "init_module", SYS_init_module },
#endif
#ifdef SYS_io_submit
	{ "io_submit", SYS_io_submit },
#endif
#ifdef SYS_io_uring_enter
	{ "io_uring_enter", SYS_io_uring_enter },
#endif
#ifdef SYS_io_uring_register
	{ "io_uring_register", SYS_io_uring_register },
#endif
#ifdef SYS_io_uring_setup
	{ "io_uring_setup", SYS_io_uring_setup },
#endif
#ifdef SYS_ioctl
	{ "ioctl", SYS_ioctl },
#endif
#ifdef SYS_keyctl
	{ "keyctl", SYS_keyctl },
#endif
#ifdef SYS_add_key
	{ "add_key", SYS_add_key },
#endif
#ifdef SYS_preadv
	{ "preadv", SYS_preadv },
#endif
#ifdef SYS_preadv2
	{ "preadv2", SYS_preadv2 },
#endif
#ifdef SYS_pwritev
	{ "pwritev", SYS_pwritev },
#endif
#ifdef SYS_pwritev2
	{ "pwritev2", SYS_pwritev2 },
#endif
#ifdef SYS_recvfrom
	{ "recvfrom", SYS_recvfrom },
#endif
#ifdef SYS_recvmmsg
	{ "recvmmsg", SYS_recvmmsg },
#endif
#ifdef SYS_recvmsg
	{ "recvmsg", SYS_recvmsg },
#endif
#ifdef SYS_request_key
	{ "request_key", SYS_request_key },
#endif
#ifdef SYS_tee
	{ "tee", SYS_tee },
#endif
#ifdef SYS_userfaultfd
	{ "userfaultfd", SYS_userfaultfd },
#endif
#ifdef SYS_kill
	{ "kill", SYS_kill },
#endif
#ifdef SYS_lchown
	{ "lchown", SYS_lchown },
#endif
#ifdef SYS_link
	{ "link", SYS_link },
#endif
#ifdef SYS_linkat
	{ "linkat", SYS_linkat },
#endif
#ifdef SYS_listen
	{ "listen", SYS_listen },
#endif
#ifdef SYS_memfd_create
	{ "memfd_create", SYS_memfd_create },
#endif
#ifdef SYS_mkdir
	{ "mkdir", SYS_mkdir },
#endif
#ifdef SYS_mkdirat
	{ "mkdirat", SYS_mkdirat },
#endif
#ifdef SYS_mknod
	{ "mknod", SYS_mknod },
#endif
#ifdef SYS_mknodat
	{ "mknodat", SYS_mknodat },
#endif
#ifdef SYS_mount
	{ "mount", SYS_mount },
#endif
#ifdef SYS_mount_setattr
	{ "mount_setattr", SYS_mount_setattr },
#elif defined(__x86_64__)
	{ "mount_setattr", 442 },
#endif
#ifdef SYS_move_mount
	{ "move_mount", SYS_move_mount },
#elif defined(__x86_64__)
	{ "move_mount", 429 },
#endif
#ifdef SYS_open
	{ "open", SYS_open },
#endif
#ifdef SYS_open_by_handle_at
	{ "open_by_handle_at", SYS_open_by_handle_at },
#endif
#ifdef SYS_open_tree
	{ "open_tree", SYS_open_tree },
#elif defined(__x86_64__)
	{ "open_tree", 428 },
#endif
#ifdef SYS_open_tree_attr
	{ "open_tree_attr", SYS_open_tree_attr },
#elif defined(__x86_64__)
	{ "open_tree_attr", 467 },
#endif
#ifdef SYS_openat
	{ "openat", SYS_openat },
#endif
#ifdef SYS_openat2
	{ "openat2", SYS_openat2 },
#endif
#ifdef SYS_pidfd_getfd
	{ "pidfd_getfd", SYS_pidfd_getfd },
#elif defined(__x86_64__)
	{ "pidfd_getfd", 438 },
#endif
#ifdef SYS_pidfd_send_signal
	{ "pidfd_send_signal", SYS_pidfd_send_signal },
#elif defined(__x86_64__)
	{ "pidfd_send_signal", 424 },
#endif
#ifdef SYS_pivot_root
	{ "pivot_root", SYS_pivot_root },
#elif defined(__x86_64__)
	{ "pivot_root", 155 },
#endif
#ifdef SYS_prctl
	{ "prctl", SYS_prctl },
#endif
#ifdef SYS_pread64
	{ "pread64", SYS_pread64 },
#endif
#ifdef SYS_process_vm_readv
	{ "process_vm_readv", SYS_process_vm_readv },
#endif
#ifdef SYS_process_vm_writev
	{ "process_vm_writev", SYS_process_vm_writev },
#endif
#ifdef SYS_ptrace
	{ "ptrace", SYS_ptrace },
#endif
#ifdef SYS_pwrite64
	{ "pwrite64", SYS_pwrite64 },
#endif
#ifdef SYS_read
	{ "read", SYS_read },
#endif
#ifdef SYS_readv
	{ "readv", SYS_readv },
#endif
#ifdef SYS_rename
	{ "rename", SYS_rename },
#endif
#ifdef SYS_renameat
	{ "renameat", SYS_renameat },
#endif
#ifdef SYS_renameat2
	{ "renameat2", SYS_renameat2 },
#endif
#ifdef SYS_rmdir
	{ "rmdir", SYS_rmdir },
#endif
#ifdef SYS_rt_sigqueueinfo
	{ "rt_sigqueueinfo", SYS_rt_sigqueueinfo },
#elif defined(__x86_64__)
	{ "rt_sigqueueinfo", 129 },
#endif
#ifdef SYS_rt_tgsigqueueinfo
	{ "rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo },
#elif defined(__x86_64__)
	{ "rt_tgsigqueueinfo", 297 },
#endif
#ifdef SYS_sendfile
	{ "sendfile64", SYS_sendfile },
#endif
#ifdef SYS_sendmmsg
	{ "sendmmsg", SYS_sendmmsg },
#endif
#ifdef SYS_sendmsg
	{ "sendmsg", SYS_sendmsg },
#endif
#ifdef SYS_sendto
	{ "sendto", SYS_sendto },
#endif
#ifdef SYS_setfsgid
	{ "setfsgid", SYS_setfsgid },
#endif
#ifdef SYS_setfsuid
	{ "setfsuid", SYS_setfsuid },
#endif
#ifdef SYS_setgid
	{ "setgid", SYS_setgid },
#endif
#ifdef SYS_setgroups
	{ "setgroups", SYS_setgroups },
#endif
#ifdef SYS_setns
	{ "setns", SYS_setns },
#endif
#ifdef SYS_setregid
	{ "setregid", SYS_setregid },
#endif
#ifdef SYS_setresgid
	{ "setresgid", SYS_setresgid },
#endif
#ifdef SYS_setresuid
	{ "setresuid", SYS_setresuid },
#endif
#ifdef SYS_setreuid
	{ "setreuid", SYS_setreuid },
#endif
#ifdef SYS_setuid
	{ "setuid", SYS_setuid },
#endif
#ifdef SYS_socket
	{ "socket", SYS_socket },
#endif
#ifdef SYS_splice
	{ "splice", SYS_splice },
#endif
#ifdef SYS_symlink
	{ "symlink", SYS_symlink },
#endif
#ifdef SYS_symlinkat
	{ "symlinkat", SYS_symlinkat },
#endif
#ifdef SYS_tgkill
	{ "tgkill", SYS_tgkill },
#endif
#ifdef SYS_tkill
	{ "tkill", SYS_tkill },
#endif
#ifdef SYS_truncate
	{ "truncate", SYS_truncate },
#endif
#ifdef SYS_umount2
	{ "umount2", SYS_umount2 },
#endif
#ifdef SYS_unlink
	{ "unlink", SYS_unlink },
#endif
#ifdef SYS_unlinkat
	{ "unlinkat", SYS_unlinkat },
#endif
#ifdef SYS_unshare
	{ "unshare", SYS_unshare },
#endif
#ifdef SYS_vmsplice
	{ "vmsplice", SYS_vmsplice },
#endif
#ifdef SYS_write
	{ "write", SYS_write },
#endif
#ifdef SYS_writev
	{ "writev", SYS_writev },
#endif
};

long syscall_number(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return table[i].nr;
	return -1;
}
