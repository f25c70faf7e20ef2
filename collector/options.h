/*
 * options.h - the collector's command line (DESIGN.md section 3), parsed into one struct.
 */
#ifndef MW_COLLECTOR_OPTIONS_H
#define MW_COLLECTOR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define MW_DEFAULT_KEY "/etc/mcpwitness/signing.key"

struct options {
	const char *output;   /* trace file or FIFO; NULL when output_fd is used */
	int output_fd;	      /* inherited fd to write to, -1 = none */
	const char *key_path; /* Ed25519 signing key */
	const char *user;     /* run COMMAND as this user (name or uid) */
	bool allow_root;      /* permit running COMMAND as root */
	uint64_t linger_ms;   /* keep recording this long after the server exits while children live */
	bool keep_server;     /* --on-collector-exit keep: leave the server running if we fail */
	bool on_exit_given;   /* --on-collector-exit was given (else the mode's default) */
	bool keep_leftovers;  /* --after-linger keep: leave processes alive after --linger */
	bool after_given;     /* --after-linger was given (else the mode's default) */
	pid_t attach_pid;     /* --pid: record this running process instead of launching one;
			       * with --pgid, the member watched for the end (see attach.h) */
	pid_t attach_pgid;    /* --pgid: record every process of this process group */
	uint32_t ringbuf_mib; /* ring buffer size */
	const char *control;  /* --control FIFO for explicit marks */
	int control_fd;	      /* --control-fd N, -1 = none */
	bool stdio_off;	      /* --stdio off: do not capture the MCP channel */
	uint32_t stdio_head;  /* --stdio head:N: keep at most N bytes per read/write; 0 = all */
	char stdio_spec[32];  /* the --stdio value as recorded in the header */
	int verbosity;	      /* -1 quiet, 0 warnings, 1 info, 2 debug, 3 libbpf debug */
	char **command;	      /* COMMAND [ARG...], NULL-terminated; NULL with --pid/--pgid */
};

/* Parses argv into opts. Returns 0 to run, 1 when --help or --version was printed (main.c
 * exits 0 once it is known to be written out, else 2), or -EINVAL after printing a one-line
 * usage error (exit 2). */
int options_parse(struct options *opts, int argc, char **argv);

#endif
