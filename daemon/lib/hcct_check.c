// SPDX-License-Identifier: GPL-2.0-only
/* hcct_check.c: hcct_check(), the invariant checker of ALGORITHMS.md §5 (include/kprof/
 * hcct_check.h). Apart from hcct.c because tests and test builds run it, never the update path;
 * it reads the MCCT through hcct_internal.h and allocates its own scratch arrays.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kprof/hcct.h"
#include "hcct_internal.h"

static int check_slots(const struct hcct *h)
{
	unsigned __int128 sum = 0;
	uint64_t mn = UINT64_MAX;

	if (h->used > h->m || h->min_idx > h->m)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->used; j++) {
		uint32_t x = h->slot_node[j];

		if (x == ROOT || x >= h->nodes_used || h->nodes[x].parent == HN_FREE ||
		    h->nodes[x].slot != j || h->err[j] > h->cnt[j] || h->cnt[j] == 0)
			return -EUCLEAN;
		sum += h->cnt[j];
		if (h->cnt[j] < mn)
			mn = h->cnt[j];
	}
	if (sum != h->n)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->used; j++) /* H3: err <= min; exact during the fill */
		if (h->err[j] > (h->used == h->m ? mn : 0))
			return -EUCLEAN;
	if (h->used == h->m) {
		if (mn > h->n / h->m || h->min > mn) /* H2, and the lazy min is a lower bound */
			return -EUCLEAN;
		for (uint32_t j = 0; j < h->min_idx && j < h->m; j++)
			if (h->cnt[j] <= h->min) /* slots before min_idx hold more than min */
				return -EUCLEAN;
	} else if (h->min != 0 || h->min_idx != 0) {
		return -EUCLEAN;
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return -pending_cmp(x, y);
}

/* Sibling keys of v are distinct; tmp has room for every node. */
static int check_keys(const struct hcct *h, uint32_t v, struct pending *tmp)
{
	size_t k = 0;

	for (uint32_t c = h->nodes[v].child; c != HCCT_NONE; c = h->nodes[c].sibling)
		tmp[k++] = (struct pending){.site = h->nodes[c].site, .id = h->nodes[c].id};
	qsort(tmp, k, sizeof(*tmp), key_cmp);
	for (size_t i = 1; i < k; i++)
		if (!key_cmp(&tmp[i - 1], &tmp[i]))
			return -EUCLEAN;
	return 0;
}

static int check_node(const struct hcct *h, uint32_t v, uint32_t depth, uint8_t *seen)
{
	const struct hnode *x;

	if (v >= h->nodes_used || seen[v] || depth > h->max_depth)
		return -EUCLEAN;
	x = &h->nodes[v];
	if (x->parent == HN_FREE)
		return -EUCLEAN;
	seen[v] = 1;
	if (v != ROOT && x->child == HCCT_NONE && x->slot == HCCT_NONE && !x->pins)
		return -EUCLEAN; /* H4: a leaf nothing holds */
	if (x->slot != HCCT_NONE && (x->slot >= h->used || h->slot_node[x->slot] != v))
		return -EUCLEAN;
	return 0;
}

/* The child index: load <= 1/2 within its cap, every entry a child of an indexed node, with
 * its key's hash, where a lookup of that key stops. check_tree() checks the converse. */
static int check_index(const struct hcct *h)
{
	uint64_t cap = INDEX_MIN_SLOTS, used = 0;

	while (cap < 2 * (uint64_t)h->max_nodes)
		cap *= 2;
	if (!h->idx)
		return h->idx_nslots || h->idx_used || h->indexed ? -EUCLEAN : 0;
	if (h->idx_nslots & (h->idx_nslots - 1) || h->idx_nslots < INDEX_MIN_SLOTS ||
	    h->idx_nslots > cap || 2 * (uint64_t)h->idx_used > h->idx_nslots)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->idx_nslots; j++) {
		const struct islot *s = &h->idx[j];
		const struct hnode *x;

		if (s->node == HCCT_NONE)
			continue;
		used++;
		if (s->node == ROOT || s->node >= h->nodes_used)
			return -EUCLEAN;
		x = &h->nodes[s->node];
		if (x->parent == HN_FREE || x->parent >= h->nodes_used ||
		    !(h->nodes[x->parent].flags & HN_INDEXED) ||
		    s->hash != key_hash(x->parent, x->id, x->site))
			return -EUCLEAN;
	}
	if (used != h->idx_used)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->idx_nslots; j++) { /* every node is valid: look them up */
		const struct islot *s = &h->idx[j];
		const struct hnode *x = &h->nodes[s->node == HCCT_NONE ? ROOT : s->node];

		if (s->node != HCCT_NONE && index_find(h, s->hash, x->parent, x->id, x->site) != s)
			return -EUCLEAN;
	}
	return 0;
}

