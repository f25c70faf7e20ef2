/*
 * check_cidr.c - CIDR parsing (accepted forms, every refusal with its reason) and matching
 * (prefix boundaries, /0, IPv4 never matching IPv6 and the reverse, IPv4-mapped networks
 * matching as the IPv4 ones they map, as the analyzer decodes mapped addresses).
 */
#include <arpa/inet.h>
#include <check.h>
#include <string.h>

#include "cidr.h"

static struct mw_ip ip(const char *s)
{
	struct mw_ip a = {0};

	if (inet_pton(AF_INET, s, a.b) != 1) {
		ck_assert_int_eq(inet_pton(AF_INET6, s, a.b), 1);
		a.v6 = 1;
	}
	return a;
}

static bool in(const char *net, const char *addr)
{
	struct cidr c;
	char err[128];
	struct mw_ip a = ip(addr);

	ck_assert_msg(cidr_parse(&c, net, err, sizeof(err)) == 0, "%s: %s", net, err);
	return cidr_match(&c, &a);
}

START_TEST(match_v4)
{
	ck_assert(in("127.0.0.0/8", "127.0.0.1"));
	ck_assert(in("127.0.0.0/8", "127.255.255.255"));
	ck_assert(!in("127.0.0.0/8", "128.0.0.1"));
	ck_assert(in("169.254.169.254", "169.254.169.254"));
	ck_assert(!in("169.254.169.254", "169.254.169.253"));
	ck_assert(in("10.0.0.0/9", "10.127.0.1"));
	ck_assert(!in("10.0.0.0/9", "10.128.0.1"));
	ck_assert(in("0.0.0.0/0", "8.8.8.8"));
	ck_assert(!in("0.0.0.0/0", "::1"));
}
END_TEST

START_TEST(match_v6)
{
	ck_assert(in("::1/128", "::1"));
	ck_assert(in("::1", "::1"));
	ck_assert(!in("::1", "::2"));
	ck_assert(in("fe80::/10", "febf::1"));
	ck_assert(!in("fe80::/10", "fec0::1"));
	ck_assert(in("::/0", "2001:db8::1"));
	ck_assert(!in("::/0", "1.2.3.4"));
	ck_assert(in("fd00:ec2::254", "fd00:ec2::254"));
}
END_TEST

/* The analyzer hands the matcher a mapped address as IPv4, so ip("10.1.2.4") is what a
 * connect to ::ffff:10.1.2.4 is matched as. */
START_TEST(match_mapped)
{
	struct cidr c;
	char err[128];

	/* a mapped host is the IPv4 host */
	ck_assert_int_eq(cidr_parse(&c, "::ffff:10.1.2.4", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.net.v6, 0);
	ck_assert_uint_eq(c.prefix, 32);
	ck_assert(in("::ffff:10.1.2.4", "10.1.2.4"));
	ck_assert(in("::ffff:10.1.2.4/128", "10.1.2.4"));
	ck_assert(!in("::ffff:10.1.2.4", "10.1.2.5"));
	ck_assert(!in("::ffff:10.1.2.4", "::1"));
	/* the whole mapped range is every IPv4 address and no IPv6 one */
	ck_assert(in("::ffff:0:0/96", "10.1.2.4"));
	ck_assert(in("::ffff:0.0.0.0/96", "255.255.255.255"));
	ck_assert(!in("::ffff:0:0/96", "::1"));
	ck_assert(!in("::ffff:0:0/96", "2001:db8::1"));
	/* a mapped /120 is the IPv4 /24 */
	ck_assert_int_eq(cidr_parse(&c, "::ffff:10.1.2.0/120", err, sizeof(err)), 0);
	ck_assert_uint_eq(c.prefix, 24);
	ck_assert(in("::ffff:10.1.2.0/120", "10.1.2.255"));
	ck_assert(!in("::ffff:10.1.2.0/120", "10.1.3.0"));
	ck_assert(in("::ffff:10.0.0.0/104", "10.200.0.1"));
	ck_assert(!in("::ffff:10.0.0.0/104", "11.0.0.1"));
	/* mixed and hex spellings of the same address */
	ck_assert(in("0:0:0:0:0:ffff:10.1.2.4", "10.1.2.4"));
	ck_assert(in("::FFFF:a01:204", "10.1.2.4"));
	ck_assert(in("::ffff:a01:200/120", "10.1.2.9"));
	/* shorter IPv6 networks stay IPv6: a mapped address is IPv4 to the analyzer */
	ck_assert(!in("::/0", "10.1.2.4"));
	ck_assert(!in("::/80", "10.1.2.4"));
	ck_assert(in("::/80", "::1"));
	/* host bits are checked against the prefix as written */
	ck_assert_int_ne(cidr_parse(&c, "::ffff:10.1.2.4/120", err, sizeof(err)), 0);
	ck_assert_str_eq(err, "\"::ffff:10.1.2.4/120\" has bits set beyond its /120 prefix");
}
END_TEST

static const char *bad(const char *s)
{
	static char err[128];
	struct cidr c;

	ck_assert_msg(cidr_parse(&c, s, err, sizeof(err)) != 0, "%s should be refused", s);
	return err;
}

START_TEST(errors)
{
	ck_assert_str_eq(bad("10.0.0.1/8"), "\"10.0.0.1/8\" has bits set beyond its /8 prefix");
	ck_assert_str_eq(bad("10.0.0.0/33"), "bad prefix length in \"10.0.0.0/33\" (0..32)");
	ck_assert_str_eq(bad("::/129"), "bad prefix length in \"::/129\" (0..128)");
	ck_assert_str_eq(bad("10.0.0.0/"), "bad prefix length in \"10.0.0.0/\" (0..32)");
	ck_assert_str_eq(bad("10.0.0.0/-1"), "bad prefix length in \"10.0.0.0/-1\" (0..32)");
	ck_assert_str_eq(bad("10.0.0.0/8x"), "bad prefix length in \"10.0.0.0/8x\" (0..32)");
	ck_assert_str_eq(bad("10.0.0.0/0008"), "bad prefix length in \"10.0.0.0/0008\" (0..32)");
	ck_assert_str_eq(bad("10.0.0"), "\"10.0.0\" is not an IPv4 or IPv6 address or network");
	ck_assert_str_eq(bad("localhost"),
			 "\"localhost\" is not an IPv4 or IPv6 address or network");
	ck_assert_str_eq(bad(""), "\"\" is not an IPv4 or IPv6 address or network");
	ck_assert_str_eq(bad("/8"), "\"/8\" is not an IPv4 or IPv6 address or network");
	ck_assert_str_eq(bad("fe80::1/10"), "\"fe80::1/10\" has bits set beyond its /10 prefix");
}
END_TEST

Suite *cidr_suite(void);

Suite *cidr_suite(void)
{
	Suite *s = suite_create("cidr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, match_v4);
	tcase_add_test(tc, match_v6);
	tcase_add_test(tc, match_mapped);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}
