/*
 * cmd.c - subcommand dispatch, the common option-error path, and what every subcommand that
 * reads a trace or writes standard output decides the same way (see cmd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "mcpt.h"
#include "log.h"
#include "replay.h"
#include "strbuf.h"

int cmd_select(const struct cmd *cmds, int argc, char **argv, const char *what)
{
	if (argc < 1)
		return cmd_usage_error(what, "missing command");
	for (const struct cmd *c = cmds; c->name; c++) {
		if (strcmp(c->name, argv[0]) == 0) {
			optind = 0; /* GNU: full reset for this command's getopt_long */
			return c->func(argc, argv);
		}
	}
	return cmd_usage_error(what, "unknown command \"%s\"", argv[0]);
}

int cmd_usage_error(const char *verb, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	if (verb && *verb)
		p_err("%s: %s; see 'mcpwitness %s --help'", verb, strbuf_str(&sb) ?: "?", verb);
	else
		p_err("%s; see 'mcpwitness --help'", strbuf_str(&sb) ?: "?");
	strbuf_fini(&sb);
	return MW_EXIT_USAGE;
}

/* The parser of the last cmd_getopt call: what cmd_opt_error looks long options up in. */
static const struct cmd_parser *cur_parser;

/* The long option of p that "--name[=value]" (arg + 2) names, as getopt_long takes it: the exact
 * name, else a prefix of one option only (or of several alike). NULL when none or ambiguous,
 * with *ambiguous set for the latter. */
static const struct option *long_lookup(const struct cmd_parser *p, const char *name, size_t len,
					bool *ambiguous)
{
	const struct option *found = NULL;

	*ambiguous = false;
	for (const struct option *o = p->opts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		if (!found)
			found = o;
		else if (o->has_arg != found->has_arg || o->flag != found->flag ||
			 o->val != found->val)
			*ambiguous = true;
	}
	return *ambiguous ? NULL : found;
}

/* "unknown option --NAME" (escaped), or "ambiguous option --NAME (--a, --b)". */
static int unknown_long(const char *verb, const struct cmd_parser *p, const char *name, size_t len,
			bool ambiguous)
{
	struct strbuf sb = STRBUF_INIT;
	const char *sep = " (";
	int code;

	strbuf_puts(&sb, ambiguous ? "ambiguous option --" : "unknown option --");
	strbuf_escape(&sb, (const uint8_t *)name, len, 0);
	for (const struct option *o = p->opts; ambiguous && o->name; o++) {
		if (!strncmp(o->name, name, len)) {
			strbuf_printf(&sb, "%s--%s", sep, o->name);
			sep = ", ";
		}
	}
	if (ambiguous)
		strbuf_putc(&sb, ')');
	code = cmd_usage_error(verb, "%s", strbuf_str(&sb) ?: "unknown option");
	strbuf_fini(&sb);
	return code;
}

/* The message for a long option arg that getopt_long refused with opt and optopt, or -1 when
 * arg is not what it refused (a short option is, mid-cluster in the next element). */
static int long_opt_error(const char *verb, const struct cmd_parser *p, const char *arg, int opt)
{
	size_t len = strcspn(arg + 2, "=");
	bool ambiguous, value = arg[2 + len] == '=';
	const struct option *o = long_lookup(p, arg + 2, len, &ambiguous);

	/* glibc sets optopt to 0 for an unknown or ambiguous name, else to the option's val */
	if (!o && !optopt && opt == '?')
		return unknown_long(verb, p, arg + 2, len, ambiguous);
	if (!o || o->flag || o->val != optopt)
		return -1;
	if (opt == '?' && value && o->has_arg == no_argument)
		return cmd_usage_error(verb, "option --%s takes no value", o->name);
	if (opt == ':' && !value && o->has_arg == required_argument)
		return cmd_usage_error(verb, "option --%s needs a value", o->name);
	return -1;
}

int cmd_opt_error(const char *verb, char **argv, int opt)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char name[8];
	int code;

	if (opt == CMD_OPT_REPORTED)
		return MW_EXIT_USAGE;
	/* after a long option's error optind is past it; after a short one's, past its cluster
	 * only when it ended it (glibc permutes, so argv[optind - 1] is the element read) */
	if (cur_parser && !strncmp(arg, "--", 2) && arg[2]) {
		code = long_opt_error(verb, cur_parser, arg, opt);
		if (code >= 0)
			return code;
	}
	if (optopt > ' ' && optopt < 127)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "-\\x%02x", (unsigned)optopt & 0xff);
	if (opt == ':')
		return cmd_usage_error(verb, "option %s needs a value", name);
	return cmd_usage_error(verb, "unknown option %s", name);
}

