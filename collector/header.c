/*
 * header.c - collect the trace Header's facts (see header.h). Reads only flat files from the
 * kernel and /etc (uuid, key=value); nothing structured from the monitored user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "events.h"
#include "header.h"
#include "launch.h"

#define MAX_OWNED 64

struct header_data {
	Mcpt__Header hdr;
	Mcpt__Host host;
	Mcpt__Kernel kernel;
	Mcpt__ClockSample clock;
	Mcpt__Collector collector;
	Mcpt__Target target;
	Mcpt__FdIdentity fd_ids[3];
	Mcpt__FdIdentity *fd_ptrs[3];
	struct utsname uts;
	uint8_t machine_id[16], boot_id[16], exe_digest[32], env_digest[32], build_id[32];
	ProtobufCBinaryData *argv, *notes;
	void *owned[MAX_OWNED]; /* strings this struct frees */
	size_t n_owned;
};

static ProtobufCBinaryData bin(const void *p, size_t n)
{
	ProtobufCBinaryData b = { n, (uint8_t *)p };

	return b;
}

static ProtobufCBinaryData str_bin(const char *s)
{
	return s ? bin(s, strlen(s)) : bin(NULL, 0);
}

/* Keeps p to be freed with h; returns p (NULL stays NULL). */
static char *own(struct header_data *h, char *p)
{
	if (p && h->n_owned < MAX_OWNED)
		h->owned[h->n_owned++] = p;
	else if (p) {
		free(p);
		p = NULL;
	}
	return p;
}

/* First line of a small file, without its newline, malloc'd; NULL when absent. */
static char *read_line(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "re");
	char *nl;

	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return strdup(buf);
}

/* 32 hex digits, dashes allowed (boot_id is a UUID, machine-id is bare hex) -> 16 bytes. */
static int parse_uuid(const char *s, uint8_t out[16])
{
	char hex[33];
	size_t n = 0, bin_len = 0;

	for (; s && *s && n < 32; s++)
		if (*s != '-')
			hex[n++] = *s;
	hex[n] = 0;
	if (n != 32 || sodium_hex2bin(out, 16, hex, n, NULL, &bin_len, NULL) || bin_len != 16)
		return -EINVAL;
	return 0;
}

/* Value of KEY= in /etc/os-release, unquoted, malloc'd. */
static char *os_release(const char *key)
{
	FILE *f = fopen("/etc/os-release", "re");
	size_t klen = strlen(key);
	char line[512], *v = NULL, *end;

	if (!f)
		f = fopen("/usr/lib/os-release", "re");
	if (!f)
		return NULL;
	while (!v && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != '=')
			continue;
		v = line + klen + 1;
		v[strcspn(v, "\n")] = 0;
		if (*v == '"' && (end = strrchr(v + 1, '"'))) {
			*end = 0;
			v++;
		}
		v = strdup(v);
	}
	fclose(f);
	return v;
}

/* The digest of the regular file open at fd, read from its start; nothing but a regular file
 * is read. */
static int hash_fd(int fd, uint8_t out[32])
{
	crypto_generichash_state st;
	uint8_t buf[65536];
	struct stat sb;
	off_t at = 0;
	ssize_t n;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
		return -EINVAL;
	crypto_generichash_init(&st, NULL, 0, 32);
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		crypto_generichash_update(&st, buf, (size_t)n);
		at += n;
	}
	if (n < 0)
		return -EIO;
	crypto_generichash_final(&st, out, 32);
	return 0;
}

int header_open_exe(pid_t pid)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	/* non-blocking: a FIFO is never waited on (and hash_fd reads regular files only) */
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

static int hash_file(const char *path, uint8_t out[32])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0)
		return -errno;
	err = hash_fd(fd, out);
	close(fd);
	return err;
}

void header_clock_sample(Mcpt__ClockSample *c)
{
	struct timespec b0, rt, b1, mono;
	struct timex tx = { 0 };
	int state;

	mcpt__clock_sample__init(c);
	clock_gettime(CLOCK_BOOTTIME, &b0);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &b1);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	c->boottime_before_ns = (uint64_t)b0.tv_sec * 1000000000ull + (uint64_t)b0.tv_nsec;
	c->realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	c->boottime_after_ns = (uint64_t)b1.tv_sec * 1000000000ull + (uint64_t)b1.tv_nsec;
	c->monotonic_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	state = adjtimex(&tx);
	c->ntp_synced = state >= 0 && state != TIME_ERROR && !(tx.status & STA_UNSYNC);
	c->esterror_us = tx.esterror > 0 ? (uint64_t)tx.esterror : 0;
}

