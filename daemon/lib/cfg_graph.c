// SPDX-License-Identifier: GPL-2.0-only
/* cfg_graph.c: passes 3 and 4 of cfg_build (cfg.c): the depth-first search, back edges, the
 * loop nesting forest and the Ball-Larus numbering. Apart from cfg.c because they see only
 * blocks and edges, never an instruction, and call nothing of cfg.c.
 *
 * An iterative DFS from the entry, successors in edge order. Back edges are the edges
 * to a DFS ancestor or to the block itself (retreating edges); removing them leaves a DAG for
 * any DFS. Havlak's algorithm (TOPLAS 19(4), 1997) over the same DFS builds the loop nesting
 * forest and flags irreducible loops: a loop's header is its first block in DFS preorder, only
 * edges into that header are back edges, and the loop's other entries stay ordinary edges, so
 * a path may enter an irreducible loop at any of its entries. The successor order is fixed, so
 * the choice of header is deterministic.
 *
 * Per DAG vertex an out-list (dummies first, as in ALGORITHMS.md TV-BL: v->EXIT when
 * v is a back edge source, then ENTRY->h for every header h when v is the entry block, then
 * the real edges that are not back edges), vals and NumPaths computed in DFS postorder (a
 * reverse topological order of the DAG). ENTRY is the entry block: a back edge to the entry
 * block needs no dummy, as the path it starts is numbered like one from function entry.
 * Counts are checked against the cap on every addition, so they never wrap.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "cfg_internal.h"

/* ---- pass 3: DFS, back edges, loop nesting forest ---- */

static bool dfs_ancestor(const struct dfs *d, uint32_t w, uint32_t v)
{
	return d->pre[w] <= d->pre[v] && d->pre[v] <= d->last[w];
}

void cfg_dfs_free(struct dfs *d)
{
	free(d->pre);
	free(d->last);
	free(d->node);
	free(d->post);
}

int cfg_dfs_run(const struct cfg *g, struct dfs *d)
{
	uint32_t n = g->nblocks, npre = 0, npost = 0, sp = 0;
	_cleanup_free_ uint32_t *stk = calloc(n, sizeof(*stk)), *pos = calloc(n, sizeof(*pos));

	d->pre = malloc(n * sizeof(*d->pre));
	d->last = malloc(n * sizeof(*d->last));
	d->node = malloc(n * sizeof(*d->node));
	d->post = malloc(n * sizeof(*d->post));
	if (!stk || !pos || !d->pre || !d->last || !d->node || !d->post)
		return -ENOMEM;
	memset(d->pre, 0xff, n * sizeof(*d->pre));
	d->pre[g->entry] = npre;
	d->node[npre++] = g->entry;
	stk[sp++] = g->entry;
	while (sp > 0) {
		uint32_t v = stk[sp - 1], w;
		const struct cfg_block *bl = &g->blocks[v];

		if (pos[sp - 1] == bl->nedges) {
			d->last[v] = npre - 1;
			d->post[npost++] = v;
			sp--;
			continue;
		}
		w = g->edges[bl->first_edge + pos[sp - 1]++].dst;
		if (w == CFG_EXIT || d->pre[w] != CFG_NONE)
			continue;
		d->pre[w] = npre;
		d->node[npre++] = w;
		pos[sp] = 0;
		stk[sp++] = w;
	}
	assert(npre == n && npost == n); /* every block was reached from the entry */
	return 0;
}

struct plist {
	uint32_t node, next;
};

struct havlak {
	uint32_t *uf;	 /* union-find parent */
	uint32_t *mark;	 /* block -> header whose loop body it was last added to */
	uint32_t *body;	 /* the loop body being collected, also the worklist */
	uint32_t *nb;	 /* block -> head of its non-back predecessor list in pool */
	uint32_t *bp;	 /* block -> head of its back predecessor list in pool */
	uint32_t *outer; /* block -> header it was last recorded as an outside entry of */
	struct plist *pool;
	size_t npool, pool_cap, pool_max;
};

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

