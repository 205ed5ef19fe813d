/* SPDX-License-Identifier: GPL-2.0-only */
/* profile.h: a pure, bounded store of one target's sampled stacks and its flat profile.
 *
 * Functions are interned (name, module, start address, kind) -> dense id. Stacks are sequences
 * of function ids, root first, interned in a hash table with a count each. Self and total counts
 * per function are kept up to date on every add (total counts a function once per stack even
 * under recursion). An address -> function-id cache lets the symbolizer skip lookups for return
 * addresses it has seen; the caller clears it when symbols change. Every table is capped: a
 * stack that does not fit is counted in `lost`, never silently dropped. Readers get views:
 * folded text within a byte cap, and kernel frames without addresses or as one "[kernel]" frame
 * (the policy of who sees what is the caller's). No I/O, no globals.
 */
#ifndef KPROF_PROFILE_H
#define KPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/profile_cache.h"
#include "kprof/profile_same.h"
#include "kprof/profile_func.h"
#include "kprof/profile_view.h"

struct profile;

struct profile_limits {
	size_t max_funcs;      /* default 1M */
	size_t max_stacks;     /* distinct stacks, default 256K */
	size_t max_stack_ids;  /* frames over all distinct stacks, default 8M */
	size_t max_cache;      /* address cache entries, default 256K (cleared when full) */
	size_t max_unresolved; /* addresses awaiting a name (profile_intern_unresolved), 64K */
};

struct profile_stats {
	uint64_t samples; /* stacks added (with their counts) */
	uint64_t lost;	  /* samples whose stack did not fit in the tables */
	size_t funcs;
	size_t stacks;
	size_t stack_ids;
	size_t memory;		  /* bytes held */
	uint64_t kernel_samples;  /* samples whose stack has a kernel frame */
	size_t unresolved;	  /* functions interned by address, not named yet */
	uint64_t unresolved_over; /* frames not kept by address: max_unresolved reached */
	uint64_t renamed;	  /* functions named after their samples (profile_rename) */
};

int profile_new(const struct profile_limits *lim, struct profile **ret);
void profile_free(struct profile *p);

/* Id of the function (>= 0), interning it on first sight. -E2BIG at the cap, -ENOMEM. */
int profile_intern(struct profile *p, const char *name, const char *module, uint64_t start,
		   enum profile_kind kind);
/* The same, keeping name and module themselves, not copies: strings that outlive p (the
 * host-wide names of strpool.h), with their hashes (strpool_hash). Such a function is found
 * by profile_intern too (and the other way round): identity is the strings' content, compared
 * by address first. */
int profile_intern_shared(struct profile *p, const char *name, uint64_t name_hash,
			  const char *module, uint64_t module_hash, uint64_t start,
			  enum profile_kind kind);
/* Where function id's source is (a JIT's debug info): the first call for a function sets it,
 * later ones are ignored. Not part of the function's identity. 0, -EINVAL (no such id, an empty
 * file), -ENOMEM. */
int profile_set_source(struct profile *p, uint32_t id, const char *file, uint32_t line);
const struct profile_func *profile_func_get(const struct profile *p, uint32_t id);
size_t profile_nfuncs(const struct profile *p);

/* ---- Names given late ----
 * A frame no symbol names is interned by its address: name "0x7f...", module (its mapping,
 * "[anon]"), start = addr, kind unknown, and listed as pending; -E2BIG (counted in
 * unresolved_over) when max_unresolved addresses are pending already, -EINVAL for address 0.
 * When a symbol source covers it later, profile_rename gives function id (pending or not) a new
 * identity and returns the id that now has it: id itself, or the function that already had that
 * identity, of which id becomes an alias. Aliases disappear from the stacks and the flat counts
 * at profile_commit_renames (once per batch of renames: it rewrites every stack, O(frames)),
 * which also drops the named functions from the pending list and clears the address cache;
 * it returns 1 if stacks were rewritten, 0 if not, -ENOMEM (nothing changed, try again).
 * Until then readers see the old counts. The flat views and profile_sorted never list an alias;
 * ids kept elsewhere (an HCCT's contexts) are mapped with profile_canon. */
int profile_intern_unresolved(struct profile *p, uint64_t addr, const char *module);
const uint32_t *profile_pending(const struct profile *p, size_t *n);
int profile_rename(struct profile *p, uint32_t id, const char *name, const char *module,
		   uint64_t start, enum profile_kind kind);
int profile_commit_renames(struct profile *p);
/* Drop the functions named since (renamed in place or merged) from the pending list: O(pending),
 * what profile_commit_renames does first; the merges stay to fold away. */
void profile_pending_compact(struct profile *p);
/* Whether profile_commit_renames has merged functions to fold away. */
bool profile_merges_pending(const struct profile *p);
uint32_t profile_canon(const struct profile *p, uint32_t id);
bool profile_has_aliases(const struct profile *p);

/* Over a memory budget: while frozen, nothing is added that would take memory: a function
 * or an address not held gets -ENOSPC from profile_intern, profile_intern_shared and
 * profile_intern_unresolved, and the address cache takes no slot it would have to grow for.
 * Stacks are still added (the caller bounds them: profile_count_hashed first). */
void profile_freeze(struct profile *p, bool frozen);
/* Add count samples to the stack (tid, ids[0..n)) if p holds it: 0; else -ENOENT, nothing
 * changed. hash: profile_stack_hash(tid, ids, n). */
int profile_count_hashed(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
			 uint64_t count, uint64_t hash);

/* Add count samples of the stack ids[0..n) (root first). n may be 0 (nothing recorded).
 * 0 on success; -ENOSPC when the stack tables are full (the samples are counted in `lost`);
 * -EINVAL for an unknown id. */
int profile_add(struct profile *p, const uint32_t *ids, size_t n, uint64_t count);
/* The same for a thread: stacks are kept per (tid, ids); flat counts and folded output merge
 * the threads. profile_add is profile_add_tid with tid 0. */
int profile_add_tid(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n, uint64_t count);
/* profile_add_tid for a caller that has the stack's hash already: hash must be
 * profile_stack_hash(tid, ids, n) (a different value files the stack where lookups miss it). */
uint64_t profile_stack_hash(uint32_t tid, const uint32_t *ids, size_t n);
int profile_add_hashed(struct profile *p, uint32_t tid, const uint32_t *ids, size_t n,
		       uint64_t count, uint64_t hash);

typedef int (*profile_stack_fn)(uint32_t tid, const uint32_t *ids, size_t n, uint64_t count,
				void *userdata);
/* Calls fn for each distinct stack; stops at and returns fn's first negative return. */
int profile_foreach_stack(const struct profile *p, profile_stack_fn fn, void *userdata);

/* Time windows (ARCHITECTURE.md §1.6): every stack also counts the samples added since the
 * last call (saturating at UINT32_MAX). Calls fn (if not NULL) for each stack with such
 * samples, with that count, and sets it back to 0: the samples of one window. O(stacks); the
 * per-sample path pays one add. Returns the number of stacks taken, or fn's first negative
 * return (the stacks before it are taken, the rest are not). Renames keep the counts (merged
 * stacks add theirs). */
int profile_take_recent(struct profile *p, profile_stack_fn fn, void *userdata);
/* Whether some stack got samples since the last profile_take_recent (O(1): a take of a profile
 * without walks no stack). */
bool profile_has_recent(const struct profile *p);

/* Function ids sorted by self, then total, descending, then by name. *ret is malloc'd. */
int profile_sorted(const struct profile *p, uint32_t **ret, size_t *ret_n);

void profile_get_stats(const struct profile *p, struct profile_stats *st);

#endif