static void fill_host_kernel(struct header_data *h)
{
	char *s;
	int v;

	mcpt__host__init(&h->host);
	mcpt__kernel__init(&h->kernel);
	if (parse_uuid(own(h, read_line("/etc/machine-id")), h->machine_id) == 0)
		h->host.machine_id = bin(h->machine_id, 16);
	if (uname(&h->uts) == 0) {
		h->host.hostname = str_bin(h->uts.nodename);
		h->kernel.sysname = str_bin(h->uts.sysname);
		h->kernel.release = str_bin(h->uts.release);
		h->kernel.version = str_bin(h->uts.version);
		h->kernel.machine = str_bin(h->uts.machine);
	}
	h->host.os_id = str_bin(own(h, os_release("ID")));
	h->host.os_version = str_bin(own(h, os_release("VERSION_ID")));
	s = own(h, read_line("/proc/sys/kernel/io_uring_disabled"));
	v = s ? atoi(s) : -1;
	h->kernel.io_uring_disabled = v;
	h->kernel.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (parse_uuid(own(h, read_line("/proc/sys/kernel/random/boot_id")), h->boot_id) == 0)
		h->hdr.boot_id = bin(h->boot_id, 16);
}

static int fill_collector(struct header_data *h, const struct header_input *in)
{
	size_t i;

	mcpt__collector__init(&h->collector);
	h->collector.name = (char *)"mcpwitness-collect";
	h->collector.version = (char *)MW_VERSION;
	h->collector.pid = (uint32_t)getpid();
	h->collector.bpf_schema = MW_SCHEMA_VERSION;
	h->collector.stdio_capture = (char *)in->stdio_capture;
	h->collector.ringbuf_bytes = in->ringbuf_bytes;
	if (hash_file("/proc/self/exe", h->build_id) == 0)
		h->collector.build_id = bin(h->build_id, 32);
	if (in->n_notes) {
		h->notes = calloc(in->n_notes, sizeof(*h->notes));
		if (!h->notes)
			return -ENOMEM;
		for (i = 0; i < in->n_notes; i++)
			h->notes[i] = str_bin(in->notes[i]);
		h->collector.notes = h->notes;
		h->collector.n_notes = in->n_notes;
	}
	return 0;
}

/* readlink of proc/name (proc is "/proc/self" or "/proc/PID"), malloc'd, or NULL. */
static char *proc_link(const char *proc, const char *name)
{
	char link[96], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%s", proc, name);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = 0;
	return strdup(target);
}

/* A whole small /proc file (cmdline, environ), at most 1 MiB, malloc'd; *len its size. */
static char *proc_file(const char *proc, const char *name, size_t *len)
{
	char path[96];
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", proc, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n < cap)
			continue;
		if (cap >= (1u << 20))
			break;
		char *nb = realloc(buf, cap * 2);

		if (!nb)
			break;
		buf = nb;
		cap *= 2;
	}
	close(fd);
	*len = n;
	return buf;
}

static void fill_fds(struct header_data *h, const char *proc)
{
	char path[96], name[16];
	struct stat st;
	int fd;

	for (fd = 0; fd < 3; fd++) {
		Mcpt__FdIdentity *id = &h->fd_ids[fd];

		mcpt__fd_identity__init(id);
		id->fd = fd;
		snprintf(path, sizeof(path), "%s/fd/%d", proc, fd);
		if (stat(path, &st) == 0) {
			id->dev = st.st_dev;
			id->ino = st.st_ino;
			id->mode = st.st_mode;
		}
		snprintf(name, sizeof(name), "fd/%d", fd);
		id->path = str_bin(own(h, proc_link(proc, name)));
		h->fd_ptrs[fd] = id;
	}
	h->target.fds = h->fd_ptrs;
	h->target.n_fds = 3;
}

/* Our environment as execve hands it to COMMAND (and /proc/PID/environ then shows it): each
 * NAME=value with its NUL, in order. Not /proc/self/environ, which still shows the block we
 * were started with, before launch_user_env. malloc'd; *len its size. */
static char *env_block(size_t *len)
{
	extern char **environ;
	size_t n = 0, i;
	char *buf, *p;

	for (i = 0; environ && environ[i]; i++)
		n += strlen(environ[i]) + 1;
	buf = malloc(n ? n : 1);
	if (!buf)
		return NULL;
	for (i = 0, p = buf; environ && environ[i]; i++)
		p = stpcpy(p, environ[i]) + 1;
	*len = n;
	return buf;
}

/* Digest of the environment block (values never stored) and the HOME and TMPDIR it holds:
 * the server's own in attach mode, the one we pass it in launch mode. */
