// SPDX-License-Identifier: GPL-2.0-only
/* idxtab.c: growing and removing in the index hash (see include/kprof/idxtab.h). Growing
 * places the old slots' indices again in a table twice the size; removal is the backward shift
 * of linear probing (no tombstones), so lookups never walk deleted slots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/idxtab.h"

int idxtab_reserve(struct idxtab *t, size_t n, size_t min, idxtab_hash_fn hash, const void *ctx)
{
	size_t ns = t->nslots ? t->nslots : (min >= 2 ? min : 2);
	uint32_t *s;

	if (n >= UINT32_MAX / 2)
		return -EOVERFLOW;
	while (n * 2 > ns)
		ns *= 2;
	if (ns == t->nslots && t->slot)
		return 0;
	s = calloc(ns, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		size_t j;

		if (!t->slot[i])
			continue;
		for (j = hash(ctx, t->slot[i] - 1) & (ns - 1); s[j]; j = (j + 1) & (ns - 1))
			;
		s[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = s;
	t->nslots = ns;
	return 0;
}

void idxtab_remove(struct idxtab *t, uint64_t h, uint32_t idx, idxtab_hash_fn hash, const void *ctx)
{
	size_t mask = t->nslots - 1, i, k;

	if (!t->nslots)
		return;
	for (i = h & mask; t->slot[i] && t->slot[i] != idx + 1; i = (i + 1) & mask)
		;
	if (!t->slot[i])
		return;
	t->slot[i] = 0;
	for (k = (i + 1) & mask; t->slot[k]; k = (k + 1) & mask) {
		size_t home = hash(ctx, t->slot[k] - 1) & mask;

		/* It stays if its home lies cyclically in (i, k]. */
		if (i <= k ? (i < home && home <= k) : (i < home || home <= k))
			continue;
		t->slot[i] = t->slot[k];
		t->slot[k] = 0;
		i = k;
	}
}

void idxtab_clear(struct idxtab *t)
{
	if (t->slot)
		memset(t->slot, 0, t->nslots * sizeof(*t->slot));
}

void idxtab_release(struct idxtab *t)
{
	free(t->slot);
	*t = (struct idxtab){0};
}
