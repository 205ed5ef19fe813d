/* SPDX-License-Identifier: GPL-2.0-only */
/* cfg_internal.h: struct cfg and the DFS, shared by cfg.c (decoding, blocks and edges, building,
 * plain queries), cfg_graph.c (DFS, loops, Ball-Larus numbering), cfg_paths.c (transitions and
 * path ids) and cfg_check.c (the invariant checker), and by nothing else: callers see struct cfg
 * as opaque (include/kprof/cfg.h). The passes are explained at the top of cfg.c. The helpers two
 * of those files need are defined here, static and not inline (unused where a file does not call
 * them), as they were when cfg.c was one file.
 */
#ifndef KPROF_LIB_CFG_INTERNAL_H
#define KPROF_LIB_CFG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/cfg.h"

/* A vertex's out-list entry in the numbering DAG. edge == CFG_NONE marks a dummy: to CFG_EXIT
 * (a back edge source) or to a header (from the entry block). */
struct dag_edge {
	uint32_t dst;
	uint32_t edge;
	uint64_t val;
};

struct cfg {
	uint64_t start;
	size_t len;
	uint32_t entry;
	struct cfg_block *blocks;
	uint32_t nblocks;
	struct cfg_edge *edges;
	uint32_t nedges;
	struct dag_edge *dag;
	uint32_t *dag_first; /* nblocks + 1 offsets into dag */
	uint32_t ndag;
	size_t ninsns, nback, nloops, nirreducible;
	uint64_t num_paths;
	bool bl_ok;
};

struct dfs {
	uint32_t *pre;	/* block -> preorder number */
	uint32_t *last; /* block -> highest preorder number in its subtree */
	uint32_t *node; /* preorder number -> block */
	uint32_t *post; /* blocks in postorder */
};
static __attribute__((unused)) bool in_code(uint64_t start, size_t len, uint64_t addr)
{
	return addr >= start && addr - start < len;
}

static __attribute__((unused)) uint64_t dag_npaths(const struct cfg *g, uint32_t v)
{
	return v == CFG_EXIT ? 1 : g->blocks[v].num_paths;
}

/* cfg_graph.c: passes 3 and 4, called by cfg_build once the blocks and edges are made. */
int cfg_dfs_run(const struct cfg *g, struct dfs *d);
void cfg_dfs_free(struct dfs *d);
int cfg_loops_find(struct cfg *g, const struct dfs *d);
void cfg_blocks_finish(struct cfg *g, const struct dfs *d);
int cfg_bl_number(struct cfg *g, const struct dfs *d, uint64_t cap);

#endif
