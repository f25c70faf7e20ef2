# Unit suites of the analyzer (one per module; see mw_unit_test in CMakeLists.txt).
mw_unit_test(glob LIBS mw_analyzer_core)
mw_unit_test(cidr LIBS mw_analyzer_core)
mw_unit_test(sockaddr LIBS mw_analyzer_core)
mw_unit_test(strbuf LIBS mw_analyzer) # trace_ts
mw_unit_test(jsonw LIBS mw_analyzer_core)
mw_unit_test(msgclass SOURCES mutate.c LIBS mw_analyzer_core)
mw_unit_test(jsonrpc_fast SOURCES mutate.c LIBS mw_analyzer_core)
mw_unit_test(event LIBS mw_analyzer_core)
mw_unit_test(event_reuse LIBS mw_analyzer_core)
mw_unit_test(policy SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_eval SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_fields SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_load SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_pre SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_memo SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_bounds SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(policy_names SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(proctree SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(exec_search SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(chanmsg SOURCES policy_testlib.c LIBS mw_analyzer_core)
mw_unit_test(analyze SOURCES cli_run.c synth_trace.c analyze_fixture.c LIBS mw_analyzer)
mw_unit_test(analyze_inputs SOURCES cli_run.c synth_trace.c analyze_fixture.c LIBS mw_analyzer)
mw_unit_test(onepass SOURCES synth_trace.c LIBS mw_analyzer)

# The shipped policy compiles with the shipped binary, alone and with the site example on top.
add_test(NAME policy.default-check
	COMMAND mcpwitness policy check ${CMAKE_SOURCE_DIR}/policies/default.yaml)
add_test(NAME policy.fixtures-check
	COMMAND mcpwitness policy check ${CMAKE_SOURCE_DIR}/policies/default.yaml
		${CMAKE_SOURCE_DIR}/test/fixtures/policies/site-example.yaml)
set_tests_properties(policy.default-check policy.fixtures-check PROPERTIES LABELS unit)
mw_unit_test(calls SOURCES calls_testlib.c LIBS mw_analyzer_core)
mw_unit_test(calls_bad SOURCES calls_testlib.c LIBS mw_analyzer_core)
mw_unit_test(attribute SOURCES calls_testlib.c LIBS mw_analyzer_core)
mw_unit_test(callscmd SOURCES synth_trace.c LIBS mw_analyzer)
mw_unit_test(model_tail SOURCES cli_run.c synth_trace.c LIBS mw_analyzer)
mw_unit_test(passes SOURCES synth_trace.c LIBS mw_analyzer)
mw_unit_test(callsum LIBS mw_analyzer_core)
# verify / export / analyze as a user runs them, on traces from the trace library's forge too.
mw_unit_test(verify_cli SOURCES cli_run.c synth_trace.c trace_testlib.c trace_forge.c
	LIBS mw_analyzer)

# Golden tests on real traces recorded by the real collector (test/fixtures/analysis): trace +
# policies -> the expected findings, dynamic fields stripped.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(MW_ANALYSIS_FIXTURES "${CMAKE_SOURCE_DIR}/test/fixtures/analysis")
add_test(NAME unit.analyze_golden
	COMMAND ${Python3_EXECUTABLE} ${MW_ANALYSIS_FIXTURES}/check_golden.py $<TARGET_FILE:mcpwitness>)
set_tests_properties(unit.analyze_golden PROPERTIES LABELS unit TIMEOUT 120)
# dump, calls --json and analyze's JSON and SARIF of the fixture traces, pinned by digest
# (check_pinned.py).
add_test(NAME unit.outputs_pinned
	COMMAND ${Python3_EXECUTABLE} ${MW_ANALYSIS_FIXTURES}/check_pinned.py $<TARGET_FILE:mcpwitness>)
set_tests_properties(unit.outputs_pinned PROPERTIES LABELS unit TIMEOUT 120)
# One test per rule of the default policy: its trigger and its exception (scenarios.py).
add_test(NAME unit.default_policy_rules
	COMMAND ${Python3_EXECUTABLE} ${MW_ANALYSIS_FIXTURES}/check_rules.py $<TARGET_FILE:mcpwitness>)
set_tests_properties(unit.default_policy_rules PROPERTIES LABELS unit TIMEOUT 120)
# The field table's families (what "can never match" warns of) against what the evaluator
# matches on both traces, field by field.
add_test(NAME unit.policy_field_families
	COMMAND ${Python3_EXECUTABLE} ${MW_ANALYSIS_FIXTURES}/check_fields.py $<TARGET_FILE:mcpwitness>)
set_tests_properties(unit.policy_field_families PROPERTIES LABELS unit TIMEOUT 120)
mw_unit_test(identity SOURCES calls_testlib.c LIBS mw_analyzer)
mw_unit_test(learn_gen LIBS mw_analyzer_core)
mw_unit_test(learn_emit LIBS mw_analyzer)
mw_unit_test(baseline SOURCES cli_run.c synth_trace.c LIBS mw_analyzer)
# The binary's own files and streams (learn -o, stdin, a full stdout), run by fork and exec.
mw_unit_test(cli_io SOURCES cli_run.c synth_trace.c LIBS mw_analyzer)
add_dependencies(check_cli_io mcpwitness)
