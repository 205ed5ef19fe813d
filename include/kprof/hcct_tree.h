/* SPDX-License-Identifier: GPL-2.0-only */
/* hcct_tree.h: what an HCCT query gives (hcct_tree.c): the (phi, eps)-HCCT or a snapshot of the
 * MCCT as an array of entries, a saved snapshot filtered to a query, a tree relabelled after
 * routines were merged. The trees are plain arrays the caller owns; they never point into the
 * HCCT they came from. Included by hcct.h, which most callers use.
 *
 * Pure: no I/O, no globals.
 */
#ifndef KPROF_HCCT_TREE_H
#define KPROF_HCCT_TREE_H

#include <stddef.h>
#include <stdint.h>

struct hcct;

enum {
	HCCT_ENTRY_MONITORED = 1u << 0, /* in M: count and err are valid */
	HCCT_ENTRY_HOT = 1u << 1,	/* in A: monitored and count >= threshold */
};

/* One context of a query result. A context's true frequency lies in [count - err, count]. */
struct hcct_entry {
	uint64_t call_site;
	uint64_t count;	   /* Space-Saving counter; 0 when not monitored (cold ancestor) */
	uint64_t err;	   /* overestimation bound; 0 when not monitored */
	uint32_t id;	   /* routine id */
	uint32_t parent;   /* index of the parent entry; HCCT_NONE for children of the root */
	uint32_t depth;	   /* 1 for children of the root */
	uint32_t slot;	   /* index in M, HCCT_NONE when not monitored (for tests and dumps) */
	uint32_t flags;	   /* HCCT_ENTRY_* */
	uint32_t children; /* entries whose parent this is (0: a leaf of the result) */
};

/* A query result: entries in depth-first order (every parent before its children), siblings
 * sorted by (id, call_site); the root itself is not listed. */
struct hcct_tree {
	uint64_t n;	  /* N when the tree was taken */
	uint64_t phi_num; /* phi = phi_num / phi_den (0/1 for a snapshot) */
	uint64_t phi_den;
	uint64_t threshold; /* floor(phi N) */
	size_t len;
	struct hcct_entry *entries;
};

/* floor(phi N) with phi = phi_num / phi_den, exact. */
uint64_t hcct_threshold(const struct hcct *h, uint64_t phi_num, uint64_t phi_den);

/* The (phi, eps)-HCCT: A = monitored contexts with count >= floor(phi N), flagged HOT, plus
 * all their ancestors. Non-destructive; *ret is malloc'd, free with hcct_tree_free(). -EINVAL
 * unless 0 <= phi_num <= phi_den, phi_den > 0; -ENOMEM. phi should be above eps (§1.7). */
int hcct_query(const struct hcct *h, uint64_t phi_num, uint64_t phi_den, struct hcct_tree **ret);
/* Every live MCCT node (cursor paths included), same format, no HOT flags, threshold 0. */
int hcct_snapshot(const struct hcct *h, struct hcct_tree **ret);
/* The (phi, eps)-HCCT of a snapshot (hcct_snapshot, or one rebuilt from a saved profile): the
 * same entries hcct_query would give on the HCCT the snapshot was taken of. Entries must list
 * every parent before its children (-EINVAL otherwise). */
int hcct_tree_filter(const struct hcct_tree *snap, uint64_t phi_num, uint64_t phi_den,
		     struct hcct_tree **ret);
/* The tree with routine id i relabelled map[i] (ids >= nmap kept): contexts that come to share
 * their key path are merged, their counters and error bounds summed (routines found to be one
 * after the fact: functions named late, profile_canon). Same format as a query's; a query
 * result's HOT flags are kept and given to merged contexts that reach its threshold. -EINVAL
 * if a child comes before its parent, -ENOMEM. */
int hcct_tree_relabel(const struct hcct_tree *in, const uint32_t *map, size_t nmap,
		      struct hcct_tree **ret);
void hcct_tree_free(struct hcct_tree *t);

#endif
