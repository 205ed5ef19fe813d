// SPDX-License-Identifier: GPL-2.0-only
/* cct.c: exact calling context tree (see cct.h).
 *
 * The HCCT's tree without Space-Saving: the same 32-byte first-child / next-sibling nodes in
 * one array indexed by uint32, the same linear sibling scan with new children at the head, and
 * a counter in every node instead of a slot. Nodes are never freed, so the array only grows (by
 * doubling, up to max_nodes) and indices follow creation order.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cct.h"

#define ROOT 0u

struct cnode {
	uint64_t site;
	uint64_t count;
	uint32_t id;
	uint32_t parent;
	uint32_t child;
	uint32_t sibling;
};

_Static_assert(sizeof(struct cnode) == 32, "CCT node size");

struct cct {
	struct cnode *nodes;
	uint32_t cap, used;
	uint32_t max_nodes, max_depth;
	uint64_t n, lost;
	struct cct_cursor cur;
};

int cct_new(const struct cct_params *p, struct cct **ret)
{
	struct cct *c;

	if (!ret || (p && p->max_nodes > CCT_MAX_NODES))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max_nodes = p && p->max_nodes ? p->max_nodes : CCT_DEFAULT_MAX_NODES;
	c->max_depth = p && p->max_depth ? p->max_depth : CCT_DEFAULT_MAX_DEPTH;
	c->cap = c->max_nodes < 1024 ? c->max_nodes : 1024;
	c->nodes = malloc(c->cap * sizeof(*c->nodes));
	if (!c->nodes) {
		free(c);
		return -ENOMEM;
	}
	c->nodes[ROOT] = (struct cnode){.parent = CCT_NONE, .child = CCT_NONE, .sibling = CCT_NONE};
	c->used = 1;
	*ret = c;
	return 0;
}

void cct_free(struct cct *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c);
}

static int child_get(struct cct *c, uint32_t p, uint32_t id, uint64_t site, uint32_t *ret)
{
	uint32_t x;

	for (x = c->nodes[p].child; x != CCT_NONE; x = c->nodes[x].sibling)
		if (c->nodes[x].id == id && c->nodes[x].site == site) {
			*ret = x;
			return 0;
		}
	if (c->used >= c->max_nodes)
		return -ENOSPC;
	if (c->used == c->cap) {
		uint64_t cap = 2 * (uint64_t)c->cap;
		struct cnode *q;

		if (cap > c->max_nodes)
			cap = c->max_nodes;
		q = realloc(c->nodes, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		c->nodes = q;
		c->cap = (uint32_t)cap;
	}
	x = c->used++;
	c->nodes[x] = (struct cnode){
	    .site = site, .id = id, .parent = p, .child = CCT_NONE, .sibling = c->nodes[p].child};
	c->nodes[p].child = x;
	*ret = x;
	return 0;
}

static void add_lost(struct cct *c, uint64_t w)
{
	c->lost = w > UINT64_MAX - c->lost ? UINT64_MAX : c->lost + w;
}

static int walk_path(struct cct *c, const uint32_t *ids, const uint64_t *sites, size_t n,
		     uint32_t *ret)
{
	uint32_t cur = ROOT;

	for (size_t i = 0; i < n; i++) {
		int r = child_get(c, cur, ids[i], sites ? sites[i] : 0, &cur);

		if (r < 0)
			return r; /* what was created stays, with count 0, as in any CCT */
	}
	*ret = cur;
	return 0;
}

int cct_add_stack_sites(struct cct *c, const uint32_t *ids, const uint64_t *sites, size_t n,
			uint64_t count)
{
	uint32_t leaf;
	int r;

	if (!c || !ids || n == 0 || count == 0)
		return -EINVAL;
	if (count > UINT64_MAX - c->n)
		return -EOVERFLOW;
	if (n > c->max_depth) {
		add_lost(c, count);
		return -E2BIG;
	}
	r = walk_path(c, ids, sites, n, &leaf);
	if (r < 0) {
		add_lost(c, count);
		return r;
	}
	c->n += count;
	c->nodes[leaf].count += count;
	return 0;
}

