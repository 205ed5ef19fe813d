/* SPDX-License-Identifier: GPL-2.0-only */
/* csite.h: the call sites of one target's sampled stacks (csite.c; issue 32): which instruction
 * of a caller function each callee function was called from.
 *
 * kprof's stacks are stacks of functions, so the return address of each caller frame is not
 * kept per stack. This set keeps, for each (caller id, callee id) pair seen adjacent in a user
 * stack, the caller's return address - 1 (inside its call instruction), without counts: enough
 * for a pprof export to give a caller frame the location of its call site (with its source line
 * and inlined frames) wherever the pair was seen from one call site only. Open addressing,
 * grown by doubling at half load, at most max_entries; past that new entries are counted, not
 * kept. Pure: no I/O.
 */
#ifndef KPROF_CSITE_H
#define KPROF_CSITE_H

#include <stddef.h>
#include <stdint.h>

struct csite;

struct csite_entry {
	uint32_t caller, callee;
	uint64_t addr; /* the caller's return address - 1; never 0 */
};

struct csite_stats {
	size_t entries;
	uint64_t dropped; /* not kept: max_entries reached */
	size_t memory;	  /* bytes held */
};

/* max_entries 0: 65536. 0 or -ENOMEM. */
int csite_new(size_t max_entries, struct csite **ret);
void csite_free(struct csite *c);

/* 1 if (caller, callee, addr) is new, 0 if it was there, -E2BIG when the set is full (counted),
 * -EINVAL for address 0, -ENOMEM. */
int csite_add(struct csite *c, uint32_t caller, uint32_t callee, uint64_t addr);

/* A hint: the slot csite_add(c, caller, callee, addr) looks at first is fetched into the cache,
 * so that the adds of a stack's new pairs wait for their cache misses together. */
void csite_prefetch(const struct csite *c, uint32_t caller, uint32_t callee, uint64_t addr);

/* Every entry, in no particular order: fn's non-zero return stops the walk and is returned. */
int csite_foreach(const struct csite *c, int (*fn)(const struct csite_entry *e, void *userdata),
		  void *userdata);

void csite_get_stats(const struct csite *c, struct csite_stats *st);

#endif
