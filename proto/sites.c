// SPDX-License-Identifier: GPL-2.0-only
/* sites.c: a profile's call sites by (caller, callee) pair (see include/kprof/sites.h): sorted
 * once by (caller, callee, address), a pair's sites are a run, found by binary search. */
#include "kprof/sites.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int by_site(const void *a, const void *b)
{
	const Kprof__SavedCallSite *x = *(const Kprof__SavedCallSite *const *)a,
				   *y = *(const Kprof__SavedCallSite *const *)b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

int sites_init(struct sites *st, const Kprof__SavedProfile *sp)
{
	st->n = 0;
	st->v = calloc(sp->n_call_sites + 1, sizeof(*st->v));
	if (!st->v)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n_call_sites; i++)
		if (sp->call_sites[i]->caller >= sp->n_functions ||
		    sp->call_sites[i]->callee >= sp->n_functions)
			return -EINVAL;
	if (sp->n_call_sites)
		memcpy(st->v, sp->call_sites, sp->n_call_sites * sizeof(*st->v));
	st->n = sp->n_call_sites;
	qsort(st->v, st->n, sizeof(*st->v), by_site);
	return 0;
}

void sites_release(struct sites *st)
{
	free(st->v);
	st->v = NULL;
	st->n = 0;
}

size_t sites_pair_end(const struct sites *st, size_t a, bool *one)
{
	size_t b = a + 1;

	*one = true;
	for (; b < st->n && st->v[b]->caller == st->v[a]->caller &&
	       st->v[b]->callee == st->v[a]->callee;
	     b++)
		*one &= st->v[b]->address == st->v[a]->address;
	return b;
}

const Kprof__SavedCallSite *sites_one(const struct sites *st, uint32_t caller, uint32_t callee)
{
	size_t lo = 0, hi = st->n;
	bool one;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const Kprof__SavedCallSite *c = st->v[mid];

		if (c->caller < caller || (c->caller == caller && c->callee < callee))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == st->n || st->v[lo]->caller != caller || st->v[lo]->callee != callee)
		return NULL;
	sites_pair_end(st, lo, &one);
	return one ? st->v[lo] : NULL;
}
