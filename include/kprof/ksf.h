/* SPDX-License-Identifier: GPL-2.0-only */
/* ksf.h: multi-iteration path profiles, k-slab forest (k-SF) and k-iteration path forest (k-IPF).
 *
 * Input is a stream of Ball-Larus path ids per thread with routine entries and exits. The k-IPF
 * counts every sequence of up to k consecutive path ids taken within one activation of a routine
 * (n-grams, n <= k, of each activation's path-id sequence; ALGORITHMS.md §3.1). The k-SF is the
 * intermediate forest that takes one stream item in O(node degree) with one root-table lookup
 * per k-1 items (Algorithm 4, §3.3); ksf_ipf_build converts it into the k-IPF on query (§3.4).
 *
 * One `struct ksf` serves every routine of a target: trees are keyed by (routine, path id). The
 * caller keeps one `struct ksf_ctx` per thread, zero-initialized, and feeds it in order:
 * ksf_enter at routine entry (the `*` marker), ksf_push for each path id the routine emits,
 * ksf_exit when the routine returns. The ctx holds a stack of activations, so a callee's path ids
 * never extend the caller's sequences, and the caller's sequence spans the call (§3.2).
 *
 * Memory is bounded: when the k-SF reaches `max_nodes`, the coldest subtrees (smallest sum of
 * counters) are pruned until a quarter of the budget is free; their counters move to a node that
 * counts the same path ids with a shorter context when one survives. What was pruned or moved is
 * counted in ksf_stats; k-IPF counts then become lower bounds within max_error of the truth
 * (ksf.c has the policy and the argument). Not thread-safe: one consumer feeds a ksf.
 *
 * The k-IPF is declared in ksf_ipf.h, the invariant checker in ksf_check.h (included here).
 */
#ifndef KPROF_KSF_H
#define KPROF_KSF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/ksf_check.h"

#define KSF_K_MAX 64

struct ksf;
struct ksf_act;

struct ksf_limits {
	/* k-SF node budget (32 bytes a node); default 1M, raised to max(64, 16k). */
	size_t max_nodes;
	/* Tracked activations per ctx; default 16384. */
	uint32_t max_depth;
	/* A child scan longer than this indexes the parent's children in a hash table; default
	 * 8; UINT32_MAX keeps plain lists (move-to-front). */
	uint32_t index_min;
};

/* Per-thread activation stack, owned by the caller: `struct ksf_ctx c = {0};` is ready to use.
 * Release it with ksf_ctx_release (not needed if it never took an entry). The fields are
 * private. A ctx is bound to one ksf while it has activations. */
struct ksf_ctx {
	struct ksf_act *acts;
	uint64_t *labels; /* the last 2(k-1) path ids of each activation */
	uint32_t depth, cap;
	uint32_t dead; /* activations above the stack that are not tracked (depth limit, ENOMEM) */
	const struct ksf *owner;
};

struct ksf_stats {
	unsigned k;
	uint64_t items;	       /* path ids pushed into an activation, tracked or not */
	uint64_t dropped;      /* of those, not counted: untracked activation, no memory */
	uint64_t bad_events;   /* push or exit without an activation, ctx of another ksf */
	uint64_t activations;  /* tracked routine entries */
	uint64_t root_lookups; /* chunk starts: Σ over activations of ceil(L/(k-1)) (K3) */
	uint64_t scans;	       /* sibling nodes examined by child-list lookups */
	uint64_t probes;       /* hash slots examined (root table, indexed children) */
	uint64_t upper, lower; /* counts added in the upper / lower slab (K4) */
	size_t nodes, roots;
	size_t internal; /* nodes with at least one child */
	size_t indexed;	 /* nodes whose children are hashed */
	size_t max_nodes;
	uint64_t created; /* nodes ever created, recreations after pruning included */
	/* Pruning (zero while the budget was never reached). */
	uint64_t prune_passes;
	uint64_t pruned_nodes;
	uint64_t pruned_items;	  /* counters removed: items no longer in the forest */
	uint64_t folded_items;	  /* bound on the items moved to a node with a shorter context */
	uint64_t prune_threshold; /* subtree sum at or below which the last pass pruned */
	uint64_t recoveries;	  /* activations whose position was rebuilt after a pass */
	size_t memory;		  /* bytes held by the ksf (not by the ctxs) */
};

/* k in [1, KSF_K_MAX]; k = 1 is a plain Ball-Larus profile (one node per path id). lim may be
 * NULL. -EINVAL for a bad k, -ENOMEM. */
int ksf_new(unsigned k, const struct ksf_limits *lim, struct ksf **ret);
void ksf_free(struct ksf *k);

/* Routine entry. 0 when tracked; -E2BIG past max_depth and -ENOMEM when the stack cannot grow:
 * the activation is then untracked (its path ids are dropped, its exit is still expected);
 * -EINVAL if ctx has activations of another ksf. */
int ksf_enter(struct ksf *k, struct ksf_ctx *ctx, uint32_t routine);
/* Path id emitted by the current activation. 0, or -EINVAL without an activation (counted in
 * bad_events), -E2BIG in an untracked activation, -ENOMEM (the last two count in dropped). */
int ksf_push(struct ksf *k, struct ksf_ctx *ctx, uint64_t path_id);
/* Routine exit: pops the current activation. 0, or -EINVAL without one (bad_events). */
int ksf_exit(struct ksf *k, struct ksf_ctx *ctx);

/* Activations on the ctx, tracked or not. With routine non-NULL, the routine of the innermost
 * tracked activation is stored there when it is also the innermost one. */
size_t ksf_ctx_depth(const struct ksf_ctx *ctx, uint32_t *routine);
/* Frees the stack and empties the ctx (after a thread exits, or to resynchronize). */
void ksf_ctx_release(struct ksf_ctx *ctx);

/* Path callback: routine, path ids root first, their number, the counter. A negative return
 * stops the walk and is returned. */
typedef int (*ksf_path_fn)(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
			   void *userdata);

/* Every k-SF node, trees in root-table order, nodes in preorder (implementation-defined order;
 * for dumps and tests). */
int ksf_foreach_node(const struct ksf *k, ksf_path_fn fn, void *userdata);
void ksf_get_stats(const struct ksf *k, struct ksf_stats *st);

#endif
