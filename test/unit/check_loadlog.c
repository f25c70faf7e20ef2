/*
 * check_loadlog.c - the collector's one-line account of a program the kernel refused
 * (collector/log.c): the verdict is the last line of the verifier's log that is not a
 * statistic, and libbpf's load-log message, fed through the callback the collector routes
 * libbpf's output to, leaves "NAME: VERDICT" for the loader's error.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "log.h"

static const char REFUSED_LOG[] =
	"func#0 @0\n"
	"Func#4 ('mw_hash') is safe for any args that match its prototype\n"
	"combined stack size of 4 calls is 560. Too large\n"
	"processed 16916 insns (limit 1000000) max_states_per_insn 11 total_states 984\n"
	"verification time 11746 usec\n"
	"stack depth 240+80+40\n"
	"\n";

START_TEST(test_verdict_skips_statistics)
{
	char out[128];

	ck_assert(log_verifier_verdict(REFUSED_LOG, out, sizeof(out)));
	ck_assert_str_eq(out, "combined stack size of 4 calls is 560. Too large");
	/* a log with no final newline, and one truncated to the buffer */
	ck_assert(log_verifier_verdict("R1 invalid mem access 'scalar'", out, sizeof(out)));
	ck_assert_str_eq(out, "R1 invalid mem access 'scalar'");
	ck_assert(log_verifier_verdict("R1 invalid mem access 'scalar'\n", out, 6));
	ck_assert_str_eq(out, "R1 in");
}
END_TEST

START_TEST(test_verdict_of_nothing)
{
	char out[16] = "unchanged";

	ck_assert(!log_verifier_verdict("", out, sizeof(out)));
	ck_assert(!log_verifier_verdict("processed 3 insns\nstack depth 8\n\n", out, sizeof(out)));
	ck_assert_str_eq(out, "unchanged");
}
END_TEST

__attribute__((format(printf, 2, 3))) static int print_through(libbpf_print_fn_t fn,
							       const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fn(LIBBPF_WARN, fmt, ap);
	va_end(ap);
	return n;
}

/* The callback the collector routes libbpf's output to, with nothing printed. Check runs each
 * test in a process of its own, so each starts with no refusal noted. */
static libbpf_print_fn_t routed_callback(void)
{
	libbpf_print_fn_t routed;

	log_set_level(LOG_QUIET); /* the messages are noted, not printed */
	log_route_libbpf();
	routed = libbpf_set_print(NULL);
	ck_assert_ptr_nonnull(routed);
	ck_assert_ptr_null(log_refusal());
	return routed;
}

START_TEST(test_refusal_from_libbpf_message)
{
	libbpf_print_fn_t routed = routed_callback();

	/* other messages, with a string argument, leave nothing */
	print_through(routed, "libbpf: prog '%s': BPF program load failed: %s\n",
		      "handle_sys_exit_sendmsg", "Permission denied");
	ck_assert_ptr_null(log_refusal());
	/* the load log, as libbpf 1.1 prints it (its prefix in the format) */
	print_through(routed,
		      "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
		      "handle_sys_exit_sendmsg", REFUSED_LOG);
	ck_assert_ptr_nonnull(log_refusal());
	ck_assert_str_eq(log_refusal(), "handle_sys_exit_sendmsg: combined stack size of 4 calls "
					"is 560. Too large");
	/* a second refusal (another thread's copy of the handlers) keeps the first */
	print_through(routed, "prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
		      "handle_sys_exit_readv", "R2 unbounded memory access\n");
	ck_assert_str_eq(log_refusal(), "handle_sys_exit_sendmsg: combined stack size of 4 calls "
					"is 560. Too large");
}
END_TEST

START_TEST(test_refusal_without_prefix)
{
	libbpf_print_fn_t routed = routed_callback();

	print_through(routed, "prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
		      "handle_sys_exit_readv", "R2 unbounded memory access\n");
	ck_assert_str_eq(log_refusal(), "handle_sys_exit_readv: R2 unbounded memory access");
}
END_TEST

/* Printed (-vv): the message in full after the refusal was noted from it (its arguments are
 * still there for the printing), with one "libbpf: " prefix, not two. */
START_TEST(test_load_log_printed_once)
{
	libbpf_print_fn_t routed;
	FILE *err = tmpfile();
	char out[1024];
	size_t n;
	int saved = dup(STDERR_FILENO);

	ck_assert_ptr_nonnull(err);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(err), STDERR_FILENO), 0);
	log_set_level(LOG_DEBUG);
	log_route_libbpf();
	routed = libbpf_set_print(NULL);
	print_through(routed,
		      "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n",
		      "handle_sys_exit_sendmsg", REFUSED_LOG);
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	rewind(err);
	n = fread(out, 1, sizeof(out) - 1, err);
	out[n] = '\0';
	fclose(err);
	ck_assert_ptr_nonnull(log_refusal());
	ck_assert_ptr_nonnull(strstr(out, "libbpf: prog 'handle_sys_exit_sendmsg': -- BEGIN PROG "
					  "LOAD LOG --\nfunc#0 @0\n"));
	ck_assert_ptr_nonnull(strstr(out, "Too large\nprocessed 16916 insns"));
	ck_assert_ptr_null(strstr(out, "libbpf: libbpf:"));
}
END_TEST

Suite *loadlog_suite(void);

Suite *loadlog_suite(void)
{
	Suite *s = suite_create("loadlog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_verdict_skips_statistics);
	tcase_add_test(tc, test_verdict_of_nothing);
	tcase_add_test(tc, test_refusal_from_libbpf_message);
	tcase_add_test(tc, test_refusal_without_prefix);
	tcase_add_test(tc, test_load_log_printed_once);
	suite_add_tcase(s, tc);
	return s;
}
