/*
 * cmd.c - subcommand dispatch and the common option-error path (see cmd.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "mcpt.h"
#include "log.h"
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

int cmd_opt_error(const char *verb, char **argv, int opt)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (opt == ':')
		return cmd_usage_error(verb, "option %s needs a value", arg);
	if (optopt)
		return cmd_usage_error(verb, "unknown option -%c", optopt);
	return cmd_usage_error(verb, "unknown option %s", arg);
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