/* H4 over the whole tree: returns the number of live, monitored nodes and pins found. */
static int check_tree(const struct hcct *h, uint8_t *seen, uint32_t *stack, uint32_t *depth,
		      struct pending *tmp)
{
	uint64_t live = 0, mon = 0, pins = 0, indexed = 0, entries = 0;
	size_t top = 0;
	int r;

	if (h->nodes[ROOT].parent != HCCT_NONE || h->nodes[ROOT].slot != HCCT_NONE ||
	    h->nodes[ROOT].pins)
		return -EUCLEAN;
	stack[top] = ROOT;
	depth[top++] = 0;
	while (top) {
		uint32_t v = stack[--top], d = depth[top];

		r = check_node(h, v, d, seen);
		if (r < 0)
			return r;
		live++;
		mon += h->nodes[v].slot != HCCT_NONE;
		pins += h->nodes[v].pins;
		indexed += !!(h->nodes[v].flags & HN_INDEXED);
		for (uint32_t c = h->nodes[v].child, prev = HCCT_NONE; c != HCCT_NONE;
		     prev = c, c = h->nodes[c].sibling) {
			const struct hnode *x;

			if (c >= h->nodes_used || h->nodes[c].parent != v ||
			    h->nodes[c].prev != prev || top >= h->live)
				return -EUCLEAN;
			x = &h->nodes[c];
			if (h->nodes[v].flags & HN_INDEXED) { /* every child is in the index */
				if (index_find(h, key_hash(v, x->id, x->site), v, x->id, x->site)
					->node != c)
					return -EUCLEAN;
				entries++;
			}
			stack[top] = c;
			depth[top++] = d + 1;
		}
		r = check_keys(h, v, tmp);
		if (r < 0)
			return r;
	}
	if (live != h->live || mon != h->used || pins != h->pins_total || indexed != h->indexed ||
	    entries != h->idx_used)
		return -EUCLEAN;
	return 0;
}

static int check_free(const struct hcct *h, const uint8_t *seen)
{
	uint64_t n = 0;

	for (uint32_t x = h->free_head; x != HCCT_NONE; x = h->nodes[x].sibling) {
		if (x >= h->nodes_used || seen[x] || h->nodes[x].parent != HN_FREE ||
		    ++n > h->nodes_used)
			return -EUCLEAN;
	}
	return n + h->live == h->nodes_used ? 0 : -EUCLEAN;
}

int hcct_check(const struct hcct *h)
{
	uint8_t *seen = NULL;
	uint32_t *stack = NULL, *depth = NULL;
	struct pending *tmp = NULL;
	int r;

	if (!h)
		return -EINVAL;
	if (h->nodes_used > h->nodes_cap || h->nodes_cap > h->max_nodes || h->live > h->max_nodes ||
	    h->live < 1 || h->live > h->nodes_used || h->peak < h->live)
		return -EUCLEAN;
	r = check_slots(h);
	if (r == 0)
		r = check_index(h);
	if (r < 0)
		return r;
	seen = calloc(h->nodes_used, 1);
	stack = malloc(h->live * sizeof(*stack));
	depth = malloc(h->live * sizeof(*depth));
	tmp = malloc(h->live * sizeof(*tmp));
	r = -ENOMEM;
	if (seen && stack && depth && tmp) {
		r = check_tree(h, seen, stack, depth, tmp);
		if (r == 0)
			r = check_free(h, seen);
	}
	free(seen);
	free(stack);
	free(depth);
	free(tmp);
	return r;
}
