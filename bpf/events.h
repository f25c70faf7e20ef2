/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * events.h - the one contract between the BPF programs and the collector.
 *
 * Every record the kernel side emits is one struct mw_event: a fixed part (identity of the task,
 * the operation, its result, up to six numeric arguments) followed by up to MW_SLOTS variable
 * byte strings ("slots": paths, argv, socket addresses, channel bytes) packed back to back in
 * slot order, their lengths in slen[]. One layout for every syscall keeps the BPF handlers one
 * shared body and the collector's encoder a table instead of a switch per syscall.
 *
 * Fixed-width types only, natural alignment, padding spelled out; layout is pinned by the
 * _Static_asserts at the bottom. Enum values are part of the trace format (trace.proto's Op
 * mirrors mw_op one to one): never renumber, only append.
 */
#ifndef MW_EVENTS_H
#define MW_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bumped whenever struct mw_event or the meaning of a field changes. Compiled into the BPF
 * object (rodata schema_version) and checked by the loader. */
#define MW_SCHEMA_VERSION 6

/* Slot roles. A slot is empty when its length is 0. */
enum mw_slot {
	MW_S_PATH = 0,   /* path as passed by the process; exec: filename as resolved by the kernel */
	MW_S_ABS = 1,    /* the path resolved to absolute (cwd / dirfd) */
	MW_S_OPENED = 2, /* the file actually opened, read back from the new fd at exit */
	MW_S_PATH2 = 3,  /* second path (rename/link target); exec: interpreter */
	MW_S_ABS2 = 4,   /* the second path resolved to absolute */
	MW_S_DATA = 5,   /* argv (NUL separated), sockaddr as passed, or channel bytes */
	MW_S_DATA2 = 6,  /* the kernel's view of DATA (e.g. the socket's peer address at exit) */
	MW_S_PAYLOAD = 7, /* bytes sent (only where an op says so, e.g. a datagram to port 53) */
	MW_SLOTS = 8,
};

#define MW_PATH_MAX	4096 /* bytes kept of one path, including the NUL */
#define MW_ARGV_MAX	4096 /* bytes kept of argv, NUL separated */
#define MW_ARGV_ENTRIES 64   /* argv entries kept */
#define MW_SOCKADDR_MAX 128  /* bytes kept of a socket address (sockaddr_storage) */
#define MW_DATA_MAX	16384 /* bytes of channel data carried by one event */
#define MW_PAYLOAD_MAX	512   /* bytes kept of a payload (a DNS query fits) */
#define MW_MAX_SYSCALLS 512   /* slots of the dispatchers' program arrays (syscall numbers) */
#define MW_FOREIGN_SLOT (MW_MAX_SYSCALLS - 1) /* sys_enter_progs: the foreign-ABI recorder, not
					       * a syscall (native numbers stay below it) */
#define MW_SHARED_PATH1_EXIT 0 /* shared_progs: file calls with one path that open nothing */
#define MW_SHARED_PATH2_EXIT 1 /* shared_progs: renames and hard links (two paths) */
#define MW_SHARED_SLOTS	     2
#define MW_PID_WORDS	(4194304 / 64) /* words of the tracked_bits map: PID_MAX_LIMIT bits */

/* Event flags. The low bits are per slot: bit s means slot s was cut short (TRUNC) or could not
 * be resolved to an absolute path (UNRES); an unresolved slot is left empty, never filled with a
 * suffix that could pass for an absolute path. */
#define MW_F_TRUNC(slot)  (1u << (slot))	/* slot 0..7 */
#define MW_F_UNRES(slot)  (1u << ((slot) + 8)) /* slot 0..7 */
#define MW_F_THREAD	  (1u << 16) /* fork: a thread was created, not a process */
#define MW_F_UNFINISHED	  (1u << 17) /* syscall still pending when the trace ended */
#define MW_F_ENTRY	  (1u << 18) /* entry-time record of a call that stayed blocked */
#define MW_F_TAMPERED	  (1u << 19) /* the argument changed between the entry program reading
					      * it (just before the kernel's copy) and the record
					      * reading it at exit: PATH (and PATH2 of rename, link,
					      * symlink) of the file calls, DATA of sendto and sendmsg;
					      * sendmsg: also a msg_name present at entry, gone at exit */
#define MW_F_ARGV_ENTRIES (1u << 20) /* argv had more than MW_ARGV_ENTRIES entries */
#define MW_F_FAULT	  (1u << 21) /* a user pointer could not be read */
#define MW_F_LAST	  (1u << 22) /* channel: the last chunk of a call */
#define MW_F_GAP	  (1u << 23) /* channel: bytes of the stream not captured (see arg[2]) */
#define MW_F_UNCHECKED	  (1u << 24) /* the argument, or a part of it, was not readable at
					      * entry (its page not yet faulted in), or (sendmsg) named
					      * an address at exit but none at entry: a rewrite (of
					      * that part) could not be checked */
#define MW_F_FOREIGN	  (1u << 25) /* signal, pidfd: the target is not a tracked process (or
					      * is a process group, or could not be resolved) */
