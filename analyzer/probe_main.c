/*
 * probe_main.c - mcpwitness-probe: `mcpwitness probe` as an executable of its own, because
 * harnesses take one path (MCPFZ_PROBE_BIN) and run it as `PATH --backend ebpf`.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "probe.h"

int main(int argc, char **argv)
{
	int code;

	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("mcpwitness-probe %s\n", MW_VERSION);
		return MW_EXIT_OK;
	}
	log_set_level(LOG_WARN);
	argv[0] = "probe";
	code = do_probe(argc, argv);
	if (fflush(stdout) || ferror(stdout))
		return code == MW_EXIT_OK ? MW_EXIT_USAGE : code;
	return code;
}
