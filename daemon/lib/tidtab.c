// SPDX-License-Identifier: GPL-2.0-only
/* tidtab.c: the slot of a thread in a fixed open-addressing table (see include/kprof/tidtab.h).
 * Knuth's multiplicative hash spreads consecutive tids; the table is never more than half full,
 * so a probe for a missing tid ends at a free slot after a few steps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/tidtab.h"

void tidtab_init(struct tidtab *t, size_t cap)
{
	*t = (struct tidtab){.cap = cap};
}

long tidtab_get(struct tidtab *t, uint32_t tid, bool *added)
{
	size_t mask = t->cap - 1, i = (tid * 2654435761u) & mask;

	if (added)
		*added = false;
	if (!tid || t->cap < 2 || (t->cap & mask))
		return -EINVAL;
	if (!t->tid && !(t->tid = calloc(t->cap, sizeof(*t->tid))))
		return -ENOMEM;
	for (; t->tid[i]; i = (i + 1) & mask)
		if (t->tid[i] == tid)
			return (long)i;
	if (t->n >= t->cap / 2)
		return -ENOSPC;
	t->tid[i] = tid;
	t->n++;
	if (added)
		*added = true;
	return (long)i;
}

void tidtab_clear(struct tidtab *t)
{
	if (t->tid)
		memset(t->tid, 0, t->cap * sizeof(*t->tid));
	t->n = 0;
}

void tidtab_release(struct tidtab *t)
{
	free(t->tid);
	t->tid = NULL;
	t->n = 0;
}
