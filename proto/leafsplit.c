// SPDX-License-Identifier: GPL-2.0-only
/* leafsplit.c: a profile's stacks split over their leaf function's sampled addresses (see
 * include/kprof/leafsplit.h). The addresses are sorted by (function, address) once; each
 * function has a cursor into its run of them, moved past an address once its samples are
 * given. */
#include "kprof/leafsplit.h"

#include <errno.h>
#include <stdlib.h>

static const Kprof__SavedProfile *sort_sp; /* qsort has no context argument */

static int by_func_addr(const void *a, const void *b)
{
	const Kprof__SavedLeafAddr *x = sort_sp->leaf_addrs[*(const uint32_t *)a],
				   *y = sort_sp->leaf_addrs[*(const uint32_t *)b];

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

int leafsplit_init(struct leafsplit *ls, const Kprof__SavedProfile *sp)
{
	size_t nf = sp->n_functions, n = sp->n_leaf_addrs;

	ls->sp = sp;
	ls->fn_la = calloc(nf + 2, sizeof(*ls->fn_la));
	ls->fn_cur = calloc(nf + 1, sizeof(*ls->fn_cur));
	ls->order = calloc(n + 1, sizeof(*ls->order));
	ls->left = calloc(n + 1, sizeof(*ls->left));
	if (!ls->fn_la || !ls->fn_cur || !ls->order || !ls->left)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (sp->leaf_addrs[k]->func >= nf)
			return -EINVAL;
		ls->order[k] = k;
		ls->fn_la[sp->leaf_addrs[k]->func + 1]++;
	}
	for (size_t f = 0; f < nf; f++)
		ls->fn_la[f + 1] += ls->fn_la[f];
	sort_sp = sp;
	qsort(ls->order, n, sizeof(*ls->order), by_func_addr);
	leafsplit_reset(ls);
	return 0;
}

void leafsplit_release(struct leafsplit *ls)
{
	free(ls->order);
	free(ls->fn_la);
	free(ls->fn_cur);
	free(ls->left);
	ls->order = ls->fn_la = ls->fn_cur = NULL;
	ls->left = NULL;
}

void leafsplit_reset(struct leafsplit *ls)
{
	for (size_t f = 0; f < ls->sp->n_functions; f++)
		ls->fn_cur[f] = ls->fn_la[f];
	for (size_t k = 0; k < ls->sp->n_leaf_addrs; k++)
		ls->left[k] = ls->sp->leaf_addrs[ls->order[k]]->count;
}

uint64_t leafsplit_next(struct leafsplit *ls, uint32_t f, uint64_t *left, int64_t *k)
{
	uint64_t take = *left;

	*k = -1;
	while (ls->fn_cur[f] < ls->fn_la[f + 1] && !ls->left[ls->fn_cur[f]])
		ls->fn_cur[f]++;
	if (ls->fn_cur[f] < ls->fn_la[f + 1]) {
		uint64_t *have = &ls->left[ls->fn_cur[f]];

		take = *have < take ? *have : take;
		*have -= take;
		*k = ls->fn_cur[f];
	}
	*left -= take;
	return take;
}
