// SPDX-License-Identifier: GPL-2.0-only
/* tnames.c: the names of one target's threads (see include/kprof/tnames.h).
 *
 * An array of (tid, name) in the order first named, and an open-addressing index of it (linear
 * probing, power-of-two size, grown at half load). Every sample looks its thread up, so a hit
 * costs one probe and a 16-byte compare; nothing is ever removed (a tid that ends keeps its
 * name: its samples stay in the profile).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/tnames.h"

struct tname {
	uint32_t tid;
	char name[TNAMES_NAME_MAX];
};

struct tnames {
	struct tname *v;
	size_t n, cap, max;
	struct idxtab tab; /* tid -> index */
	uint64_t dropped;
};

int tnames_new(size_t max, struct tnames **ret)
{
	struct tnames *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->max = max ? max : TNAMES_DEFAULT_MAX;
	*ret = t;
	return 0;
}

void tnames_free(struct tnames *t)
{
	if (!t)
		return;
	idxtab_release(&t->tab);
	free(t->v);
	free(t);
}

static size_t slot_of(const struct tnames *t, uint32_t tid)
{
	size_t j;

	idxtab_probe(&t->tab, mix64(tid), j)
		if (t->v[t->tab.slot[j] - 1].tid == tid)
			break;
	return j;
}

static uint64_t tid_hash(const void *ctx, uint32_t i)
{
	return mix64(((const struct tnames *)ctx)->v[i].tid);
}

int tnames_set(struct tnames *t, uint32_t tid, const char *name, size_t len)
{
	char buf[TNAMES_NAME_MAX] = {0};
	struct tname *e;
	size_t j;

	if (!tid || !name)
		return -EINVAL;
	len = strnlen(name, len < TNAMES_NAME_MAX - 1 ? len : TNAMES_NAME_MAX - 1);
	memcpy(buf, name, len);
	if (t->tab.nslots) {
		j = slot_of(t, tid);
		if (t->tab.slot[j]) {
			e = &t->v[t->tab.slot[j] - 1];
			if (!memcmp(e->name, buf, sizeof(buf)))
				return 0;
			memcpy(e->name, buf, sizeof(buf));
			return 1;
		}
	}
	if (t->n >= t->max) {
		t->dropped++;
		return -ENOSPC;
	}
	if (idxtab_reserve(&t->tab, t->n + 1, 64, tid_hash, t) < 0 ||
	    array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64) < 0)
		return -ENOMEM;
	e = &t->v[t->n];
	e->tid = tid;
	memcpy(e->name, buf, sizeof(buf));
	t->tab.slot[slot_of(t, tid)] = ++t->n;
	return 1;
}

const char *tnames_get(const struct tnames *t, uint32_t tid)
{
	size_t j;

	if (!t->tab.nslots)
		return NULL;
	j = slot_of(t, tid);
	return t->tab.slot[j] ? t->v[t->tab.slot[j] - 1].name : NULL;
}

size_t tnames_count(const struct tnames *t)
{
	return t->n;
}

uint64_t tnames_dropped(const struct tnames *t)
{
	return t->dropped;
}

int tnames_foreach(const struct tnames *t, tnames_fn fn, void *userdata)
{
	for (size_t i = 0; i < t->n; i++) {
		int r = fn(t->v[i].tid, t->v[i].name, userdata);

		if (r)
			return r;
	}
	return 0;
}
