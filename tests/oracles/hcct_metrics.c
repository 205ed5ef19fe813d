// SPDX-License-Identifier: GPL-2.0-only
/* hcct_metrics.c: accuracy metrics of a (phi, eps)-HCCT (see hcct_metrics.h).
 *
 * Each tree entry is mapped to its CCT node by a child lookup under its parent's node (entries
 * come parents first), which marks the covered contexts; then one forward pass over the CCT
 * gives w_max, H, coverage and the uncovered contexts, and one backward pass (children have
 * higher indices than their parents) sizes the exact HCCT.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "hcct_metrics.h"

/* Map entries to CCT indices and mark them in covered; -EINVAL if one is missing. */
static int map_tree(const struct cct *c, const struct hcct_tree *t, uint32_t *map, uint8_t *covered)
{
	for (size_t i = 0; i < t->len; i++) {
		const struct hcct_entry *e = &t->entries[i];
		uint32_t parent = 0;
		int x;

		if (e->parent != HCCT_NONE) {
			if (e->parent >= i)
				return -EINVAL;
			parent = map[e->parent];
		}
		x = cct_child(c, parent, e->id, e->call_site);
		if (x < 0)
			return -EINVAL;
		map[i] = (uint32_t)x;
		covered[x] = 1;
	}
	return 0;
}

static uint64_t weight(const struct cct *c, uint32_t idx)
{
	struct cct_node_info ni;

	return cct_node(c, idx, &ni) == 0 ? ni.count : 0;
}

/* Everything that needs the CCT alone or the covered marks. */
static int cct_pass(const struct cct *c, const uint8_t *covered, struct hcct_metrics *m)
{
	size_t nn = cct_nodes(c), uncov = 0;
	uint64_t umax = 0;
	double usum = 0;
	uint8_t *need;

	for (uint32_t i = 1; i < nn; i++) {
		uint64_t w = weight(c, i);

		if (w > m->w_max)
			m->w_max = w;
	}
	for (uint32_t i = 1; i < nn; i++) {
		uint64_t w = weight(c, i);

		m->hot_contexts += w >= m->threshold;
		if ((double)w >= m->tau * (double)m->w_max) {
			m->cover_den++;
			m->cover_num += covered[i];
		}
		if (!covered[i]) {
			uncov++;
			usum += (double)w;
			if (w > umax)
				umax = w;
		}
	}
	m->contexts = nn ? nn - 1 : 0;
	m->cover = m->cover_den ? (double)m->cover_num / (double)m->cover_den : 1.0;
	if (m->w_max) {
		m->max_uncov = (double)umax / (double)m->w_max * 100;
		m->avg_uncov = uncov ? usum / (double)uncov / (double)m->w_max * 100 : 0;
		m->tau_full = (double)m->threshold / (double)m->w_max;
	}

	need = calloc(nn ? nn : 1, 1);
	if (!need)
		return -ENOMEM;
	for (uint32_t i = (uint32_t)nn; i-- > 1;) {
		struct cct_node_info ni;

		cct_node(c, i, &ni);
		if (ni.count >= m->threshold)
			need[i] = 1;
		if (need[i]) {
			m->exact_hcct++;
			need[ni.parent] = 1;
		}
	}
	free(need);
	return 0;
}

/* Everything over the tree's entries. */
static void tree_pass(const struct cct *c, const struct hcct_tree *t, const uint32_t *map,
		      struct hcct_metrics *m)
{
	double sum = 0, esum = 0, esum_a = 0;
	size_t ne = 0, ne_a = 0;

	for (size_t i = 0; i < t->len; i++) {
		const struct hcct_entry *e = &t->entries[i];
		uint64_t w = weight(c, map[i]);
		double err;

		sum += (double)w;
		if (!(e->flags & HCCT_ENTRY_HOT)) {
			m->cold++;
			continue;
		}
		if (w >= m->threshold)
			m->hot++;
		else
			m->false_positives++;
		if (!w)
			continue;
		err = fabs((double)w - (double)e->count) / (double)w * 100;
		esum_a += err;
		ne_a++;
		if (err > m->max_err_a)
			m->max_err_a = err;
		if (w >= m->threshold) {
			esum += err;
			ne++;
			if (err > m->max_err)
				m->max_err = err;
		}
	}
	m->overlap = m->n ? sum / (double)m->n : 0;
	m->avg_err = ne ? esum / (double)ne : 0;
	m->avg_err_a = ne_a ? esum_a / (double)ne_a : 0;
	m->false_negatives = m->hot_contexts - m->hot;
}

int hcct_metrics_compute(const struct cct *c, const struct hcct_tree *tree, double tau,
			 struct hcct_metrics *out)
{
	struct hcct_metrics m = {.tau = tau};
	struct cct_stats st;
	uint32_t *map = NULL;
	uint8_t *covered = NULL;
	int r = -ENOMEM;

	if (!c || !tree || !out || !tree->phi_den || tree->phi_num > tree->phi_den ||
	    (tree->len && !tree->entries) || !(tau >= 0 && tau <= 1))
		return -EINVAL;
	cct_get_stats(c, &st);
	m.n = st.n;
	m.threshold = (uint64_t)((unsigned __int128)tree->phi_num * st.n / tree->phi_den);
	m.tree_nodes = tree->len;
	map = malloc((tree->len ? tree->len : 1) * sizeof(*map));
	covered = calloc(st.nodes ? st.nodes : 1, 1);
	if (map && covered) {
		r = map_tree(c, tree, map, covered);
		if (r == 0)
			r = cct_pass(c, covered, &m);
		if (r == 0) {
			tree_pass(c, tree, map, &m);
			*out = m;
		}
	}
	free(map);
	free(covered);
	return r;
}
