/*
 * cmd.h - the subcommands of mcpwitness, bpftool style: a table of struct cmd, one do_<verb>
 * per subcommand, each parsing its own options with getopt_long and returning the process
 * exit code (DESIGN.md section 3):
 *   0 fine, 1 findings at or above --fail-on, 2 usage or input error, 3 verification failed;
 *   verify has its own finer codes (mcpt_verdict_exit_code).
 */
#ifndef MW_CMD_H
#define MW_CMD_H

#include <getopt.h>
#include <stdio.h>

enum mw_exit {
	MW_EXIT_OK = 0,
	MW_EXIT_FINDINGS = 1,
	MW_EXIT_USAGE = 2,
	MW_EXIT_VERIFY = 3,
};

#define MW_DEFAULT_PUBKEY "/etc/mcpwitness/signing.pub"

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv); /* argv[0] is the verb */
	const char *summary;
};

/* Runs the command named argv[0] from cmds; unknown names are a usage error. */
int cmd_select(const struct cmd *cmds, int argc, char **argv, const char *what);

/* Reports a getopt error (opt is '?' or ':') for verb and returns MW_EXIT_USAGE. */
int cmd_opt_error(const char *verb, char **argv, int opt);
/* "mcpwitness VERB: <message>; see 'mcpwitness VERB --help'", returns MW_EXIT_USAGE. */
int cmd_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct mcpt_pubkey;
/* Loads a trusted public key; prints the error and returns MW_EXIT_USAGE on failure. */
int cmd_load_pubkey(const char *path, struct mcpt_pubkey *key);

int do_keygen(int argc, char **argv);
int do_verify(int argc, char **argv);
int do_export(int argc, char **argv);
int do_dump(int argc, char **argv);
int do_analyze(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_calls(int argc, char **argv);

#include <stdint.h>
/* --cancel-grace MS into *ns; returns -1 when good, else the usage exit code (reported). */
int cmd_parse_grace(const char *verb, const char *arg, uint64_t *ns);

#endif /* MW_CMD_H */