static int plist_push(struct havlak *h, uint32_t *head, uint32_t node)
{
	if (h->npool == h->pool_max)
		return -E2BIG;
	if (array_grow((void **)&h->pool, &h->pool_cap, h->npool + 1, sizeof(*h->pool), 16) < 0)
		return -ENOMEM;
	h->pool[h->npool] = (struct plist){.node = node, .next = *head};
	*head = (uint32_t)h->npool++;
	return 0;
}

/* The loop headed by w: its body from the back edges into w, walking non-back predecessors. */
static int havlak_loop(struct cfg *g, const struct dfs *d, struct havlak *h, uint32_t w)
{
	uint32_t nbody = 0;
	int r;

	for (uint32_t p = h->bp[w]; p != CFG_NONE; p = h->pool[p].next) {
		uint32_t x = uf_find(h->uf, h->pool[p].node);

		g->blocks[w].flags |= CFG_BLOCK_HEADER;
		if (x != w && h->mark[x] != w) {
			h->mark[x] = w;
			h->body[nbody++] = x;
		}
	}
	for (uint32_t k = 0; k < nbody; k++) {
		for (uint32_t p = h->nb[h->body[k]]; p != CFG_NONE; p = h->pool[p].next) {
			uint32_t y = uf_find(h->uf, h->pool[p].node);

			if (!dfs_ancestor(d, w, y)) {
				/* Another entry into the loop: w's own predecessor from now on. */
				g->blocks[w].flags |= CFG_BLOCK_IRREDUCIBLE;
				if (h->outer[y] == w)
					continue;
				h->outer[y] = w;
				r = plist_push(h, &h->nb[w], y);
				if (r < 0)
					return r;
			} else if (y != w && h->mark[y] != w) {
				h->mark[y] = w;
				h->body[nbody++] = y;
			}
		}
	}
	for (uint32_t k = 0; k < nbody; k++) {
		g->blocks[h->body[k]].loop_parent = w;
		h->uf[h->body[k]] = w;
	}
	return 0;
}

int cfg_loops_find(struct cfg *g, const struct dfs *d)
{
	uint32_t n = g->nblocks;
	/* Outside entries are passed up to every enclosing loop: quadratic in the worst case. */
	struct havlak h = {.pool_max = 16 * ((size_t)g->nedges + n) + 65536};
	int r = -ENOMEM;

	for (uint32_t e = 0; e < g->nedges; e++) {
		struct cfg_edge *ed = &g->edges[e];

		ed->back = ed->dst != CFG_EXIT && dfs_ancestor(d, ed->dst, ed->src);
		g->nback += ed->back;
	}
	h.uf = malloc(n * sizeof(*h.uf));
	h.mark = malloc(n * sizeof(*h.mark));
	h.body = malloc(n * sizeof(*h.body));
	h.nb = malloc(n * sizeof(*h.nb));
	h.bp = malloc(n * sizeof(*h.bp));
	h.outer = malloc(n * sizeof(*h.outer));
	if (!h.uf || !h.mark || !h.body || !h.nb || !h.bp || !h.outer)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		h.uf[i] = i;
		h.mark[i] = h.nb[i] = h.bp[i] = h.outer[i] = CFG_NONE;
	}
	r = 0;
	for (uint32_t e = 0; e < g->nedges && r >= 0; e++) {
		const struct cfg_edge *ed = &g->edges[e];

		if (ed->dst != CFG_EXIT)
			r = plist_push(&h, ed->back ? &h.bp[ed->dst] : &h.nb[ed->dst], ed->src);
	}
	for (uint32_t i = n; i-- > 0 && r >= 0;)
		r = havlak_loop(g, d, &h, d->node[i]);
out:
	free(h.uf);
	free(h.mark);
	free(h.body);
	free(h.nb);
	free(h.bp);
	free(h.outer);
	free(h.pool);
	return r;
}

