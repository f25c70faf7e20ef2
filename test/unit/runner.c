/*
 * runner.c - main() for one Check suite. Each test/unit/check_<module>.c exports
 * <module>_suite(); CMake compiles it with this runner and MW_SUITE naming that function.
 * Fork mode stays on so a crashing test fails alone. Check's default 4 s per test is too tight
 * for the property tests under ASan on a loaded 2-core machine; 120 s is the default here unless
 * CK_DEFAULT_TIMEOUT says otherwise (CTest's own timeout still bounds the whole suite).
 */
#include <check.h>
#include <stdlib.h>

Suite *MW_SUITE(void);

int main(void)
{
	SRunner *sr;

	setenv("CK_DEFAULT_TIMEOUT", "120", 0); /* read by tcase_create, so before the suite */
	sr = srunner_create(MW_SUITE());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
