/* SPDX-License-Identifier: GPL-2.0-only */
/* hcct_check.h: the HCCT's invariant checker (hcct_check.c), for tests and test builds.
 * Included by hcct.h. Pure: no I/O, no globals. */
#ifndef KPROF_HCCT_CHECK_H
#define KPROF_HCCT_CHECK_H

struct hcct;

/* Verify the invariants of ALGORITHMS.md §5 that need no oracle: H1 (counters sum to N), H2
 * (|M| <= m; min <= floor(N/m) once full; lazy minimum consistent), H3's err <= min, H4 (tree
 * links, unique sibling keys, every unmonitored node has a monitored or pinned descendant, free
 * list apart), pin totals and depths, and that the child index holds exactly the children of
 * the indexed nodes, each where a lookup finds it. O(nodes + m + index slots), allocates. 0,
 * -EUCLEAN, or -ENOMEM. */
int hcct_check(const struct hcct *h);

#endif
