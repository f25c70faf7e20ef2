/*
 * policy_util.c - small pieces shared by the policy loader: severity names, name syntax,
 * escaped copies for messages, unknown-key reports with "did you mean" hints, and the
 * override rules of lists and rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "strbuf.h"

static const char *const sev_names[SEV_COUNT] = {"info", "low", "medium", "high", "critical"};

const char *severity_name(enum severity s)
{
	return (unsigned)s < SEV_COUNT ? sev_names[s] : "?";
}

int severity_by_name(const char *name)
{
	for (int i = 0; i < SEV_COUNT; i++)
		if (strcmp(sev_names[i], name) == 0)
			return i;
	return -1;
}

char *pol_strdup_escaped(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_escape_short(&sb, (const uint8_t *)s, len, ESC_QUOTE);
	return strbuf_detach(&sb);
}

/* Names of lists, macros and rule ids: letters, digits, '_', '-', '.', ':'; first alnum. */
bool pol_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > POL_NAME_MAX || strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool alnum =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("_-.:", c)))
			return false;
	}
	return true;
}

int pol_check_name(struct pol_loader *ld, const struct ynode *n, const char *what)
{
	if (ynode_is_string(n) && pol_name_ok(n->str, n->len))
		return 0;
	if (ynode_is_string(n) && n->len > POL_NAME_MAX)
		diag_error(ld->d, &n->pos, "%s is %zu characters long (at most %d)", what, n->len,
			   POL_NAME_MAX);
	else
		diag_error(ld->d, &n->pos, "bad %s (letters, digits, '_', '-', '.', ':')", what);
	return -EINVAL;
}

/* --- shared checks ------------------------------------------------------------------------ */

/* Levenshtein distance, capped: for "did you mean" hints on unknown keys. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33], prev, tmp;

	if (la > 32 || lb > 32)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev : 1 + (prev < row[j] ? prev : row[j]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			prev = tmp;
		}
	}
	return row[lb];
}

const char *pol_suggest(const char *s, const char *const *cands)
{
	const char *best = NULL;
	size_t bd = 3, d;

	for (size_t i = 0; cands[i]; i++) {
		d = edit_distance(s, cands[i]);
		if (d < bd) {
			bd = d;
			best = cands[i];
		}
	}
	return best;
}

void pol_unknown_key(struct pol_loader *ld, const struct ynode *key, const char *what,
		     const char *const *cands)
{
	char *s = pol_strdup_escaped(key->str, key->len);
	const char *hint = cands ? pol_suggest(key->str, cands) : NULL;

	if (hint)
		diag_error(ld->d, &key->pos, "unknown %s key \"%s\" (did you mean \"%s\"?)", what,
			   s ? s : "?", hint);
	else
		diag_error(ld->d, &key->pos, "unknown %s key \"%s\"", what, s ? s : "?");
	free(s);
}

/* Keys never hold a NUL byte (ytree refuses them), so strcmp compares them whole. */
int pol_check_keys(struct pol_loader *ld, const struct ynode *map, const char *const *keys,
		   const char *what)
{
	int err = 0;
	size_t k;

	for (size_t i = 0; i + 1 < map->n; i += 2) {
		for (k = 0; keys[k] && strcmp(keys[k], map->kids[i]->str) != 0; k++)
			;
		if (!keys[k]) {
			pol_unknown_key(ld, map->kids[i], what, keys);
			err = -EINVAL;
		}
	}
	return err;
}

/* ov is the scalar word, bytes for bytes ("append\0x" is not "append"). */
static bool scalar_is(const struct ynode *ov, const char *word)
{
	return ynode_is_string(ov) && ov->len == strlen(word) && strcmp(ov->str, word) == 0;
}

int pol_override_check(struct pol_loader *ld, const struct ynode *key, const struct ynode *ov,
		       const struct srcpos *old, const char *what)
{
	char *name = pol_strdup_escaped(key->str, key->len);
	int ret = POL_OVERRIDE_NONE;

	if (!ov && old) {
		diag_error(ld->d, &key->pos,
			   "%s \"%s\" is already defined at %s:%u:%u (use override: "
			   "append or replace)",
			   what, name ? name : "?", old->file, old->line, old->col);
		ret = -EINVAL;
	} else if (ov && scalar_is(ov, "append")) {
		ret = POL_OVERRIDE_APPEND;
	} else if (ov && scalar_is(ov, "replace")) {
		ret = POL_OVERRIDE_REPLACE;
	} else if (ov) {
		diag_error(ld->d, &ov->pos, "\"override\" is append or replace");
		ret = -EINVAL;
	}
	if (ret > 0 && !old) {
		diag_error(ld->d, &ov->pos, "override of %s \"%s\", which no earlier file defines",
			   what, name ? name : "?");
		ret = -EINVAL;
	}
	free(name);
	return ret;
}
