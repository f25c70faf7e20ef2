/*
 * main.c - mcpwitness-collect: the privileged half of mcpwitness. It records facts, never
 * judgements: what the monitored MCP server and its descendants did, as the kernel saw it,
 * into a signed trace that the unprivileged analyzer checks and interprets elsewhere.
 *
 * The order is the one DESIGN.md section 10 fixes, but for the output: options (inherited fds
 * checked before we open any of our own), signing key, signal handling, output, control
 * channel, BPF (mounting tracefs only if a program needs it), the guardian (guardian.c: with
 * --on-collector-exit kill, the tree is killed even if we are), launch or attach, privilege drop
 * (sandbox.c); then the recording loop, which needs nothing the sandbox took away. The output
 * comes before BPF so that waiting for a FIFO's reader holds no program attached to every
 * syscall on the host, and signal handling before the output so that INT, TERM, HUP or QUIT can
 * end that wait. A failure to set up removes the trace file we created (output_discard).
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "attach.h"
#include "control.h"
#include "guardian.h"
#include "header.h"
#include "invoker.h"
#include "launch.h"
#include "loader.h"
#include "log.h"
#include "mcpt.h"
#include "options.h"
#include "output.h"
#include "privs.h"
#include "sandbox.h"
#include "session.h"

#define EXIT_SETUP 2

struct collector {
	struct options opts;
	struct launch_cred cred;
	struct invoker inv; /* through sudo: the user on whose behalf we record */
	struct mcpt_signer *signer;
	struct session session;
	struct loader *bpf;
	struct output out;
	struct header_data *header;
	struct control *control;
	struct mcpt_writer *writer;
	struct guardian guard;
	int target_pidfd; /* attach: the process checked, until the session watches it */
};

static int open_output(struct collector *c)
{
	if (c->opts.output)
		return output_open(&c->out, c->opts.output, &c->inv, c->cred.gid, c->session.sigfd);
	return output_adopt(&c->out, c->opts.output_fd);
}

static int start_trace(struct collector *c, const char *exe, int exe_fd)
{
	const char *const *notes;
	struct header_input in = {
		.command = c->opts.command,
		.exe = exe,
		.exe_fd = exe_fd,
		.pid = c->session.server.pid,
		.attached = c->opts.attach_pid > 0,
		.cred = &c->cred,
		.stdio_capture = c->opts.stdio_off ? "off" : c->opts.stdio_spec,
		.ringbuf_bytes = (size_t)c->opts.ringbuf_mib << 20,
	};
	struct mcpt_writer_opts wo = { .fsync_seals = c->out.is_file, .value_table = true,
				       .task_table = true, .ts_delta = true,
				       .fork_task = true };

	in.n_notes = loader__notes(c->bpf, &notes);
	in.notes = notes;
	c->header = header_build(&in);
	if (!c->header) {
		p_err("failed to gather the trace header: %s", strerror(errno));
		return -errno;
	}
	c->writer = mcpt_writer__new(c->out.fd, header_get(c->header), c->signer, &wo);
	if (!c->writer) {
		p_err("failed to start the trace: %s", strerror(errno));
		return -errno;
	}
	c->session.writer = c->writer;
	return 0;
}

/* Names the server's stdin and stdout objects for the channel capture. proc is "/proc/self"
 * (launch: the server inherits our fds 0 and 1) or "/proc/PID" (attach). */
