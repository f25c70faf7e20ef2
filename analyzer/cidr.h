/*
 * cidr.h - IPv4 and IPv6 networks in CIDR notation, for the policy's addr conditions.
 *
 * "10.0.0.0/8", "2001:db8::/32", or a bare address ("169.254.169.254" = /32, "::1" = /128).
 * Bits beyond the prefix must be zero ("10.0.0.1/8" is refused: it is usually a typo). An IPv4
 * network never matches an IPv6 address and the reverse; IPv4-mapped IPv6 addresses reach the
 * matcher already decoded as IPv4 (sockaddr.h). So a mapped network with a prefix of 96 or more
 * is parsed as the IPv4 network it maps ("::ffff:10.1.2.4" = 10.1.2.4/32, "::ffff:0:0/96" =
 * 0.0.0.0/0, "::ffff:10.0.0.0/104" = 10.0.0.0/8). A shorter IPv6 network ("::/0", "::/80")
 * stays IPv6 and matches IPv6 addresses only, never a mapped one: write 0.0.0.0/0 (or
 * "::ffff:0:0/96") beside it to cover IPv4 as well.
 */
#ifndef MW_CIDR_H
#define MW_CIDR_H

#include <stdbool.h>
#include <stddef.h>

#include "sockaddr.h"

struct cidr {
	struct mw_ip net;
	unsigned prefix; /* 0..32 or 0..128 */
};

/* Parses s (NUL-terminated). Returns 0, or -EINVAL with a reason in err. */
int cidr_parse(struct cidr *out, const char *s, char *err, size_t errlen);

bool cidr_match(const struct cidr *c, const struct mw_ip *ip);

#endif /* MW_CIDR_H */
