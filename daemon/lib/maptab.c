// SPDX-License-Identifier: GPL-2.0-only
/* maptab.c: the executable file mappings of one target (see include/kprof/maptab.h).
 *
 * A plain array searched linearly: a process maps tens to a few hundred executable files, the
 * table is added to only when the target's maps are read again, and it is capped. Strings are
 * copied per entry (a path once, a build id in place).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/maptab.h"

struct mtent {
	struct maptab_entry e;
	char build_id[MAPTAB_BUILD_ID_MAX];
};

struct maptab {
	struct mtent *v;
	size_t n, cap, max;
	uint64_t dropped;
};

int maptab_new(size_t max, struct maptab **ret)
{
	struct maptab *mt = calloc(1, sizeof(*mt));

	if (!mt)
		return -ENOMEM;
	mt->max = max ? max : MAPTAB_DEFAULT_MAX;
	*ret = mt;
	return 0;
}

void maptab_free(struct maptab *mt)
{
	if (!mt)
		return;
	for (size_t i = 0; i < mt->n; i++)
		free((char *)mt->v[i].e.path);
	free(mt->v);
	free(mt);
}

/* What e adds to x, an entry of the same mapping. */
static void complete(struct mtent *x, const struct maptab_entry *e)
{
	if (!x->build_id[0] && e->build_id && e->build_id[0])
		snprintf(x->build_id, sizeof(x->build_id), "%s", e->build_id);
	if (!x->e.has_vaddr && e->has_vaddr) {
		x->e.vaddr = e->vaddr;
		x->e.has_vaddr = true;
	}
	x->e.exe |= e->exe;
}

int maptab_add(struct maptab *mt, const struct maptab_entry *e)
{
	struct mtent *x;
	size_t at;
	char *path;

	if (e->limit < e->start || !e->path)
		return -EINVAL;
	for (size_t i = 0; i < mt->n; i++) {
		x = &mt->v[i];
		if (x->e.start == e->start && x->e.limit == e->limit && x->e.offset == e->offset &&
		    !strncmp(x->e.path, e->path, MAPTAB_PATH_MAX - 1)) {
			complete(x, e);
			return 0;
		}
	}
	if (mt->n >= mt->max) {
		mt->dropped++;
		return -ENOSPC;
	}
	if (array_grow((void **)&mt->v, &mt->cap, mt->n + 1, sizeof(*mt->v), 16) < 0 ||
	    !(path = strndup(e->path, MAPTAB_PATH_MAX - 1)))
		return -ENOMEM;
	/* An executable after those of the same file (in address order: its first mapping
	 * first), before those of another (an exec since: the newest program first). */
	at = mt->n;
	if (e->exe) {
		for (at = 0; at < mt->n && mt->v[at].e.exe && !strcmp(mt->v[at].e.path, path); at++)
			;
	}
	memmove(&mt->v[at + 1], &mt->v[at], (mt->n - at) * sizeof(*mt->v));
	x = &mt->v[at];
	memset(x, 0, sizeof(*x));
	x->e = *e;
	x->e.path = path;
	snprintf(x->build_id, sizeof(x->build_id), "%s", e->build_id ? e->build_id : "");
	mt->n++;
	return 1;
}

size_t maptab_count(const struct maptab *mt)
{
	return mt->n;
}

const struct maptab_entry *maptab_at(const struct maptab *mt, size_t i)
{
	struct mtent *x;

	if (i >= mt->n)
		return NULL;
	x = &mt->v[i];
	x->e.build_id = x->build_id; /* the array may have moved since it was added */
	return &x->e;
}

uint64_t maptab_dropped(const struct maptab *mt)
{
	return mt->dropped;
}
