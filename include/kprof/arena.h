/* SPDX-License-Identifier: GPL-2.0-only */
/* arena.h: bytes handed out from chunks that never move (arena.c): names that stay valid until
 * the arena is freed, at one malloc per chunk instead of one per name. */
#ifndef KPROF_ARENA_H
#define KPROF_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *chunks; /* newest first */
	size_t bytes;		    /* held, chunk headers included */
};

/* len bytes (uninitialized), or NULL: no memory, or len too large. Chunks double from 4 KiB to
 * 1 MiB (a larger len gets a chunk of its own). */
char *arena_alloc(struct arena *a, size_t len);
/* Free every chunk; the arena is empty again (and may be reused). */
void arena_release(struct arena *a);

#endif