#define MW_F_NEWNS	  (1u << 26) /* fork: the child has namespaces of its own (a new user
					      * namespace or a new nsproxy), from the kernel's view */
#define MW_F_MORE	  (1u << 27) /* sendmmsg: more messages were sent than have records */

/* Operations: one per hooked syscall or kernel hook. Ranges by family so a new member never
 * needs renumbering: process 1..39, file 40..99, network 100..129, injection and privilege
 * 130..169, evasion 170..189, channel 190..199. */
enum mw_op {
	MW_OP_UNSPEC = 0,
	/* process (arg[] per op; PATH/ABS a path argument as passed / made absolute) */
	MW_OP_FORK = 1,	       /* child tgid, child tid, child pstart, clone flags; THREAD, NEWNS */
	MW_OP_EXEC = 2,	       /* old tid, syscall nr; PATH filename as passed, OPENED/dev/ino the
				* executable, PATH2 interpreter, DATA argv (NUL separated);
				* UNFINISHED (stashed at entry): syscall nr, dirfd, flags */
	MW_OP_EXIT = 3,	       /* exit code (wait status encoding), 1 if the whole group died */
	MW_OP_EXEC_FAILED = 4, /* execve/execveat that failed: dirfd, flags; PATH/ABS */
	MW_OP_CHDIR = 5,       /* PATH/ABS; on success OPENED/dev/ino the new cwd (and ABS, for a
				* relative PATH, the new cwd: read at exit, after the change) */
	MW_OP_FCHDIR = 6,      /* fd; OPENED */
	MW_OP_CHROOT = 7,      /* as CHDIR, with the new root (its path from the top of the
				* mount tree) */
	MW_OP_SETUID = 8,      /* uid */
	MW_OP_SETGID = 9,      /* gid */
	MW_OP_SETREUID = 10,   /* ruid, euid */
	MW_OP_SETREGID = 11,   /* rgid, egid */
	MW_OP_SETRESUID = 12,  /* ruid, euid, suid */
	MW_OP_SETRESGID = 13,  /* rgid, egid, sgid */
	MW_OP_SETFSUID = 14,   /* fsuid */
	MW_OP_SETFSGID = 15,   /* fsgid */
	MW_OP_SETGROUPS = 16,  /* count; DATA the gids (u32 each, at most 64) */
	MW_OP_CAPSET = 17,     /* target pid; DATA two __user_cap_data_struct (24 bytes) */
	MW_OP_UNSHARE = 18,    /* flags */
	MW_OP_SETNS = 19,      /* fd, nstype; OPENED the namespace file */
	MW_OP_PRCTL = 20,      /* option, arg2; DATA the name for PR_SET_NAME */
	/* file */
	MW_OP_OPENAT = 40,	      /* dirfd, flags, mode; PATH/ABS, OPENED/dev/ino */
	MW_OP_OPEN = 41,	      /* flags, mode; as OPENAT */
	MW_OP_OPENAT2 = 42,	      /* dirfd, how.flags, how.mode, how.resolve; as OPENAT */
	MW_OP_CREAT = 43,	      /* mode; as OPENAT */
	MW_OP_MKDIR = 44,	      /* mode; PATH/ABS */
	MW_OP_MKDIRAT = 45,	      /* dirfd, mode; PATH/ABS */
	MW_OP_UNLINK = 46,	      /* PATH/ABS */
	MW_OP_UNLINKAT = 47,	      /* dirfd, flags; PATH/ABS */
	MW_OP_RMDIR = 48,	      /* PATH/ABS */
	MW_OP_RENAME = 49,	      /* PATH/ABS old, PATH2/ABS2 new */
	MW_OP_RENAMEAT = 50,	      /* olddirfd, newdirfd; as RENAME */
	MW_OP_RENAMEAT2 = 51,	      /* olddirfd, newdirfd, flags; as RENAME */
	MW_OP_LINK = 52,	      /* PATH/ABS existing, PATH2/ABS2 new link */
	MW_OP_LINKAT = 53,	      /* olddirfd, newdirfd, flags; as LINK */
	MW_OP_SYMLINK = 54,	      /* PATH/ABS the new link, PATH2 its target (not resolved) */
	MW_OP_SYMLINKAT = 55,	      /* newdirfd; as SYMLINK */
	MW_OP_TRUNCATE = 56,	      /* length; PATH/ABS */
	MW_OP_FTRUNCATE = 57,	      /* fd, length; OPENED */
	MW_OP_CHMOD = 58,	      /* mode; PATH/ABS */
	MW_OP_FCHMOD = 59,	      /* fd, mode; OPENED */
	MW_OP_FCHMODAT = 60,	      /* dirfd, mode; PATH/ABS */
	MW_OP_FCHMODAT2 = 61,	      /* dirfd, mode, flags; PATH/ABS */
	MW_OP_CHOWN = 62,	      /* uid, gid; PATH/ABS */
	MW_OP_FCHOWN = 63,	      /* fd, uid, gid; OPENED */
	MW_OP_FCHOWNAT = 64,	      /* dirfd, uid, gid, flags; PATH/ABS */
	MW_OP_LCHOWN = 65,	      /* uid, gid; PATH/ABS */
	MW_OP_MKNOD = 66,	      /* mode, dev; PATH/ABS */
	MW_OP_MKNODAT = 67,	      /* dirfd, mode, dev; PATH/ABS */
	MW_OP_OPEN_BY_HANDLE_AT = 68, /* mount fd, flags; OPENED/dev/ino */
	/* network: DATA the address as the process passed (or received) it, DATA2 the socket's
	 * address as the kernel holds it after the call (peer for connect/accept/send, local for
	 * bind/listen); arg[2] socket type, arg[3] family, both from the kernel socket */
	MW_OP_CONNECT = 100,  /* fd, addrlen */
	MW_OP_SOCKET = 101,   /* domain, type, protocol (sockets out of the ordinary only) */
	MW_OP_BIND = 102,     /* fd, addrlen */
	MW_OP_LISTEN = 103,   /* fd, backlog */
	MW_OP_ACCEPT = 104,   /* fd, flags (accept4) */
	MW_OP_ACCEPT4 = 105,  /* fd, flags */
	MW_OP_SENDTO = 106,   /* fd, length; SPARE the payload when sent to port 53 */
	MW_OP_SENDMSG = 107,  /* fd, flags; as SENDTO (first iovec) */
	MW_OP_SENDMMSG = 108, /* fd, message index; one record for each of the first 8 messages,
			       * ret = how many were sent in all; MORE when that is more than 8 */
	/* injection and privilege */
	MW_OP_PTRACE = 130,		/* request, pid, addr, data */
	MW_OP_PROCESS_VM_READV = 131,	/* pid, local iovcnt, remote iovcnt, flags */
	MW_OP_PROCESS_VM_WRITEV = 132,	/* as READV */
	MW_OP_KILL = 133,		/* pid, signal (only aimed outside the caller's process);
					 * FOREIGN */
	MW_OP_TKILL = 134,		/* tid, signal (idem) */
	MW_OP_TGKILL = 135,		/* tgid, tid, signal (idem) */
	MW_OP_MOUNT = 136,		/* flags; PATH source, PATH2/ABS2 target, DATA fs type */
	MW_OP_UMOUNT2 = 137,		/* flags; PATH/ABS target */
	MW_OP_INIT_MODULE = 138,	/* length; DATA parameters */
	MW_OP_FINIT_MODULE = 139,	/* fd, flags; OPENED the module, DATA parameters */
	MW_OP_BPF = 140,		/* cmd, size */
	MW_OP_MEMFD_CREATE = 141,	/* flags; DATA the name */
	MW_OP_PIDFD_GETFD = 142,	/* pidfd, target fd, flags, target tgid (0: unresolved);
					 * OPENED/dev/ino the file obtained; FOREIGN */
	MW_OP_PIDFD_SEND_SIGNAL = 143,	/* pidfd, signal, flags, target tgid; FOREIGN (only
					 * aimed outside the caller's process, as KILL) */
	MW_OP_RT_SIGQUEUEINFO = 144,	/* tgid, signal; FOREIGN (idem) */
	MW_OP_RT_TGSIGQUEUEINFO = 145,	/* tgid, tid, signal; FOREIGN (idem) */
	/* the mount API of Linux 5.2+: a detached tree made, configured and attached by fds */
	MW_OP_OPEN_TREE = 146,		/* dirfd, flags; PATH/ABS, OPENED the tree (on success) */
	MW_OP_MOVE_MOUNT = 147,		/* from dirfd, to dirfd, flags; PATH/ABS from path (OPENED
					 * the from dirfd's file when the path is empty), PATH2/ABS2
					 * the mount point */
	MW_OP_FSOPEN = 148,		/* flags; DATA the filesystem type */
	MW_OP_FSCONFIG = 149,		/* fd, cmd, aux; DATA the key, PATH the string value */
	MW_OP_FSMOUNT = 150,		/* fs fd, flags, attribute flags */
	MW_OP_FSPICK = 151,		/* dirfd, flags; PATH/ABS */
	MW_OP_MOUNT_SETATTR = 152,	/* dirfd, flags, attr_set (first 8 bytes); PATH/ABS */
	MW_OP_PIVOT_ROOT = 153,		/* PATH/ABS new root, PATH2/ABS2 where the old one goes */
	MW_OP_OPEN_TREE_ATTR = 154,	/* as OPEN_TREE, attr_set in arg[2] */
	MW_OP_IOCTL = 155,		/* fd, request: only TIOCSTI and TIOCLINUX (terminal input
					 * injection); OPENED the terminal, DATA the byte (TIOCSTI)
					 * or the subcode (TIOCLINUX) */
	MW_OP_KEYCTL = 156,		/* operation, arg2 (a key or keyring, for most operations) */
	MW_OP_ADD_KEY = 157,		/* keyring, payload length; DATA the type, PATH the
					 * description (never the payload) */
	MW_OP_REQUEST_KEY = 158,	/* destination keyring; as ADD_KEY */
	/* evasion signals */
	MW_OP_IO_URING_SETUP = 170,	/* entries, setup flags */
	MW_OP_IO_URING_ENTER = 171,	/* fd, to_submit, min_complete, flags */
	MW_OP_IO_URING_REGISTER = 172,	/* fd, opcode, nr_args */
	MW_OP_IO_URING_SUBMIT = 173,	/* opcode, fd, user_data (io_uring_submit_req); the fd is
					 * what the submission named, 0 for opcodes that take none,
					 * the directory's for a path request (arg[3]: an open's
					 * flags); PATH/ABS, PATH2/ABS2: the paths it names (as the
					 * syscall's record); DATA: a connect's or send's address */
	MW_OP_USERFAULTFD = 174,	/* flags */
	MW_OP_FOREIGN_ABI = 175,	/* syscall number in that ABI, ABI (enum mw_abi): a
					 * syscall of another ABI than the native one, which no
					 * handler records (attach mode only: a launched server is
					 * killed at its first); once per process, ABI and number */
	MW_OP_IO_URING_OPENED = 176,	/* opcode, fd (the result), user_data, open flags; ret the
					 * result;
					 * OPENED: the file an io_uring open opened, named from
					 * its new fd when the request completed */
	MW_OP_IO_URING_CONNECTED = 177, /* opcode, user_data, socket type, family; ret the
					 * result (0 or -EINPROGRESS); DATA: the peer the socket
					 * holds when an io_uring connect completed */
	/* the MCP channel (chan.bpf.c); the collector writes these as StdioFrame records */
	MW_OP_STDIO_READ = 190,	 /* fd, stream offset of DATA, syscall length, chunk index;
				  * with GAP: fd, offset, gap length, direction; a frame of length
				  * 0 (no DATA, LAST) is end-of-file on the server's stdin */
	MW_OP_STDIO_WRITE = 191, /* as READ */
	MW_OP_STDIO_MOVED = 192, /* GAP: fd, stream offset, length, direction: bytes moved by
				  * splice/sendfile/copy_file_range without passing through user
				  * memory */
};

