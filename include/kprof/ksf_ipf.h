/* SPDX-License-Identifier: GPL-2.0-only */
/* ksf_ipf.h: the k-iteration path forest (ksf_ipf.c, ALGORITHMS.md §3.4): every sequence of up to
 * k consecutive path ids of an activation, with its count, built on query from a k-SF (ksf.h)
 * and then only read. A k-IPF is independent of the k-SF it came from, which may go on taking
 * items. Pure: no I/O, no globals.
 */
#ifndef KPROF_KSF_IPF_H
#define KPROF_KSF_IPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/ksf.h"

struct ksf_ipf;

struct ksf_ipf_opts {
	unsigned max_len; /* longest sequence; 0 or above k means k; 1 gives the BL profile */
	size_t max_nodes; /* k-IPF node limit; default 16M; -E2BIG beyond it */
	bool one_routine; /* only the trees of `routine` */
	uint32_t routine;
};

struct ksf_ipf_stats {
	size_t nodes, roots;
	unsigned max_len;
	uint64_t level_sum[KSF_K_MAX]; /* Σ of counters at level j+1 */
	/* 0 when every count is exact. Otherwise counts are lower bounds: for a sequence of
	 * length >= 2, reported <= true <= reported + max_error (pruned, folded and dropped items
	 * of the ksf); for length 1 (the BL profile), true <= reported + max_error_1 (pruned and
	 * dropped: folding keeps the BL profile). */
	uint64_t max_error;
	uint64_t max_error_1;
	size_t memory;
};

/* Builds the k-IPF from the current k-SF (Algorithms 5 and 6, with the `d > 1` test). opts may
 * be NULL. The ksf is not modified and may go on taking items. */
int ksf_ipf_build(const struct ksf *k, const struct ksf_ipf_opts *opts, struct ksf_ipf **ret);
void ksf_ipf_free(struct ksf_ipf *ipf);

/* Count of the sequence path[0..n) of routine; 0 when absent, n == 0 or n > max_len. */
uint64_t ksf_ipf_count(const struct ksf_ipf *ipf, uint32_t routine, const uint64_t *path, size_t n);

enum ksf_order {
	KSF_ORDER_TREE,	 /* preorder, trees and siblings in implementation-defined order */
	KSF_ORDER_COUNT, /* count descending, then routine, length, path ids ascending */
};
/* Every k-IPF entry (each node is one sequence). KSF_ORDER_COUNT may return -ENOMEM. */
int ksf_ipf_foreach(const struct ksf_ipf *ipf, enum ksf_order order, ksf_path_fn fn,
		    void *userdata);
void ksf_ipf_get_stats(const struct ksf_ipf *ipf, struct ksf_ipf_stats *st);
/* Structure (links, unique labels, levels <= max_len); when the counts are exact and all
 * routines were built, also K5 (level sums from the stream) and K6 (c(a) >= Σ c(children) >= 0,
 * every c >= 1). 0 or -EUCLEAN. */
int ksf_ipf_check(const struct ksf_ipf *ipf);

#endif
