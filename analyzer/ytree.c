/*
 * ytree.c - libyaml events to a tree with positions (see ytree.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "strbuf.h"
#include "ytree.h"

struct builder {
	const char *file;
	const uint8_t *buf; /* the input, for the place of a reader error */
	size_t len;
	struct diag *d;
	struct ynode *root;
	struct ynode *stack[YTREE_MAX_DEPTH];
	size_t depth;
	size_t nodes;
	int docs;
};

static struct srcpos pos_of(const struct builder *b, yaml_mark_t m)
{
	return (struct srcpos){
		.file = b->file, .line = (unsigned)m.line + 1, .col = (unsigned)m.column + 1};
}

static int add_kid(struct ynode *parent, struct ynode *kid)
{
	struct ynode **v;

	if ((parent->n & (parent->n - 1)) == 0) { /* grow at powers of two */
		size_t cap = parent->n ? parent->n * 2 : 4;

		v = realloc(parent->kids, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		parent->kids = v;
	}
	parent->kids[parent->n++] = kid;
	return 0;
}

/* Keys a mapping is scanned for duplicates as they come; past them the whole mapping is sorted
 * at its end (check_keys_sorted): a mapping of n keys costs n log n, not n^2 / 2. */
#define KEYS_SCANNED 16

static bool scalar_eq(const struct ynode *a, const struct ynode *b)
{
	return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
}

/* A bad key, quoted with its bytes escaped: a duplicate of the key first seen at line first,
 * or (first == 0) one holding a NUL byte. Returns -EINVAL. */
static int key_error(struct builder *b, const struct ynode *key, unsigned first)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s;

	strbuf_escape_short(&sb, (const uint8_t *)key->str, key->len, ESC_QUOTE);
	s = strbuf_str(&sb) ? strbuf_str(&sb) : "?";
	if (first)
		diag_error(b->d, &key->pos, "duplicate key \"%s\" (first at line %u)", s, first);
	else
		diag_error(b->d, &key->pos, "key \"%s\" holds a NUL byte", s);
	strbuf_fini(&sb);
	return -EINVAL;
}

/* Checks a new mapping key: a scalar without a NUL byte (every consumer compares keys as C
 * strings, so "severity\0junk" would be read as "severity" or ignored), not seen before in
 * this mapping. */
static int check_key(struct builder *b, const struct ynode *map, const struct ynode *key)
{
	if (key->kind != YN_SCALAR) {
		diag_error(b->d, &key->pos, "mapping keys must be scalars, not %s",
			   ynode_kind_name(key));
		return -EINVAL;
	}
	if (memchr(key->str, '\0', key->len))
		return key_error(b, key, 0);
	for (size_t i = 0; i + 1 < map->n && map->n < 2 * KEYS_SCANNED; i += 2) {
		if (scalar_eq(map->kids[i], key))
			return key_error(b, key, map->kids[i]->pos.line);
	}
	return 0;
}

struct key_at {
	const struct ynode *key;
	size_t i; /* its place in the mapping */
};

static int key_at_cmp(const void *pa, const void *pb)
{
	const struct key_at *a = pa, *b = pb;
	int c;

	if (a->key->len != b->key->len)
		return a->key->len < b->key->len ? -1 : 1;
	c = memcmp(a->key->str, b->key->str, a->key->len);
	if (c)
		return c;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* At the end of a mapping of KEYS_SCANNED keys or more (check_key scanned only the first ones
 * as they came): its keys sorted, the earliest key that repeats one before it is reported,
 * as check_key would have. */
static int check_keys_sorted(struct builder *b, const struct ynode *map)
{
	size_t n = map->n / 2, dup = SIZE_MAX, first = 0;
	struct key_at *k;

	if (n <= KEYS_SCANNED)
		return 0;
	k = malloc(n * sizeof(*k));
	if (!k) {
		diag_error(b->d, &map->pos, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct key_at){map->kids[2 * i], i};
	qsort(k, n, sizeof(*k), key_at_cmp);
	for (size_t i = 1; i < n; i++) {
		if (scalar_eq(k[i - 1].key, k[i].key) && k[i].i < dup &&
		    (i < 2 || !scalar_eq(k[i - 2].key, k[i].key))) {
			dup = k[i].i;
			first = k[i - 1].i;
		}
	}
	free(k);
	if (dup == SIZE_MAX)
		return 0;
	return key_error(b, map->kids[2 * dup], map->kids[2 * first]->pos.line);
}

static int attach(struct builder *b, struct ynode *n)
{
	struct ynode *top;
	int err;

	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	top = b->stack[b->depth - 1];
	if (top->kind == YN_MAP && top->n % 2 == 0) {
		err = check_key(b, top, n);
		if (err) {
			ynode_free(n);
			return err;
		}
	}
	err = add_kid(top, n);
	if (err) {
		ynode_free(n);
		diag_error(b->d, &n->pos, "out of memory");
	}
	return err;
}

static struct ynode *new_node(struct builder *b, enum ynode_kind kind, yaml_mark_t m)
{
	struct ynode *n;

	if (++b->nodes > YTREE_MAX_NODES) {
		struct srcpos p = pos_of(b, m);

		diag_error(b->d, &p, "document has more than %d nodes", YTREE_MAX_NODES);
		errno = EINVAL;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->kind = kind;
	n->pos = pos_of(b, m);
	return n;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n = new_node(b, YN_SCALAR, ev->start_mark);

	if (!n)
		return -errno;
	n->len = ev->data.scalar.length;
	n->str = malloc(n->len + 1);
	if (!n->str) {
		ynode_free(n);
		return -ENOMEM;
	}
	memcpy(n->str, ev->data.scalar.value, n->len);
	n->str[n->len] = '\0';
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	return attach(b, n);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum ynode_kind kind)
{
	struct ynode *n;
	struct srcpos p = pos_of(b, ev->start_mark);
	int err;

	if (b->depth >= YTREE_MAX_DEPTH) {
		diag_error(b->d, &p, "nesting deeper than %d levels", YTREE_MAX_DEPTH);
		return -EINVAL;
	}
	n = new_node(b, kind, ev->start_mark);
	if (!n)
		return -errno;
	err = attach(b, n);
	if (err)
		return err;
	b->stack[b->depth++] = n;
	return 0;
}

static int reject(struct builder *b, const yaml_event_t *ev, const char *what)
{
	struct srcpos p = pos_of(b, ev->start_mark);

	diag_error(b->d, &p, "%s", what);
	return -EINVAL;
}

static bool has_tag(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.tag != NULL;
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.tag != NULL;
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.tag != NULL;
	default:
		return false;
	}
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	if (has_tag(ev))
		return reject(b, ev, "YAML tags are not supported");
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return reject(b, ev, "only one YAML document per file");
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, YN_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, YN_MAP);
	case YAML_SEQUENCE_END_EVENT:
		b->depth--;
		return 0;
	case YAML_MAPPING_END_EVENT:
		return check_keys_sorted(b, b->stack[--b->depth]);
	case YAML_ALIAS_EVENT:
		return reject(b, ev, "YAML aliases are not supported");
	default:
		return 0;
	}
}

