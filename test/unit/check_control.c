/*
 * check_control.c - the control channel's line splitter (collector/control.c): complete lines
 * handed over raw, lines split across reads joined, empty lines skipped, NUL bytes kept,
 * over-long lines cut at CONTROL_LINE_MAX and flagged with the rest discarded up to their
 * newline, an unterminated tail flushed flagged, memory bounded whatever the input. And the
 * FIFO it creates for --control: given to the user through its descriptor, so a symlink put in
 * its place right after the mkfifo (the race a user who can write to the directory may run) is
 * refused, its target untouched, and so is another's FIFO put there (mkfifoat is wrapped,
 * -Wl,--wrap, to lose that race on purpose).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"

#define MAX_LINES 64

struct seen {
	size_t n;
	size_t len[MAX_LINES];
	bool cut[MAX_LINES];
	uint8_t *data[MAX_LINES];
	uint64_t total;
};

static int on_line(void *ctx, const uint8_t *line, size_t len, bool cut, uint64_t ts)
{
	struct seen *s = ctx;

	(void)ts;
	s->total++;
	if (s->n == MAX_LINES)
		return 0;
	s->len[s->n] = len;
	s->cut[s->n] = cut;
	s->data[s->n] = malloc(len ? len : 1);
	memcpy(s->data[s->n], line, len);
	s->n++;
	return 0;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->data[i]);
}

static void feed(struct control *c, struct seen *s, const char *p, size_t n)
{
	ck_assert_int_eq(control__feed(c, (const uint8_t *)p, n, 1, on_line, s), 0);
}

START_TEST(lines_split_and_joined)
{
	struct control *c = control__new_unbound();
	struct seen s = { 0 };

	feed(c, &s, "{\"op\":\"ma", 9);
	ck_assert_uint_eq(s.n, 0);
	feed(c, &s, "rk\"}\n\n\n{\"a\":1}\n{\"b\"", 19);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.len[0], 13);
	ck_assert(!memcmp(s.data[0], "{\"op\":\"mark\"}", 13));
	ck_assert(!memcmp(s.data[1], "{\"a\":1}", 7));
	ck_assert(!s.cut[0] && !s.cut[1]);
	ck_assert_int_eq(control__flush(c, on_line, &s), 0);
	ck_assert_uint_eq(s.n, 3);
	ck_assert(s.cut[2]);
	ck_assert_uint_eq(s.len[2], 4);
	seen_free(&s);
	control__free(c);
}
END_TEST

START_TEST(nul_bytes_kept)
{
	struct control *c = control__new_unbound();
	struct seen s = { 0 };

	feed(c, &s, "a\0b\0\n", 5);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.len[0], 4);
	ck_assert(!memcmp(s.data[0], "a\0b\0", 4));
	seen_free(&s);
	control__free(c);
}
END_TEST

START_TEST(overlong_line_cut_rest_discarded)
{
	struct control *c = control__new_unbound();
	struct seen s = { 0 };
	size_t big = 3 * CONTROL_LINE_MAX + 17, i;
	char *p = malloc(big);

	memset(p, 'x', big);
	for (i = 0; i < big; i += 1000) /* in pieces, as reads would come */
		feed(c, &s, p + i, big - i < 1000 ? big - i : 1000);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.len[0], CONTROL_LINE_MAX);
	ck_assert(s.cut[0]);
	feed(c, &s, "tail\nnext\n", 10);
	ck_assert_uint_eq(s.n, 2); /* "tail" belonged to the cut line */
	ck_assert(!memcmp(s.data[1], "next", 4));
	ck_assert(!s.cut[1]);
	ck_assert_int_eq(control__flush(c, on_line, &s), 0);
	ck_assert_uint_eq(s.n, 2); /* nothing pending */
	free(p);
	seen_free(&s);
	control__free(c);
}
END_TEST

