/*
 * cmd_keygen.c - `mcpwitness keygen -o DIR`: an Ed25519 key pair for the collector,
 * DIR/signing.key (seed only, 0600) and DIR/signing.pub (minisign format); prints the key id.
 * DIR is created (0755) when missing; existing key files are never overwritten.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "log.h"
#include "mcpt.h"

static void usage(FILE *out)
{
	fputs("usage: mcpwitness keygen -o DIR\n"
	      "  -o, --output DIR   where to write signing.key (0600) and signing.pub\n"
	      "Prints the key id on standard output.\n",
	      out);
}

static int make_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (errno != ENOENT)
		return -errno;
	return mkdir(dir, 0755) ? -errno : 0;
}

/* Removes the pair keygen just made in dir (mcpt_key_generate creates both, never over an
 * existing file). */
static void remove_pair(const char *dir)
{
	static const char *const names[] = {"signing.key", "signing.pub"};
	char path[PATH_MAX];

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

int do_keygen(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL;
	char keyid[17], err[256];
	struct cmd_parser parser = {"keygen", ":o:h", opts, NULL};
	int opt, rc;

	while ((opt = cmd_getopt(&parser, argc, argv)) != -1) {
		switch (opt) {
		case 'o':
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return MW_EXIT_OK;
		default:
			return cmd_opt_error("keygen", argv, opt);
		}
	}
	if (!dir)
		return cmd_usage_error("keygen", "missing -o DIR");
	if (optind < argc)
		return cmd_usage_error("keygen", "unexpected argument \"%s\"", argv[optind]);
	rc = make_dir(dir);
	if (rc) {
		p_err("failed to create key directory %s: %s", dir, strerror(-rc));
		return MW_EXIT_USAGE;
	}
	err[0] = '\0';
	rc = mcpt_key_generate(dir, keyid, err, sizeof(err));
	if (rc) {
		p_err("failed to generate key in %s: %s", dir, err[0] ? err : strerror(-rc));
		return MW_EXIT_USAGE;
	}
	/* all or nothing: a pair whose id was lost would refuse the retry */
	if (printf("%s\n", keyid) < 0 || fflush(stdout)) {
		rc = errno;
		remove_pair(dir);
		p_err("failed to write the key id: %s; the key pair made in %s is removed",
		      strerror(rc), dir);
		clearerr(stdout);
		return MW_EXIT_USAGE;
	}
	return MW_EXIT_OK;
}
