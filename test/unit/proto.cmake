# Unit suites of the trace library (proto/). Included by test/unit/CMakeLists.txt. Each suite
# links the static library and the shared test helpers (fake clock, test key, forge); internal.h
# is reachable through mcpt's public include directory.
set(MCPT_TESTLIB trace_testlib.c trace_forge.c)
mw_unit_test(trace SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_io SOURCES ${MCPT_TESTLIB} LIBS mcpt PkgConfig::JANSSON)
mw_unit_test(trace_writer SOURCES ${MCPT_TESTLIB} writer_testlib.c LIBS mcpt)
mw_unit_test(trace_writer_output SOURCES ${MCPT_TESTLIB} writer_testlib.c LIBS mcpt)
mw_unit_test(trace_props SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_bad SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_seal SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_framing SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(keys SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_limits SOURCES ${MCPT_TESTLIB} LIBS mcpt PkgConfig::JANSSON)
mw_unit_test(trace_evidence SOURCES ${MCPT_TESTLIB} LIBS mcpt PkgConfig::JANSSON)
mw_unit_test(unwire LIBS mcpt)
mw_unit_test(unwire_flat LIBS mcpt)
mw_unit_test(valtab SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(valtab_hostile SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(tasktab SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(tsdelta SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(forktask SOURCES ${MCPT_TESTLIB} LIBS mcpt)

# The golden trace checked by an implementation that shares no code with the library
# (Python: hashlib BLAKE2b, cryptography Ed25519), written from TRACE-FORMAT.md alone.
# packaging/install-deps.sh installs python3-cryptography, so it always runs.
set(MW_GOLDEN "${CMAKE_SOURCE_DIR}/test/fixtures/golden")
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME unit.trace_golden_independent
	COMMAND ${Python3_EXECUTABLE} ${MW_GOLDEN}/independent_check.py
		${MW_GOLDEN}/trace-v1.mcpt ${MW_GOLDEN}/golden.pub)
set_tests_properties(unit.trace_golden_independent PROPERTIES LABELS unit TIMEOUT 60)

# Evidence for tickets checked the same way: `mcpwitness export` writes the DSSE envelope and an
# excerpt of every record, of the golden trace and of a multi-segment trace written by mktrace,
# and independent_evidence.py verifies them from proto/EXCERPT.md alone.
add_executable(mktrace mktrace.c)
target_link_libraries(mktrace PRIVATE mcpt mw_warnings)
set(MW_EVIDENCE_DIR "${CMAKE_CURRENT_BINARY_DIR}/evidence")
file(MAKE_DIRECTORY "${MW_EVIDENCE_DIR}/golden" "${MW_EVIDENCE_DIR}/multi")
add_test(NAME unit.trace_evidence_fixture COMMAND mktrace ${MW_EVIDENCE_DIR})
set_tests_properties(unit.trace_evidence_fixture PROPERTIES LABELS unit
	FIXTURES_SETUP evidence_trace)
add_test(NAME unit.trace_evidence_independent_golden
	COMMAND ${Python3_EXECUTABLE} ${MW_GOLDEN}/independent_evidence.py $<TARGET_FILE:mcpwitness>
		${MW_GOLDEN}/trace-v1.mcpt ${MW_GOLDEN}/golden.pub ${MW_EVIDENCE_DIR}/golden)
add_test(NAME unit.trace_evidence_independent_multi
	COMMAND ${Python3_EXECUTABLE} ${MW_GOLDEN}/independent_evidence.py $<TARGET_FILE:mcpwitness>
		${MW_EVIDENCE_DIR}/multi.mcpt ${MW_EVIDENCE_DIR}/test.pub ${MW_EVIDENCE_DIR}/multi)
set_tests_properties(unit.trace_evidence_independent_golden unit.trace_evidence_independent_multi
	PROPERTIES LABELS unit TIMEOUT 120)
set_tests_properties(unit.trace_evidence_independent_multi PROPERTIES
	FIXTURES_REQUIRED evidence_trace)
