/* SPDX-License-Identifier: GPL-2.0-only */
/* hcct_metrics.h: accuracy of a (phi, eps)-HCCT against the exact CCT of the same stream.
 *
 * The metrics of ALGORITHMS.md §1.10 (T:1710-1739), shared by the unit tests and the benchmark.
 * w(e) is the exact CCT frequency of a context, w_max the largest, N the CCT's total; HCCT' is
 * the query result, A its HOT entries, H the contexts with w >= floor(phi N) (phi taken from the
 * tree, N from the CCT):
 *
 *   overlap   = SUM_{e in HCCT'} w(e) / N                  (cold ancestors included)
 *   cover     = |{e in HCCT' : w(e) >= tau w_max}| / |{e in CCT : w(e) >= tau w_max}|
 *   max_uncov = MAX_{e in CCT - HCCT'} w(e) / w_max * 100   (avg_uncov: the average)
 *   false positives = |A - H|
 *   max_err   = MAX_{e in A & H} |w(e) - count(e)| / w(e) * 100   (avg_err: the average;
 *               max_err_a / avg_err_a over all of A, as [R] may report it)
 *
 * Contexts with w = 0 (frames of sampled stacks that were never a leaf) are counted as contexts
 * but never enter a relative error. Pure: no I/O, no globals.
 */
#ifndef KPROF_HCCT_METRICS_H
#define KPROF_HCCT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "kprof/hcct.h"

struct hcct_metrics {
	uint64_t n;	    /* N of the CCT */
	uint64_t threshold; /* floor(phi N) */
	uint64_t w_max;
	double tau;
	size_t contexts;	/* CCT nodes, root excluded */
	size_t exact_hcct;	/* nodes of the exact HCCT: H and its ancestors */
	size_t tree_nodes;	/* entries of HCCT' */
	size_t hot_contexts;	/* |H| */
	size_t hot;		/* |A & H| */
	size_t false_positives; /* |A - H| */
	size_t false_negatives; /* |H - A| */
	size_t cold;		/* entries of HCCT' not in A */
	size_t cover_num;	/* hot-by-tau contexts in HCCT' */
	size_t cover_den;	/* hot-by-tau contexts in the CCT */
	double overlap;		/* fraction, 0..1 */
	double cover;		/* fraction, 0..1 (1 when cover_den is 0) */
	double max_uncov;	/* percent of w_max */
	double avg_uncov;	/* percent of w_max */
	double max_err;		/* percent, over A & H */
	double avg_err;		/* percent, over A & H */
	double max_err_a;	/* percent, over A */
	double avg_err_a;	/* percent, over A */
	double tau_full; /* floor(phi N) / w_max: the smallest tau with full cover (T:1824) */
};

/* Compare tree (from hcct_query() on some stream) with c (the exact CCT of that stream) at
 * hot-edge threshold tau in [0, 1]. -EINVAL for bad arguments or an entry whose context is not
 * in the CCT (not the same stream), -ENOMEM. */
int hcct_metrics_compute(const struct cct *c, const struct hcct_tree *tree, double tau,
			 struct hcct_metrics *out);

#endif
