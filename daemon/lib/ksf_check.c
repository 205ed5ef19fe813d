// SPDX-License-Identifier: GPL-2.0-only
/* ksf_check.c: ksf_check(), the k-SF's invariant checker (include/kprof/ksf_check.h). Apart
 * from ksf.c because tests and test builds run it, never ksf_push; it reads the forest through
 * ksf_internal.h and allocates its own scratch array.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kprof/ksf.h"
#include "ksf_internal.h"

struct check {
	uint8_t *seen;
	size_t nodes, internal, indexed, edges;
	uint64_t upper, lower;
};

static int check_node(const struct ksf *k, struct check *ck, uint32_t v, uint32_t depth)
{
	const struct knode *n;
	uint64_t probes = 0;

	if (v >= k->used || ck->seen[v] || k->nodes[v].flags & ~(KN_LIVE | KN_INDEXED) ||
	    !(k->nodes[v].flags & KN_LIVE))
		return -EUCLEAN;
	n = &k->nodes[v];
	ck->seen[v] = 1;
	ck->nodes++;
	if (n->depth != depth || (k->k == 1 ? depth > 0 : depth > 2 * k->k - 3))
		return -EUCLEAN;
	if (is_upper(k, depth))
		ck->upper += n->count;
	else
		ck->lower += n->count;
	ck->internal += n->child != KNONE;
	ck->indexed += !!(n->flags & KN_INDEXED);
	for (uint32_t c = n->child; c != KNONE; c = k->nodes[c].next) {
		if (c >= k->used || c <= v || k->nodes[c].up != v)
			return -EUCLEAN;
		for (uint32_t o = k->nodes[c].next; o != KNONE && o < k->used; o = k->nodes[o].next)
			if (k->nodes[o].label == k->nodes[c].label)
				return -EUCLEAN;
		if (n->flags & KN_INDEXED) {
			ck->edges++;
			if (slot_find(k->edges, k->edge_nslots, v, k->nodes[c].label, &probes)
				->node != c)
				return -EUCLEAN;
		}
		if (check_node(k, ck, c, depth + 1) < 0)
			return -EUCLEAN;
	}
	return 0;
}

int ksf_check(const struct ksf *k)
{
	struct check ck = {.seen = calloc(k->used ? k->used : 1, 1)};
	size_t roots = 0, edges = 0;
	uint64_t probes = 0;
	int err = 0;

	if (!ck.seen)
		return -ENOMEM;
	for (size_t i = 0; i < k->root_nslots && !err; i++) {
		const struct slot *s = &k->roots[i];

		if (s->node == KNONE)
			continue;
		roots++;
		if (s->node >= k->used || k->nodes[s->node].up != s->key ||
		    slot_find(k->roots, k->root_nslots, s->key, k->nodes[s->node].label, &probes) !=
			s)
			err = -EUCLEAN;
		else
			err = check_node(k, &ck, s->node, 0);
	}
	for (size_t i = 0; i < k->edge_nslots && !err; i++)
		edges += k->edges[i].node != KNONE;
	free(ck.seen);
	if (err)
		return err;
	if (roots != k->st.roots || ck.nodes != k->used || ck.internal != k->st.internal ||
	    ck.indexed != k->st.indexed || edges != k->nedges || ck.edges != edges ||
	    k->used > k->cap || k->used > k->lim.max_nodes)
		return -EUCLEAN;
	/* K1 and K4, with what pruning removed. */
	if (ck.upper + k->pruned_upper != k->st.upper + k->moved_up ||
	    ck.lower + k->pruned_lower + k->moved_up != k->st.lower ||
	    ck.upper + ck.lower + k->st.pruned_items != k->st.upper + k->st.lower)
		return -EUCLEAN;
	return 0;
}
