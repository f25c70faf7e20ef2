/*
 * glob.h - glob patterns over byte strings, as the policy language uses them for paths,
 * executables and argv.
 *
 * Syntax (documented for users in policies/README.md):
 *   *        any run of bytes, except '/' in path mode
 *   **       any run of bytes, '/' included. As a whole component (at the start of the
 *            pattern or after a '/', and followed by '/'), the "**" and its '/' also match
 *            zero directories: "**" "/.ssh/" "**" matches "/home/u/.ssh/id" and ".ssh/id"
 *   ?        one byte, except '/' in path mode
 *   [...]    one byte of a set: "[abc]", ranges "[a-z]", negation "[!...]" or "[^...]", a ']'
 *            first is literal; never matches '/' in path mode
 *   \c       the byte c literally; \xHH (two hex digits) the byte 0xHH, so that a pattern can
 *            name a byte that is not valid UTF-8 (a YAML file cannot hold one)
 *   ${name}  the value of a variable, inserted literally (its bytes are never wildcards); when
 *            the value ends in '/' and the pattern goes on with '/', one of them is dropped
 * In path mode a pattern that does not end in '/' matches a subject as if its trailing slashes
 * were not there: "/w/sub/" is matched as "/w/sub", so "/w/sub/" "**" does not match it, as it
 * does not match "/w/sub"; "/" stays "/". A pattern that ends in '/' matches byte for byte.
 * Matching is anchored at both ends and byte-exact (no case folding, no UTF-8 decoding), and
 * runs in O(len(subject) * len(pattern)) time without backtracking, so no pattern or hostile
 * path can make it explode.
 */
#ifndef MW_GLOB_H
#define MW_GLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GLOB_PATH	1u   /* '/' is special (paths); otherwise every wildcard crosses '/' */
#define GLOB_MAX_TOKENS 4096 /* longer patterns (after expansion) are refused */

struct glob;

/* Resolves ${name}: returns 0 and sets *val and *vlen, -ENOENT for an unknown variable, -ENODATA
 * for a known variable without a value (e.g. a home the trace does not record). */
typedef int (*glob_var_fn)(void *ctx, const char *name, const char **val, size_t *vlen);

/* Compiles pat[0..len). var may be NULL (then "${" is an error). Returns NULL with errno
 * EINVAL (syntax), ENOENT/ENODATA (from var) or ENOMEM, and a one-line reason in err. */
struct glob *glob_compile(const char *pat, size_t len, unsigned flags, glob_var_fn var, void *ctx,
			  char *err, size_t errlen);

/* True when the whole of s[0..n) matches. */
bool glob_match(const struct glob *g, const uint8_t *s, size_t n);

/* True when the pattern has no wildcard (it matches exactly one string). */
bool glob_is_literal(const struct glob *g);

void glob_free(struct glob *g);

#endif /* MW_GLOB_H */