static int watch_channel(struct collector *c, const char *proc)
{
	static const uint32_t dirs[2] = { MW_CHAN_IN, MW_CHAN_OUT };
	char path[64];
	struct stat st;
	int fd, err;

	if (c->opts.stdio_off)
		return 0;
	for (fd = 0; fd < 2; fd++) {
		snprintf(path, sizeof(path), "%s/fd/%d", proc, fd);
		if (stat(path, &st)) {
			p_warn("fd %d of the server is not open: its channel is not captured", fd);
			continue;
		}
		err = loader__set_chan(c->bpf, dirs[fd], st.st_dev, st.st_ino, c->opts.stdio_head,
				       S_ISSOCK(st.st_mode));
		if (err) {
			p_err("failed to set up the channel capture: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

static int launch_server(struct collector *c)
{
	struct launch *srv = &c->session.server;
	char *exe = NULL;
	int exe_fd;
	int err = launch_fork(srv, c->opts.command, &c->cred, !c->opts.keep_server);

	if (err) {
		p_err("failed to start %s: %s", c->opts.command[0], strerror(-err));
		return err;
	}
	err = loader__track(c->bpf, srv->pid);
	if (err) {
		p_err("failed to track the server: %s", strerror(-err));
		return err;
	}
	err = watch_channel(c, "/proc/self");
	if (err)
		return err;
	/* From here the server runs; its first records wait in the ring buffer until the trace
	 * is started, so that its header can name the executable that really ran. */
	err = launch_release(srv, &exe);
	if (err) /* the child exits 126/127; the trace records that and ends normally */
		p_err("failed to execute %s: %s", c->opts.command[0], strerror(-err));
	/* at once: the file it runs, for the header's digest, before the server can replace
	 * the file at that path or be gone */
	exe_fd = exe ? header_open_exe(srv->pid) : -1;
	err = start_trace(c, exe, exe_fd);
	if (exe_fd >= 0)
		close(exe_fd);
	free(exe);
	return err;
}

static int attach_server(struct collector *c)
{
	pid_t pid = c->opts.attach_pid;
	struct attach_proc *procs = NULL;
	size_t n = 0, i;
	char proc[32];
	int err;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	err = watch_channel(c, proc);
	if (err)
		return err;
	if (c->opts.attach_pgid)
		err = attach_seed_group(c->bpf, c->opts.attach_pgid, pid, c->target_pidfd, &procs,
					&n);
	else
		err = attach_seed(c->bpf, pid, c->target_pidfd, &procs, &n);
	if (err)
		return err;
	err = session_watch(&c->session, pid, c->target_pidfd);
	c->target_pidfd = -1; /* the session's now */
	if (err)
		p_err("failed to watch process %d: %s", (int)pid, strerror(-err));
	if (!err)
		err = start_trace(c, NULL, -1);
	for (i = 0; !err && i < n; i++) {
		unsigned long uid = 0; /* a process gone since the scan: 0, as in ALIVE_AT_END */

		attach_status_value((pid_t)procs[i].pid, "Uid:", &uid);
		err = session_note_proc(&c->session,
					i == 0 ? MCPT__PROC_INFO__KIND__TARGET :
						 MCPT__PROC_INFO__KIND__SEEDED,
					procs[i].pid, procs[i].ppid, 0, (uint32_t)uid);
	}
	p_info("attached to %d and %zu process(es) below it", (int)pid, n - 1);
	free(procs);
	return err;
}

/* Who the server runs (or already ran) as, and whether we hold the privileges for it. */
/* Through sudo, a user gets a recording of their own server, nothing more (see invoker.h). */
static int sudo_limits(struct collector *c)
{
	struct passwd *pw;
	char *end;
	unsigned long id;

	if (!c->inv.via_sudo)
		return 0;
	if (c->opts.allow_root) {
		p_err("--allow-root is refused through sudo: it would run COMMAND as root for uid %u",
		      (unsigned)c->inv.uid);
		return -EPERM;
	}
	if (!c->opts.user)
		return 0;
	pw = getpwnam(c->opts.user);
	id = pw ? pw->pw_uid : strtoul(c->opts.user, &end, 10);
	if (pw || (*c->opts.user && !*end)) {
		if (id == c->inv.uid)
			return 0;
	}
	p_err("--user %s is refused through sudo: uid %u may run COMMAND as itself only",
	      c->opts.user, (unsigned)c->inv.uid);
	return -EPERM;
}

static int check_identity(struct collector *c)
{
	int err = invoker_get(&c->inv);

	if (err)
		return err;
	if (c->opts.attach_pgid) { /* --pgid: watch its leader, or a member if it has none */
		err = attach_group_target(c->opts.attach_pgid, &c->opts.attach_pid);
		if (err) {
			p_err("--pgid %d: no such process group", (int)c->opts.attach_pgid);
			return err;
		}
	}
	if (c->opts.attach_pid) {
		err = attach_check_target(c->opts.attach_pid);
		if (err)
			return err;
		/* the process checked, held from here: what it is owned by is read after, and it
		 * is the one seeded (attach_seed), not whatever reuses its pid meanwhile */
		c->target_pidfd = attach_pidfd(c->opts.attach_pid);
		err = c->target_pidfd < 0 ? c->target_pidfd
					  : attach_cred(c->opts.attach_pid, &c->cred);
		if (!err && !attach_pidfd_alive(c->target_pidfd))
			err = -ESRCH;
		if (err) {
			p_err("--pid %d: cannot read its status: %s", (int)c->opts.attach_pid,
			      strerror(-err));
			return err;
		}
		err = attach_check_invoker(&c->inv, c->opts.attach_pid);
		if (!err && c->opts.attach_pgid)
			err = attach_check_group_invoker(&c->inv, c->opts.attach_pgid);
		return err ? err : privs_check();
	}
	err = sudo_limits(c);
	if (!err)
		err = launch_resolve_cred(&c->opts, &c->cred);
	if (!err && c->inv.via_sudo && c->cred.uid != c->inv.uid)
		err = -EPERM; /* cannot happen after sudo_limits; kept as the invariant */
	if (!err)
		err = launch_user_env(&c->cred);
	return err ? err : privs_check();
}

static int open_control(struct collector *c)
{
	int err;

	if (!c->opts.control && c->opts.control_fd < 0)
		return 0;
	err = invoker_fs_begin(&c->inv);
	if (err)
		return err;
	c->control = control__open(c->opts.control, c->opts.control_fd, c->cred.uid, c->cred.gid);
	err = c->control ? 0 : -errno;
	invoker_fs_end(&c->inv);
	if (err)
		return err;
	err = session_add_control(&c->session, c->control);
	if (err)
		p_err("failed to watch the control channel: %s", strerror(-err));
	return err;
}

/* A stop (INT, TERM, HUP, QUIT) that came while the programs loaded: the server is not started
 * (or attached) at all. Left pending, the signal was taken for one the server already had (a
 * terminal's), and the user had to stop it again. Looked at, not consumed. */
static int stop_requested(const struct collector *c)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t pending;

	if (sigpending(&pending))
		return 0;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		if (sigismember(&pending, stops[i]) == 1) {
			p_err("signal %d came before %s: nothing recorded", stops[i],
			      c->opts.attach_pid ? "the attach" : "COMMAND was started");
			return -EINTR;
		}
	}
	return 0;
}

static int setup(struct collector *c)
{
	struct loader_opts lo = {
		.ringbuf_bytes = c->opts.ringbuf_mib << 20,
		.on_record = session_on_record,
		.ctx = &c->session,
	};
	char err_msg[256];
	int err;

	if (sodium_init() < 0) {
		p_err("failed to initialise libsodium");
		return -EIO;
	}
	err = privs_check_pid_namespace();
	if (!err)
		err = check_identity(c);
	if (err)
		return err;
	c->signer = mcpt_signer_load(c->opts.key_path, err_msg, sizeof(err_msg));
	if (!c->signer) {
		p_err("%s", err_msg);
		return -EPERM;
	}
	err = session_init(&c->session, &c->opts);
	if (err) {
		p_err("failed to set up signal handling: %s", strerror(-err));
		return err;
	}
	err = open_output(c);
	if (!err)
		err = open_control(c);
	if (err)
		return err;
	c->bpf = loader__new(&lo);
	if (!c->bpf)
		return -errno;
	c->session.bpf = c->bpf;
	if (!c->opts.keep_server) { /* kill: the default for a launched server */
		err = guardian_start(&c->guard, c->bpf, c->signer, c->cred.uid);
		if (err) {
			p_err("failed to start the guardian process: %s", strerror(-err));
			return err;
		}
	}
	err = stop_requested(c);
	if (!err)
		log_share_stderr(); /* the server's too from here (an attached one's may be) */
	if (!err)
		err = c->opts.attach_pid ? attach_server(c) : launch_server(c);
	if (!err)
		err = sandbox_enter(c->cred.uid);
	return err;
}

/* setup_failed: no trace is left to record in (the file is removed), so a launched server
 * must not run on unseen. */
static void teardown(struct collector *c, bool setup_failed)
{
	struct launch *srv = &c->session.server;

	if (setup_failed) {
		output_discard(&c->out);
		if (!c->opts.attach_pid && srv->pid > 0 && !c->session.server_done)
			kill(srv->pid, SIGKILL);
		guardian_abandon(&c->guard); /* it kills what the server may have started */
	} else {
		guardian_release(&c->guard);
	}
	mcpt_writer__free(c->writer);
	header_free(c->header);
	session_fini(&c->session);
	control__free(c->control);
	loader__free(c->bpf);
	output_close(&c->out);
	mcpt_signer_free(c->signer);
	launch_cred_fini(&c->cred);
	if (c->target_pidfd >= 0)
		close(c->target_pidfd);
}

/* --help or --version was printed: exit 0 only once it reached standard output; a full disk or
 * a closed descriptor is one line and exit 2, as any other failure. */
static int printed(void)
{
	int saved = errno; /* a failed write's, when the stream already has its error flag */
	int err = fflush(stdout) ? errno : ferror(stdout) ? (saved ?: EIO) : 0;

	if (!err)
		return EXIT_SUCCESS;
	p_err("failed to write the output: %s", strerror(err));
	return EXIT_SETUP;
}

int main(int argc, char **argv)
{
	struct collector c;
	bool failed;
	int rc;

	memset(&c, 0, sizeof(c));
	output_init(&c.out);
	c.session.server.pid = -1;
	c.guard.pid = c.guard.fd = -1;
	c.target_pidfd = -1;
	c.session.sigfd = c.session.epfd = -1;
	c.session.server.pidfd = c.session.server.gate = c.session.server.status = -1;
	rc = options_parse(&c.opts, argc, argv);
	if (rc)
		return rc > 0 ? printed() : EXIT_SETUP;
	log_set_level(c.opts.verbosity < 0 ? LOG_ERROR : (enum log_level)(LOG_WARN + c.opts.verbosity));
	log_route_libbpf();
	failed = setup(&c) != 0;
	rc = failed ? EXIT_SETUP : session_run(&c.session);
	teardown(&c, failed);
	return rc;
}
