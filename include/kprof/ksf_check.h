/* SPDX-License-Identifier: GPL-2.0-only */
/* ksf_check.h: the k-SF's invariant checker (ksf_check.c), for tests and test builds. Included
 * by ksf.h. Pure: no I/O, no globals. */
#ifndef KPROF_KSF_CHECK_H
#define KPROF_KSF_CHECK_H

struct ksf;

/* Invariants of ALGORITHMS.md §5 that hold with pruning (links, unique labels, depth <= 2k-3,
 * table consistency, K1 and K4 with the pruned counters). 0 or -EUCLEAN (-ENOMEM). */
int ksf_check(const struct ksf *k);

#endif
