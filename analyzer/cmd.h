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
#ifndef MW_POLICY_DIR
#define MW_POLICY_DIR "/usr/share/mcpwitness/policies"
#endif
/* The policy of analyze, diff and policy learn without -p: the installed default. */
#define MW_DEFAULT_POLICY MW_POLICY_DIR "/default.yaml"

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv); /* argv[0] is the verb */
	const char *summary;
};

/* Runs the command named argv[0] from cmds; unknown names are a usage error. */
int cmd_select(const struct cmd *cmds, int argc, char **argv, const char *what);

/* Reports a getopt error (opt is '?' or ':') of the last cmd_getopt call for verb and returns
 * MW_EXIT_USAGE; for CMD_OPT_REPORTED (cmd_getopt), only returns it. The option is named as
 * typed: a long one by its name looked up in that parser's options (unknown, ambiguous with its
 * candidates, takes no value, needs a value), whatever glibc left in optopt; a short one by its
 * letter, a byte that is not printable as \xHH. */
int cmd_opt_error(const char *verb, char **argv, int opt);

/* A verb's option parser: getopt_long's arguments, and the options given so far. */
struct cmd_parser {
	const char *verb;
	const char *shortopts;
	const struct option *opts;
	const int *repeatable; /* options that may be given more than once (0-terminated) */
	unsigned char seen[512 / 8];
};

/* What cmd_getopt returns for an option it refused (already reported on stderr). */
#define CMD_OPT_REPORTED 0x7fff0000
/* getopt_long, refusing an option that takes a value when it is given a second time (unless
 * repeatable): the second would silently replace the first, a second --fail-on loosening a
 * gate. One line on stderr; the caller's default case hands CMD_OPT_REPORTED to
 * cmd_opt_error as it does getopt's own errors. */
int cmd_getopt(struct cmd_parser *p, int argc, char **argv);
/* "mcpwitness VERB: <message>; see 'mcpwitness VERB --help'", returns MW_EXIT_USAGE. */
int cmd_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether MW_DEFAULT_POLICY, used for want of -p, can be opened: 0, or -1 after one line
 * saying so (the policy loader would name only the file). */
int cmd_default_policy_readable(void);

struct mcpt_pubkey;
/* Loads a trusted public key; prints the error and returns MW_EXIT_USAGE on failure. */
int cmd_load_pubkey(const char *path, struct mcpt_pubkey *key);

int do_keygen(int argc, char **argv);
int do_verify(int argc, char **argv);
int do_export(int argc, char **argv);
int do_dump(int argc, char **argv);
int do_analyze(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_policy_learn(int argc, char **argv);
int do_diff(int argc, char **argv);
int do_calls(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* --cancel-grace MS into *ns; returns -1 when good, else the usage exit code (reported). */
int cmd_parse_grace(const char *verb, const char *arg, uint64_t *ns);

/* A TRACE of "-" needs an open standard input: otherwise the first file opened would take fd 0
 * and be read as the trace. Returns 0, or MW_EXIT_USAGE after "failed to open trace -: Bad file
 * descriptor". */
int cmd_check_stdin(const char *trace);
/* The same for a command that reads several traces (traces[0..n) and extra, which may be
 * NULL): standard input can be read once, so "-" twice is a usage error of verb. */
int cmd_check_stdin_once(const char *verb, char *const *traces, size_t n, const char *extra);

/* The verdict of a trace read by analyze, calls, learn or diff, before anything is shown:
 * MW_EXIT_OK to go on; MW_EXIT_USAGE for what is not a readable trace (not a trace, an unknown
 * version or incompatible feature: an input error whether or not it was to be verified);
 * with verified set, MW_EXIT_VERIFY for a trace that is INVALID (anything that keeps its seals
 * from verifying, a malformed frame or record and bytes after the FINAL seal included, as verify
 * says INVALID), of another key or unsigned; MW_EXIT_USAGE for the other bytes no collector
 * writes (a malformed frame, header or record, bytes after the FINAL seal; without verification
 * also hashes, chain or counts that do not hold), which without verification is all of them;
 * MW_EXIT_VERIFY either way for a trace that ends before its Header (incomplete, with nothing
 * --allow-incomplete could accept). One line on stderr names the trace for each refusal. */
struct mcpt_report;
int cmd_refuse(const char *trace, const struct mcpt_report *rep, bool verified);

/* Whether a read trace is incomplete: without a FINAL seal, torn or zero-filled at its end;
 * verified: also when the verifier says VALID_PREFIX. */
bool cmd_incomplete(const struct mcpt_report *rep, bool verified);

/* After writing the `what` (a report, the dump...) to out, with err the writer's own -errno
 * (0: none): 0 when everything reached out, else MW_EXIT_USAGE after one line "failed to write
 * the <what>: <cause>". The cause is the writer's error unless it is a write error, then the
 * errno of the failed write. The stream's error is cleared once reported, so main does not
 * report the same failure again. */
int cmd_output_done(FILE *out, const char *what, int err);

#endif /* MW_CMD_H */
