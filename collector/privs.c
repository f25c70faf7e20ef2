/*
 * privs.c - the up-front capability check (see privs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "log.h"
#include "privs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int effective_caps(unsigned long long *caps)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*caps = (unsigned long long)data[1].effective << 32 | data[0].effective;
	return 0;
}

int privs_check(void)
{
	static const struct {
		int cap;
		const char *name;
	} needed[] = {
		{ CAP_BPF, "CAP_BPF" },
		{ CAP_PERFMON, "CAP_PERFMON" },
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" }, /* bpf_task_pt_regs, BTF-typed reads */
		{ CAP_SETUID, "CAP_SETUID" },	/* launch as the user; our own drop */
		{ CAP_SETGID, "CAP_SETGID" },
		{ CAP_SETPCAP, "CAP_SETPCAP" },	/* shrinking our bounding set */
		{ CAP_KILL, "CAP_KILL" },	/* forwarding signals to another uid */
	};
	unsigned long long caps = 0;
	char missing[160] = "";
	size_t i;
	int err = effective_caps(&caps);

	if (err) {
		p_err("failed to read capabilities: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if ((caps >> needed[i].cap) & 1)
			continue;
		if (*missing)
			strncat(missing, ", ", sizeof(missing) - strlen(missing) - 1);
		strncat(missing, needed[i].name, sizeof(missing) - strlen(missing) - 1);
	}
	if (*missing) {
		p_err("missing privileges: %s (run as root, e.g. with sudo)", missing);
		return -EPERM;
	}
	return 0;
}

/* The inode number of the initial PID namespace's /proc/PID/ns/pid (PROC_PID_INIT_INO, fixed since
 * Linux 3.8): every other PID namespace gets one from the proc inode allocator. From inside a
 * nested namespace NS_GET_PARENT cannot tell (its parent is out of scope, EPERM, as for the
 * initial one), and a /proc mounted in it shows only its own pids. */
#define MW_PROC_PID_INIT_INO 0xEFFFFFFCu

int privs_check_pid_namespace(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st)) {
		p_err("cannot tell which PID namespace this is: /proc/self/ns/pid: %s",
		      strerror(errno));
		return -EPERM;
	}
	if (st.st_ino != MW_PROC_PID_INIT_INO) {
		p_err("runs in a PID namespace of its own (a container without the host's): its "
		      "BPF "
		      "programs see the kernel's process ids, not this namespace's; run it in the "
		      "host's PID namespace (e.g. docker run --pid=host)");
		return -EPERM;
	}
	return 0;
}
