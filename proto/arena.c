/*
 * arena.c - a bump allocator for protobuf-c with a byte budget (TRACE-FORMAT.md 5.8).
 *
 * protobuf-c allocates per repeated element and per unknown field, so a small crafted record
 * can ask for tens of times its size. Unpacking through an arena bounds that (the budget is set
 * per record) and makes freeing a no-op: the verifier resets the arena after each record. The
 * first block is kept between resets, so steady-state parsing does not call malloc at all.
 */
#include <stdlib.h>

#include "internal.h"

#define ARENA_BLOCK (64u << 10)
#define ARENA_ALIGN 16u

struct mcpt_arena_block {
	struct mcpt_arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

static struct mcpt_arena_block *block_new(size_t size)
{
	struct mcpt_arena_block *b = malloc(sizeof(*b) + size);

	if (!b)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

static void *arena_alloc(void *data, size_t size)
{
	struct mcpt_arena *a = data;
	struct mcpt_arena_block *b = a->head;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (need < size || need > a->budget - a->used)
		return NULL;
	if (!b || b->size - b->used < need) {
		b = block_new(need > ARENA_BLOCK ? need : ARENA_BLOCK);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += need;
	a->used += need;
	return p;
}

static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr; /* released by mcpt_arena_reset */
}

void mcpt_arena_init(struct mcpt_arena *a)
{
	a->pb.alloc = arena_alloc;
	a->pb.free = arena_free;
	a->pb.allocator_data = a;
	a->head = NULL;
	a->used = 0;
	a->budget = 0;
}

void mcpt_arena_reset(struct mcpt_arena *a, size_t budget)
{
	struct mcpt_arena_block *b = a->head, *keep = NULL;

	while (b) {
		struct mcpt_arena_block *next = b->next;

		if (!next && b->size == ARENA_BLOCK)
			keep = b; /* the oldest block, if standard-sized, is reused */
		else
			free(b);
		b = next;
	}
	if (keep) {
		keep->used = 0;
		keep->next = NULL;
	}
	a->head = keep;
	a->used = 0;
	a->budget = budget;
}

void mcpt_arena_fini(struct mcpt_arena *a)
{
	struct mcpt_arena_block *b = a->head;

	while (b) {
		struct mcpt_arena_block *next = b->next;

		free(b);
		b = next;
	}
	a->head = NULL;
}
