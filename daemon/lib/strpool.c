// SPDX-License-Identifier: GPL-2.0-only
/* strpool.c: strings interned once for the whole host (see include/kprof/strpool.h).
 *
 * Why: every process of a host runs the same files (libc, other copies of its binary, the
 * kernel), so thousands of profiles name the same functions. Each kept its own copy of every
 * name and module, and compared them with strcmp when interning a frame; with the symbolizer's
 * names interned here, a profile keeps the pointer and compares addresses.
 *
 * One open-addressing table with linear probing, a power of two of slots, at most half full;
 * a slot holds the pointer to its string, which lives in an arena (never moved, never freed
 * alone) right behind its 8-byte hash, so probing compares hashes before any string and a
 * holder reads the hash without hashing. The cap counts the strings and the slot table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/arena.h"
#include "kprof/hash.h"
#include "kprof/strpool.h"

#define SLOTS_MIN 1024u

struct strpool {
	size_t max_bytes;
	struct arena arena;
	const char **slot;
	size_t nslots, n, str_bytes;
	uint64_t full;
};

int strpool_new(size_t max_bytes, struct strpool **ret)
{
	struct strpool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->max_bytes = max_bytes ? max_bytes : 32u << 20;
	*ret = p;
	return 0;
}

void strpool_free(struct strpool *p)
{
	if (!p)
		return;
	arena_release(&p->arena);
	free(p->slot);
	free(p);
}

static size_t first_slot(const struct strpool *p, uint64_t h)
{
	return mix64(h) & (p->nslots - 1);
}

static int grow(struct strpool *p)
{
	size_t want = p->nslots ? p->nslots * 2 : SLOTS_MIN, j;
	const char **s = calloc(want, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->nslots; i++) {
		if (!p->slot[i])
			continue;
		for (j = mix64(strpool_hash_of(p->slot[i])) & (want - 1); s[j];
		     j = (j + 1) & (want - 1))
			;
		s[j] = p->slot[i];
	}
	free(p->slot);
	p->slot = s;
	p->nslots = want;
	return 0;
}

const char *strpool_intern(struct strpool *p, const char *s)
{
	uint64_t h = strpool_hash(s);
	size_t len, need, j, slots;
	char *copy;

	if (p->nslots)
		for (j = first_slot(p, h); p->slot[j]; j = (j + 1) & (p->nslots - 1))
			if (strpool_hash_of(p->slot[j]) == h && !strcmp(p->slot[j], s))
				return p->slot[j];
	len = strlen(s);
	need = sizeof(h) + len + 1;
	/* The cap holds the slot table too (as it will be after growing): short strings cost
	 * more in slots than in bytes. */
	slots = (p->n + 1) * 2 > p->nslots ? (p->nslots ? p->nslots * 2 : SLOTS_MIN) : p->nslots;
	if (slots * sizeof(*p->slot) + p->str_bytes > p->max_bytes ||
	    need > p->max_bytes - p->str_bytes - slots * sizeof(*p->slot)) {
		p->full++;
		return NULL;
	}
	if (slots != p->nslots && grow(p) < 0)
		return NULL;
	copy = arena_alloc(&p->arena, need);
	if (!copy)
		return NULL;
	memcpy(copy, &h, sizeof(h));
	memcpy(copy + sizeof(h), s, len + 1);
	copy += sizeof(h);
	for (j = first_slot(p, h); p->slot[j]; j = (j + 1) & (p->nslots - 1))
		;
	p->slot[j] = copy;
	p->n++;
	p->str_bytes += need;
	return copy;
}

void strpool_get_stats(const struct strpool *p, struct strpool_stats *st)
{
	*st = (struct strpool_stats){.strs = p->n,
				     .str_bytes = p->str_bytes,
				     .full = p->full,
				     .bytes = sizeof(*p) + p->arena.bytes +
					      p->nslots * sizeof(*p->slot)};
}
