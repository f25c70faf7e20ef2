/*
 * event.c - decoding of trace Event records into struct ev_view (see event.h), and the table of
 * operations it decodes by: names, families, the open flags' names and write intent. The
 * names of the other fields, and argv's display: event_text.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <linux/io_uring.h> /* the opcodes an io_uring_submit record carries */

#include "event.h"
#include "events.h"

enum op_kind {
	K_PLAIN, /* arguments shown raw */
	K_FORK,
	K_EXEC,
	K_EXIT,
	K_OPEN,	   /* an open: flags and mode, write intent */
	K_SOCK,	   /* a socket call carrying an address in data */
	K_TARGET,  /* aimed at another process (signals, pidfds): a {detail} saying whom */
	K_FOREIGN, /* a syscall of another ABI, not recorded: a {detail} saying which */
	K_URING,   /* an io_uring submission: opcode, fd; the paths or the address it names */
};

struct op_info {
	int op;
	const char *name;
	uint8_t kind;
	int8_t a_flags; /* K_OPEN: arg index of the open flags (-1: creat, implicit flags) */
	int8_t a_len;	/* K_SOCK: arg index of the address length the process gave (-1: none) */
};

#define OP(o, n)                                                                                   \
	{                                                                                          \
		MCPT__OP__OP_##o, n, K_PLAIN, 0, -1                                                \
	}
#define OP_TARGET(o, n)                                                                            \
	{                                                                                          \
		MCPT__OP__OP_##o, n, K_TARGET, 0, -1                                               \
	}

/* One line per operation of enum mw_op (events.h) / enum Op (trace.proto), in that order.
 * The family comes from the number range (event_op_family). */
