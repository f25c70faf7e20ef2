/*
 * runner.c - main() for one Check suite. Each test/unit/check_<module>.c exports
 * <module>_suite(); CMake compiles it with this runner and MW_SUITE naming that function.
 * Fork mode stays on so a crashing test fails alone.
 */
#include <check.h>
#include <stdlib.h>

Suite *MW_SUITE(void);

int main(void)
{
	SRunner *sr = srunner_create(MW_SUITE());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
