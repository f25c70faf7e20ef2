# Unit suites of the collector's kernel-free modules (mw_collector_core).
mw_unit_test(control LIBS mw_collector_core)
mw_unit_test(encode LIBS mw_collector_core)