static const struct op_info op_table[] = {
	{MCPT__OP__OP_FORK, "fork", K_FORK, 0, -1},
	{MCPT__OP__OP_EXEC, "exec", K_EXEC, 0, -1},
	{MCPT__OP__OP_EXIT, "exit", K_EXIT, 0, -1},
	OP(EXEC_FAILED, "exec_failed"),
	OP(CHDIR, "chdir"),
	OP(FCHDIR, "fchdir"),
	OP(CHROOT, "chroot"),
	OP(SETUID, "setuid"),
	OP(SETGID, "setgid"),
	OP(SETREUID, "setreuid"),
	OP(SETREGID, "setregid"),
	OP(SETRESUID, "setresuid"),
	OP(SETRESGID, "setresgid"),
	OP(SETFSUID, "setfsuid"),
	OP(SETFSGID, "setfsgid"),
	OP(SETGROUPS, "setgroups"),
	OP(CAPSET, "capset"),
	OP(UNSHARE, "unshare"),
	OP(SETNS, "setns"),
	OP(PRCTL, "prctl"),
	{MCPT__OP__OP_OPENAT, "openat", K_OPEN, 1, -1},
	{MCPT__OP__OP_OPEN, "open", K_OPEN, 0, -1},
	{MCPT__OP__OP_OPENAT2, "openat2", K_OPEN, 1, -1},
	{MCPT__OP__OP_CREAT, "creat", K_OPEN, -1, -1},
	OP(MKDIR, "mkdir"),
	OP(MKDIRAT, "mkdirat"),
	OP(UNLINK, "unlink"),
	OP(UNLINKAT, "unlinkat"),
	OP(RMDIR, "rmdir"),
	OP(RENAME, "rename"),
	OP(RENAMEAT, "renameat"),
	OP(RENAMEAT2, "renameat2"),
	OP(LINK, "link"),
	OP(LINKAT, "linkat"),
	OP(SYMLINK, "symlink"),
	OP(SYMLINKAT, "symlinkat"),
	OP(TRUNCATE, "truncate"),
	OP(FTRUNCATE, "ftruncate"),
	OP(CHMOD, "chmod"),
	OP(FCHMOD, "fchmod"),
	OP(FCHMODAT, "fchmodat"),
	OP(FCHMODAT2, "fchmodat2"),
	OP(CHOWN, "chown"),
	OP(FCHOWN, "fchown"),
	OP(FCHOWNAT, "fchownat"),
	OP(LCHOWN, "lchown"),
	OP(MKNOD, "mknod"),
	OP(MKNODAT, "mknodat"),
	{MCPT__OP__OP_OPEN_BY_HANDLE_AT, "open_by_handle_at", K_OPEN, 1, -1},
	{MCPT__OP__OP_CONNECT, "connect", K_SOCK, 0, 1},
	OP(SOCKET, "socket"),
	{MCPT__OP__OP_BIND, "bind", K_SOCK, 0, 1},
	{MCPT__OP__OP_LISTEN, "listen", K_SOCK, 0, -1},
	{MCPT__OP__OP_ACCEPT, "accept", K_SOCK, 0, -1},
	{MCPT__OP__OP_ACCEPT4, "accept4", K_SOCK, 0, -1},
	{MCPT__OP__OP_SENDTO, "sendto", K_SOCK, 0, -1},
	{MCPT__OP__OP_SENDMSG, "sendmsg", K_SOCK, 0, -1},
	{MCPT__OP__OP_SENDMMSG, "sendmmsg", K_SOCK, 0, -1},
	OP(PTRACE, "ptrace"),
	OP(PROCESS_VM_READV, "process_vm_readv"),
	OP(PROCESS_VM_WRITEV, "process_vm_writev"),
	OP_TARGET(KILL, "kill"),
	OP_TARGET(TKILL, "tkill"),
	OP_TARGET(TGKILL, "tgkill"),
	OP(MOUNT, "mount"),
	OP(UMOUNT2, "umount2"),
	OP(INIT_MODULE, "init_module"),
	OP(FINIT_MODULE, "finit_module"),
	OP(BPF, "bpf"),
	OP(MEMFD_CREATE, "memfd_create"),
	OP_TARGET(PIDFD_GETFD, "pidfd_getfd"),
	OP_TARGET(PIDFD_SEND_SIGNAL, "pidfd_send_signal"),
	OP_TARGET(RT_SIGQUEUEINFO, "rt_sigqueueinfo"),
	OP_TARGET(RT_TGSIGQUEUEINFO, "rt_tgsigqueueinfo"),
	OP(OPEN_TREE, "open_tree"),
	OP(MOVE_MOUNT, "move_mount"),
	OP(FSOPEN, "fsopen"),
	OP(FSCONFIG, "fsconfig"),
	OP(FSMOUNT, "fsmount"),
	OP(FSPICK, "fspick"),
	OP(MOUNT_SETATTR, "mount_setattr"),
	OP(PIVOT_ROOT, "pivot_root"),
	OP(OPEN_TREE_ATTR, "open_tree_attr"),
	OP(IOCTL, "ioctl"),
	OP(KEYCTL, "keyctl"),
	OP(ADD_KEY, "add_key"),
	OP(REQUEST_KEY, "request_key"),
	OP(IO_URING_SETUP, "io_uring_setup"),
	OP(IO_URING_ENTER, "io_uring_enter"),
	OP(IO_URING_REGISTER, "io_uring_register"),
	{MCPT__OP__OP_IO_URING_SUBMIT, "io_uring_submit", K_URING, 0, -1},
	OP(USERFAULTFD, "userfaultfd"),
	{MCPT__OP__OP_FOREIGN_ABI, "foreign_abi", K_FOREIGN, 0, -1},
	{MCPT__OP__OP_IO_URING_OPENED, "io_uring_opened", K_URING, 0, -1},
	{MCPT__OP__OP_IO_URING_CONNECTED, "io_uring_connected", K_URING, 0, -1},
	{EV_OP_MESSAGE, "message", K_PLAIN, 0, -1},
	{EV_OP_LOSS, "loss", K_PLAIN, 0, -1},
	{EV_OP_OUTLIVED, "outlived", K_PLAIN, 0, -1},
};

#define N_OPS (sizeof(op_table) / sizeof(op_table[0]))

/* Every record looks up its operation: by number, through an index built once (1 + its
 * position in op_table, 0 for a number the table lacks); by search above it. */
#define OP_INDEX_SIZE 256
static uint8_t op_index[OP_INDEX_SIZE];
static pthread_once_t op_index_once = PTHREAD_ONCE_INIT;

static void op_index_build(void)
{
	for (size_t i = 0; i < N_OPS; i++)
		if (op_table[i].op >= 0 && op_table[i].op < OP_INDEX_SIZE)
			op_index[op_table[i].op] = (uint8_t)(i + 1);
}