/* Whether opt takes a value, and its name for a message (a long name when it has one). */
static bool opt_takes_value(const struct cmd_parser *p, int opt, char name[64])
{
	const char *c = opt > 0 && opt < 128 ? strchr(p->shortopts, opt) : NULL;

	for (const struct option *o = p->opts; o->name; o++) {
		if (o->flag == NULL && o->val == opt) {
			snprintf(name, 64, "--%s", o->name);
			return o->has_arg == required_argument;
		}
	}
	snprintf(name, 64, "-%c", opt);
	return c && c[1] == ':';
}

int cmd_getopt(struct cmd_parser *p, int argc, char **argv)
{
	int opt;
	char name[64];

	cur_parser = p;
	opt = getopt_long(argc, argv, p->shortopts, p->opts, NULL);

	if (opt < 0 || opt >= (int)sizeof(p->seen) * 8 || opt == '?' || opt == ':')
		return opt;
	for (const int *r = p->repeatable; r && *r; r++)
		if (*r == opt)
			return opt;
	if (!opt_takes_value(p, opt, name))
		return opt;
	if (p->seen[opt / 8] & (1u << (opt % 8))) {
		cmd_usage_error(p->verb, "option %s given twice (give it once)", name);
		return CMD_OPT_REPORTED;
	}
	p->seen[opt / 8] |= (unsigned char)(1u << (opt % 8));
	return opt;
}

int cmd_load_pubkey(const char *path, struct mcpt_pubkey *key)
{
	char err[256] = "";
	int rc = mcpt_pubkey_load(key, path, err, sizeof(err));

	if (rc) {
		p_err("failed to load public key %s: %s", path, err[0] ? err : strerror(-rc));
		return MW_EXIT_USAGE;
	}
	return MW_EXIT_OK;
}

int cmd_check_stdin(const char *trace)
{
	if (strcmp(trace, "-") || fcntl(0, F_GETFD) >= 0)
		return MW_EXIT_OK;
	p_err("failed to open trace -: %s", strerror(errno));
	return MW_EXIT_USAGE;
}

int cmd_check_stdin_once(const char *verb, char *const *traces, size_t n, const char *extra)
{
	size_t uses = extra && !strcmp(extra, "-");

	for (size_t i = 0; i < n; i++)
		uses += !strcmp(traces[i], "-");
	if (uses > 1)
		return cmd_usage_error(verb, "standard input (-) given twice: it can be read once");
	return uses ? cmd_check_stdin("-") : MW_EXIT_OK;
}

int cmd_refuse(const char *trace, const struct mcpt_report *rep, bool verified)
{
	char msg[REPLAY_MESSAGE_MAX];

	if (rep->verdict == MCPT_UNSUPPORTED) {
		p_err("failed to read trace %s: %s", trace, replay_message(rep, msg));
		return MW_EXIT_USAGE;
	}
	if (verified && (rep->verdict == MCPT_INVALID || rep->verdict == MCPT_WRONG_KEY)) {
		p_err("%s: verification failed: %s: %s", trace, mcpt_report_verdict_name(rep),
		      replay_message(rep, msg));
		return MW_EXIT_VERIFY;
	}
	/* without a key the framing, hashes, chain and counts are still checked */
	if (replay_malformed(rep) || (!verified && rep->verdict == MCPT_INVALID)) {
		p_err("failed to read trace %s: %s: %s", trace, mcpt_code_name(rep->code),
		      replay_message(rep, msg));
		return MW_EXIT_USAGE;
	}
	if (!rep->have_header) {
		p_err("%s: trace incomplete: %s: nothing to read, even with --allow-incomplete",
		      trace, replay_message(rep, msg));
		return MW_EXIT_VERIFY;
	}
	return MW_EXIT_OK;
}

bool cmd_incomplete(const struct mcpt_report *rep, bool verified)
{
	if (verified && rep->verdict == MCPT_VALID_PREFIX)
		return true;
	return !rep->final || replay_damaged(rep);
}

int cmd_output_done(FILE *out, const char *what, int err)
{
	int saved = errno; /* a failed write's, when the stream already has its error flag */

	if (fflush(out))
		err = -errno;
	else if (ferror(out) && (!err || err == -EIO))
		err = saved ? -saved : -EIO;
	if (!err)
		return MW_EXIT_OK;
	p_err("failed to write the %s: %s", what, strerror(-err));
	clearerr(out);
	return MW_EXIT_USAGE;
}

int cmd_default_policy_readable(void)
{
	int fd = open(MW_DEFAULT_POLICY, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	p_err("no -p POLICY given, and the default policy %s cannot be read: %s", MW_DEFAULT_POLICY,
	      strerror(errno));
	return -1;
}