int cct_add_stack(struct cct *c, const uint32_t *ids, size_t n, uint64_t count)
{
	return cct_add_stack_sites(c, ids, NULL, n, count);
}

static bool cursor_valid(const struct cct *c, const struct cct_cursor *cur)
{
	if (cur->node == ROOT)
		return cur->depth == 0;
	return cur->node < c->used && cur->depth > 0 && cur->depth <= c->max_depth;
}

int cct_cursor_enter(struct cct *c, struct cct_cursor *cur, uint32_t id, uint64_t call_site)
{
	uint32_t x;
	int r;

	if (!c || !cur)
		return -EINVAL;
	if (cur->lost) {
		if (cur->lost == UINT32_MAX)
			return -EOVERFLOW;
		cur->lost++;
		add_lost(c, 1);
		return -ENOSPC;
	}
	if (!cursor_valid(c, cur))
		return -EINVAL;
	if (c->n == UINT64_MAX)
		return -EOVERFLOW;
	r = cur->depth >= c->max_depth ? -E2BIG : child_get(c, cur->node, id, call_site, &x);
	if (r < 0) {
		cur->lost = 1;
		add_lost(c, 1);
		return r;
	}
	c->n++;
	c->nodes[x].count++;
	cur->node = x;
	cur->depth++;
	return 0;
}

int cct_cursor_exit(struct cct *c, struct cct_cursor *cur)
{
	if (!c || !cur)
		return -EINVAL;
	if (cur->lost) {
		cur->lost--;
		return 0;
	}
	if (cur->node == ROOT || !cursor_valid(c, cur))
		return -EINVAL;
	cur->node = c->nodes[cur->node].parent;
	cur->depth--;
	return 0;
}

int cct_cursor_align(struct cct *c, struct cct_cursor *cur, const uint32_t *ids,
		     const uint64_t *sites, size_t n)
{
	uint32_t x;
	int r;

	if (!c || !cur || (n && !ids))
		return -EINVAL;
	*cur = (struct cct_cursor){0};
	if (n > c->max_depth)
		return -E2BIG;
	r = walk_path(c, ids, sites, n, &x);
	if (r < 0)
		return r;
	cur->node = x;
	cur->depth = (uint32_t)n;
	return 0;
}

int cct_enter(struct cct *c, uint32_t id, uint64_t call_site)
{
	return c ? cct_cursor_enter(c, &c->cur, id, call_site) : -EINVAL;
}

int cct_exit(struct cct *c)
{
	return c ? cct_cursor_exit(c, &c->cur) : -EINVAL;
}

size_t cct_nodes(const struct cct *c)
{
	return c ? c->used : 0;
}

int cct_node(const struct cct *c, uint32_t idx, struct cct_node_info *out)
{
	const struct cnode *x;

	if (!c || !out || idx >= c->used)
		return -ENOENT;
	x = &c->nodes[idx];
	*out = (struct cct_node_info){
	    .call_site = x->site, .count = x->count, .id = x->id, .parent = x->parent};
	return 0;
}

int cct_child(const struct cct *c, uint32_t parent, uint32_t id, uint64_t call_site)
{
	if (!c || parent >= c->used)
		return -ENOENT;
	for (uint32_t x = c->nodes[parent].child; x != CCT_NONE; x = c->nodes[x].sibling)
		if (c->nodes[x].id == id && c->nodes[x].site == call_site)
			return (int)x;
	return -ENOENT;
}

int cct_lookup(const struct cct *c, const uint32_t *ids, const uint64_t *sites, size_t n)
{
	int x = ROOT;

	if (!c || (n && !ids))
		return -ENOENT;
	for (size_t i = 0; i < n && x >= 0; i++)
		x = cct_child(c, (uint32_t)x, ids[i], sites ? sites[i] : 0);
	return x;
}

void cct_get_stats(const struct cct *c, struct cct_stats *st)
{
	if (!c) {
		*st = (struct cct_stats){0};
		return;
	}
	*st = (struct cct_stats){.n = c->n,
				 .lost = c->lost,
				 .nodes = c->used,
				 .bytes = sizeof(*c) + (size_t)c->cap * sizeof(struct cnode)};
}
