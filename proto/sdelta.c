// SPDX-License-Identifier: GPL-2.0-only
/* sdelta.c: the profile of an interval as the difference of two snapshots (see kprof/sdelta.h).
 *
 * A target's profile only grows: its functions keep their ids and each distinct (thread, stack)
 * only gains samples. So the samples taken between two moments are the later snapshot's counts
 * minus the earlier one's, stack by stack. The earlier snapshot is kept as an open-addressing
 * table keyed by a hash of (tid, ids), the ids copied into one array; the later one is changed
 * in place, so the caller turns it into pprof with the same code as a whole profile. The
 * sampled leaf addresses (per function and address, issue 32) only gain samples too: the
 * snapshot keeps them sorted, and each later address loses its count at the snapshot.
 * sdelta_cap is the other way round: a later state cut back to the snapshot's counts (an
 * interval's end kept while its answer waits).
 */
#include "kprof/sdelta.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/idxtab.h"

struct sdelta_entry {
	uint64_t hash, count;
	uint32_t tid, n;
	size_t off; /* into ids */
};

struct sdelta_leaf {
	uint32_t func;
	uint64_t addr, count;
};

struct sdelta {
	struct sdelta_entry *v; /* one per distinct (thread, stack) */
	struct idxtab tab;	/* (tid, ids) -> index in v */
	size_t n;
	uint32_t *ids;
	struct sdelta_leaf *leaves; /* by (func, addr) */
	size_t nleaves;
};

static int leaf_cmp(const void *a, const void *b)
{
	const struct sdelta_leaf *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint64_t stack_hash(uint32_t tid, const uint32_t *ids, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ tid;

	for (size_t i = 0; i < n; i++) {
		h ^= ids[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ^ (n * 0x9e3779b97f4a7c15ULL);
}

/* The slot of (tid, ids): the entry's, or the free one where it goes. */
static size_t slot_of(const struct sdelta *d, uint64_t h, uint32_t tid, const uint32_t *ids,
		      size_t n)
{
	size_t j;

	idxtab_probe(&d->tab, h, j) {
		const struct sdelta_entry *e = &d->v[d->tab.slot[j] - 1];

		if (e->hash == h && e->tid == tid && e->n == n &&
		    (!n || !memcmp(d->ids + e->off, ids, n * sizeof(*ids))))
			break;
	}
	return j;
}

void sdelta_free(struct sdelta *d)
{
	if (!d)
		return;
	free(d->ids);
	free(d->v);
	free(d->leaves);
	idxtab_release(&d->tab);
	free(d);
}

int sdelta_new(const Kprof__SavedProfile *start, struct sdelta **ret)
{
	struct sdelta *d;
	size_t nids = 0, off = 0;

	if (start->n_stacks > SDELTA_MAX_STACKS)
		return -E2BIG;
	for (size_t i = 0; i < start->n_stacks; i++) {
		nids += start->stacks[i]->n_ids;
		if (nids > SDELTA_MAX_IDS)
			return -E2BIG;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->v = calloc(start->n_stacks ? start->n_stacks : 1, sizeof(*d->v));
	d->ids = malloc((nids ? nids : 1) * sizeof(*d->ids));
	d->leaves = calloc(start->n_leaf_addrs + 1, sizeof(*d->leaves));
	if (!d->v || !d->ids || !d->leaves ||
	    idxtab_reserve(&d->tab, start->n_stacks, 16, NULL, NULL) < 0) {
		sdelta_free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < start->n_leaf_addrs; i++)
		d->leaves[i] = (struct sdelta_leaf){start->leaf_addrs[i]->func,
						    start->leaf_addrs[i]->address,
						    start->leaf_addrs[i]->count};
	d->nleaves = start->n_leaf_addrs;
	qsort(d->leaves, d->nleaves, sizeof(*d->leaves), leaf_cmp);
	for (size_t i = 0; i < start->n_stacks; i++) {
		const Kprof__SavedStack *s = start->stacks[i];
		uint64_t h = stack_hash(s->tid, s->ids, s->n_ids);
		size_t j = slot_of(d, h, s->tid, s->ids, s->n_ids);

		/* The same (thread, stack) twice (not in a kprofd profile): counts add up. */
		if (d->tab.slot[j]) {
			d->v[d->tab.slot[j] - 1].count += s->count;
			continue;
		}
		if (s->n_ids)
			memcpy(d->ids + off, s->ids, s->n_ids * sizeof(*s->ids));
		d->v[d->n] = (struct sdelta_entry){
		    .hash = h, .count = s->count, .tid = s->tid, .n = s->n_ids, .off = off};
		d->tab.slot[j] = ++d->n;
		off += s->n_ids;
	}
	*ret = d;
	return 0;
}

/* Each stack and leaf address of p by its count at the snapshot: less it (apply), or at most it
 * (cap); one left without samples dropped, p's arrays compacted. The samples left. */
static uint64_t adjust(const struct sdelta *d, Kprof__SavedProfile *p, bool cap)
{
	uint64_t total = 0, was;
	size_t k = 0;

	for (size_t i = 0; i < p->n_stacks; i++) {
		Kprof__SavedStack *s = p->stacks[i];
		size_t j = slot_of(d, stack_hash(s->tid, s->ids, s->n_ids), s->tid, s->ids, s->n_ids);

		was = d->tab.slot[j] ? d->v[d->tab.slot[j] - 1].count : 0;
		if (cap ? !was : s->count <= was)
			continue;
		s->count = cap ? (s->count < was ? s->count : was) : s->count - was;
		total += s->count;
		p->stacks[k++] = s;
	}
	p->n_stacks = k;
	k = 0;
	for (size_t i = 0; i < p->n_leaf_addrs; i++) {
		Kprof__SavedLeafAddr *la = p->leaf_addrs[i];
		struct sdelta_leaf key = {la->func, la->address, 0};
		const struct sdelta_leaf *e =
		    bsearch(&key, d->leaves, d->nleaves, sizeof(*d->leaves), leaf_cmp);

		was = e ? e->count : 0;
		if (cap ? !was : la->count <= was)
			continue;
		la->count = cap ? (la->count < was ? la->count : was) : la->count - was;
		p->leaf_addrs[k++] = la;
	}
	p->n_leaf_addrs = k;
	return total;
}

uint64_t sdelta_apply(const struct sdelta *d, Kprof__SavedProfile *end)
{
	return adjust(d, end, false);
}

uint64_t sdelta_cap(const struct sdelta *d, Kprof__SavedProfile *later)
{
	return adjust(d, later, true);
}

size_t sdelta_size(const struct sdelta *d)
{
	return d->n;
}
