/* SPDX-License-Identifier: GPL-2.0-only */
/* cct.h: the exact calling context tree, for tests and benchmarks of the HCCT.
 *
 * The naive structure the HCCT approximates (ALGORITHMS.md §1.1): one node per distinct calling
 * context with its exact frequency, nothing ever evicted. It takes the same inputs as hcct.h and
 * follows the same rules, so that it is an oracle for the same stream: a sampled stack counts
 * its leaf only (intermediate frames are created with count 0), an enter counts the context
 * entered, and the same depth limit refuses the same events. Memory grows with the number of
 * distinct contexts (32 bytes a node), up to max_nodes.
 *
 * Nodes are numbered in creation order: 0 is the root (not a context, count 0), and a parent's
 * index is always below its children's, so one backward pass over 0..cct_nodes()-1 visits every
 * child before its parent. Pure: no I/O, no globals, not thread-safe.
 */
#ifndef KPROF_CCT_H
#define KPROF_CCT_H

#include <stddef.h>
#include <stdint.h>

#define CCT_NONE UINT32_MAX
#define CCT_MAX_NODES (1u << 30)
#define CCT_DEFAULT_MAX_NODES (1u << 26)
#define CCT_DEFAULT_MAX_DEPTH 1024u /* the same as HCCT_DEFAULT_MAX_DEPTH */

struct cct;

struct cct_params {
	uint32_t max_nodes; /* root included; 0: CCT_DEFAULT_MAX_NODES */
	uint32_t max_depth; /* 0: CCT_DEFAULT_MAX_DEPTH */
};

/* A thread's position for enter/exit events; all zeroes is the root. Fields are private. */
struct cct_cursor {
	uint32_t node;
	uint32_t depth;
	uint32_t lost; /* enters refused under this cursor and not yet exited */
};

struct cct_node_info {
	uint64_t call_site;
	uint64_t count; /* exact frequency */
	uint32_t id;
	uint32_t parent; /* CCT_NONE for the root */
};

struct cct_stats {
	uint64_t n;    /* enters + total sample weight */
	uint64_t lost; /* refused: caps, depth */
	size_t nodes;  /* root included */
	size_t bytes;
};

/* p may be NULL for the defaults. -EINVAL, -ENOMEM. */
int cct_new(const struct cct_params *p, struct cct **ret);
void cct_free(struct cct *c);

/* As hcct_add_stack(): ids root first, sites may be NULL; -EINVAL for n == 0, NULL ids or count
 * == 0; -E2BIG beyond max_depth, -ENOSPC at the node cap (counted in lost); -EOVERFLOW. */
int cct_add_stack(struct cct *c, const uint32_t *ids, size_t n, uint64_t count);
int cct_add_stack_sites(struct cct *c, const uint32_t *ids, const uint64_t *sites, size_t n,
			uint64_t count);

/* As hcct_cursor_enter() / _exit() / _align(). */
int cct_cursor_enter(struct cct *c, struct cct_cursor *cur, uint32_t id, uint64_t call_site);
int cct_cursor_exit(struct cct *c, struct cct_cursor *cur);
int cct_cursor_align(struct cct *c, struct cct_cursor *cur, const uint32_t *ids,
		     const uint64_t *sites, size_t n);
int cct_enter(struct cct *c, uint32_t id, uint64_t call_site);
int cct_exit(struct cct *c);

/* Number of nodes, root included; valid indices are 0..cct_nodes()-1. */
size_t cct_nodes(const struct cct *c);
/* 0 and *out for a valid index, -ENOENT otherwise. */
int cct_node(const struct cct *c, uint32_t idx, struct cct_node_info *out);
/* Index of parent's child with key (id, call_site), or -ENOENT. */
int cct_child(const struct cct *c, uint32_t parent, uint32_t id, uint64_t call_site);
/* Index of the context ids[0..n) (sites may be NULL), the root for n == 0, or -ENOENT. */
int cct_lookup(const struct cct *c, const uint32_t *ids, const uint64_t *sites, size_t n);

void cct_get_stats(const struct cct *c, struct cct_stats *st);

#endif
