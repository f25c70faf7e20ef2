/*
 * check_event_reuse.c - event_decode clears only the head of a view (struct ev_view): the
 * socket addresses and the DNS query keep what an earlier record left wherever their flag is
 * false. A view reused record after record must read exactly like a fresh one, through every
 * accessor (event_addr, event_peer, event_dns, event_differs), for every operation; and a
 * record without a DNS query or address never shows the previous record's.
 */
#include <check.h>
#include <string.h>

#include "event.h"
#include "events.h"

/* A query for Example.COM (A). */
static const uint8_t QUERY[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7,
				'E',  'x',  'a',  'm',	'p', 'l', 'e', 3, 'C', 'O', 'M', 0,
				0,    1,    0,	  1};
/* A query for other.org (AAAA). */
static const uint8_t QUERY2[] = {0x43, 0x21, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 5,
				 'o',  't',  'h',  'e',	 'r', 3, 'o', 'r', 'g', 0, 0, 28, 0, 1};
static const uint8_t TO53[16] = {2, 0, 0, 53, 127, 0, 0, 53};
static const uint8_t TO80[16] = {2, 0, 0, 80, 10, 1, 2, 3};
static const uint8_t PEER6[28] = {10, 0, 0, 53, 0, 0, 0, 0, 0x20, 0x01, 0x0d, 0xb8, [23] = 1};
static const uint8_t UNIXSA[12] = {1, 0, '/', 'r', 'u', 'n', '/', 's', 0};

static ProtobufCBinaryData bin(const void *p, size_t n)
{
	return (ProtobufCBinaryData){.len = n, .data = (uint8_t *)p};
}

/* The record of variant k (0..N_VARIANTS-1) for operation op. */
#define N_VARIANTS 6
static void craft(Mcpt__Event *e, int64_t *args, int op, int k)
{
	static const int64_t a[6] = {7, 33, 2, 2, 16, 0};

	*e = (Mcpt__Event)MCPT__EVENT__INIT;
	memcpy(args, a, sizeof(a));
	e->op = (Mcpt__Op)op;
	e->pid = 40, e->tid = 41, e->seq = (uint64_t)k, e->ret = k == 3 ? -2 : 0;
	e->args = args, e->n_args = 6;
	switch (k) {
	case 0: /* a DNS datagram: address given, a peer in IPv6 */
		e->data = bin(TO53, sizeof(TO53));
		e->data2 = bin(PEER6, sizeof(PEER6));
		e->payload = bin(QUERY, sizeof(QUERY));
		break;
	case 1: /* a payload to port 80: no DNS */
		e->data = bin(TO80, sizeof(TO80));
		e->payload = bin(QUERY2, sizeof(QUERY2));
		break;
	case 2: /* a connected socket: only the peer, another query */
		e->data2 = bin(TO53, sizeof(TO53));
		e->payload = bin(QUERY2, sizeof(QUERY2));
		args[2] = 1; /* a stream: read as DNS over TCP, with its length prefix */
		break;
	case 3: /* paths only, the named one not what was opened; a failure */
		e->path = bin("lib/x", 5);
		e->abs_path = bin("/lib/x", 6);
		e->opened_path = bin("/usr/lib/x", 10);
		break;
	case 4: /* a unix socket, and paths that differ only lexically */
		e->data = bin(UNIXSA, sizeof(UNIXSA));
		e->abs_path = bin("/a/./b", 6);
		e->opened_path = bin("/a/b", 4);
		e->flags = MW_F_THREAD;
		break;
	default: /* a hostile payload to port 53, arguments trimmed */
		e->data = bin(TO53, sizeof(TO53));
		e->payload = bin(QUERY, 14);
		e->n_args = 1;
		break;
	}
}

static void same_sockaddr(const struct mw_sockaddr *a, const struct mw_sockaddr *b)
{
	ck_assert((a == NULL) == (b == NULL));
	if (a)
		ck_assert_mem_eq(a, b, sizeof(*a));
}

/* fresh and reused, decoded from the same record, read alike. */
static void same_view(const struct ev_view *fresh, const struct ev_view *reused)
{
	struct ev_view x, y;
	const struct dns_query *qa = event_dns(fresh), *qb = event_dns(reused);

	ck_assert_str_eq(fresh->op_name, reused->op_name);
	memcpy(&x, fresh, offsetof(struct ev_view, unchecked));
	memcpy(&y, reused, offsetof(struct ev_view, unchecked));
	x.op_name = y.op_name = NULL; /* each may point into its own op_buf */
	/* a describe() reads its own view: the same function, each view its own context */
	ck_assert((fresh->describe_ctx == fresh) == (reused->describe_ctx == reused));
	if (fresh->describe)
		ck_assert_str_eq(fresh->describe(fresh->describe_ctx),
				 reused->describe(reused->describe_ctx));
	x.describe_ctx = y.describe_ctx = NULL;
	ck_assert_mem_eq(&x, &y, offsetof(struct ev_view, unchecked));
	same_sockaddr(event_addr(fresh), event_addr(reused));
	same_sockaddr(event_peer(fresh), event_peer(reused));
	ck_assert((qa == NULL) == (qb == NULL));
	if (qa)
		ck_assert_mem_eq(qa, qb, sizeof(*qa));
	ck_assert_int_eq(event_differs(fresh), event_differs(reused));
}

