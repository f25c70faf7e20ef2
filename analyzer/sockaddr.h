/*
 * sockaddr.h - decoding of the socket addresses recorded in a trace (connect's sockaddr as the
 * process passed it), without trusting any length: neither the bytes recorded nor the addrlen
 * the process claimed.
 *
 * The recorded bytes are those of a struct sockaddr in the traced machine's layout (family in
 * host order, little-endian on every architecture the collector supports; port and address in
 * network order). IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are decoded as IPv4, so that
 * a policy written for IPv4 also catches them.
 */
#ifndef MW_SOCKADDR_H
#define MW_SOCKADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

#define MW_UNIX_PATH_MAX 108

enum sa_kind {
	SA_NONE = 0, /* nothing recorded, or too short to hold a family */
	SA_INET,     /* IPv4 (also IPv4-mapped IPv6) */
	SA_INET6,
	SA_UNIX,
	SA_UNSPEC, /* AF_UNSPEC: dissolves a datagram association */
	SA_OTHER,  /* a family this decoder does not know; family holds its number */
	SA_SHORT,  /* a known family with too few bytes for its address */
};

struct mw_ip {
	uint8_t v6; /* 0: the first 4 bytes hold IPv4; 1: 16 bytes of IPv6 */
	uint8_t b[16];
};

struct mw_sockaddr {
	enum sa_kind kind;
	uint16_t family; /* the raw family number, for SA_OTHER / SA_SHORT */
	struct mw_ip ip;
	uint16_t port;	   /* host order */
	uint32_t scope_id; /* IPv6 */
	bool mapped;	   /* was IPv4-mapped IPv6 */
	/* SA_UNIX: the path (up to its first NUL) or, when abstract, the name after the leading
	 * NUL (which may itself hold NULs). unnamed = no path at all. */
	uint8_t unix_path[MW_UNIX_PATH_MAX];
	size_t unix_len;
	bool abstract;
	bool unnamed;
};

/* Decodes data[0..len) as a sockaddr; addrlen is the length the process passed (only bytes
 * below both limits are used; addrlen < 0 means unknown). Never fails: out->kind says what was
 * found. */
void sockaddr_decode(struct mw_sockaddr *out, const uint8_t *data, size_t len, int64_t addrlen);

/* Appends a readable form: "1.2.3.4:80", "[2001:db8::1]:443", "[fe80::1%2]:22",
 * "unix:/run/x.sock", "unix:@name" (abstract, escaped), "unix:(unnamed)", "unspec",
 * "af=17", "af=2(short)". */
void sockaddr_format(struct strbuf *sb, const struct mw_sockaddr *sa);

/* Appends the address alone ("1.2.3.4", "2001:db8::1"), for SA_INET/SA_INET6. */
void sockaddr_format_ip(struct strbuf *sb, const struct mw_ip *ip);

/* "inet", "inet6", "unix", "unspec", "other" ... for a kind. */
const char *sockaddr_kind_name(enum sa_kind k);

#endif /* MW_SOCKADDR_H */
