/*
 * synth_trace.h - small signed traces for the analyzer's tests, written with the real trace
 * library (mcpt_writer) and a test key made with mcpt_key_generate in a temporary directory.
 * A fixed trace id and a fake clock make every trace byte-identical run after run.
 *
 * The server of every trace: pid 100 (pstart 1000), /usr/bin/node "node" "server.js", uid 1000,
 * user "u", home /home/u, workspace /work, tmp /tmp.
 */
#ifndef MW_SYNTH_TRACE_H
#define MW_SYNTH_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "mcpt.h"

#define SYNTH_PID    100
#define SYNTH_PSTART 1000

struct synth {
	char dir[64];
	char key[96], pub[96], path[96];
	struct mcpt_signer *signer;
	struct mcpt_writer *w;
	int fd;
	uint64_t seq, ts;
	/* When set, the next event is packed, handed to it to change its bytes in place, and
	 * appended as they are (hashed and signed like any record); then cleared. */
	void (*bend)(uint8_t *body, size_t len);
};

/* Creates the directory and key pair (once per struct) and starts the trace dir/name. */
void synth_begin(struct synth *s, const char *name);
/* Appends an event prepared by the caller; seq, ts, uid/gid are filled when 0. */
void synth_event(struct synth *s, Mcpt__Event *e);
void synth_exec(struct synth *s, uint32_t pid, uint64_t pstart, const char *path, const char *argv,
		size_t argv_len);
void synth_fork(struct synth *s, uint32_t pid, uint64_t pstart, uint32_t child, uint64_t cpstart);
void synth_open(struct synth *s, uint32_t pid, uint64_t pstart, const char *path, const char *abs,
		int64_t flags, int64_t ret);
void synth_connect(struct synth *s, uint32_t pid, uint64_t pstart, const uint8_t *sa, size_t len,
		   int64_t ret, uint32_t flags);
void synth_exit(struct synth *s, uint32_t pid, uint64_t pstart, int64_t status);
/* A StdioFrame: read = true for what the server read (client to server); at offset. */
void synth_stdio(struct synth *s, int read, uint64_t offset, const char *data, uint64_t ts);
/* A raw control line, as the collector stores it. */
void synth_mark(struct synth *s, const char *raw, uint64_t ts);
/* Sets the clock of the next records (0 keeps counting). */
void synth_at(struct synth *s, uint64_t ts);
/* Writes the FINAL seal and closes the file. */
void synth_finish(struct synth *s);
/* Removes the files and the directory. */
void synth_cleanup(struct synth *s);

/* Reads a whole file (NUL-terminated); *len gets its size. Aborts the test on error. */
char *synth_slurp(const char *path, size_t *len);
void synth_spew(const char *path, const void *buf, size_t len);

#endif /* MW_SYNTH_TRACE_H */
