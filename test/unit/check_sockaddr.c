/*
 * check_sockaddr.c - sockaddr decoding with hostile lengths: empty, one byte, each family cut
 * one byte short, addrlen smaller and larger than the bytes recorded, unix paths with and
 * without their NUL, abstract names holding NULs, IPv4-mapped IPv6 shown as IPv4, unknown
 * families; and the printed forms.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sockaddr.h"

static const char *fmt(const struct mw_sockaddr *sa)
{
	static char out[512];
	struct strbuf sb = STRBUF_INIT;

	sockaddr_format(&sb, sa);
	ck_assert_ptr_nonnull(strbuf_str(&sb));
	snprintf(out, sizeof(out), "%s", strbuf_str(&sb));
	strbuf_fini(&sb);
	return out;
}

static const uint8_t in4[16] = {2, 0, 0x1f, 0x90, 127, 0, 0, 1};
static const uint8_t in6[28] = {10, 0, 0x01, 0xbb, 0, 0, 0, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0,
				0,  0, 0,    0,	   0, 0, 0, 0, 0,    1,	   2,	 0,    0, 0};
static const uint8_t mapped[28] = {10, 0, 0, 80, 0,    0,    0,	  0,   0,   0,	 0, 0, 0, 0,
				   0,  0, 0, 0,	 0xff, 0xff, 169, 254, 169, 254, 0, 0, 0, 0};

START_TEST(inet)
{
	struct mw_sockaddr sa;

	sockaddr_decode(&sa, in4, sizeof(in4), 16);
	ck_assert_int_eq(sa.kind, SA_INET);
	ck_assert_int_eq(sa.port, 8080);
	ck_assert_str_eq(fmt(&sa), "127.0.0.1:8080");
	sockaddr_decode(&sa, in4, 8, -1); /* exactly family + port + address */
	ck_assert_int_eq(sa.kind, SA_INET);
	sockaddr_decode(&sa, in4, 7, -1);
	ck_assert_int_eq(sa.kind, SA_SHORT);
	ck_assert_str_eq(fmt(&sa), "af=2(short)");
	sockaddr_decode(&sa, in4, sizeof(in4), 4); /* addrlen below the bytes: trust the least */
	ck_assert_int_eq(sa.kind, SA_SHORT);
	sockaddr_decode(&sa, in4, sizeof(in4), 1 << 30); /* addrlen above: bytes limit */
	ck_assert_int_eq(sa.kind, SA_INET);
}
END_TEST

START_TEST(inet6)
{
	struct mw_sockaddr sa;

	sockaddr_decode(&sa, in6, sizeof(in6), 28);
	ck_assert_int_eq(sa.kind, SA_INET6);
	ck_assert_int_eq(sa.port, 443);
	ck_assert_uint_eq(sa.scope_id, 2);
	ck_assert_str_eq(fmt(&sa), "[2001:db8::1%2]:443");
	sockaddr_decode(&sa, in6, 24, -1); /* no scope id */
	ck_assert_int_eq(sa.kind, SA_INET6);
	ck_assert_uint_eq(sa.scope_id, 0);
	ck_assert_str_eq(fmt(&sa), "[2001:db8::1]:443");
	sockaddr_decode(&sa, in6, 23, -1);
	ck_assert_int_eq(sa.kind, SA_SHORT);
	sockaddr_decode(&sa, mapped, sizeof(mapped), 28);
	ck_assert_int_eq(sa.kind, SA_INET);
	ck_assert(sa.mapped);
	ck_assert_str_eq(fmt(&sa), "169.254.169.254:80");
}
END_TEST

START_TEST(unix_paths)
{
	struct mw_sockaddr sa;
	uint8_t buf[200] = {1, 0};

	sockaddr_decode(&sa, buf, 2, 2);
	ck_assert_int_eq(sa.kind, SA_UNIX);
	ck_assert(sa.unnamed);
	ck_assert_str_eq(fmt(&sa), "unix:(unnamed)");

	memcpy(buf + 2, "/run/x.sock\0garbage", 19);
	sockaddr_decode(&sa, buf, 21, 110);
	ck_assert_str_eq(fmt(&sa), "unix:/run/x.sock");

	memcpy(buf + 2, "/no/nul", 7); /* no NUL within the length */
	sockaddr_decode(&sa, buf, 9, -1);
	ck_assert_str_eq(fmt(&sa), "unix:/no/nul");

	memset(buf + 2, 'a', sizeof(buf) - 2); /* longer than sun_path: cut at 108 */
	sockaddr_decode(&sa, buf, sizeof(buf), -1);
	ck_assert_uint_eq(sa.unix_len, MW_UNIX_PATH_MAX);

	memcpy(buf + 2, "\0abs\0tract\n", 11); /* abstract: NULs are part of the name */
	sockaddr_decode(&sa, buf, 13, 13);
	ck_assert(sa.abstract);
	ck_assert_uint_eq(sa.unix_len, 10);
	ck_assert_str_eq(fmt(&sa), "unix:@abs\\x00tract\\n");
}
END_TEST

START_TEST(degenerate)
{
	struct mw_sockaddr sa;
	const uint8_t unspec[16] = {0, 0}, other[4] = {16, 0, 1, 2}, big[2] = {0xff, 0xff};

	sockaddr_decode(&sa, NULL, 0, -1);
	ck_assert_int_eq(sa.kind, SA_NONE);
	ck_assert_str_eq(fmt(&sa), "(none)");
	sockaddr_decode(&sa, in4, 1, -1);
	ck_assert_int_eq(sa.kind, SA_NONE);
	sockaddr_decode(&sa, in4, sizeof(in4), 0);
	ck_assert_int_eq(sa.kind, SA_NONE);
	sockaddr_decode(&sa, unspec, sizeof(unspec), 16);
	ck_assert_int_eq(sa.kind, SA_UNSPEC);
	ck_assert_str_eq(fmt(&sa), "unspec");
	sockaddr_decode(&sa, other, sizeof(other), -1);
	ck_assert_int_eq(sa.kind, SA_OTHER);
	ck_assert_str_eq(fmt(&sa), "af=16");
	sockaddr_decode(&sa, big, sizeof(big), -1);
	ck_assert_str_eq(fmt(&sa), "af=65535");
	ck_assert_str_eq(sockaddr_kind_name(SA_INET6), "inet6");
}
END_TEST

Suite *sockaddr_suite(void);

Suite *sockaddr_suite(void)
{
	Suite *s = suite_create("sockaddr");
	TCase *tc = tcase_create("core"), *lim = tcase_create("limits");

	tcase_add_test(tc, inet);
	tcase_add_test(tc, inet6);
	tcase_add_test(tc, unix_paths);
	tcase_add_test(lim, degenerate);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, lim);
	return s;
}