static const struct op_info *op_find(int op)
{
	size_t lo = 0, hi = N_OPS; /* the table is sorted by number */

	_Static_assert(N_OPS < 255, "op_index holds positions in a byte");
	if (op >= 0 && op < OP_INDEX_SIZE) {
		pthread_once(&op_index_once, op_index_build);
		return op_index[op] ? &op_table[op_index[op] - 1] : NULL;
	}

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (op_table[mid].op == op)
			return &op_table[mid];
		if (op_table[mid].op < op)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *event_op_name_at(size_t i)
{
	return i < N_OPS ? op_table[i].name : NULL;
}

const char *event_op_name(int op)
{
	const struct op_info *oi = op_find(op);

	return oi ? oi->name : NULL;
}

int event_op_by_name(const char *name)
{
	for (size_t i = 0; i < N_OPS; i++)
		if (strcmp(op_table[i].name, name) == 0)
			return op_table[i].op;
	return -1;
}

/* Ranges of events.h, so an operation added by a newer collector still has its family. */
enum ev_family event_op_family(int op)
{
	if (op >= 1 && op <= 39)
		return FAM_PROCESS;
	if (op >= 40 && op <= 99)
		return FAM_FILE;
	if (op >= 100 && op <= 129)
		return FAM_NETWORK;
	if (op >= 130 && op <= 169)
		return FAM_PRIVILEGE;
	if (op >= 170 && op <= 189)
		return FAM_EVASION;
	if (op >= 190 && op <= 199)
		return FAM_CHANNEL;
	if (op >= 200 && op <= 209)
		return FAM_HEALTH;
	return FAM_NONE;
}

/* Linux open flags, asm-generic / x86-64 values (octal), as the kernel recorded them. */
static const struct {
	uint64_t bit;
	const char *name;
} open_flag_names[] = {
	{0100, "O_CREAT"},	  {0200, "O_EXCL"},	      {0400, "O_NOCTTY"},
	{01000, "O_TRUNC"},	  {02000, "O_APPEND"},	      {04000, "O_NONBLOCK"},
	{010000, "O_DSYNC"},	  {020000, "O_ASYNC"},	      {040000, "O_DIRECT"},
	{0100000, "O_LARGEFILE"}, {0200000, "O_DIRECTORY"},   {0400000, "O_NOFOLLOW"},
	{01000000, "O_NOATIME"},  {02000000, "O_CLOEXEC"},    {04000000, "__O_SYNC"},
	{010000000, "O_PATH"},	  {020000000, "__O_TMPFILE"},
};

#define LX_O_ACCMODE 03
#define LX_O_CREAT   0100
#define LX_O_TRUNC   01000
#define LX_O_TMPFILE 020000000

bool event_open_writes(uint64_t flags)
{
	return (flags & LX_O_ACCMODE) != 0 || (flags & (LX_O_CREAT | LX_O_TRUNC)) != 0;
}

void event_format_open_flags(struct strbuf *sb, uint64_t flags)
{
	static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};
	uint64_t rest = flags & ~(uint64_t)LX_O_ACCMODE;

	strbuf_puts(sb, acc[flags & LX_O_ACCMODE]);
	for (size_t i = 0; i < sizeof(open_flag_names) / sizeof(open_flag_names[0]); i++) {
		if (rest & open_flag_names[i].bit) {
			strbuf_printf(sb, "|%s", open_flag_names[i].name);
			rest &= ~open_flag_names[i].bit;
		}
	}
	if (rest)
		strbuf_printf(sb, "|0x%llx", (unsigned long long)rest);
}

/* The path the process named (made absolute in kernel, or absolute as passed), normalised,
 * against the file actually opened. */
static bool file_differs(const struct ev_view *v)
{
	char buf[4096 + 1];
	const struct ev_bytes *named = v->abs.n ? &v->abs : &v->path;
	size_t n;

	if (!v->opened.n || !named->n)
		return false;
	n = event_normalize_path(named->p, named->n, buf, sizeof(buf));
	if (!n)
		return false;
	return n != v->opened.n || memcmp(buf, v->opened.p, n) != 0;
}

static int64_t arg_at(const Mcpt__Event *e, size_t i)
{
	return i < e->n_args ? e->args[i] : 0;
}

static struct ev_bytes bytes_of(const ProtobufCBinaryData *b)
{
	return (struct ev_bytes){.p = b->len ? b->data : NULL, .n = b->data ? b->len : 0};
}

static void decode_result(struct ev_view *v)
{
	v->ret = v->raw->ret;
	if (v->flags & (MW_F_ENTRY | MW_F_UNFINISHED) || v->op == MCPT__OP__OP_FOREIGN_ABI) {
		v->result = RES_PENDING; /* foreign_abi: made at entry, its result never read */
	} else if ((v->op == MCPT__OP__OP_CONNECT || v->op == MCPT__OP__OP_IO_URING_CONNECTED) &&
		   v->ret == -115 /* EINPROGRESS */) {
		/* a non-blocking connect under way: not a failure, its outcome comes later */
		v->result = RES_PENDING;
	} else if (v->op != MCPT__OP__OP_EXIT && v->ret < 0) {
		v->result = RES_FAILURE;
		v->err = v->ret >= -4095 ? (int)-v->ret : 0;
	} else {
		v->result = RES_SUCCESS;
	}
}