START_TEST(exactly_the_limit_is_not_cut)
{
	struct control *c = control__new_unbound();
	struct seen s = { 0 };
	char *p = malloc(CONTROL_LINE_MAX + 1);

	memset(p, 'y', CONTROL_LINE_MAX);
	p[CONTROL_LINE_MAX] = '\n';
	feed(c, &s, p, CONTROL_LINE_MAX + 1);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.len[0], CONTROL_LINE_MAX);
	ck_assert(!s.cut[0]);
	free(p);
	seen_free(&s);
	control__free(c);
}
END_TEST

START_TEST(flood_of_lines)
{
	struct control *c = control__new_unbound();
	struct seen s = { 0 };
	static const char line[] = "{\"op\":\"mark\",\"phase\":\"begin\",\"call_id\":\"x\"}\n";

	for (int i = 0; i < 100000; i++)
		feed(c, &s, line, sizeof(line) - 1);
	ck_assert_uint_eq(s.total, 100000);
	seen_free(&s);
	control__free(c);
}
END_TEST

/* What the next mkfifoat's name is replaced with, right after it is made: a symlink to
 * swap_to, or (swap_to NULL, swap_fifo_uid set) a FIFO of that uid's. */
static const char *swap_to;
static uid_t swap_fifo_uid;

int __real_mkfifoat(int dirfd, const char *path, mode_t mode);
int __wrap_mkfifoat(int dirfd, const char *path, mode_t mode);
int __wrap_mkfifoat(int dirfd, const char *path, mode_t mode)
{
	int rc = __real_mkfifoat(dirfd, path, mode);

	if (rc == 0 && (swap_to || swap_fifo_uid)) {
		ck_assert_int_eq(unlinkat(dirfd, path, 0), 0);
		if (swap_to) {
			ck_assert_int_eq(symlinkat(swap_to, dirfd, path), 0);
		} else {
			ck_assert_int_eq(__real_mkfifoat(dirfd, path, 0666), 0);
			ck_assert_int_eq(fchownat(dirfd, path, swap_fifo_uid, swap_fifo_uid, 0), 0);
		}
		swap_to = NULL;
		swap_fifo_uid = 0;
	}
	return rc;
}

START_TEST(fifo_given_by_descriptor)
{
	char dir[] = "/tmp/mw-control-XXXXXX", victim[64], ctl[64];
	/* as root, a user the FIFO is given to; otherwise only our own uid can be given */
	uid_t to = geteuid() == 0 ? 65534 : getuid();
	struct control *c;
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(ctl, sizeof(ctl), "%s/ctl", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	swap_to = victim;
	c = control__open(ctl, -1, to, to);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(st.st_uid, getuid()); /* not given away through the link */
	ck_assert_int_eq(unlink(ctl), 0);
	if (geteuid() == 0) { /* another's FIFO in its place: not taken for ours, nor given */
		swap_fifo_uid = 65533;
		c = control__open(ctl, -1, to, to);
		ck_assert_ptr_null(c);
		ck_assert_int_eq(errno, EEXIST);
		ck_assert_int_eq(lstat(ctl, &st), 0);
		ck_assert_int_eq(st.st_uid, 65533);
		ck_assert_int_eq(unlink(ctl), 0);
	}
	c = control__open(ctl, -1, to, to); /* no race: made, opened, given */
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(lstat(ctl, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(st.st_uid, to);
	control__free(c);
	ck_assert_int_eq(unlink(ctl), 0);
	ck_assert_int_eq(unlink(victim), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *control_suite(void);
Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits");
	TCase *fifo = tcase_create("fifo");

	tcase_add_test(core, lines_split_and_joined);
	tcase_add_test(core, nul_bytes_kept);
	tcase_add_test(limits, overlong_line_cut_rest_discarded);
	tcase_add_test(limits, exactly_the_limit_is_not_cut);
	tcase_add_test(limits, flood_of_lines);
	suite_add_tcase(s, core);
	suite_add_tcase(s, limits);
	tcase_add_test(fifo, fifo_given_by_descriptor);
	suite_add_tcase(s, fifo);
	return s;
}
