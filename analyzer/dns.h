/*
 * dns.h - the query name of a DNS message, read from the payload the collector keeps of a
 * datagram sent to port 53 (bpf/events.h: MW_S_PAYLOAD, at most MW_PAYLOAD_MAX bytes).
 *
 * The payload is hostile input: the decoder reads only the header and the first question,
 * never follows a compression pointer (a question's name has none in a real query), bounds
 * every label (63 bytes) and the name (253 bytes of text), and refuses anything else. The name
 * is returned lower-cased (DNS names compare without case), labels joined by '.', without the
 * root's trailing dot; bytes are kept as they are ('.' inside a label included): display code
 * escapes them.
 */
#ifndef MW_DNS_H
#define MW_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX 253

struct dns_query {
	char name[DNS_NAME_MAX + 1]; /* NUL-terminated; name_len bytes (may hold any byte) */
	size_t name_len;
	uint16_t qtype;	 /* 1 A, 28 AAAA, ... */
	uint16_t qclass; /* 1 IN */
};

/* Decodes the first question of a DNS query in p[0..n). tcp: the message starts with the
 * 2-byte length prefix of DNS over TCP. Returns true when a query with at least one question
 * and a well-formed name was found. Never reads past n. */
bool dns_decode_query(const uint8_t *p, size_t n, bool tcp, struct dns_query *q);

/* "A", "AAAA", "TXT"... or NULL for a type without a name here. */
const char *dns_type_name(uint16_t qtype);

#endif /* MW_DNS_H */
