/*
 * output.h - opening the trace's destination: a new file (never an existing one: the
 * collector does not clobber evidence), an existing FIFO, or an inherited descriptor.
 */
#ifndef MW_COLLECTOR_OUTPUT_H
#define MW_COLLECTOR_OUTPUT_H

#include <stdbool.h>
#include <sys/types.h>

/* Opens path for writing the trace. A new regular file is created 0640; chown_root: owned by
 * root and by group gid (so the invoking user can analyze it), else left to its creator (the
 * sudo invoker, whose filesystem rights the caller has taken). *is_file says whether seals
 * should be fdatasync'd. Returns the fd or -errno with one line logged. */
int output_open(const char *path, gid_t gid, bool chown_root, bool *is_file);
/* Validates an inherited fd and marks it close-on-exec. Returns fd or -errno. */
int output_adopt(int fd, bool *is_file);

#endif