static void check_op(int op)
{
	Mcpt__Event prev, e;
	int64_t pargs[6], args[6];
	struct ev_view fresh, reused;

	for (int before = 0; before < N_VARIANTS; before++) {
		for (int k = 0; k < N_VARIANTS; k++) {
			/* the reused view: garbage, then a DNS send, then another record */
			memset(&reused, 0xa5, sizeof(reused));
			craft(&prev, pargs, MCPT__OP__OP_SENDTO, 0);
			event_decode(&reused, &prev);
			ck_assert(event_dns(&reused) && event_addr(&reused) && event_peer(&reused));
			craft(&prev, pargs, op, before);
			event_decode(&reused, &prev);
			craft(&e, args, op, k);
			event_decode(&reused, &e);
			memset(&fresh, 0, sizeof(fresh));
			event_decode(&fresh, &e);
			same_view(&fresh, &reused);
		}
	}
}

START_TEST(reused_view_reads_like_a_fresh_one)
{
	static const int other[] = {0, 169, 199, 1000, -1};

	for (size_t i = 0; event_op_name_at(i); i++)
		check_op(event_op_by_name(event_op_name_at(i)));
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		check_op(other[i]);
}
END_TEST

START_TEST(no_leftover_dns_or_address)
{
	Mcpt__Event e;
	int64_t args[6];
	struct ev_view v;

	memset(&v, 0xa5, sizeof(v));
	craft(&e, args, MCPT__OP__OP_SENDTO, 0);
	event_decode(&v, &e);
	ck_assert_str_eq(event_dns(&v)->name, "example.com");
	ck_assert_int_eq(event_addr(&v)->port, 53);
	ck_assert_int_eq(event_peer(&v)->kind, SA_INET6);

	craft(&e, args, MCPT__OP__OP_SENDTO, 1); /* to port 80: not a query */
	event_decode(&v, &e);
	ck_assert_ptr_null(event_dns(&v));
	ck_assert_ptr_null(event_peer(&v));
	ck_assert_int_eq(event_addr(&v)->port, 80);

	craft(&e, args, MCPT__OP__OP_SENDTO, 0);
	event_decode(&v, &e);
	craft(&e, args, MCPT__OP__OP_SENDTO, 5); /* cut short: the decoder refuses it */
	event_decode(&v, &e);
	ck_assert_ptr_null(event_dns(&v));

	craft(&e, args, MCPT__OP__OP_SENDMSG, 0);
	event_decode(&v, &e);
	craft(&e, args, MCPT__OP__OP_CONNECT, 2); /* no address given: only the peer */
	event_decode(&v, &e);
	ck_assert_ptr_null(event_addr(&v));
	ck_assert_ptr_null(event_dns(&v));
	ck_assert_int_eq(event_peer(&v)->kind, SA_INET);

	craft(&e, args, MCPT__OP__OP_SENDTO, 0);
	event_decode(&v, &e);
	craft(&e, args, MCPT__OP__OP_OPENAT, 0); /* an open carries no address, whatever DATA holds */
	event_decode(&v, &e);
	ck_assert_ptr_null(event_addr(&v));
	ck_assert_ptr_null(event_peer(&v));
	ck_assert_ptr_null(event_dns(&v));
	ck_assert(!v.has_addr && !v.has_peer && !v.has_dns);

	/* a view cleared whole (subjects the analyzer builds itself) has none either */
	memset(&v, 0, sizeof(v));
	ck_assert_ptr_null(event_addr(&v));
	ck_assert_ptr_null(event_peer(&v));
	ck_assert_ptr_null(event_dns(&v));
	ck_assert(!event_differs(&v));
}
END_TEST

START_TEST(differs_on_demand)
{
	Mcpt__Event e;
	int64_t args[6];
	struct ev_view v;
	const uint8_t other[16] = {2, 0, 0, 53, 127, 0, 0, 1};

	craft(&e, args, MCPT__OP__OP_OPENAT, 3); /* /lib/x opened as /usr/lib/x */
	event_decode(&v, &e);
	ck_assert(event_differs(&v));
	craft(&e, args, MCPT__OP__OP_OPENAT, 4); /* /a/./b is /a/b */
	event_decode(&v, &e);
	ck_assert(!event_differs(&v));
	craft(&e, args, MCPT__OP__OP_EXEC, 3); /* exec: the binary loaded */
	event_decode(&v, &e);
	ck_assert(event_differs(&v));

	craft(&e, args, MCPT__OP__OP_CONNECT, 0); /* 127.0.0.53:53 against an IPv6 peer */
	event_decode(&v, &e);
	ck_assert(event_differs(&v));
	e.data2 = bin(TO53, sizeof(TO53)); /* the same */
	event_decode(&v, &e);
	ck_assert(!event_differs(&v));
	e.data2 = bin(other, sizeof(other)); /* same port, another address */
	event_decode(&v, &e);
	ck_assert(event_differs(&v));
	e.op = MCPT__OP__OP_BIND; /* not compared for bind */
	event_decode(&v, &e);
	ck_assert(!event_differs(&v));
	craft(&e, args, MCPT__OP__OP_SENDTO, 1); /* no peer: nothing to compare */
	event_decode(&v, &e);
	ck_assert(!event_differs(&v));
}
END_TEST

Suite *event_reuse_suite(void);

Suite *event_reuse_suite(void)
{
	Suite *s = suite_create("event_reuse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, reused_view_reads_like_a_fresh_one);
	tcase_add_test(tc, no_leftover_dns_or_address);
	tcase_add_test(tc, differs_on_demand);
	suite_add_tcase(s, tc);
	return s;
}