/* Flags and loop depth; in preorder, so a block's loop header is done before it. */
void cfg_blocks_finish(struct cfg *g, const struct dfs *d)
{
	for (uint32_t e = 0; e < g->nedges; e++) {
		struct cfg_block *src = &g->blocks[g->edges[e].src];

		if (g->edges[e].back)
			src->flags |= CFG_BLOCK_BACK_SRC;
		if (g->edges[e].dst == CFG_EXIT)
			src->flags |= CFG_BLOCK_EXIT;
	}
	g->blocks[g->entry].flags |= CFG_BLOCK_ENTRY;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		struct cfg_block *bl = &g->blocks[d->node[i]];
		bool all_exit = true;

		for (uint32_t k = 0; k < bl->nedges; k++)
			all_exit &= g->edges[bl->first_edge + k].dst == CFG_EXIT;
		if (all_exit)
			bl->flags |= CFG_BLOCK_EXIT_ONLY;
		bl->loop_depth =
		    bl->loop_parent == CFG_NONE ? 0 : g->blocks[bl->loop_parent].loop_depth;
		if (bl->flags & CFG_BLOCK_HEADER) {
			bl->loop_depth++;
			g->nloops++;
			g->nirreducible += !!(bl->flags & CFG_BLOCK_IRREDUCIBLE);
		}
	}
}

/* ---- pass 4: Ball-Larus numbering ---- */

static int dag_make(struct cfg *g)
{
	uint32_t n = g->nblocks, k = 0;

	g->dag_first = calloc((size_t)n + 1, sizeof(*g->dag_first));
	g->dag = calloc((size_t)g->nedges + g->nback + 2 * (size_t)n, sizeof(*g->dag));
	if (!g->dag_first || !g->dag)
		return -ENOMEM;
	for (uint32_t v = 0; v < n; v++) {
		const struct cfg_block *bl = &g->blocks[v];

		g->dag_first[v] = k;
		if (bl->flags & CFG_BLOCK_BACK_SRC)
			g->dag[k++] = (struct dag_edge){.dst = CFG_EXIT, .edge = CFG_NONE};
		for (uint32_t h = 0; v == g->entry && h < n; h++)
			if (h != g->entry && (g->blocks[h].flags & CFG_BLOCK_HEADER))
				g->dag[k++] = (struct dag_edge){.dst = h, .edge = CFG_NONE};
		for (uint32_t e = bl->first_edge; e < bl->first_edge + bl->nedges; e++)
			if (!g->edges[e].back)
				g->dag[k++] = (struct dag_edge){.dst = g->edges[e].dst, .edge = e};
	}
	g->dag_first[n] = g->ndag = k;
	return 0;
}

/* NumPaths and vals; false when a count passes the cap. */
static bool bl_count(struct cfg *g, const struct dfs *d, uint64_t cap)
{
	for (uint32_t i = 0; i < g->nblocks; i++) {
		uint32_t v = d->post[i];
		uint64_t sum = 0;

		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			g->dag[k].val = sum;
			if (__builtin_add_overflow(sum, dag_npaths(g, g->dag[k].dst), &sum) ||
			    sum > cap)
				return false;
		}
		g->blocks[v].num_paths = sum;
	}
	return true;
}

static void bl_export(struct cfg *g)
{
	for (uint32_t v = 0; v < g->nblocks; v++) {
		for (uint32_t k = g->dag_first[v]; k < g->dag_first[v + 1]; k++) {
			const struct dag_edge *de = &g->dag[k];

			if (de->edge != CFG_NONE)
				g->edges[de->edge].val = de->val;
			if (de->edge != CFG_NONE && de->dst == CFG_EXIT)
				g->blocks[v].exit_val = de->val;
			else if (de->edge == CFG_NONE && de->dst == CFG_EXIT)
				g->blocks[v].back_exit_val = de->val;
			else if (de->edge == CFG_NONE)
				g->blocks[de->dst].entry_val = de->val;
		}
	}
}

int cfg_bl_number(struct cfg *g, const struct dfs *d, uint64_t cap)
{
	int r = dag_make(g);

	if (r < 0)
		return r;
	g->bl_ok = bl_count(g, d, cap);
	if (g->bl_ok) {
		g->num_paths = g->blocks[g->entry].num_paths;
		bl_export(g);
		return 0;
	}
	for (uint32_t v = 0; v < g->nblocks; v++)
		g->blocks[v].num_paths = 0;
	free(g->dag);
	free(g->dag_first);
	g->dag = NULL;
	g->dag_first = NULL;
	g->ndag = 0;
	return 0;
}
