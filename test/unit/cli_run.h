/*
 * cli_run.h - runs one mcpwitness subcommand in the test process, through the same do_<verb>
 * function the binary calls, with stdout and stderr captured into strings and an optional file
 * as standard input.
 */
#ifndef CLI_RUN_H
#define CLI_RUN_H

struct cli_result {
	int code;
	char *out, *err;
};

/* Runs verb with the arguments that follow (NULL-terminated). */
struct cli_result cli_run(const char *stdin_path, const char *verb, ...);
void cli_result_free(struct cli_result *r);
/* Number of '\n' in s. */
int cli_lines(const char *s);
/* Whether s holds only printable ASCII, tabs and newlines (no terminal escapes). */
int cli_printable(const char *s);

#endif /* CLI_RUN_H */
