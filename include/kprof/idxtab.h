/* SPDX-License-Identifier: GPL-2.0-only */
/* idxtab.h: the index hash of kprof's interning tables (idxtab.c).
 *
 * A caller keeps its entries in a dense array of its own type; an idxtab maps a key's hash to
 * the entry's index in that array. Open addressing over a power of two of slots holding
 * index + 1 (0: empty), linear probing, never more than half full. The table knows no keys: a
 * lookup walks the probe sequence of a hash with idxtab_probe() and the caller compares its own
 * entry at each slot, so the comparison stays inline in hot paths; growing and removing ask the
 * caller for the hash of an index. Pure: no I/O.
 *
 *	idxtab_probe(&t->tab, h, j)
 *		if (same(&t->v[t->tab.slot[j] - 1], key))
 *			return t->tab.slot[j] - 1;
 *	t->tab.slot[j] = t->n + 1;   (j: the free slot the walk ended on)
 */
#ifndef KPROF_IDXTAB_H
#define KPROF_IDXTAB_H

#include <stddef.h>
#include <stdint.h>

struct idxtab {
	uint32_t *slot; /* nslots entries: index + 1, 0 = empty; NULL until the first reserve */
	size_t nslots;	/* a power of two, or 0 */
};

/* The hash of the caller's entry idx (the one its lookups use). */
typedef uint64_t (*idxtab_hash_fn)(const void *ctx, uint32_t idx);

/* Room for n entries with the table at most half full: the slots double (from min, a power of
 * two) and every entry is placed again by hash(ctx, idx) (hash may be NULL while the table
 * holds none). 0, -EOVERFLOW (n too large for 32-bit indices) or -ENOMEM (table unchanged). */
int idxtab_reserve(struct idxtab *t, size_t n, size_t min, idxtab_hash_fn hash, const void *ctx);
/* Take the entry idx out (its hash: h): the entries after it whose walk would end at the hole
 * move back. Nothing happens if idx is not in the table. */
void idxtab_remove(struct idxtab *t, uint64_t h, uint32_t idx, idxtab_hash_fn hash,
		   const void *ctx);
/* Every entry out; the slots' memory is kept. */
void idxtab_clear(struct idxtab *t);
void idxtab_release(struct idxtab *t);

static inline size_t idxtab_first(const struct idxtab *t, uint64_t h)
{
	return (size_t)h & (t->nslots - 1);
}

static inline size_t idxtab_next(const struct idxtab *t, size_t j)
{
	return (j + 1) & (t->nslots - 1);
}

/* Walk h's probe sequence over the occupied slots; j (a size_t of the caller) ends on the free
 * slot where an entry of hash h goes. The table must have slots (idxtab_reserve first). */
#define idxtab_probe(t, h, j)                                                                     \
	for ((j) = idxtab_first((t), (h)); (t)->slot[j]; (j) = idxtab_next((t), (j)))

#endif
