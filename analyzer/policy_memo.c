/*
 * policy_memo.c - the evaluator's string table: which recently seen strings are held in which
 * slot, under which generation, so that glob tests keep their verdicts per slot; and the
 * policy's table of those verdicts (see the memo comment in policy_field.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_field.h"

struct str_memo *str_memo__new(void)
{
	struct str_memo *sm = calloc(1, sizeof(*sm));

	if (!sm) {
		errno = ENOMEM;
		return NULL;
	}
	sm->next_gen = 1;
	return sm;
}

void str_memo__free(struct str_memo *sm)
{
	free(sm);
}

int match_memo_size(struct match_memo **m, uint32_t n)
{
	size_t words = n ? 1 + (n + MEMO_TESTS_PER_WORD - 1) / MEMO_TESTS_PER_WORD : 0;
	uint64_t *rows = NULL;

	if (!*m && !(*m = calloc(1, sizeof(**m))))
		return -ENOMEM;
	if (words && !(rows = calloc(MEMO_SLOTS * words, sizeof(*rows))))
		return -ENOMEM;
	free((*m)->rows);
	(*m)->rows = rows;
	(*m)->words = words;
	return 0;
}

void match_memo_free(struct match_memo *m)
{
	if (m)
		free(m->rows);
	free(m);
}

void str_memo__reset(struct str_memo *sm)
{
	if (sm)
		sm->n_recent = 0;
}

/* Picks the slot: eight bytes a step. */
static uint64_t memo_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	for (; n; p++, n--)
		h = (h ^ *p) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The slot of b, by its bytes; when its set holds it nowhere, the set's oldest slot is taken
 * over (a new generation). */
static size_t lookup(struct str_memo *sm, struct ev_bytes b)
{
	uint64_t h = memo_hash(b.p, b.n);
	struct str_set *set = &sm->set[h % MEMO_SETS];
	uint32_t tag = (uint32_t)(h >> 32) | 1u;
	size_t base = (size_t)(set - sm->set) * MEMO_WAYS, k;
	struct str_slot *s;

	for (unsigned w = 0; w < MEMO_WAYS; w++) {
		s = &sm->slot[base + w];
		if (set->tag[w] == tag && s->len == b.n && memcmp(s->bytes, b.p, b.n) == 0)
			return base + w;
	}
	k = base + set->next;
	set->tag[set->next] = tag;
	set->next = (set->next + 1) % MEMO_WAYS;
	s = &sm->slot[k];
	s->gen = sm->next_gen++;
	s->len = (uint32_t)b.n;
	memcpy(s->bytes, b.p, b.n);
	return k;
}

size_t str_memo_slot(struct str_memo *sm, struct ev_bytes b, uint64_t *gen)
{
	unsigned i;
	size_t k;

	for (i = 0; i < sm->n_recent; i++) {
		if (sm->recent[i].p == b.p && sm->recent[i].n == b.n) {
			k = sm->recent[i].slot;
			if (sm->slot[k].gen == sm->recent[i].gen) { /* not taken over since */
				*gen = sm->recent[i].gen;
				return k;
			}
			break;
		}
	}
	k = lookup(sm, b);
	*gen = sm->slot[k].gen;
	if (i == sm->n_recent) { /* not among them: a new entry, or the oldest replaced */
		if (sm->n_recent < STR_RECENT)
			sm->n_recent++;
		else
			i = sm->next_recent++ % STR_RECENT;
	}
	sm->recent[i].p = b.p;
	sm->recent[i].n = b.n;
	sm->recent[i].slot = k;
	sm->recent[i].gen = *gen;
	return k;
}
