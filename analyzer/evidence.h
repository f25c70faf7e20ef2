/*
 * evidence.h - does an event name something a call's arguments name?
 *
 * The items of an event are its paths (resolved, as passed, opened, the second path of a
 * rename or link), its socket address (the IP and port of a connect, bind, sendto...) and, for
 * an exec, its argv words. An argument string names an item when one contains the other at
 * word or path-component boundaries:
 *   path  "/work/a.txt" names /work/a.txt, /work/a.txt.tmp-123 and /work/a.txt/x, not
 *         /work/a.txt2; "a.txt" names /work/a.txt; "cat /etc/passwd" names /etc/passwd
 *   addr  "http://127.0.0.1:8080/x" names 127.0.0.1:8080 (the IP must appear; the port adds)
 *   argv  "id -un; uname -s" names the word "id -un; uname -s" of sh -c, and the word
 *         "uname" of uname's exec names it too (words of 3 bytes or more)
 * The score grows with the length of the matched text (the longer, the more specific), and an
 * argument equal to the item beats any containment. A call's score is its best over its
 * argument strings and the event's items; the one call with the best score is the evidence.
 */
#ifndef MW_EVIDENCE_H
#define MW_EVIDENCE_H

#include <stddef.h>

#include "calls.h"
#include "event.h"

/* The score of call c for event v (0: its arguments do not name the event); *matched is set
 * to the argument string that matched best (owned by c). */
size_t evidence_score(const struct call *c, const struct ev_view *v, const char **matched);

/* The same against an argv (NUL-separated), for a process's exec known from pass 1. */
size_t evidence_score_argv(const struct call *c, const uint8_t *argv, size_t len,
			   const char **matched);

#endif /* MW_EVIDENCE_H */