#define LX_O_WRONLY 01

static void decode_open(struct ev_view *v, const struct op_info *oi)
{
	const Mcpt__Event *e = v->raw;

	v->has_open = true;
	if (oi->a_flags < 0) { /* creat(path, mode) = open(O_CREAT|O_WRONLY|O_TRUNC) */
		v->open_flags = LX_O_CREAT | LX_O_WRONLY | LX_O_TRUNC;
		v->mode = (uint32_t)arg_at(e, 0);
	} else {
		v->dirfd = oi->a_flags ? arg_at(e, 0) : -100;
		v->open_flags = (uint64_t)arg_at(e, (size_t)oi->a_flags);
		v->mode = (uint32_t)arg_at(e, (size_t)oi->a_flags + 1);
	}
	v->write_intent = event_open_writes(v->open_flags);
	v->has_write = true;
	v->has_mode = (v->open_flags & (LX_O_CREAT | LX_O_TMPFILE)) != 0;
}

static bool is_ip_addr(const struct mw_sockaddr *a)
{
	return a->kind == SA_INET || a->kind == SA_INET6;
}

#define LX_SOCK_STREAM 1
#define DNS_PORT       53

/* A datagram (or stream write) to port 53 whose payload the collector kept: its query. The
 * port is the address given, else the connected socket's peer. */
static void decode_dns(struct ev_view *v)
{
	const struct mw_sockaddr *to = NULL;

	if (v->op != MCPT__OP__OP_SENDTO && v->op != MCPT__OP__OP_SENDMSG &&
	    v->op != MCPT__OP__OP_SENDMMSG)
		return;
	if (v->has_addr && is_ip_addr(&v->unchecked.addr))
		to = &v->unchecked.addr;
	else if (v->has_peer && is_ip_addr(&v->unchecked.peer))
		to = &v->unchecked.peer;
	if (!v->payload.n || (to && to->port != DNS_PORT))
		return;
	v->has_dns = dns_decode_query(v->payload.p, v->payload.n,
				      v->sock_type == LX_SOCK_STREAM, &v->unchecked.dns);
}

/* connect and send*: the address passed against the peer the kernel holds after the call
 * (IPv4-mapped IPv6 is IPv4 on both sides already). */
static bool sock_differs(const struct ev_view *v)
{
	const struct mw_sockaddr *a = &v->unchecked.addr, *b = &v->unchecked.peer;

	if (v->op != MCPT__OP__OP_CONNECT && v->op != MCPT__OP__OP_SENDTO &&
	    v->op != MCPT__OP__OP_SENDMSG && v->op != MCPT__OP__OP_SENDMMSG)
		return false;
	if (!v->has_addr || !v->has_peer || !is_ip_addr(a) || !is_ip_addr(b))
		return false;
	if (a->kind != b->kind || a->port != b->port)
		return true;
	return memcmp(a->ip.b, b->ip.b, a->kind == SA_INET ? 4 : 16) != 0;
}

/* data: the address the process gave or received; data2: the socket's as the kernel holds it
 * after the call; arg[2], arg[3]: socket type and family from the kernel. */
static void decode_sock(struct ev_view *v, const struct op_info *oi)
{
	const Mcpt__Event *e = v->raw;

	v->fd = arg_at(e, 0);
	v->sock_type = (int)arg_at(e, 2);
	v->sock_family = (int)arg_at(e, 3);
	if (e->data.data && e->data.len) {
		v->has_addr = true;
		sockaddr_decode(&v->unchecked.addr, e->data.data, e->data.len,
				oi->a_len >= 0 && e->n_args > (size_t)oi->a_len
					? arg_at(e, (size_t)oi->a_len)
					: -1);
	}
	if (e->data2.data && e->data2.len) {
		v->has_peer = true;
		sockaddr_decode(&v->unchecked.peer, e->data2.data, e->data2.len, -1);
	}
	decode_dns(v);
}

/* Whether an io_uring request that names a path changes the file tree: an open for writing
 * (its flags in arg[3], at submission and in its io_uring_opened record), a mkdir, unlink,
 * rename, link or symlink; a read-only open or a statx does not. */
