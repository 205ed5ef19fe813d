/* SPDX-License-Identifier: GPL-2.0-only */
/* hcct.h: the (phi, eps)-Hot Calling Context Tree in small space (ALGORITHMS.md §1, §6).
 *
 * A calling context is a path of (routine_id, call_site) keys from a synthetic root. The module
 * keeps the MCCT: the subtree of the calling context tree that spans the m = ceil(1/eps)
 * contexts Space-Saving monitors (the set M), their ancestors, and the paths the cursors stand
 * on. M is an unordered array of counters with the lazy minimum of §1.4; the victim of a
 * takeover is the lowest slot holding the minimum. An evicted leaf is freed at once, and so is
 * every ancestor that is left an unmonitored leaf (§1.5). A query builds the (phi, eps)-HCCT,
 * the monitored contexts whose counter reaches floor(phi N) plus their (cold) ancestors, as an
 * array and never changes the MCCT.
 *
 * Two ways to feed it, which may be mixed:
 *  - samples (§6.2): hcct_add_stack() walks from the root along a stack of routine ids, root
 *    first, creating missing frames unmonitored, and gives the leaf a Space-Saving update of
 *    weight `count`. Frequency then means "samples whose leaf is this context" (self time).
 *  - exact enter/exit events through a cursor (§1.5): every enter is a unit update of the
 *    context entered. Each thread of the target needs its own `struct hcct_cursor`, which the
 *    caller owns; any number of cursors can feed one HCCT. The node a cursor stands on is pinned
 *    so another cursor's eviction can never free it or its ancestors.
 *
 * Guarantees (§1.7), with N the number of enters plus the total sample weight: the counters in
 * M sum to N; for a monitored context f <= count and count - err <= f, err <= min <= N/m; an
 * unmonitored context has f <= min; a query has no false negatives when (phi - eps) N >= 1.
 * The lazy minimum costs O(1) amortized with unit weights; a large weight can cost O(m).
 *
 * Memory is bounded by eps, never by the stream length: sizeof(struct hcct) + 20 m bytes for M,
 * plus 40 bytes per slot of the node pool, which grows by doubling up to max_nodes, plus the
 * child index: the children of a node that has needed a scan of more than 8 siblings are also
 * kept in a hash table of 8-byte slots, at most half full, that grows by doubling up to
 * max(64, 2^ceil(log2(2 max_nodes))) slots (at most 32 bytes per node of max_nodes). Live
 * nodes <= 1 + (m + C) D, where C is the number of cursors away from the root and D <= max_depth
 * the longest context: only monitored contexts, their ancestors and cursor paths are kept.
 * Events that would exceed max_nodes or max_depth are refused and counted in `lost`.
 *
 * Pure: no I/O, no globals, not thread-safe (the caller serializes calls on one struct hcct).
 */
#ifndef KPROF_HCCT_H
#define KPROF_HCCT_H

#include <stddef.h>
#include <stdint.h>

#include "kprof/hcct_check.h"
#include "kprof/hcct_tree.h"

#define HCCT_NONE UINT32_MAX
#define HCCT_MAX_SLOTS (1u << 26) /* eps >= 1.5e-8 */
#define HCCT_MAX_NODES (1u << 30) /* 40 GiB of nodes */
#define HCCT_DEFAULT_MAX_DEPTH 1024u

struct hcct;

struct hcct_params {
	uint32_t slots;	    /* m = ceil(1/eps), 1..HCCT_MAX_SLOTS; see hcct_slots_for_eps() */
	uint32_t max_nodes; /* MCCT node cap, root included; 0: 32 m + 1024 */
	uint32_t max_depth; /* longest context kept; 0: HCCT_DEFAULT_MAX_DEPTH */
	uint32_t flags;	    /* HCCT_EAGER_MIN, HCCT_NO_INDEX */
};

enum {
	/* Find the minimum with a full scan on every takeover instead of lazily. Same victims
	 * (§5 H6), slower: for tests and benchmarks. */
	HCCT_EAGER_MIN = 1u << 0,
	/* Never index children: every lookup scans the sibling list (with move-to-front), as
	 * before the child index. Same results, slower on high-degree nodes: for tests and
	 * benchmarks. */
	HCCT_NO_INDEX = 1u << 1,
};

