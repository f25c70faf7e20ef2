# Unit suites of the trace library (proto/). Included by test/unit/CMakeLists.txt. Each suite
# links the static library and the shared test helpers (fake clock, test key, forge); internal.h
# is reachable through mcpt's public include directory.
set(MCPT_TESTLIB trace_testlib.c trace_forge.c)
mw_unit_test(trace SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_io SOURCES ${MCPT_TESTLIB} LIBS mcpt PkgConfig::JANSSON)
mw_unit_test(trace_writer SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_props SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_bad SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_seal SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_framing SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(keys SOURCES ${MCPT_TESTLIB} LIBS mcpt)
mw_unit_test(trace_limits SOURCES ${MCPT_TESTLIB} LIBS mcpt PkgConfig::JANSSON)

# The golden trace checked by an implementation that shares no code with the library
# (Python: hashlib BLAKE2b, cryptography Ed25519), written from TRACE-FORMAT.md alone.
# packaging/install-deps.sh installs python3-cryptography, so it always runs.
set(MW_GOLDEN "${CMAKE_SOURCE_DIR}/test/fixtures/golden")
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME unit.trace_golden_independent
	COMMAND ${Python3_EXECUTABLE} ${MW_GOLDEN}/independent_check.py
		${MW_GOLDEN}/trace-v1.mcpt ${MW_GOLDEN}/golden.pub)
set_tests_properties(unit.trace_golden_independent PROPERTIES LABELS unit TIMEOUT 60)