static void fill_env(struct header_data *h, const struct header_input *in, const char *proc)
{
	size_t len = 0, i, n;
	char *env = own(h, in->attached ? proc_file(proc, "environ", &len) : env_block(&len));
	const char *tmp = NULL;

	crypto_generichash(h->env_digest, 32, (const uint8_t *)env, env ? len : 0, NULL, 0);
	h->target.env_digest = bin(h->env_digest, 32);
	for (i = 0; env && i < len; i += n + 1) {
		n = strnlen(env + i, len - i);
		if (n > 5 && !strncmp(env + i, "HOME=", 5))
			h->target.home = bin(env + i + 5, n - 5);
		else if (n > 8 && !strncmp(env + i, "TMPDIR=", 7) && env[i + 7] == '/')
			tmp = env + i + 7;
	}
	h->target.tmp = str_bin(tmp ? tmp : "/tmp");
}

/* argv: the command given (launch) or /proc/PID/cmdline (attach). */
static int fill_argv(struct header_data *h, const struct header_input *in, const char *proc)
{
	size_t argc = 0, len = 0, i, n;
	char *cmdline = NULL;

	if (in->attached) {
		cmdline = own(h, proc_file(proc, "cmdline", &len));
		for (i = 0; cmdline && i < len; i += strnlen(cmdline + i, len - i) + 1)
			argc++;
	} else {
		while (in->command[argc])
			argc++;
	}
	h->argv = calloc(argc ? argc : 1, sizeof(*h->argv));
	if (!h->argv)
		return -ENOMEM;
	for (i = 0, n = 0; n < argc; n++) {
		if (!in->attached) {
			h->argv[n] = str_bin(in->command[n]);
			continue;
		}
		h->argv[n] = bin(cmdline + i, strnlen(cmdline + i, len - i));
		i += h->argv[n].len + 1;
	}
	h->target.argv = h->argv;
	h->target.n_argv = argc;
	return 0;
}

/* The server's facts. In launch mode the server inherited our cwd, root, environment and fds
 * 0-2 (and the executable is what its own PATH search ran), so /proc/self tells them, and
 * our environment (launch_user_env's) is its; in attach mode /proc/PID does. */
static int fill_target(struct header_data *h, const struct header_input *in)
{
	const struct launch_cred *c = in->cred;
	char proc[32];
	char *exe;
	int err, exe_fd;

	if (in->attached)
		snprintf(proc, sizeof(proc), "/proc/%d", (int)in->pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self");
	mcpt__target__init(&h->target);
	err = fill_argv(h, in, proc);
	if (err)
		return err;
	if (in->attached)
		exe = own(h, proc_link(proc, "exe"));
	else if (in->exe)
		exe = own(h, realpath(in->exe, NULL) ?: strdup(in->exe));
	else
		exe = NULL;
	h->target.exe = str_bin(exe);
	/* the file the process runs, through its own link, never by path: the server may have
	 * put another file (or a FIFO) there since its exec. None when it is gone already. */
	exe_fd = in->attached ? header_open_exe(in->pid) : in->exe_fd;
	if (exe_fd >= 0 && hash_fd(exe_fd, h->exe_digest) == 0)
		h->target.exe_digest = bin(h->exe_digest, 32);
	if (in->attached && exe_fd >= 0)
		close(exe_fd);
	h->target.pid = (uint32_t)in->pid;
	h->target.attached = in->attached;
	h->target.cwd = str_bin(own(h, proc_link(proc, "cwd")));
	h->target.root = str_bin(own(h, proc_link(proc, "root")));
	h->target.uid = c->uid;
	h->target.gid = c->gid;
	h->target.groups = (uint32_t *)c->groups;
	h->target.n_groups = (size_t)c->ngroups;
	h->target.user = str_bin(c->user);
	h->target.passwd_home = str_bin(c->passwd_home);
	fill_env(h, in, proc);
	fill_fds(h, proc);
	return 0;
}

struct header_data *header_build(const struct header_input *in)
{
	struct header_data *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return NULL;
	mcpt__header__init(&h->hdr);
	fill_host_kernel(h);
	header_clock_sample(&h->clock);
	err = fill_collector(h, in);
	if (!err)
		err = fill_target(h, in);
	if (err) {
		header_free(h);
		errno = -err;
		return NULL;
	}
	h->hdr.host = &h->host;
	h->hdr.kernel = &h->kernel;
	h->hdr.clock = &h->clock;
	h->hdr.event_clock = MCPT__CLOCK_ID__CLOCK_BOOTTIME;
	h->hdr.collector = &h->collector;
	h->hdr.target = &h->target;
	return h;
}

Mcpt__Header *header_get(struct header_data *h)
{
	return &h->hdr;
}

void header_free(struct header_data *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n_owned; i++)
		free(h->owned[i]);
	free(h->argv);
	free(h->notes);
	free(h);
}
