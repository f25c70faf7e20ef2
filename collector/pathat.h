/*
 * pathat.h - a path given on the command line, split once into its directory (opened, O_PATH)
 * and the last component, so that every later step (stat, create, open, remove) names the same
 * directory: a symbolic link swapped into the path meanwhile by whoever may write to a parent
 * cannot send one step elsewhere than the others.
 */
#ifndef MW_COLLECTOR_PATHAT_H
#define MW_COLLECTOR_PATHAT_H

/* Opens the directory part of path (".", "/" or what precedes the last '/') with the current
 * filesystem rights into *dirfd and returns its last component in *name (malloc'd). 0, or
 * -errno with *dirfd -1 and *name NULL: -EISDIR for a path ending in '/'. */
int pathat_split(const char *path, int *dirfd, char **name);

#endif
