/* SPDX-License-Identifier: GPL-2.0-only */
/* ksf_internal.h: the k-SF's node array, tables and counters, shared by ksf.c (the forest and
 * its updates), ksf_check.c (the invariant checker) and ksf_ipf.c (the k-IPF built from a
 * forest), and by nothing else: callers see struct ksf as opaque (include/kprof/ksf.h). The few
 * helpers two of them need are defined here, static and not inline (unused where a file does not
 * call them), so the compiler inlines them into ksf_push exactly as when they were ksf.c's. The
 * layout is explained at the top of ksf.c. */
#ifndef KPROF_LIB_KSF_INTERNAL_H
#define KPROF_LIB_KSF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/hash.h"
#include "kprof/ksf.h"

#define KNONE UINT32_MAX
#define KN_LIVE 1u
#define KN_INDEXED 2u
#define KN_DOOMED 4u /* during a pruning pass */
#define GOLDEN 0x9e3779b97f4a7c15ULL
#define MAX_NODES_CAP (1u << 30)

struct knode {
	uint64_t label;
	uint64_t count;
	uint32_t child; /* first child */
	uint32_t next;	/* next sibling */
	uint32_t up;	/* parent, always at a lower index; the routine for a root */
	uint16_t depth; /* 0 for roots */
	uint16_t flags;
};

struct ksf_act {
	uint32_t routine;
	uint32_t tau, beta; /* upper / lower slab node or KNONE */
	uint32_t epoch;	    /* ksf epoch when tau and beta were valid; 0 = stale */
	uint32_t cpos;	    /* n mod (k-1) */
	uint32_t rpos;	    /* next slot of the label ring */
	uint64_t n;	    /* path ids of this activation so far */
};

struct slot {
	uint64_t label; /* copy of the node's, so probing reads no node */
	uint32_t key;	/* routine (root table) or parent (child table) */
	uint32_t node;	/* KNONE = empty */
};

struct ksf {
	unsigned k;
	struct ksf_limits lim;
	struct knode *nodes;
	size_t cap, used;	    /* nodes allocated, live (nodes[0..used)) */
	struct slot *roots, *edges; /* root table, indexed children */
	size_t root_nslots, edge_nslots, nedges;
	uint32_t epoch;
	size_t fast_limit;	      /* reserve() has nothing to do while used < this */
	uint64_t pos_hist[KSF_K_MAX]; /* items by position in their activation, below k-1 */
	uint64_t untracked;	      /* items of untracked activations */
	/* Hot-path counters are derived (ksf_get_stats): items = upper + lower + dropped, and a
	 * child lookup that finds the head child counts one scan without touching a counter. */
	uint64_t slow_lookups, walk_lookups;
	uint64_t pruned_upper, pruned_lower;
	/* Folded counts: from the lower to the upper slab, which a position does once, and within
	 * the upper slab (repeats possible; at most st.upper positions are concerned). */
	uint64_t moved_up, upper_folds;
	struct ksf_stats st;
};

static __attribute__((unused)) size_t key_hash(uint32_t key, uint64_t label)
{
	return mix64(label ^ ((uint64_t)key + 1) * GOLDEN);
}

/* The slot holding (key, label), or the empty slot where it belongs. */
static __attribute__((unused)) struct slot *slot_find(struct slot *tab, size_t nslots, uint32_t key,
						      uint64_t label, uint64_t *probes)
{
	size_t mask = nslots - 1, j = key_hash(key, label) & mask;

	for (;; j = (j + 1) & mask) {
		(*probes)++;
		if (tab[j].node == KNONE || (tab[j].key == key && tab[j].label == label))
			return &tab[j];
	}
}

static __attribute__((unused)) bool is_upper(const struct ksf *k, uint32_t depth)
{
	return depth + 1 < k->k || depth == 0;
}

/* Positions held with a shorter context than Algorithm 4's, each counted once. */
static __attribute__((unused)) uint64_t folded_items(const struct ksf *k)
{
	return k->moved_up + (k->upper_folds < k->st.upper ? k->upper_folds : k->st.upper);
}

#endif
