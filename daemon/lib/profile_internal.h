/* SPDX-License-Identifier: GPL-2.0-only */
/* profile_internal.h: a profile's tables (functions, stacks, address cache, late names), shared
 * by profile.c (interning, adding, renaming), profile_view.c (views and folded text) and
 * profile_cache.c (the address cache and the look-ahead of the per-sample path), and by nothing
 * else: callers see struct profile as opaque (include/kprof/profile.h). The hashes and the alias
 * test are defined here, static and not inline (unused where a file does not call them), so the
 * compiler inlines them into the per-sample path exactly as when they were profile.c's. The layout
 * is explained at the top of profile.c. */
#ifndef KPROF_LIB_PROFILE_INTERNAL_H
#define KPROF_LIB_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/profile.h"

struct pfunc {
	struct profile_func f;
	uint64_t hash;
	uint64_t mark;
};

struct pstack {
	uint64_t hash;
	uint64_t count;
	uint32_t off;
	uint32_t len;
	uint32_t tid;
	uint32_t recent; /* samples since the last profile_take_recent (saturating) */
};

struct sslot {
	uint32_t idx; /* stack index + 1, 0 = empty */
	uint32_t tag; /* the stack's hash >> 32 */
};

struct cslot {
	uint64_t addr;
	uint32_t id;
	uint32_t callee; /* + 1: the callee last given to profile_cache_callee from here; 0: none */
};

struct profile {
	struct profile_limits lim;

	struct pfunc *funcs;
	size_t nfuncs, funcs_cap;
	struct idxtab func_tab; /* function identity -> id */
	/* profile_same.c: per id below nsame_done, the first function of its name; the index of
	 * those first functions */
	uint32_t *same;
	size_t nsame, nsame_done, nsame_firsts;
	struct idxtab same_tab;

	struct pstack *stacks;
	size_t nstacks, stacks_cap;
	struct sslot *stack_slots;
	size_t stack_nslots;
	uint32_t *ids;
	size_t nids, ids_cap;
	/* The id sequences held in ids, each once: a stack of another thread with the same ids
	 * points at the same offset. Key: hash_ids of the sequence (a stack's hash ^ mix64(tid)),
	 * value: a stack index + 1 whose off and len are the sequence. */
	struct sslot *seg_slots;
	size_t seg_nslots, nsegs;

	struct cslot *cache; /* addr 0 = empty; address 0 is never cached */
	size_t cache_nslots, cache_n;

	uint32_t *pending; /* ids of functions interned by address, not named yet */
	size_t npending, pending_cap;
	uint32_t *canon; /* per id below ncanon: id + 1 of the function it was merged into, or 0 */
	size_t ncanon;
	bool merges;  /* aliases made since the last profile_commit_renames */
	bool by_addr; /* some function was interned by address */
	uint64_t unresolved_over, renamed, merged;

	uint64_t gen;
	uint64_t layout; /* stacks moved (stacks_canonicalize) this many times: profile_snap.c */
	uint64_t samples, lost;
	uint64_t kernel_samples; /* of samples, those whose stack has a kernel frame */
	bool has_tids;		 /* some stack has tid != 0: folded output must merge threads */
	bool frozen;		 /* profile_freeze: no new functions, no cache growth */
	bool recent;		 /* a stack got samples since the last profile_take_recent */
	size_t str_bytes;
};

static __attribute__((unused)) uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Sum of independent mixes of (pair of ids, position): the mixes overlap in the pipeline. mix64
 * is a bijection, so two stacks collide only if their sums do. Not inlined, as when profile.c
 * had both of its callers: inlined into profile_stack_hash it took ~28 more instructions per
 * sample (callgrind on bench_ingest). */
static __attribute__((unused, noinline)) uint64_t hash_ids(const uint32_t *ids, size_t n)
{
	uint64_t h = mix64(0xcbf29ce484222325ULL ^ n);
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		h += mix64(((uint64_t)ids[i + 1] << 32 | ids[i]) ^ (i + 1) * 0x9e3779b97f4a7c15ULL);
	if (i < n)
		h += mix64(ids[i] ^ (i + 1) * 0x9e3779b97f4a7c15ULL);
	return mix64(h);
}

static __attribute__((unused)) bool is_alias(const struct profile *p, uint32_t id)
{
	return id < p->ncanon && p->canon[id];
}

/* Stacks src[0..n) (their ids in src_ids) with every id canonical (profile_canon of p), equal
 * ones merged (counts and recent added), into out (room for n), its hash table slots (nslots,
 * a power of two at least 2n, zeroed) and ids (room for all of src's): returns the stacks in
 * out, *nids the ids used. Stacks that share their ids in src share them in out: memo (nslots
 * entries, zeroed) maps a source offset to its copy's. profile_canon_slot: the slot of stack st
 * (its canonical ids v, hash h) in such a table, an equal stack's or the empty one where it
 * goes. */
size_t profile_canon_stacks(const struct profile *p, const struct pstack *src, size_t n,
			    const uint32_t *src_ids, struct pstack *out, struct sslot *slots,
			    size_t nslots, struct sslot *memo, uint32_t *ids, size_t *nids);
size_t profile_canon_slot(const struct pstack *stacks, const struct sslot *slots, size_t nslots,
			  const uint32_t *ids, const struct pstack *st, const uint32_t *v,
			  uint64_t h);

#endif