/* The ABI of a MW_OP_FOREIGN_ABI record's syscall (arg[1]). */
enum mw_abi {
	MW_ABI_I386 = 1, /* int $0x80 (or sysenter) from an x86-64 kernel's compat entry */
	MW_ABI_X32 = 2,	 /* a syscall number with __X32_SYSCALL_BIT set */
};

/* The two objects of the MCP channel, in the `chan` array map: index MW_CHAN_IN is the
 * server's stdin (captured on read), MW_CHAN_OUT its stdout (captured on write). */
enum mw_chan_dir {
	MW_CHAN_IN = 0,
	MW_CHAN_OUT = 1,
	MW_CHAN_DIRS = 2,
};

struct mw_chan {
	__u64 dev;    /* kernel dev_t of the object (i_sb->s_dev) */
	__u64 ino;
	__u64 offset; /* bytes of the stream seen so far: the next stream offset */
	__u32 head;   /* capture at most this many bytes per call; 0 = all */
	__u32 enabled; /* MW_CHAN_ON, MW_CHAN_SOCK for a socket (only then can recv and send
			* calls move its bytes), MW_CHAN_EOF once end-of-file was reported,
			* MW_CHAN_URING once an io_uring request was submitted on it */
};

/* An io_uring request on a channel object, as its submission found it (maps.h uring_reqs). */
struct mw_uring_req {
	__s32 fd;  /* the request's fd (or registered file's index: fixed) */
	__u32 dir; /* enum mw_chan_dir of the object it moves bytes through */
	__u32 in;  /* a splice whose input is the stdin object: that gap too */
	__s32 in_fd;
};