/* A thread's position in the tree for enter/exit events. Owned by the caller; the fields are
 * private. All zeroes is a cursor at the root, so `struct hcct_cursor c = {0};` is ready to use.
 * A cursor pins the node it stands on: release it with hcct_cursor_release() when its thread
 * is gone, or that path stays in the MCCT. A cursor belongs to one HCCT; a cursor that stands
 * on no live node of it is refused (-EINVAL), but one from another HCCT may go unnoticed. */
struct hcct_cursor {
	uint32_t node;	/* current MCCT node, 0 = root */
	uint32_t depth; /* nodes on root..node, root excluded */
	uint32_t lost;	/* enters refused under this cursor and not yet exited */
};

struct hcct_stats {
	uint64_t n;		/* N: enters + total sample weight accepted */
	uint64_t lost;		/* enters + sample weight refused (caps, depth) */
	uint64_t evictions;	/* Space-Saving takeovers */
	uint64_t pruned;	/* nodes freed */
	uint64_t rescans;	/* full scans of M for the minimum */
	uint64_t min;		/* lazy minimum (<= the true minimum of M) */
	uint32_t min_idx;	/* lazy minimum's slot */
	uint32_t slots;		/* m */
	uint32_t monitored;	/* |M| */
	uint32_t max_nodes;	/* node cap */
	uint32_t indexed;	/* live nodes whose children are in the child index */
	uint32_t index_entries; /* children in the child index */
	size_t nodes;		/* live MCCT nodes, root included */
	size_t peak_nodes;
	size_t bytes; /* memory held, child index included */
};

/* m = ceil(1/eps) for eps in (0, 1], with 1/eps within 1e-9 of an integer taken as that
 * integer (so eps = 1.0/3 gives 3); 0 if eps is out of range or m > HCCT_MAX_SLOTS. */
uint32_t hcct_slots_for_eps(double eps);

/* Exact ratio num/den for x in [0, 1]: a decimal with up to 15 significant digits is exact
 * (0.29 -> 29/100), anything else is rounded to a multiple of 1e-18. -EINVAL if x is out of
 * range or NaN. For phi, so that floor(phi N) is computed in integers (§1.6 [DESIGN]). */
int hcct_ratio_from_double(double x, uint64_t *num, uint64_t *den);

/* -EINVAL for bad parameters, -ENOMEM. */
int hcct_new(const struct hcct_params *p, struct hcct **ret);
void hcct_free(struct hcct *h);

/* Sampled stack ids[0..n) root first (sites[i] the call site of frame i, or sites NULL for
 * 0), weight count. 0 on success; -EINVAL for n == 0, NULL ids or count == 0; -E2BIG when
 * n > max_depth and -ENOSPC at the node cap (the weight is counted in lost, nothing else
 * changes); -EOVERFLOW if N would wrap. */
int hcct_add_stack(struct hcct *h, const uint32_t *ids, size_t n, uint64_t count);
int hcct_add_stack_sites(struct hcct *h, const uint32_t *ids, const uint64_t *sites, size_t n,
			 uint64_t count);

/* Enter (routine id, call site) below the cursor: a unit update of the new context. At the
 * node cap (-ENOSPC) or max_depth (-E2BIG) the enter is counted in lost and remembered by the
 * cursor: enters below it are refused too (-ENOSPC) and its matching exit succeeds. -EINVAL for
 * a bad cursor; -EOVERFLOW if N would wrap. */
int hcct_cursor_enter(struct hcct *h, struct hcct_cursor *c, uint32_t id, uint64_t call_site);
/* Return to the parent context. -EINVAL at the root (exit without enter) or for a cursor that
 * does not stand on a live node. */
int hcct_cursor_exit(struct hcct *h, struct hcct_cursor *c);
/* Move the cursor onto the context ids[0..n) without counting anything (start of a burst,
 * or a thread first seen mid-run; §1.9): missing nodes are created unmonitored. n may be 0.
 * Errors as hcct_add_stack (except n == 0); on error the cursor is at the root. */
int hcct_cursor_align(struct hcct *h, struct hcct_cursor *c, const uint32_t *ids,
		      const uint64_t *sites, size_t n);
/* Unpin and move to the root (thread exit); prunes the path if nothing else holds it. */
void hcct_cursor_release(struct hcct *h, struct hcct_cursor *c);

/* The same on a cursor the HCCT owns, for single-threaded streams. */
int hcct_enter(struct hcct *h, uint32_t id, uint64_t call_site);
int hcct_exit(struct hcct *h);

void hcct_get_stats(const struct hcct *h, struct hcct_stats *st);

#endif
