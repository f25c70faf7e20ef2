/*
 * guardian.h - the process that kills the recorded tree when the collector cannot (see
 * guardian.c).
 */
#ifndef MW_GUARDIAN_H
#define MW_GUARDIAN_H

#include <sys/types.h>

struct loader;
struct mcpt_signer;

struct guardian {
	pid_t pid; /* -1: none */
	int fd;	   /* the collector's end of its socket; -1: none */
};

/* Forks the guardian. In it: signer is wiped, every descriptor but the BPF links and stderr is
 * closed, and it enters the collector's sandbox (uid other than monitored, CAP_KILL only,
 * seccomp). Returns 0 or -errno (nothing started). */
int guardian_start(struct guardian *g, struct loader *l, struct mcpt_signer *signer,
		   uid_t monitored);
/* Tells the guardian the collector ends on its own terms (the tree is as the collector left
 * it) and waits for it to exit. Accepts a guardian never started. */
void guardian_release(struct guardian *g);
/* Lets the guardian go without a word: it kills the tree (a failed start). */
void guardian_abandon(struct guardian *g);

#endif
