/*
 * header.h - the trace Header's facts about the host, the kernel, the collector and the
 * monitored server at the start of recording (DESIGN.md section 4, TRACE-FORMAT.md 4.4).
 */
#ifndef MW_COLLECTOR_HEADER_H
#define MW_COLLECTOR_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "trace.pb-c.h"

struct launch_cred;

struct header_input {
	char **command;		       /* argv of COMMAND */
	const char *exe;	       /* launch: the file COMMAND's PATH search executed, or NULL */
	int exe_fd;		       /* launch: that file, opened through /proc/PID/exe once it
					* ran (-1: none); its bytes are the digest */
	pid_t pid;		       /* the server */
	const struct launch_cred *cred; /* who it runs as */
	const char *const *notes;      /* collector notes (disabled programs, ...) */
	size_t n_notes;
	const char *stdio_capture;     /* "full", "head:N", "off" */
	bool attached;		       /* --pid: facts come from /proc/PID, command is NULL */
	size_t ringbuf_bytes;
};

struct header_data; /* owns every buffer the Header points to */

/* Gathers the facts into a Header the writer can complete and write. NULL and errno. Facts the
 * host does not offer (no machine-id, no os-release) are left empty, not invented. */
struct header_data *header_build(const struct header_input *in);
/* The executable process pid runs, opened through /proc/PID/exe (non-blocking); -1 and errno
 * when the process is gone. */
int header_open_exe(pid_t pid);
Mcpt__Header *header_get(struct header_data *h);
void header_free(struct header_data *h);

/* A (realtime, boottime, monotonic) sample with NTP state, realtime read between two boottime
 * reads. */
void header_clock_sample(Mcpt__ClockSample *out);

#endif