static void decode_uring_write(struct ev_view *v)
{
	if (v->op == MCPT__OP__OP_IO_URING_OPENED) { /* the open's flags in arg[3] */
		v->write_intent = event_open_writes((uint64_t)arg_at(v->raw, 3));
		v->has_write = true;
		return;
	}
	if (v->op != MCPT__OP__OP_IO_URING_SUBMIT || !v->path.n)
		return;
	switch (arg_at(v->raw, 0)) {
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2:
		v->write_intent = event_open_writes((uint64_t)arg_at(v->raw, 3));
		break;
	case IORING_OP_STATX:
		v->write_intent = false;
		break;
	case IORING_OP_RENAMEAT:
	case IORING_OP_UNLINKAT:
	case IORING_OP_MKDIRAT:
	case IORING_OP_SYMLINKAT:
	case IORING_OP_LINKAT:
		v->write_intent = true;
		break;
	default:
		return;
	}
	v->has_write = true;
}

/* The mode a chmod sets, or a creating open gives a new file. */
static void decode_mode(struct ev_view *v)
{
	switch (v->op) {
	case MCPT__OP__OP_CHMOD:
		v->mode = (uint32_t)arg_at(v->raw, 0);
		break;
	case MCPT__OP__OP_FCHMOD:
	case MCPT__OP__OP_FCHMODAT:
	case MCPT__OP__OP_FCHMODAT2:
		v->mode = (uint32_t)arg_at(v->raw, 1);
		break;
	default:
		return;
	}
	v->has_mode = true;
}

static void decode_op_specific(struct ev_view *v, const struct op_info *oi)
{
	const Mcpt__Event *e = v->raw;

	switch (oi ? oi->kind : K_PLAIN) {
	case K_FORK:
		v->child_pid = (uint32_t)arg_at(e, 0);
		v->child_tid = (uint32_t)arg_at(e, 1);
		v->child_pstart = (uint64_t)arg_at(e, 2);
		v->thread = v->flags & MW_F_THREAD;
		if (v->flags & MW_F_NEWNS) /* a {detail} naming the namespaces */
			event_detail_set(v);
		break;
	case K_TARGET:
	case K_FOREIGN:
		event_detail_set(v);
		break;
	case K_EXEC:
		v->argv = bytes_of(&e->data);
		break;
	case K_EXIT:
		v->exit_status = arg_at(e, 0);
		v->group_dead = arg_at(e, 1) != 0;
		break;
	case K_OPEN:
		decode_open(v, oi);
		break;
	case K_SOCK:
		decode_sock(v, oi);
		break;
	case K_URING: /* a connect's or a send's address, when the request named one */
		if (v->op != MCPT__OP__OP_IO_URING_CONNECTED) /* its arg 1 is the user_data */
			v->fd = arg_at(e, 1);
		decode_uring_write(v);
		if (e->data.data && e->data.len) {
			v->has_addr = true;
			sockaddr_decode(&v->unchecked.addr, e->data.data, e->data.len, -1);
		}
		break;
	default:
		decode_mode(v);
		break;
	}
}

void event_decode(struct ev_view *v, const Mcpt__Event *e)
{
	const struct op_info *oi = op_find((int)e->op);

	memset(v, 0, offsetof(struct ev_view, unchecked)); /* see struct ev_view */
	v->raw = e;
	v->seq = e->seq;
	v->ts = e->ts;
	v->pstart = e->pstart;
	v->pid = e->pid;
	v->tid = e->tid;
	v->uid = e->uid;
	v->gid = e->gid;
	v->op = (int)e->op;
	v->flags = e->flags;
	v->family = event_op_family(v->op);
	v->op_name = oi ? oi->name : NULL;
	if (!v->op_name) {
		snprintf(v->op_buf, sizeof(v->op_buf), "op%d", v->op);
		v->op_name = v->op_buf;
	}
	v->path = bytes_of(&e->path);
	v->abs = bytes_of(&e->abs_path);
	v->opened = bytes_of(&e->opened_path);
	v->path2 = bytes_of(&e->path2);
	v->abs2 = bytes_of(&e->abs_path2);
	v->payload = bytes_of(&e->payload);
	v->subject = v->abs.n ? v->abs : v->path;
	if (!v->subject.n && v->op == MCPT__OP__OP_MOVE_MOUNT) /* a tree moved by its fd */
		v->subject = v->opened.n ? v->opened : v->abs2.n ? v->abs2 : v->path2;
	v->dev = e->dev;
	v->ino = e->ino;
	decode_result(v);
	decode_op_specific(v, oi);
}

bool event_differs(const struct ev_view *v)
{
	if (v->family == FAM_FILE || v->family == FAM_PROCESS)
		return file_differs(v);
	return sock_differs(v);
}
