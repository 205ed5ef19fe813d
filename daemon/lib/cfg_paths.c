// SPDX-License-Identifier: GPL-2.0-only
/* cfg_paths.c: what a path tracer asks of a numbered graph (include/kprof/cfg.h): the action of
 * a transition between two blocks, and path ids decoded into blocks and encoded back. Apart from
 * cfg.c because none of it is building: it reads the numbering cfg_graph.c leaves (the DAG's
 * out-lists and values, cfg_internal.h) and finds edges with cfg.c's queries.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>

#include "kprof/cfg.h"
#include "cfg_internal.h"

int cfg_transition(const struct cfg *g, uint32_t from, uint32_t to, struct cfg_transition *t)
{
	const struct cfg_edge *ed;
	int e;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (from == CFG_NONE) {
		if (to != g->entry)
			return -ENOENT;
		*t = (struct cfg_transition){.act = CFG_ACT_START, .edge = CFG_NONE};
		return 0;
	}
	e = to < g->nblocks ? cfg_edge_find(g, from, to) : -ENOENT;
	if (e < 0)
		return e;
	ed = &g->edges[e];
	if (ed->back)
		*t = (struct cfg_transition){.act = CFG_ACT_BACK,
					     .edge = (uint32_t)e,
					     .add = g->blocks[from].back_exit_val,
					     .reset = g->blocks[to].entry_val};
	else
		*t = (struct cfg_transition){
		    .act = CFG_ACT_ADD, .edge = (uint32_t)e, .add = ed->val};
	return 0;
}

/* The out-list entry of v that path remainder r goes through: the last one with val <= r. */
static const struct dag_edge *dag_pick(const struct cfg *g, uint32_t v, uint64_t r)
{
	uint32_t k = g->dag_first[v + 1];

	assert(k > g->dag_first[v]);
	while (--k > g->dag_first[v] && g->dag[k].val > r)
		;
	return &g->dag[k];
}

int cfg_path_decode(const struct cfg *g, uint64_t id, struct cfg_step *steps, size_t cap)
{
	uint32_t v = g->entry;
	uint64_t r = id;
	size_t n = 0;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (id >= g->num_paths)
		return -ERANGE;
	for (;;) {
		const struct dag_edge *de = dag_pick(g, v, r);

		r -= de->val;
		if (de->edge == CFG_NONE && de->dst != CFG_EXIT) {
			v = de->dst; /* ENTRY->header: the path starts at the header */
			continue;
		}
		if (n == cap)
			return -ENOSPC;
		steps[n++] = (struct cfg_step){.block = v, .edge = de->edge};
		if (de->dst == CFG_EXIT)
			break;
		v = de->dst;
	}
	assert(r == 0);
	return (int)n;
}

int cfg_path_encode(const struct cfg *g, const struct cfg_step *steps, size_t n, uint64_t *id)
{
	uint64_t sum = 0;

	if (!g->bl_ok)
		return -EOVERFLOW;
	if (!n || steps[0].block >= g->nblocks)
		return -EINVAL;
	if (steps[0].block != g->entry) {
		if (!(g->blocks[steps[0].block].flags & CFG_BLOCK_HEADER))
			return -EINVAL;
		sum = g->blocks[steps[0].block].entry_val;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cfg_block *bl = &g->blocks[steps[i].block];
		const struct cfg_edge *ed;
		bool lastone = i + 1 == n;

		if (steps[i].edge == CFG_NONE) {
			if (!lastone || !(bl->flags & CFG_BLOCK_BACK_SRC))
				return -EINVAL;
			sum += bl->back_exit_val;
			break;
		}
		ed = cfg_edge_get(g, steps[i].edge);
		if (!ed || ed->src != steps[i].block || ed->back ||
		    lastone != (ed->dst == CFG_EXIT) || (!lastone && ed->dst != steps[i + 1].block))
			return -EINVAL;
		sum += ed->val;
	}
	*id = sum;
	return 0;
}
