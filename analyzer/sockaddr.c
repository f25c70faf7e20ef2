/*
 * sockaddr.c - struct sockaddr decoding and formatting (see sockaddr.h).
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "sockaddr.h"

/* Linux family numbers, fixed by the kernel ABI (the analyzer may run on another system). */
#define LX_AF_UNSPEC 0
#define LX_AF_UNIX   1
#define LX_AF_INET   2
#define LX_AF_INET6  10

static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static void decode_inet(struct mw_sockaddr *out, const uint8_t *d, size_t n)
{
	if (n < 8) {
		out->kind = SA_SHORT;
		return;
	}
	out->kind = SA_INET;
	out->port = (uint16_t)(d[2] << 8 | d[3]);
	memcpy(out->ip.b, d + 4, 4);
}

static void decode_inet6(struct mw_sockaddr *out, const uint8_t *d, size_t n)
{
	if (n < 24) {
		out->kind = SA_SHORT;
		return;
	}
	out->port = (uint16_t)(d[2] << 8 | d[3]);
	if (n >= 28)
		out->scope_id = (uint32_t)d[24] | (uint32_t)d[25] << 8 | (uint32_t)d[26] << 16 |
				(uint32_t)d[27] << 24;
	if (memcmp(d + 8, v4mapped, sizeof(v4mapped)) == 0) {
		out->kind = SA_INET;
		out->mapped = true;
		memcpy(out->ip.b, d + 20, 4);
		return;
	}
	out->kind = SA_INET6;
	out->ip.v6 = 1;
	memcpy(out->ip.b, d + 8, 16);
}

static void decode_unix(struct mw_sockaddr *out, const uint8_t *d, size_t n)
{
	size_t plen = n - 2;
	const uint8_t *p = d + 2, *nul;

	out->kind = SA_UNIX;
	if (plen > MW_UNIX_PATH_MAX)
		plen = MW_UNIX_PATH_MAX;
	if (plen == 0) {
		out->unnamed = true;
		return;
	}
	if (p[0] == '\0') {
		out->abstract = true;
		out->unix_len = plen - 1;
		memcpy(out->unix_path, p + 1, out->unix_len);
		return;
	}
	nul = memchr(p, '\0', plen);
	out->unix_len = nul ? (size_t)(nul - p) : plen;
	memcpy(out->unix_path, p, out->unix_len);
}

void sockaddr_decode(struct mw_sockaddr *out, const uint8_t *data, size_t len, int64_t addrlen)
{
	size_t n = len;

	memset(out, 0, sizeof(*out));
	if (addrlen >= 0 && (uint64_t)addrlen < n)
		n = (size_t)addrlen;
	if (!data || n < 2) {
		out->kind = SA_NONE;
		return;
	}
	out->family = (uint16_t)(data[0] | data[1] << 8);
	switch (out->family) {
	case LX_AF_INET:
		decode_inet(out, data, n);
		break;
	case LX_AF_INET6:
		decode_inet6(out, data, n);
		break;
	case LX_AF_UNIX:
		decode_unix(out, data, n);
		break;
	case LX_AF_UNSPEC:
		out->kind = SA_UNSPEC;
		break;
	default:
		out->kind = SA_OTHER;
		break;
	}
}

void sockaddr_format_ip(struct strbuf *sb, const struct mw_ip *ip)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(ip->v6 ? AF_INET6 : AF_INET, ip->b, buf, sizeof(buf)))
		strbuf_puts(sb, "?");
	else
		strbuf_puts(sb, buf);
}

void sockaddr_format(struct strbuf *sb, const struct mw_sockaddr *sa)
{
	switch (sa->kind) {
	case SA_INET:
		sockaddr_format_ip(sb, &sa->ip);
		strbuf_printf(sb, ":%u", sa->port);
		break;
	case SA_INET6:
		strbuf_putc(sb, '[');
		sockaddr_format_ip(sb, &sa->ip);
		if (sa->scope_id)
			strbuf_printf(sb, "%%%u", sa->scope_id);
		strbuf_printf(sb, "]:%u", sa->port);
		break;
	case SA_UNIX:
		strbuf_puts(sb, "unix:");
		if (sa->unnamed)
			strbuf_puts(sb, "(unnamed)");
		if (sa->abstract)
			strbuf_putc(sb, '@');
		strbuf_escape(sb, sa->unix_path, sa->unix_len, 0);
		break;
	case SA_UNSPEC:
		strbuf_puts(sb, "unspec");
		break;
	case SA_OTHER:
		strbuf_printf(sb, "af=%u", sa->family);
		break;
	case SA_SHORT:
		strbuf_printf(sb, "af=%u(short)", sa->family);
		break;
	case SA_NONE:
		strbuf_puts(sb, "(none)");
		break;
	}
}

const char *sockaddr_kind_name(enum sa_kind k)
{
	switch (k) {
	case SA_INET:
		return "inet";
	case SA_INET6:
		return "inet6";
	case SA_UNIX:
		return "unix";
	case SA_UNSPEC:
		return "unspec";
	case SA_OTHER:
		return "other";
	case SA_SHORT:
		return "short";
	case SA_NONE:
		break;
	}
	return "none";
}
