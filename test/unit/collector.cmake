# Unit suites of the collector's kernel-free modules (mw_collector_core).
mw_unit_test(control LIBS mw_collector_core)
# the FIFO test makes mkfifoat lose a race on purpose
target_link_options(check_control PRIVATE -Wl,--wrap=mkfifoat)
mw_unit_test(encode LIBS mw_collector_core)
mw_unit_test(hookshape LIBS mw_collector_core)
mw_unit_test(loadlog LIBS mw_collector_core)
mw_unit_test(ringpair LIBS mw_collector_core)
# The record loop itself (session.c with the modules it calls; no BPF is loaded).
mw_unit_test(session
	SOURCES trace_testlib.c "${CMAKE_SOURCE_DIR}/collector/session.c"
		"${CMAKE_SOURCE_DIR}/collector/session_end.c" "${CMAKE_SOURCE_DIR}/collector/pending.c"
		"${CMAKE_SOURCE_DIR}/collector/leftovers.c"
		"${CMAKE_SOURCE_DIR}/collector/loader.c" "${CMAKE_SOURCE_DIR}/collector/handlers.c"
		"${CMAKE_SOURCE_DIR}/collector/launch.c"
		"${CMAKE_SOURCE_DIR}/collector/tracefs.c" "${CMAKE_SOURCE_DIR}/collector/syscalls.c"
	LIBS mw_collector_core mcpwitness_skel mcpt PkgConfig::LIBBPF PkgConfig::LIBELF
		PkgConfig::ZLIB PkgConfig::SODIUM Threads::Threads)
