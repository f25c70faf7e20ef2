/*
 * vars.c - policy variables (see vars.h). A handful of names: a sorted array is plenty.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "vars.h"

struct var {
	char name[VARS_NAME_MAX + 1];
	char *val; /* NUL-terminated copy; NULL = no value */
	size_t len;
	bool from_set; /* --set: the header does not override it */
};

struct vars {
	struct var *v;
	int n;
};

static const char *const builtins[] = {"home", "passwd_home", "tmp", "user", "workspace"};

static struct var *find(const struct vars *vs, const char *name)
{
	for (int i = 0; i < vs->n; i++)
		if (strcmp(vs->v[i].name, name) == 0)
			return &vs->v[i];
	return NULL;
}

static struct var *declare(struct vars *vs, const char *name)
{
	struct var *v = find(vs, name), *arr;
	int i;

	if (v)
		return v;
	arr = realloc(vs->v, (size_t)(vs->n + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	vs->v = arr;
	for (i = vs->n; i > 0 && strcmp(vs->v[i - 1].name, name) > 0; i--)
		vs->v[i] = vs->v[i - 1];
	memset(&vs->v[i], 0, sizeof(vs->v[i]));
	snprintf(vs->v[i].name, sizeof(vs->v[i].name), "%s", name);
	vs->n++;
	return &vs->v[i];
}

static int assign(struct var *v, const void *val, size_t len)
{
	char *p = malloc(len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, val, len);
	p[len] = '\0';
	free(v->val);
	v->val = p;
	v->len = len;
	return 0;
}

struct vars *vars__new(void)
{
	struct vars *vs = calloc(1, sizeof(*vs));

	if (!vs)
		return NULL;
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		if (!declare(vs, builtins[i])) {
			vars__free(vs);
			errno = ENOMEM;
			return NULL;
		}
	}
	return vs;
}

void vars__free(struct vars *vs)
{
	if (!vs)
		return;
	for (int i = 0; i < vs->n; i++)
		free(vs->v[i].val);
	free(vs->v);
	free(vs);
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > VARS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int vars__set_arg(struct vars *vs, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char name[VARS_NAME_MAX + 1];
	struct var *v;
	size_t n;

	if (!eq || !name_ok(arg, (size_t)(eq - arg))) {
		struct strbuf q = STRBUF_INIT;

		strbuf_escape_short(&q, (const uint8_t *)arg, strlen(arg), ESC_QUOTE);
		snprintf(err, errlen,
			 "bad --set \"%s\": expected NAME=VALUE, NAME of letters, "
			 "digits and '_'",
			 strbuf_str(&q) ? strbuf_str(&q) : "?");
		strbuf_fini(&q);
		return -EINVAL;
	}
	n = (size_t)(eq - arg);
	memcpy(name, arg, n);
	name[n] = '\0';
	v = declare(vs, name);
	if (!v || assign(v, eq + 1, strlen(eq + 1))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	v->from_set = true;
	return 0;
}

static int from_bytes(struct vars *vs, const char *name, const ProtobufCBinaryData *a,
		      const ProtobufCBinaryData *fallback, const char *dflt)
{
	struct var *v = find(vs, name);

	if (!v || v->from_set)
		return 0;
	if (a && a->len && a->data)
		return assign(v, a->data, a->len);
	if (fallback && fallback->len && fallback->data)
		return assign(v, fallback->data, fallback->len);
	if (dflt)
		return assign(v, dflt, strlen(dflt));
	return 0;
}

int vars__from_header(struct vars *vs, const Mcpt__Header *h)
{
	const Mcpt__Target *t = h ? h->target : NULL;
	int err = 0;

	if (!t)
		return from_bytes(vs, "tmp", NULL, NULL, "/tmp");
	err = err ?: from_bytes(vs, "home", &t->home, &t->passwd_home, NULL);
	err = err ?: from_bytes(vs, "passwd_home", &t->passwd_home, &t->home, NULL);
	err = err ?: from_bytes(vs, "workspace", &t->cwd, NULL, NULL);
	err = err ?: from_bytes(vs, "tmp", &t->tmp, NULL, "/tmp");
	err = err ?: from_bytes(vs, "user", &t->user, NULL, NULL);
	return err;
}

int vars__get(const struct vars *vs, const char *name, const char **val, size_t *len)
{
	const struct var *v = find(vs, name);

	if (!v)
		return -ENOENT;
	if (!v->val)
		return -ENODATA;
	*val = v->val;
	*len = v->len;
	return 0;
}

int vars__count(const struct vars *vs)
{
	return vs->n;
}

const char *vars__name(const struct vars *vs, int i)
{
	return i >= 0 && i < vs->n ? vs->v[i].name : NULL;
}
