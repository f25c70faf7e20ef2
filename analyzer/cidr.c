/*
 * cidr.c - CIDR parsing and matching (see cidr.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cidr.h"
#include "strbuf.h"

static int parse_prefix(const char *s, unsigned max, unsigned *out)
{
	unsigned v = 0;

	if (!*s || strlen(s) > 3)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static bool host_bits_zero(const struct mw_ip *ip, unsigned prefix)
{
	unsigned bytes = ip->v6 ? 16 : 4;

	for (unsigned i = 0; i < bytes; i++) {
		unsigned keep = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
		uint8_t mask = (uint8_t)(keep ? 0xff << (8 - keep) : 0);

		if (ip->b[i] & (uint8_t)~mask)
			return false;
	}
	return true;
}

/* ::ffff:a.b.c.d/96+n is the IPv4 network a.b.c.d/n: the analyzer decodes an IPv4-mapped
 * address as IPv4 (sockaddr.c), so that is the only form in which it can match. A shorter
 * IPv6 prefix is left as IPv6 (see cidr.h). */
static void unmap_v4(struct cidr *c)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!c->net.v6 || c->prefix < 96 || memcmp(c->net.b, v4mapped, sizeof(v4mapped)) != 0)
		return;
	memmove(c->net.b, c->net.b + 12, 4);
	memset(c->net.b + 4, 0, sizeof(c->net.b) - 4);
	c->net.v6 = 0;
	c->prefix -= 96;
}

/* s for a message: escaped and cut short (strbuf_escape_short), in q. */
static const char *quoted(const char *s, struct strbuf *q)
{
	strbuf_escape_short(q, (const uint8_t *)s, strlen(s), ESC_QUOTE);
	return strbuf_str(q) ? strbuf_str(q) : "?";
}

int cidr_parse(struct cidr *out, const char *s, char *err, size_t errlen)
{
	struct strbuf q = STRBUF_INIT;
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned max;

	memset(out, 0, sizeof(*out));
	if (alen == 0 || alen >= sizeof(addr))
		goto bad_addr;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, out->net.b) == 1) {
		max = 32;
	} else if (inet_pton(AF_INET6, addr, out->net.b) == 1) {
		out->net.v6 = 1;
		max = 128;
	} else {
		goto bad_addr;
	}
	out->prefix = max;
	if (slash && parse_prefix(slash + 1, max, &out->prefix)) {
		snprintf(err, errlen, "bad prefix length in \"%s\" (0..%u)", quoted(s, &q), max);
		goto bad;
	}
	if (!host_bits_zero(&out->net, out->prefix)) {
		snprintf(err, errlen, "\"%s\" has bits set beyond its /%u prefix", quoted(s, &q),
			 out->prefix);
		goto bad;
	}
	unmap_v4(out);
	return 0;
bad_addr:
	snprintf(err, errlen, "\"%s\" is not an IPv4 or IPv6 address or network", quoted(s, &q));
bad:
	strbuf_fini(&q);
	return -EINVAL;
}

bool cidr_match(const struct cidr *c, const struct mw_ip *ip)
{
	unsigned full = c->prefix / 8, rest = c->prefix % 8;

	if (c->net.v6 != ip->v6)
		return false;
	if (memcmp(c->net.b, ip->b, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		return (c->net.b[full] & mask) == (ip->b[full] & mask);
	}
	return true;
}
