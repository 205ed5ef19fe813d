/* SPDX-License-Identifier: GPL-2.0-only */
/* hcct_internal.h: the HCCT's node pool, child index and Space-Saving arrays, shared by
 * hcct.c (updates), hcct_tree.c (queries) and hcct_check.c (the invariant checker), and by
 * nothing else: callers see struct hcct as opaque (include/kprof/hcct.h). The few helpers
 * two of those files need are defined here, static and not inline (unused where a file does
 * not call them), so the compiler inlines them into the update path exactly as when they were
 * hcct.c's own. The layout is explained at the top of hcct.c. */
#ifndef KPROF_LIB_HCCT_INTERNAL_H
#define KPROF_LIB_HCCT_INTERNAL_H

#include <stdint.h>

#include "kprof/hash.h"
#include "kprof/hcct.h"

#define ROOT 0u
#define HN_FREE (UINT32_MAX - 1) /* parent of a node on the free list */

struct hnode {
	uint64_t site;
	uint32_t id;
	uint32_t parent;
	uint32_t child;
	uint32_t sibling;
	uint32_t prev;	/* previous sibling, HCCT_NONE for the first child: O(1) unlink */
	uint32_t slot;	/* HCCT_NONE: not monitored */
	uint32_t pins;	/* cursors standing on this node */
	uint32_t flags; /* HN_INDEXED */
};

enum {
	HN_INDEXED = 1u << 0, /* the children are in the child index too */
};

#define PF_N 8u		    /* victims fetched ahead */
#define PF_SCAN 8u	    /* slots looked at per sample for the next prediction */
#define INDEX_MIN 8u	    /* index a node once a lookup scans more siblings than this */
#define INDEX_MIN_SLOTS 64u /* the table's first size */

/* A child-index slot: node HCCT_NONE is empty. */
struct islot {
	uint32_t hash; /* key_hash(parent, id, site) of the node */
	uint32_t node;
};

_Static_assert(sizeof(struct hnode) == 40, "MCCT node size");
/* No implicit padding in what callers may copy, compare or serialize. */
_Static_assert(sizeof(struct hcct_entry) == 48, "hcct_entry padding");
_Static_assert(sizeof(struct hcct_stats) == 72 + 3 * sizeof(size_t), "hcct_stats padding");

struct hcct {
	struct hnode *nodes;
	uint32_t nodes_cap;  /* allocated */
	uint32_t nodes_used; /* high-water index */
	uint32_t free_head;
	uint32_t live;
	uint32_t peak;
	uint32_t max_nodes, max_depth, flags;

	struct islot *idx; /* child index, NULL until a node is indexed */
	uint32_t idx_nslots, idx_used, indexed;

	uint32_t m, used;
	uint32_t *slot_node;
	uint64_t *cnt;
	uint64_t *err;
	uint64_t min;
	uint32_t min_idx;

	uint64_t n, lost, evictions, pruned, rescans;
	uint64_t pins_total;
	struct hcct_cursor cur;

	/* Prefetch of the next victims: their slots, in the order they will be taken over, and
	 * for each the node whose parent is fetched next (HCCT_NONE: done). */
	uint32_t pf_slot[PF_N], pf_node[PF_N];
	uint32_t pf_head, pf_len;
	uint32_t pf_next; /* the last slot looked at for a prediction */
	uint64_t pf_min;  /* the minimum the predictions were made for */
};

static __attribute__((unused)) uint32_t key_hash(uint32_t p, uint32_t id, uint64_t site)
{
	return (uint32_t)mix64(((uint64_t)p << 32 | id) ^ (site * 0x9e3779b97f4a7c15ULL));
}

/* The slot holding p's child (id, site), or the empty slot where it would go. */
static __attribute__((unused)) struct islot *index_find(const struct hcct *h, uint32_t hash,
							uint32_t p, uint32_t id, uint64_t site)
{
	uint32_t mask = h->idx_nslots - 1, j = hash & mask;

	for (;; j = (j + 1) & mask) {
		struct islot *s = &h->idx[j];
		const struct hnode *x;

		if (s->node == HCCT_NONE)
			return s;
		x = &h->nodes[s->node];
		if (s->hash == hash && x->parent == p && x->id == id && x->site == site)
			return s;
	}
}

struct pending {
	uint64_t site;
	uint32_t id;
	uint32_t node;
	uint32_t parent_out;
};

/* Descending, so that the smallest key is on top of the stack. */
static __attribute__((unused)) int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? 1 : -1;
	if (x->site != y->site)
		return x->site < y->site ? 1 : -1;
	return 0;
}

#endif