#define MW_CHAN_ON   1u
#define MW_CHAN_EOF  2u
#define MW_CHAN_SOCK 4u
#define MW_CHAN_URING 8u /* an io_uring request was submitted on it (set by the BPF side) */

#define MW_CHAN_CHUNKS 128 /* chunks of MW_DATA_MAX captured per call: 2 MiB */

/* What a write on the stdout object held at its entry, chunk by chunk as its exit captures it
 * (the thread's storage in `chan_sums`): the exit compares each captured chunk with it, so bytes
 * another thread rewrote while the write ran (after the kernel copied them: a write blocked on a
 * full pipe copies the head first) are TAMPERED rather than passed off as what the client got. */
#define MW_SUM_UNREAD 0xffff /* len[]: the chunk could not be read at entry */

struct mw_chan_sums {
	__u16 op;      /* MW_OP_STDIO_WRITE from the entry to the exit, else MW_OP_UNSPEC */
	__u16 chunks;  /* chunks kept: len[] and hash[] below it are set */
	__u32 partial; /* an iovec could not be read at entry: chunks past `chunks` are unchecked */
	__u16 len[MW_CHAN_CHUNKS];  /* bytes of the chunk, or MW_SUM_UNREAD */
	__u32 at[MW_CHAN_CHUNKS];   /* where the chunk starts among the call's bytes */
	__u64 hash[MW_CHAN_CHUNKS]; /* keyed hash (mw_hash) of those bytes */
};

