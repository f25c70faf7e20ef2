/*
 * check_passes.c - the two reads of `analyze`, `calls` and the observations (passes.c): the
 * second read is refused (-ESTALE) when the file's bytes differ from the first read's, a
 * changed byte, a record more, bytes after the trace or a shorter file alike; unchanged, its
 * digest and length are those of the whole file (what the reports name).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes.h"
#include "synth_trace.h"

static struct synth S;
static char other[128];

static int count_cb(void *ctx, const struct replay_rec *rr)
{
	(void)rr;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* A small trace with a call, then a copy of it edited by edit() into `other`. */
static void make_pair(void (*edit)(uint8_t **buf, size_t *len))
{
	uint8_t *buf;
	size_t len;

	synth_begin(&S, "passes");
	synth_stdio(&S, 1, 0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n", 0);
	synth_open(&S, SYNTH_PID, SYNTH_PSTART, "/etc/hosts", "/etc/hosts", 0, 3);
	synth_stdio(&S, 0, 0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", 0);
	synth_finish(&S);
	buf = (uint8_t *)synth_slurp(S.path, &len);
	edit(&buf, &len);
	snprintf(other, sizeof(other), "%s.other", S.path);
	synth_spew(other, buf, len);
	free(buf);
}

/* The model read of S.path, then the second read of `other`: pass_second's result. */
static int both(uint64_t *records)
{
	struct pass_digest first, second;
	uint8_t d1[32], d2[32], whole[32];
	struct callmodel_opts co = {0};
	struct callmodel *cm = NULL;
	struct replay_opts ro = {.allow_unsigned = true};
	struct replay *rp = replay__new(&ro);
	int fd1 = open(S.path, O_RDONLY), fd2 = open(other, O_RDONLY), rc;
	size_t len;
	char *bytes;

	ck_assert(rp && fd1 >= 0 && fd2 >= 0);
	ck_assert_int_eq(pass_model(fd1, &co, false, &cm, NULL, &first, d1), 0);
	*records = 0;
	rc = pass_second(rp, fd2, count_cb, records, d1, &second, d2);
	if (!rc) { /* the whole file's digest and length */
		bytes = synth_slurp(other, &len);
		crypto_generichash(whole, 32, (const uint8_t *)bytes, len, NULL, 0);
		ck_assert_mem_eq(d2, whole, 32);
		ck_assert_uint_eq(second.length, len);
		ck_assert_uint_eq(first.length, len);
		free(bytes);
	}
	close(fd1);
	close(fd2);
	replay__free(rp);
	callmodel__free(cm);
	unlink(other);
	synth_cleanup(&S);
	return rc;
}

static void keep(uint8_t **buf, size_t *len)
{
	(void)buf, (void)len;
}

static void flip_last_quarter(uint8_t **buf, size_t *len)
{
	(*buf)[*len - *len / 4] ^= 0x01;
}

static void append_zeros(uint8_t **buf, size_t *len)
{
	*buf = realloc(*buf, *len + 64);
	memset(*buf + *len, 0, 64);
	*len += 64;
}

static void truncate_tail(uint8_t **buf, size_t *len)
{
	(void)buf;
	*len -= 10;
}

START_TEST(same_bytes_pass)
{
	uint64_t n;

	make_pair(keep);
	ck_assert_int_eq(both(&n), 0);
	ck_assert_uint_gt(n, 4);
}
END_TEST

START_TEST(a_changed_byte_is_refused)
{
	uint64_t n;

	make_pair(flip_last_quarter);
	ck_assert_int_eq(both(&n), -ESTALE);
}
END_TEST

START_TEST(bytes_after_the_trace_are_refused)
{
	uint64_t n;

	make_pair(append_zeros);
	ck_assert_int_eq(both(&n), -ESTALE);
}
END_TEST

START_TEST(a_shorter_file_is_refused)
{
	uint64_t n;

	make_pair(truncate_tail);
	ck_assert_int_eq(both(&n), -ESTALE);
}
END_TEST

Suite *passes_suite(void);

Suite *passes_suite(void)
{
	Suite *s = suite_create("passes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, same_bytes_pass);
	tcase_add_test(tc, a_changed_byte_is_refused);
	tcase_add_test(tc, bytes_after_the_trace_are_refused);
	tcase_add_test(tc, a_shorter_file_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
