// SPDX-License-Identifier: GPL-2.0-only
/* cfg_check.c: cfg_check(), the invariant checker of a built graph (include/kprof/cfg.h):
 * blocks in order inside the code, edges and the block flags that follow from them, a DAG once
 * the back edges are gone, and the Ball-Larus values. Apart from cfg.c because tests and fuzzers
 * run it, never cfg_build; it reads struct cfg through cfg_internal.h and allocates its own
 * scratch arrays.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "cfg_internal.h"

static bool check_blocks(const struct cfg *g)
{
	if (!g->nblocks || g->entry >= g->nblocks)
		return false;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		const struct cfg_block *bl = &g->blocks[i];
		uint32_t e0 = bl->first_edge;

		if (bl->start > bl->end || !in_code(g->start, g->len, bl->start) ||
		    bl->end - g->start > g->len || (i && bl->start < g->blocks[i - 1].end) ||
		    (i && bl->start <= g->blocks[i - 1].start) ||
		    (bl->ninsns && (bl->last < bl->start || bl->last >= bl->end)) ||
		    !!(bl->flags & CFG_BLOCK_ENTRY) != (i == g->entry))
			return false;
		if (!bl->nedges || bl->nedges > 2 ||
		    e0 != (i ? g->blocks[i - 1].first_edge + g->blocks[i - 1].nedges : 0))
			return false;
		if (bl->loop_parent != CFG_NONE &&
		    (bl->loop_parent >= g->nblocks ||
		     !(g->blocks[bl->loop_parent].flags & CFG_BLOCK_HEADER)))
			return false;
	}
	return g->blocks[g->nblocks - 1].first_edge + g->blocks[g->nblocks - 1].nedges == g->nedges;
}

/* u is in the loop headed by h. */
static bool in_loop(const struct cfg *g, uint32_t u, uint32_t h)
{
	for (uint32_t x = u; x != CFG_NONE; x = g->blocks[x].loop_parent)
		if (x == h)
			return true;
	return false;
}

static bool check_edge(const struct cfg *g, uint32_t e)
{
	const struct cfg_edge *ed = &g->edges[e];
	const struct cfg_block *src;

	if (ed->src >= g->nblocks || (ed->dst != CFG_EXIT && ed->dst >= g->nblocks))
		return false;
	src = &g->blocks[ed->src];
	if (e < src->first_edge || e >= src->first_edge + src->nedges ||
	    (uint32_t)cfg_edge_find(g, ed->src, ed->dst) != e)
		return false; /* also catches two edges with the same ends */
	if (ed->back && (ed->dst == CFG_EXIT || !(g->blocks[ed->dst].flags & CFG_BLOCK_HEADER) ||
			 !in_loop(g, ed->src, ed->dst)))
		return false;
	return ed->kind == CFG_EDGE_EXIT ? ed->dst == CFG_EXIT : ed->kind >= CFG_EDGE_FALL;
}

/* Edges, and the block flags that follow from them. */
static bool check_edges(const struct cfg *g)
{
	_cleanup_free_ uint32_t *back_in = calloc(g->nblocks, sizeof(*back_in));

	if (!back_in)
		return false;
	for (uint32_t e = 0; e < g->nedges; e++) {
		if (!check_edge(g, e))
			return false;
		if (g->edges[e].back)
			back_in[g->edges[e].dst]++;
	}
	for (uint32_t v = 0; v < g->nblocks; v++) {
		const struct cfg_block *bl = &g->blocks[v];
		unsigned int flags = 0, nexit = 0;

		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++) {
			flags |= g->edges[e].back ? CFG_BLOCK_BACK_SRC : 0;
			nexit += g->edges[e].dst == CFG_EXIT;
		}
		flags |= nexit ? CFG_BLOCK_EXIT : 0;
		flags |= nexit == bl->nedges ? CFG_BLOCK_EXIT_ONLY : 0;
		flags |= back_in[v] ? CFG_BLOCK_HEADER : 0;
		if ((bl->flags & ~(unsigned int)(CFG_BLOCK_ENTRY | CFG_BLOCK_IRREDUCIBLE)) !=
			flags ||
		    ((bl->flags & CFG_BLOCK_IRREDUCIBLE) && !back_in[v]))
			return false;
	}
	return true;
}

/* Kahn's algorithm over the edges that are not back edges. */
static bool check_acyclic(const struct cfg *g)
{
	_cleanup_free_ uint32_t *indeg = calloc(g->nblocks, sizeof(*indeg));
	_cleanup_free_ uint32_t *queue = calloc(g->nblocks, sizeof(*queue));
	uint32_t head = 0, tail = 0;

	if (!indeg || !queue)
		return false;
	for (uint32_t e = 0; e < g->nedges; e++)
		if (!g->edges[e].back && g->edges[e].dst != CFG_EXIT)
			indeg[g->edges[e].dst]++;
	for (uint32_t v = 0; v < g->nblocks; v++)
		if (!indeg[v])
			queue[tail++] = v;
	while (head < tail) {
		const struct cfg_block *bl = &g->blocks[queue[head++]];

		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++)
			if (!g->edges[e].back && g->edges[e].dst != CFG_EXIT &&
			    --indeg[g->edges[e].dst] == 0)
				queue[tail++] = g->edges[e].dst;
	}
	return tail == g->nblocks && indeg[g->entry] == 0;
}

static bool check_numbering(const struct cfg *g)
{
	if (!g->bl_ok) {
		for (uint32_t e = 0; e < g->nedges; e++)
			if (g->edges[e].val)
				return false;
		return g->num_paths == 0 && !g->dag;
	}
	for (uint32_t v = 0; v < g->nblocks; v++) {
		uint64_t sum = 0;

		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			const struct dag_edge *de = &g->dag[k];

			if (de->val != sum ||
			    (de->edge != CFG_NONE && g->edges[de->edge].val != de->val))
				return false;
			sum += dag_npaths(g, de->dst);
		}
		if (sum != g->blocks[v].num_paths || !sum)
			return false;
	}
	return g->num_paths == g->blocks[g->entry].num_paths;
}

int cfg_check(const struct cfg *g)
{
	if (!check_blocks(g) || !check_edges(g) || !check_acyclic(g) || !check_numbering(g))
		return -EUCLEAN;
	return 0;
}