/* arg[4] and arg[5] always carry the device and inode of the file a record concerns (0: none). */
#define MW_A_DEV 4
#define MW_A_INO 5

/* A call that may block (connect, accept, opens), or whose user-memory argument is checked at
 * exit (the file calls with a path, sendto/sendmsg with an address), stashed at entry by its
 * sys_enter program and marked idle at exit: what is left when recording stops is written as
 * unfinished, and a connect or accept still blocked a moment after its entry is written as an
 * entry-time record while recording goes on (collector/pending.c). Keyed by tid in the
 * `inflight` map.
 *
 * The check: the first bytes of the argument (the head) are kept as they are; an argument that
 * fills the head (maybe longer), and the second path of the two-path calls, are also kept as
 * their length and a keyed hash of all their bytes, as many as the record keeps of them
 * (MW_PATH_MAX with the NUL, MW_SOCKADDR_MAX), which the exit compares with the record's. */
#define MW_HEAD_MAX    64     /* bytes of the checked argument (a path, a socket address) kept
			       * at entry, to catch a rewrite */
#define MW_HEAD_UNREAD 0xffff /* head_len or whole_len[] when the argument could not be read
			       * at entry */
#define MW_WHOLE_NONE  0xfffe /* whole_len[] when the argument was not hashed */
#define MW_WHOLE_ARG   0      /* whole_len[], whole_hash[]: of the checked argument (head[]'s), */
#define MW_WHOLE_PATH2 1      /* of the second path (the record's PATH2) */

