// SPDX-License-Identifier: GPL-2.0-only
/* csite.c: the call sites of one target's sampled stacks (see include/kprof/csite.h).
 *
 * An open-addressing table of (caller, callee, address) with linear probing, address 0 marking
 * an empty slot (a call site is never at 0), grown by doubling when half full. The sample path
 * adds to it only for frames its memo did not know (target.c), so its cost is that of a new
 * stack, not of every sample.
 */
#include "kprof/csite.h"

#include <errno.h>
#include <stdlib.h>

#include "kprof/hash.h"

#define INITIAL_SLOTS 256

struct csite {
	struct csite_entry *slots;
	size_t nslots, n, max;
	uint64_t dropped;
};

int csite_new(size_t max_entries, struct csite **ret)
{
	struct csite *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->max = max_entries ? max_entries : 65536;
	*ret = c;
	return 0;
}

void csite_free(struct csite *c)
{
	if (c) {
		free(c->slots);
		free(c);
	}
}

static size_t slot_of(uint32_t caller, uint32_t callee, uint64_t addr, size_t nslots)
{
	return mix64(addr ^ mix64((uint64_t)caller << 32 | callee)) & (nslots - 1);
}

static void put(struct csite_entry *v, size_t nslots, const struct csite_entry *e)
{
	size_t i = slot_of(e->caller, e->callee, e->addr, nslots);

	while (v[i].addr)
		i = (i + 1) & (nslots - 1);
	v[i] = *e;
}

static int grow(struct csite *c)
{
	size_t ns = c->nslots ? 2 * c->nslots : INITIAL_SLOTS;
	struct csite_entry *v = calloc(ns, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].addr)
			put(v, ns, &c->slots[i]);
	free(c->slots);
	c->slots = v;
	c->nslots = ns;
	return 0;
}

int csite_add(struct csite *c, uint32_t caller, uint32_t callee, uint64_t addr)
{
	struct csite_entry e = {caller, callee, addr};

	if (!addr)
		return -EINVAL;
	for (size_t i = c->nslots ? slot_of(caller, callee, addr, c->nslots) : 0;
	     c->nslots && c->slots[i].addr; i = (i + 1) & (c->nslots - 1))
		if (c->slots[i].addr == addr && c->slots[i].caller == caller &&
		    c->slots[i].callee == callee)
			return 0;
	if (c->n >= c->max) {
		c->dropped++;
		return -E2BIG;
	}
	if (2 * (c->n + 1) > c->nslots && grow(c) < 0)
		return -ENOMEM;
	put(c->slots, c->nslots, &e);
	c->n++;
	return 1;
}

void csite_prefetch(const struct csite *c, uint32_t caller, uint32_t callee, uint64_t addr)
{
	if (c->nslots)
		__builtin_prefetch(&c->slots[slot_of(caller, callee, addr, c->nslots)]);
}

int csite_foreach(const struct csite *c, int (*fn)(const struct csite_entry *e, void *userdata),
		  void *userdata)
{
	for (size_t i = 0; i < c->nslots; i++) {
		int r = c->slots[i].addr ? fn(&c->slots[i], userdata) : 0;

		if (r)
			return r;
	}
	return 0;
}

void csite_get_stats(const struct csite *c, struct csite_stats *st)
{
	st->entries = c->n;
	st->dropped = c->dropped;
	st->memory = sizeof(*c) + c->nslots * sizeof(*c->slots);
}
