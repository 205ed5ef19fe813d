/* SPDX-License-Identifier: GPL-2.0-only */
/* spp.h: structural path profiling (Yasue, Suganuma, Komatsu, Nakatani, "Structural Path
 * Profiling: An Efficient Online Path Profiling Framework for Just-In-Time Compilers",
 * JILP 6, 2004; ALGORITHMS.md §8).
 *
 * A function's loop nesting forest (cfg.h, Havlak) cuts it into structure graphs: the outline
 * graph (graph 0: the blocks outside every loop, each outermost loop reduced to one loop node)
 * and one graph per loop (its header and the blocks of that loop outside its inner loops, each
 * inner loop one loop node). Each graph is profiled on its own with acyclic local paths: a path
 * starts where control enters the graph's region (E, or the header after one of the graph's own
 * back edges: B) and ends where it leaves the region (X) or takes a back edge (B). A local path
 * is the list of its nodes: a block index, or SPP_LOOP | g for the loop node of graph g.
 *
 * The caller feeds the block trace of every activation (spp_enter, spp_block for each block in
 * order, spp_exit); the module projects it onto every graph at once, so one trace serves every
 * graph. Which completed local paths are counted is the profiling controller's choice
 * (Fig. 9 of the paper): with a budget B, the graphs share it evenly (B / graphs each); the
 * outline graph counts first; when a graph has its share (or has waited `timeout` activations
 * for it), it stops and its inner loop graphs start, except those whose loop node none of its
 * counted paths went through: cold loops, skipped with everything inside them. Budget 0 counts
 * everything (the complete, offline profile). Local counts C become global ones with the
 * coefficients of §3.5 of the paper (Fig. 12):
 *
 *     A(outline) = 1,   A(X) = A(Y) * sum_{q in P_Y(N_X)} C_q / sum_{p in P_X(ENTRY_X)} C_p
 *
 * with Y the graph around X, N_X the loop node of X in Y, P_Y(N_X) Y's paths through it and
 * P_X(ENTRY_X) X's paths that start by entering X. Accuracy is the overlap percentage of
 * Feller (Arnold and Ryder's metric): both profiles as shares of their totals, summed minimum.
 * No I/O, no logging, no globals.
 */
#ifndef KPROF_SPP_H
#define KPROF_SPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg;
struct spp;

#define SPP_LOOP 0x80000000u	    /* node: the loop node of graph (node & ~SPP_LOOP) */
#define SPP_M_ENTRY 0xfffffff0u	    /* first node: the path entered the graph's region */
#define SPP_M_BACK 0xfffffff1u	    /* first node: after a back edge; last node: took one */
#define SPP_M_EXIT 0xfffffff2u	    /* last node: left the region (or the function) */
#define SPP_MAX_PATHS_DEFAULT 65536 /* distinct local paths kept (all graphs) */

enum spp_state {
	SPP_IDLE = 0, /* not started (an outer graph is still counting) */
	SPP_ACTIVE,   /* counting its paths */
	SPP_FINISHED, /* has its share of the budget */
	SPP_TIMEOUT,  /* waited `timeout` activations without reaching its share */
	SPP_COLD,     /* skipped: its loop node was on none of its outer graph's counted paths
		       * (never when the outer graph counted none: it then starts) */
};

struct spp_opts {
	uint64_t budget;  /* local paths counted in all, split evenly; 0: count everything */
	uint64_t timeout; /* activations an active graph waits for its share; 0: forever */
	size_t max_paths; /* distinct local paths kept; 0: SPP_MAX_PATHS_DEFAULT */
};

struct spp_graph_info {
	uint32_t header; /* header block; CFG_NONE (UINT32_MAX) for the outline graph */
	uint32_t parent; /* graph around it; UINT32_MAX for the outline graph */
	uint32_t level;	 /* 0 for the outline graph */
	enum spp_state state;
	uint64_t share;	     /* its part of the budget (0: no budget) */
	uint64_t counted;    /* local paths counted */
	uint64_t entries;    /* of those, paths that start with SPP_M_ENTRY */
	uint64_t loop_count; /* counted paths of the parent graph through its loop node */
	double coefficient;  /* A(X) */
	size_t npaths;	     /* distinct local paths */
};

