/* SPDX-License-Identifier: GPL-2.0-only */
/* leafsplit.h: a profile's stacks split over their leaf function's sampled addresses
 * (leafsplit.c; issue 32), for the views that show a stack's leaf per instruction or source line
 * (pprof's locations, folded --lines).
 *
 * kprof counts a function's leaf addresses per function, not per stack (SavedProfile.leaf_addrs).
 * The split gives each stack whose leaf is function F, in stack order, pieces of F's addresses'
 * samples in address order, and what is left at F itself, so that each address's total and each
 * stack's total are exact; which stack an address's samples go to is this order's. Pure. */
#ifndef KPROF_LEAFSPLIT_H
#define KPROF_LEAFSPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/kprof.pb-c.h"

struct leafsplit {
	const Kprof__SavedProfile *sp;
	uint32_t *order; /* leaf_addrs indexes by (function, address) */
	uint32_t *fn_la; /* per function f: its addresses are order[fn_la[f]..fn_la[f+1]) */
	uint32_t *fn_cur; /* the cursor per function */
	uint64_t *left;	  /* per position of order: samples not given yet */
};

/* The split of sp at its start. 0, -EINVAL (a leaf address of a function that does not exist),
 * -ENOMEM. */
int leafsplit_init(struct leafsplit *ls, const Kprof__SavedProfile *sp);
void leafsplit_release(struct leafsplit *ls);
/* Back to its start. */
void leafsplit_reset(struct leafsplit *ls);
/* The next piece of the *left samples of a stack whose leaf is function f: its count (taken
 * from *left), at the address of position *k of the order (sp->leaf_addrs[ls->order[*k]]), or
 * *k = -1: at the function itself. */
uint64_t leafsplit_next(struct leafsplit *ls, uint32_t f, uint64_t *left, int64_t *k);

#endif
