/* SPDX-License-Identifier: GPL-2.0-only */
/* tidtab.h: the one per-thread table of kprofd (tidtab.c): which slot of a fixed array holds a
 * thread's state, for exact mode's HCCT cursors and the path tracers' per-thread walks.
 *
 * Open addressing on cap slots (a power of two) by a multiplicative hash of the tid, linear
 * probing, at most cap / 2 threads so that a probe is short; tid 0 marks a free slot (no thread
 * has tid 0). The caller keeps its per-thread states in an array of cap entries of its own type,
 * indexed by the slot this returns; the tids live here. Pure: no I/O.
 */
#ifndef KPROF_TIDTAB_H
#define KPROF_TIDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tidtab {
	uint32_t *tid; /* cap slots, 0: free; NULL until the first thread */
	size_t cap;    /* a power of two */
	size_t n;      /* threads in it, at most cap / 2 */
};

/* An empty table of cap slots (a power of two, >= 2); nothing is allocated yet. */
void tidtab_init(struct tidtab *t, size_t cap);
/* The slot of thread tid, given one if it has none (*added true, else false; added may be
 * NULL): 0..cap-1, or -ENOSPC (cap / 2 threads already), -EINVAL (tid 0), -ENOMEM. */
long tidtab_get(struct tidtab *t, uint32_t tid, bool *added);
/* Every thread out (the slots' memory is kept). */
void tidtab_clear(struct tidtab *t);
void tidtab_release(struct tidtab *t);

#endif