struct mw_inflight {
	__u64 ts;
	__u64 pstart;
	__u32 tgid;
	__u32 tid;
	__u16 op;
	__u16 head_len; /* bytes in head[] (a path: without its NUL); MW_HEAD_MAX - 1 = maybe
			 * longer; MW_HEAD_UNREAD: the entry read failed */
	__u16 whole_len[2]; /* bytes hashed into whole_hash[] (a path: without its NUL);
			     * MW_WHOLE_NONE: not hashed (an argument that fits the head, a call
			     * without a second path); MW_HEAD_UNREAD: the entry read failed */
	__u32 uid; /* real uid and gid of the caller: set for connect, accept and accept4 (whose */
	__u32 gid; /* stash the collector writes as an entry-time record), else 0 */
	__u64 arg[4];
	__u8 head[MW_HEAD_MAX]; /* the first bytes of the checked argument as the entry program
				 * read them, just before the kernel's copy: a path (file calls)
				 * or a socket address (sendto, sendmsg) */
	__u64 whole_hash[2]; /* keyed hash (mw_hash_key) of the whole_len[] bytes */
};

struct mw_event {
	__u64 ts;     /* bpf_ktime_get_boot_ns() when the record was made (CLOCK_BOOTTIME) */
	__u64 seq;    /* per-trace sequence number, assigned before reserve (gaps = losses) */
	__u64 pstart; /* exec identity: start_boottime of the thread group leader */
	__u32 tgid;
	__u32 tid;
	__u32 uid; /* real uid and gid of the task */
	__u32 gid;
	__u16 op;   /* enum mw_op */
	__u16 size; /* bytes of the whole record, header and slots */
	__u32 flags;
	__s64 ret; /* return value or -errno; 0 for records without a result */
	__u64 arg[6];
	__u16 slen[MW_SLOTS]; /* byte length of each slot in data[], slot order */
	__u8 data[];	      /* the slots, back to back */
};

/* Per-reason loss counters, kept in the BPF array map `losses` (one u64 per reason, per CPU). */
enum mw_loss {
	MW_LOSS_RINGBUF_FULL = 0, /* no room in the hot ring nor in the spill ring */
	MW_LOSS_TOO_LARGE = 1,    /* record larger than the scratch buffer */
	MW_LOSS_STASH_FULL = 2,   /* no room to stash syscall arguments at entry */
	MW_LOSS_READ_FAULT = 3,   /* a kernel read failed */
	MW_LOSS_TRACK_FULL = 4,   /* a new process could not be added to the tracked set */
	MW_LOSS_CHAN_CUT = 5,	  /* channel bytes beyond the per-call capture limit */
	MW_LOSS_REASONS = 6,
};

#define MW_EVENT_HDR_SIZE 120
/* After each record in a ring (not part of it: mw_event.size does not count it), the other
 * ring's producer position when the record was made, 8 bytes, unaligned (maps.h: the hot and
 * the spill ring; collector/ringpair.c). */
#define MW_RING_TRAILER	  8
/* The hot ring's size (maps.h), fixed: the spill ring's is the collector's --ringbuf-size. */
#define MW_HOT_RING_BYTES (1u << 20)
/* The largest record: slots are appended while they fit and cut short (flagged) when not. A power
 * of two, so offsets into the scratch buffer can be masked for the verifier. */
#define MW_EVENT_MAX	  32768

_Static_assert(sizeof(struct mw_event) == MW_EVENT_HDR_SIZE, "mw_event layout changed");
_Static_assert(__builtin_offsetof(struct mw_event, op) == 40, "mw_event.op moved");
_Static_assert(__builtin_offsetof(struct mw_event, ret) == 48, "mw_event.ret moved");
_Static_assert(__builtin_offsetof(struct mw_event, arg) == 56, "mw_event.arg moved");
_Static_assert(__builtin_offsetof(struct mw_event, slen) == 104, "mw_event.slen moved");
_Static_assert(__builtin_offsetof(struct mw_event, data) == 120, "mw_event.data moved");
_Static_assert(MW_EVENT_MAX < 65536, "mw_event.size is 16 bits");
_Static_assert(sizeof(struct mw_inflight) == 152, "mw_inflight layout changed");
_Static_assert(__builtin_offsetof(struct mw_inflight, uid) == 32, "mw_inflight.uid moved");
_Static_assert(__builtin_offsetof(struct mw_inflight, head) == 72, "mw_inflight.head moved");
_Static_assert(__builtin_offsetof(struct mw_inflight, whole_hash) == 136,
	       "mw_inflight.whole_hash moved");
_Static_assert(MW_PATH_MAX < MW_WHOLE_NONE, "whole_len holds a path's length");
_Static_assert(sizeof(struct mw_chan) == 32, "mw_chan layout changed");

#endif /* MW_EVENTS_H */
