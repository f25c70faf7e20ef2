# Unit suites of the analyzer (one per module; see mw_unit_test in CMakeLists.txt).
mw_unit_test(glob LIBS mw_analyzer_core)
mw_unit_test(cidr LIBS mw_analyzer_core)
mw_unit_test(sockaddr LIBS mw_analyzer_core)
mw_unit_test(strbuf LIBS mw_analyzer_core)
mw_unit_test(event LIBS mw_analyzer_core)
mw_unit_test(policy LIBS mw_analyzer_core)
mw_unit_test(proctree LIBS mw_analyzer_core)
mw_unit_test(analyze SOURCES synth_trace.c LIBS mw_analyzer)

# The shipped policy compiles with the shipped binary, alone and with the site example on top.
add_test(NAME policy.default-check
	COMMAND mcpwitness policy check ${CMAKE_SOURCE_DIR}/policies/default.yaml)
add_test(NAME policy.fixtures-check
	COMMAND mcpwitness policy check ${CMAKE_SOURCE_DIR}/policies/default.yaml
		${CMAKE_SOURCE_DIR}/test/fixtures/policies/site-example.yaml)
set_tests_properties(policy.default-check policy.fixtures-check PROPERTIES LABELS unit)
mw_unit_test(calls SOURCES calls_testlib.c LIBS mw_analyzer_core)
mw_unit_test(attribute SOURCES calls_testlib.c LIBS mw_analyzer_core)
mw_unit_test(callscmd SOURCES synth_trace.c LIBS mw_analyzer)
# verify / export / analyze as a user runs them, on traces from the trace library's forge too.
mw_unit_test(verify_cli SOURCES cli_run.c synth_trace.c trace_testlib.c trace_forge.c
	LIBS mw_analyzer)
