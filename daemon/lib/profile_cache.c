// SPDX-License-Identifier: GPL-2.0-only
/* profile_cache.c: a profile's address cache (address -> function id, so a frame seen before
 * costs one lookup) and the prefetch hints of the per-sample path (include/kprof/
 * profile_cache.h). Apart from profile.c because the symbolizing caller drives it, frame by
 * frame, before profile_add_hashed; it owns the cache table of profile_internal.h and touches
 * nothing else but a prefetch of the stack table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hash.h"
#include "kprof/profile.h"
#include "profile_internal.h"

int profile_cache_get(const struct profile *p, uint64_t addr, uint32_t *id)
{
	if (!addr || !p->cache_nslots)
		return 0;
	for (size_t j = mix64(addr) & (p->cache_nslots - 1); p->cache[j].addr;
	     j = (j + 1) & (p->cache_nslots - 1)) {
		if (p->cache[j].addr == addr) {
			*id = p->cache[j].id;
			return 1;
		}
	}
	return 0;
}

int profile_cache_callee(struct profile *p, uint64_t addr, uint32_t callee)
{
	if (!addr || !p->cache_nslots || callee == UINT32_MAX)
		return 0;
	for (size_t j = mix64(addr) & (p->cache_nslots - 1); p->cache[j].addr;
	     j = (j + 1) & (p->cache_nslots - 1)) {
		if (p->cache[j].addr == addr) {
			if (p->cache[j].callee == callee + 1)
				return 1;
			p->cache[j].callee = callee + 1;
			return 0;
		}
	}
	return 0;
}

void profile_cache_prefetch(const struct profile *p, uint64_t addr)
{
	if (addr && p->cache_nslots)
		__builtin_prefetch(&p->cache[mix64(addr) & (p->cache_nslots - 1)]);
}

void profile_prefetch_stack(const struct profile *p, uint64_t hash, const uint32_t *ids, size_t n)
{
	if (p->stack_nslots)
		__builtin_prefetch(&p->stack_slots[hash & (p->stack_nslots - 1)]);
	for (size_t i = 0; i < n; i++)
		if (ids[i] < p->nfuncs)
			__builtin_prefetch(&p->funcs[ids[i]]);
}

void profile_cache_clear(struct profile *p)
{
	if (p->cache_nslots)
		memset(p->cache, 0, p->cache_nslots * sizeof(*p->cache));
	p->cache_n = 0;
}

/* (Re)build the cache with n slots, keeping what it holds. false: no memory (no change). */
static bool cache_resize(struct profile *p, size_t n)
{
	struct cslot *c = calloc(n, sizeof(*c));

	if (!c)
		return false;
	for (size_t i = 0; i < p->cache_nslots; i++) {
		size_t j;

		if (!p->cache[i].addr)
			continue;
		for (j = mix64(p->cache[i].addr) & (n - 1); c[j].addr; j = (j + 1) & (n - 1))
			;
		c[j] = p->cache[i];
	}
	free(p->cache);
	p->cache = c;
	p->cache_nslots = n;
	return true;
}

void profile_cache_put(struct profile *p, uint64_t addr, uint32_t id)
{
	size_t j;

	if (!addr)
		return;
	if (p->cache_n >= p->lim.max_cache)
		profile_cache_clear(p);
	if (p->frozen && (p->cache_n + 1) * 2 > p->cache_nslots)
		return; /* no memory taken while frozen */
	/* Grown at half load, from 1024 slots up to twice the cap: a small target costs little. */
	if ((p->cache_n + 1) * 2 > p->cache_nslots &&
	    !cache_resize(p, p->cache_nslots ? p->cache_nslots * 2 : 1024) && !p->cache_nslots)
		return; /* a cache is optional: no memory, no caching */
	if ((p->cache_n + 1) * 2 > p->cache_nslots && p->cache_n + 1 >= p->cache_nslots)
		return; /* full and could not grow */
	for (j = mix64(addr) & (p->cache_nslots - 1); p->cache[j].addr;
	     j = (j + 1) & (p->cache_nslots - 1)) {
		if (p->cache[j].addr == addr) {
			/* Another caller at addr: its calls are not known yet. */
			if (p->cache[j].id != id)
				p->cache[j].callee = 0;
			p->cache[j].id = id;
			return;
		}
	}
	p->cache[j] = (struct cslot){.addr = addr, .id = id};
	p->cache_n++;
}
