/*
 * output.h - opening the trace's destination: a new file (never an existing one: the
 * collector does not clobber evidence), an existing FIFO, or an inherited descriptor.
 *
 * A new file is owned by root, group gid (the server user's), mode 0640: the server's user can
 * read its trace (through sudo it is the invoking user, who must verify and analyze it) but
 * never write, truncate or chmod it. Through sudo the directory is resolved, and the right to
 * create a file in it checked, with the invoker's filesystem rights (invoker.h); root then
 * creates the file there, so it is never for a moment owned by, or open to, the server's uid.
 */
#ifndef MW_COLLECTOR_OUTPUT_H
#define MW_COLLECTOR_OUTPUT_H

#include <stdbool.h>
#include <sys/types.h>

struct invoker;

struct output {
	int fd;		  /* the trace's fd; -1 until opened */
	bool is_file;	  /* a regular file: seals are fdatasync'd */
	int dirfd;	  /* O_PATH fd of the directory of a file we created, else -1 */
	char *name;	  /* that file's name in dirfd (malloc'd), else NULL */
	const char *path; /* -o as given, for messages */
};

/* Sets o to nothing opened; output_close accepts it. */
void output_init(struct output *o);

/* Opens path for writing the trace: creates a new regular file (root:gid, 0640; see above) or
 * opens an existing FIFO. A FIFO's open waits for a reader; INT, TERM, HUP or QUIT pending on
 * the (blocking) sigfd ends that wait with -EINTR. 0 or -errno with one line logged. */
int output_open(struct output *o, const char *path, const struct invoker *inv, gid_t gid,
		int sigfd);

/* Adopts an inherited fd (checked at option time) and marks it close-on-exec. 0 or -errno. */
int output_adopt(struct output *o, int fd);

/* Setup failed: removes the file output_open created, if its name still refers to it, so the
 * next run can use the same name. Never removes a FIFO, an adopted fd's file or a file that
 * existed before. */
void output_discard(struct output *o);

void output_close(struct output *o);

#endif
