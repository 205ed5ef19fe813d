/* SPDX-License-Identifier: GPL-2.0-only */
/* hwspp.h: structural path profiling (spp.h) of code only hardware breakpoints can watch: the
 * local paths of ONE structure graph at a time, rebuilt from the hits of breakpoints on that
 * graph's own conditional branches (hwspp.c; ALGORITHMS.md §9).
 *
 * Graph X's breakpoints are the jccs of X's own blocks (not those of its inner loops) and, for
 * the outline graph, the function's first instruction (each activation: hwspp_entry). Between
 * hits the walker goes through X's blocks that have one way out (or are assumed one way, as in
 * hwbranch.h), appending nodes in spp.h's alphabet; an edge into an inner loop appends its loop
 * node and waits (nothing of X runs while control is inside it); the next hit must then be
 * reachable from that loop's exits through X's nodes without breakpoints by exactly one route,
 * else the path is given up (counted). An edge out of X's region ends the path X, a back edge to
 * X's header ends it B and begins a B path, a return ends the outline's path. Outside a path, a
 * hit starts one (E) only when one route leads to it from the region's entry; a path whose
 * beginning was missed is followed to its end and dropped, so the next one starts exactly.
 * Every path emitted is one spp.c would project from the complete block trace for X. No I/O,
 * no logging, no globals.
 */
#ifndef KPROF_HWSPP_H
#define KPROF_HWSPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kprof/cfg.h"

struct spp;
struct hwspp_graph;

#define HWSPP_PATH_MAX 512 /* nodes of a local path followed (markers included) */

/* How a conditional block of X is followed (assume[] of hwspp_graph_new, one per block). */
enum hwspp_cover {
	HWSPP_HIT = 0, /* a breakpoint: its hits decide (or not a conditional block) */
	HWSPP_FALL,    /* assumed not taken */
	HWSPP_TAKEN,   /* assumed taken */
	HWSPP_NEVER,   /* never ran while counted: a walk that reaches it gives up */
	HWSPP_ARRIVE,  /* a block with one way out: a breakpoint at its start says it ran */
};

/* The structure graph x of s (built on g) for walking; assume: per block of g (NULL: every
 * conditional block of X has a breakpoint). -EINVAL, -ENOMEM. */
int hwspp_graph_new(const struct cfg *g, const struct spp *s, uint32_t x, const uint8_t *assume,
		    struct hwspp_graph **ret);
void hwspp_graph_free(struct hwspp_graph *x);
/* The graph of block b in s: the innermost loop's graph, 0 outside loops. */
uint32_t hwspp_block_graph(const struct cfg *g, const struct spp *s, uint32_t b);
/* The conditional blocks of graph x's own (inner loops' not included), in block order: how
 * many (also when more than cap; only cap written). */
size_t hwspp_own_conds(const struct cfg *g, const struct spp *s, uint32_t x, uint32_t *out,
		       size_t cap);

/* One thread's walk of one graph; zero-initialized is idle. */
enum hwspp_state { HWSPP_IDLE = 0, HWSPP_EXPECT, HWSPP_WAIT };
struct hwspp_walk {
	enum hwspp_state state;
	bool lost;   /* the current path's beginning was missed: dropped when it ends */
	uint32_t at; /* EXPECT: the block whose hit comes next; WAIT: the loop node's graph */
	uint32_t n;
	uint32_t nodes[HWSPP_PATH_MAX];
	uint64_t paths, given_up; /* emitted; given up (lost hit, ambiguous route, too long) */
};
typedef void (*hwspp_emit_fn)(void *ud, const uint32_t *nodes, size_t n);

/* A hit at the jcc ending block b of X (taken or not). 0, or -EINVAL (b not one of X's
 * breakpoints). */
int hwspp_hit(struct hwspp_graph *x, struct hwspp_walk *w, uint32_t b, bool taken,
	      hwspp_emit_fn emit, void *ud);
/* The function's first instruction has a breakpoint in x's turn too (always so for the outline
 * graph): every activation is seen, so the walk of a loop of the outline graph (one no other
 * loop holds) knows that control which left its region from inside an inner loop can only come
 * back by a call. */
void hwspp_graph_entry_bp(struct hwspp_graph *x);
/* A hit at the function's first instruction: the outline graph starts a path E; a loop graph
 * set with hwspp_graph_entry_bp ends a path waiting in a loop node (hwspp_walk_end). -EINVAL
 * for a loop graph without it. */
int hwspp_entry(struct hwspp_graph *x, struct hwspp_walk *w, hwspp_emit_fn emit, void *ud);
/* The activation has returned (the trace ends): a path waiting in a loop node is closed X when
 * one route leads out of the region from there, else given up; the walk is idle. */
void hwspp_walk_end(struct hwspp_graph *x, struct hwspp_walk *w, hwspp_emit_fn emit, void *ud);
/* Give the current path up (counted if one was open); the walk is idle. */
void hwspp_walk_reset(struct hwspp_walk *w);

/* Branches to assume for a graph with more own branches than slots: given each branch's
 * taken / not-taken counts (from counting turns), the ones that went both ways stay HWSPP_HIT
 * (written to keep[], at most slots), the others are assumed (assume[blocks[i]] written).
 * Returns how many are kept, -E2BIG if more than slots went both ways, -EINVAL. */
int hwspp_assume(const uint32_t *blocks, size_t n, const uint64_t *taken, const uint64_t *not_taken,
		 size_t slots, uint8_t *assume, uint32_t *keep);

#endif