struct spp_stats {
	size_t graphs;
	uint64_t activations;
	uint64_t counted; /* local paths counted, all graphs */
	uint64_t dropped; /* completed paths not kept: max_paths reached, or too long */
	bool complete;	  /* every graph finished, timed out or was skipped */
	size_t memory;
};

/* Per-activation state, owned by the caller; spp_act_release frees it. Zero-initialized is
 * ready to use; it is bound to one spp. */
struct spp_act {
	uint32_t *buf; /* level-major open paths */
	uint32_t *len; /* per level */
	uint32_t prev; /* previous block; UINT32_MAX before the first */
	bool live;
};

/* The structure graphs of g (which must outlive the spp). -EINVAL (NULL), -ENOMEM. */
int spp_new(const struct cfg *g, const struct spp_opts *o, struct spp **ret);
void spp_free(struct spp *s);

/* Activation start; -ENOMEM. Then every block of the activation in order: -EINVAL for a block
 * out of range (the activation is then reset). spp_exit: the activation returned after its last
 * block; spp_act_reset: it was abandoned (nothing of its open paths is counted). */
int spp_enter(struct spp *s, struct spp_act *a);
int spp_block(struct spp *s, struct spp_act *a, uint32_t block);
void spp_exit(struct spp *s, struct spp_act *a);
void spp_act_reset(struct spp_act *a);
void spp_act_release(struct spp_act *a);

/* Add count to local path nodes[0..n) of graph g, through the controller (for replaying a
 * local profile, and for tests). -EINVAL (bad graph or path), -ENOSPC (max_paths). */
int spp_add(struct spp *s, uint32_t g, const uint32_t *nodes, size_t n, uint64_t count);

/* End graph g's wait for its share now (the caller's own timeout, e.g. a time limit per
 * graph): an active graph becomes SPP_TIMEOUT and its inner loops start or are cold, as at a
 * timeout. 1 if it was active, 0 if not (or without a budget), -EINVAL. */
int spp_finish(struct spp *s, uint32_t g);

size_t spp_ngraphs(const struct spp *s);
/* The graph of loop header h, -ENOENT if h heads no loop; the outline graph is 0. */
int spp_graph_of(const struct spp *s, uint32_t h);
/* Coefficients are computed on each call (they change as counts come). */
int spp_graph_get(const struct spp *s, uint32_t g, struct spp_graph_info *gi);
void spp_get_stats(const struct spp *s, struct spp_stats *st);

/* Every kept local path: graph, nodes, local count, global count (local x A). A negative
 * return of fn stops the walk and is returned. */
typedef int (*spp_path_fn)(uint32_t g, const uint32_t *nodes, size_t n, uint64_t local,
			   double global, void *userdata);
int spp_foreach_path(const struct spp *s, spp_path_fn fn, void *userdata);

/* Whole-function view of a local path (§3.6 of the paper): each loop node replaced by the
 * blocks of its graph's hottest path that enters and leaves the loop without iterating (found
 * recursively); a loop node without such a path stays a loop node. Markers are dropped. Writes
 * at most cap nodes to out; returns how many, -ENOSPC if cap is too small. */
int spp_expand(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n, uint32_t *out,
	       size_t cap);

/* Overlap percentage (0-100) of the global profiles of a and b (built on the same cfg). */
double spp_overlap(const struct spp *a, const struct spp *b);
/* Overlap percentage of two weight vectors over the same n keys. */
double spp_overlap_vec(const double *a, const double *b, size_t n);

/* Flat Ball-Larus profiling with the same budget, for comparison: the first `budget` path ids
 * (0: all of them) counted by id. */
struct spp_flat;

int spp_flat_new(uint64_t budget, size_t max_ids, struct spp_flat **ret);
void spp_flat_free(struct spp_flat *f);
/* 0 (counted or past the budget), -ENOSPC (max_ids distinct ids), -ENOMEM. */
int spp_flat_add(struct spp_flat *f, uint64_t id);
uint64_t spp_flat_counted(const struct spp_flat *f);
/* Overlap percentage of two flat profiles. */
double spp_flat_overlap(const struct spp_flat *a, const struct spp_flat *b);

#endif
