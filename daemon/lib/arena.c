// SPDX-License-Identifier: GPL-2.0-only
/* arena.c: a bump allocator over a list of chunks (see include/kprof/arena.h).
 *
 * The perf-map and symbol-table parsers store many short names that live as long as their
 * table: each name is carved from the newest chunk, and a full chunk is followed by one twice
 * its size (capped), so a table of n names costs O(log n) mallocs and no per-name header.
 * Nothing is freed alone; the pointers handed out never move.
 */
#include <stdint.h>
#include <stdlib.h>

#include "kprof/arena.h"

#define CHUNK_MIN 4096
#define CHUNK_MAX (1024 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	char data[];
};

char *arena_alloc(struct arena *a, size_t len)
{
	struct arena_chunk *c = a->chunks;

	if (!c || c->size - c->used < len) {
		size_t sz = c ? c->size * 2 : CHUNK_MIN;

		if (sz > CHUNK_MAX)
			sz = CHUNK_MAX;
		if (sz < len)
			sz = len;
		if (sz > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + sz);
		if (!c)
			return NULL;
		c->size = sz;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		a->bytes += sizeof(*c) + sz;
	}
	c->used += len;
	return c->data + c->used - len;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	a->chunks = NULL;
	a->bytes = 0;
}