/* The place of input byte off: libyaml's reader (bad UTF-8, control characters such as NUL)
 * reports only a byte offset, its problem_mark stays zero. Lines end at '\n'; the column
 * counts characters, as libyaml's marks do (bytes that are not UTF-8 continuations). */
static struct srcpos pos_of_offset(const struct builder *b, size_t off)
{
	struct srcpos pos = {.file = b->file, .line = 1, .col = 1};

	if (off > b->len)
		off = b->len;
	for (size_t i = 0; i < off; i++) {
		if (b->buf[i] == '\n') {
			pos.line++;
			pos.col = 1;
		} else if ((b->buf[i] & 0xc0) != 0x80) {
			pos.col++;
		}
	}
	return pos;
}

static void parser_error(struct builder *b, const yaml_parser_t *p)
{
	struct srcpos pos = p->error == YAML_READER_ERROR ? pos_of_offset(b, p->problem_offset)
							  : pos_of(b, p->problem_mark);

	if (p->error == YAML_MEMORY_ERROR) {
		diag_error(b->d, &pos, "out of memory");
	} else if (p->context) {
		diag_error(b->d, &pos, "%s %s (line %zu column %zu)",
			   p->problem ? p->problem : "error", p->context, p->context_mark.line + 1,
			   p->context_mark.column + 1);
	} else {
		diag_error(b->d, &pos, "%s", p->problem ? p->problem : "malformed YAML");
	}
}

static int run_parser(struct builder *b, yaml_parser_t *p)
{
	yaml_event_t ev;
	bool done = false;
	int err = 0;

	while (!done && !err) {
		if (!yaml_parser_parse(p, &ev)) {
			parser_error(b, p);
			return -EINVAL;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		err = on_event(b, &ev);
		yaml_event_delete(&ev);
	}
	return err;
}

struct ynode *ytree_parse(const char *file, const uint8_t *buf, size_t len, struct diag *d)
{
	struct builder b = {.file = file, .buf = buf, .len = len, .d = d};
	struct srcpos whole = {.file = file, .line = 1, .col = 1};
	yaml_parser_t p;
	int err;

	if (!yaml_parser_initialize(&p)) {
		diag_error(d, &whole, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	yaml_parser_set_input_string(&p, buf, len);
	err = run_parser(&b, &p);
	yaml_parser_delete(&p);
	if (!err && !b.root) {
		diag_error(d, &whole, "empty document");
		err = -EINVAL;
	}
	if (err) {
		ynode_free(b.root);
		errno = -err;
		return NULL;
	}
	return b.root;
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

const char *ynode_kind_name(const struct ynode *n)
{
	switch (n->kind) {
	case YN_SCALAR:
		return ynode_is_null(n) ? "null" : "a scalar";
	case YN_SEQ:
		return "a sequence";
	case YN_MAP:
		return "a mapping";
	}
	return "?";
}

bool ynode_is_null(const struct ynode *n)
{
	return n->kind == YN_SCALAR && !n->quoted &&
	       (n->len == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0);
}

bool ynode_is_string(const struct ynode *n)
{
	return n->kind == YN_SCALAR && !ynode_is_null(n);
}

int ynode_bool(const struct ynode *n, bool *out)
{
	if (n->kind != YN_SCALAR || n->quoted)
		return -EINVAL;
	if (strcmp(n->str, "true") == 0)
		*out = true;
	else if (strcmp(n->str, "false") == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

int ynode_int(const struct ynode *n, int64_t *out)
{
	char *end;
	long long v;

	if (n->kind != YN_SCALAR || n->quoted || n->len == 0 || n->len > 20)
		return -EINVAL;
	for (size_t i = 0; i < n->len; i++)
		if (!((n->str[i] >= '0' && n->str[i] <= '9') || (i == 0 && n->str[0] == '-')))
			return -EINVAL;
	errno = 0;
	v = strtoll(n->str, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

const struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	if (map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->kids[i]->str, key) == 0 && strlen(key) == map->kids[i]->len)
			return map->kids[i + 1];
	return NULL;
}
