/*
 * dns.c - the query name of a DNS message (see dns.h).
 */
#include <string.h>

#include "dns.h"

#define DNS_HDR	     12
#define DNS_QR	     0x80 /* in byte 2: a response */
#define DNS_OPCODE   0x78 /* in byte 2 */
#define DNS_LABEL    63
#define DNS_PTR_BITS 0xc0

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static char lower(uint8_t c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

/* The name at p[*off..n) as labels; advances *off past its terminating zero label. */
static bool read_name(const uint8_t *p, size_t n, size_t *off, struct dns_query *q)
{
	size_t i = *off, len = 0;

	for (;;) {
		uint8_t l;

		if (i >= n)
			return false;
		l = p[i++];
		if (l == 0)
			break;
		if ((l & DNS_PTR_BITS) || l > DNS_LABEL || l > n - i)
			return false; /* a pointer, a reserved label type, or cut short */
		if (len + (len ? 1 : 0) + l > DNS_NAME_MAX)
			return false;
		if (len)
			q->name[len++] = '.';
		for (uint8_t k = 0; k < l; k++)
			q->name[len++] = lower(p[i + k]);
		i += l;
	}
	q->name[len] = '\0';
	q->name_len = len;
	*off = i;
	return len > 0;
}

bool dns_decode_query(const uint8_t *p, size_t n, bool tcp, struct dns_query *q)
{
	size_t off;

	memset(q, 0, sizeof(*q));
	if (!p)
		return false;
	if (tcp) {
		if (n < 2)
			return false;
		p += 2;
		n -= 2;
	}
	if (n < DNS_HDR || (p[2] & DNS_QR) || (p[2] & DNS_OPCODE) || be16(p + 4) == 0)
		return false;
	off = DNS_HDR;
	if (!read_name(p, n, &off, q))
		return false;
	if (n - off >= 4) {
		q->qtype = be16(p + off);
		q->qclass = be16(p + off + 2);
	}
	return true;
}

const char *dns_type_name(uint16_t qtype)
{
	switch (qtype) {
	case 1:
		return "A";
	case 2:
		return "NS";
	case 5:
		return "CNAME";
	case 6:
		return "SOA";
	case 12:
		return "PTR";
	case 15:
		return "MX";
	case 16:
		return "TXT";
	case 28:
		return "AAAA";
	case 33:
		return "SRV";
	case 64:
		return "SVCB";
	case 65:
		return "HTTPS";
	case 255:
		return "ANY";
	default:
		return NULL;
	}
}
