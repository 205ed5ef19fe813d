// SPDX-License-Identifier: GPL-2.0-only
/* hcct.c: (phi, eps)-HCCT with Space-Saving over MCCT nodes (see include/kprof/hcct.h): the
 * updates (samples, cursors) and the MCCT they maintain. Queries and snapshots are in
 * hcct_tree.c, the invariant checker in hcct_check.c, the layout they share in hcct_internal.h.
 *
 * Nodes live in one pool indexed by uint32 (index 0 is the root), so a node is 40 bytes: key,
 * parent / first-child / next- and previous-sibling links (the previous one makes pruning O(1)
 * however many siblings), its slot in M, a pin count and flags. Freed nodes go to a free list
 * threaded through `sibling`; the pool grows by doubling up to max_nodes and never shrinks. M is
 * three parallel arrays (node, count, err) so the counter scans of the lazy minimum read one dense
 * uint64 array; a node is monitored iff its `slot` is set, which needs no dictionary (T:380).
 * A takeover evicts the lowest slot holding the minimum (§1.3), and the victim, if now an
 * unmonitored leaf that no cursor stands on, is freed with every ancestor left the same way
 * (Algorithm 1). New children go to the head of the sibling list ([R]).
 *
 * Child index. A lookup scans the sibling list with move-to-front, which finds a hot child at
 * once but costs the whole degree when children are equally likely (random paths through a big
 * program put hundreds of children under one node). So a lookup that scans more than INDEX_MIN
 * siblings indexes the parent, as the k-SF does (ksf.c): its children also go into one table for
 * the whole tree, open addressing with linear probing keyed by (parent, id, site), and later
 * lookups under that parent are expected O(1) whatever its degree. A slot is 8 bytes, the key's
 * 32-bit hash and the node; the key itself is read from the node, which a hit reads anyway.
 * Pruning a child of an indexed node deletes its entry by backward shift, so there are no
 * tombstones and probe lengths depend on the live entries only. The lists stay complete (queries,
 * pruning and the checker walk them); an indexed node stays indexed until it is freed. Entries
 * are children of live nodes, so fewer than max_nodes, and the table is kept at most half full:
 * it grows by doubling up to max(64, 2^ceil(log2(2 max_nodes))) slots and never shrinks. If it
 * cannot grow when a node would be indexed, the node is left to its list; under an indexed node, a
 * new child that finds no room fails with -ENOMEM like a node the pool cannot hold.
 *
 * Fetching ahead. When nearly every sample is a new context, every sample evicts, and the
 * victim's path is long out of the cache; the victims are predictable, so each eviction fetches
 * the paths of the next few a node at a time (see "prefetching the next victims"). A hint only:
 * nothing it reads decides anything.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hash.h"
#include "kprof/hcct.h"
#include "hcct_internal.h"

uint32_t hcct_slots_for_eps(double eps)
{
	double x, r;

	if (!(eps > 0 && eps <= 1))
		return 0;
	x = 1 / eps;
	if (x > (double)HCCT_MAX_SLOTS + 1)
		return 0;
	r = nearbyint(x);
	x = fabs(x - r) <= 1e-9 * x ? r : ceil(x);
	return x > HCCT_MAX_SLOTS ? 0 : (uint32_t)x;
}

int hcct_ratio_from_double(double x, uint64_t *num, uint64_t *den)
{
	uint64_t d = 1;

	if (!num || !den || !(x >= 0 && x <= 1))
		return -EINVAL;
	for (int k = 0; k <= 18; k++, d *= 10) {
		double y = x * (double)d, r = nearbyint(y);

		if (fabs(y - r) <= y * 4 * DBL_EPSILON) {
			*num = (uint64_t)r;
			*den = d;
			return 0;
		}
	}
	*num = (uint64_t)llround(x * 1e18);
	*den = 1000000000000000000ULL;
	return 0;
}

int hcct_new(const struct hcct_params *p, struct hcct **ret)
{
	struct hcct *h;
	uint64_t max_nodes;

	if (!p || !ret || p->slots < 1 || p->slots > HCCT_MAX_SLOTS ||
	    p->max_nodes > HCCT_MAX_NODES ||
	    (p->flags & ~(uint32_t)(HCCT_EAGER_MIN | HCCT_NO_INDEX)))
		return -EINVAL;
	max_nodes = p->max_nodes ? p->max_nodes : 32 * (uint64_t)p->slots + 1024;
	if (max_nodes > HCCT_MAX_NODES)
		max_nodes = HCCT_MAX_NODES;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->m = p->slots;
	h->max_nodes = (uint32_t)max_nodes;
	h->max_depth = p->max_depth ? p->max_depth : HCCT_DEFAULT_MAX_DEPTH;
	h->flags = p->flags;
	h->free_head = HCCT_NONE;
	h->slot_node = malloc(h->m * sizeof(*h->slot_node));
	h->cnt = malloc(h->m * sizeof(*h->cnt));
	h->err = malloc(h->m * sizeof(*h->err));
	h->nodes_cap = h->max_nodes < 1024 ? h->max_nodes : 1024;
	h->nodes = malloc(h->nodes_cap * sizeof(*h->nodes));
	if (!h->slot_node || !h->cnt || !h->err || !h->nodes) {
		hcct_free(h);
		return -ENOMEM;
	}
	h->nodes[ROOT] = (struct hnode){.parent = HCCT_NONE,
					.child = HCCT_NONE,
					.sibling = HCCT_NONE,
					.prev = HCCT_NONE,
					.slot = HCCT_NONE};
	h->nodes_used = h->live = h->peak = 1;
	*ret = h;
	return 0;
}

void hcct_free(struct hcct *h)
{
	if (!h)
		return;
	free(h->nodes);
	free(h->idx);
	free(h->slot_node);
	free(h->cnt);
	free(h->err);
	free(h);
}

/* ---- node pool and tree links ---- */

static int node_alloc(struct hcct *h, uint32_t *ret)
{
	uint32_t x;

	if (h->live >= h->max_nodes)
		return -ENOSPC;
	if (h->free_head != HCCT_NONE) {
		x = h->free_head;
		h->free_head = h->nodes[x].sibling;
	} else {
		if (h->nodes_used == h->nodes_cap) {
			uint64_t cap = 2 * (uint64_t)h->nodes_cap;
			struct hnode *q;

			if (cap > h->max_nodes)
				cap = h->max_nodes;
			q = realloc(h->nodes, cap * sizeof(*q));
			if (!q)
				return -ENOMEM;
			h->nodes = q;
			h->nodes_cap = (uint32_t)cap;
		}
		x = h->nodes_used++;
	}
	if (++h->live > h->peak)
		h->peak = h->live;
	*ret = x;
	return 0;
}

static void unlink_child(struct hcct *h, uint32_t p, uint32_t v)
{
	uint32_t prev = h->nodes[v].prev, next = h->nodes[v].sibling;

	if (prev == HCCT_NONE)
		h->nodes[p].child = next;
	else
		h->nodes[prev].sibling = next;
	if (next != HCCT_NONE)
		h->nodes[next].prev = prev;
}

/* ---- child index ---- */

static void index_put(struct hcct *h, uint32_t x)
{
	const struct hnode *nx = &h->nodes[x];
	uint32_t hash = key_hash(nx->parent, nx->id, nx->site);
	uint32_t mask = h->idx_nslots - 1, j = hash & mask;

	while (h->idx[j].node != HCCT_NONE)
		j = (j + 1) & mask;
	h->idx[j] = (struct islot){hash, x};
	h->idx_used++;
}

/* Room for `want` entries at load <= 1/2. want < max_nodes, so the table stays within
 * 2^ceil(log2(2 max_nodes)) slots. */
static int index_reserve(struct hcct *h, uint64_t want)
{
	uint64_t n = h->idx_nslots ? h->idx_nslots : INDEX_MIN_SLOTS;
	struct islot *t, *old = h->idx;
	uint32_t old_n = h->idx_nslots;

	while (n < 2 * want)
		n *= 2;
	if (n == h->idx_nslots)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint64_t j = 0; j < n; j++)
		t[j] = (struct islot){0, HCCT_NONE};
	h->idx = t;
	h->idx_nslots = (uint32_t)n;
	for (uint32_t j = 0; j < old_n; j++)
		if (old[j].node != HCCT_NONE) {
			uint32_t k = old[j].hash & (h->idx_nslots - 1);

			while (t[k].node != HCCT_NONE)
				k = (k + 1) & (h->idx_nslots - 1);
			t[k] = old[j];
		}
	free(old);
	return 0;
}

/* Put p's children into the index; p is left to its list if the table cannot grow. */
static void index_children(struct hcct *h, uint32_t p)
{
	uint32_t d = 0;

	for (uint32_t c = h->nodes[p].child; c != HCCT_NONE; c = h->nodes[c].sibling)
		d++;
	if (index_reserve(h, (uint64_t)h->idx_used + d) < 0)
		return;
	for (uint32_t c = h->nodes[p].child; c != HCCT_NONE; c = h->nodes[c].sibling)
		index_put(h, c);
	h->nodes[p].flags |= HN_INDEXED;
	h->indexed++;
}

/* Remove x, a child of an indexed node, by backward shift: every entry after the hole in its
 * probe run moves into it unless that would put it before its home slot. */
static void index_del(struct hcct *h, uint32_t x)
{
	const struct hnode *nx = &h->nodes[x];
	uint32_t mask = h->idx_nslots - 1;
	uint32_t j = key_hash(nx->parent, nx->id, nx->site) & mask, i;

	while (h->idx[j].node != x)
		j = (j + 1) & mask;
	for (i = j;;) {
		i = (i + 1) & mask;
		if (h->idx[i].node == HCCT_NONE)
			break;
		if (((i - (h->idx[i].hash & mask)) & mask) >= ((i - j) & mask)) {
			h->idx[j] = h->idx[i];
			j = i;
		}
	}
	h->idx[j] = (struct islot){0, HCCT_NONE};
	h->idx_used--;
}

/* ---- child lookup ---- */

static void link_child(struct hcct *h, uint32_t p, uint32_t x, uint32_t id, uint64_t site)
{
	h->nodes[x] = (struct hnode){.site = site,
				     .id = id,
				     .parent = p,
				     .child = HCCT_NONE,
				     .sibling = h->nodes[p].child,
				     .prev = HCCT_NONE,
				     .slot = HCCT_NONE};
	if (h->nodes[p].child != HCCT_NONE)
		h->nodes[h->nodes[p].child].prev = x;
	h->nodes[p].child = x;
}

/* child_get under an indexed p. */
static int child_get_indexed(struct hcct *h, uint32_t p, uint32_t id, uint64_t site, uint32_t *ret)
{
	uint32_t hash = key_hash(p, id, site), x;
	struct islot *s = index_find(h, hash, p, id, site);
	int r;

	if (s->node != HCCT_NONE) {
		*ret = s->node;
		return 0;
	}
	if ((uint64_t)2 * (h->idx_used + 1) > h->idx_nslots) {
		r = index_reserve(h, (uint64_t)h->idx_used + 1);
		if (r < 0)
			return r;
		s = index_find(h, hash, p, id, site);
	}
	r = node_alloc(h, &x);
	if (r < 0)
		return r;
	link_child(h, p, x, id, site);
	*s = (struct islot){hash, x};
	h->idx_used++;
	*ret = x;
	return 0;
}

/* The child of p with key (id, site), created unmonitored if missing. Under a node that is not
 * indexed, a child found is moved to the front of its siblings, and a scan longer than INDEX_MIN
 * indexes the node. */
static int child_get(struct hcct *h, uint32_t p, uint32_t id, uint64_t site, uint32_t *ret)
{
	uint32_t x, scans = 0;
	int r;

	if (h->nodes[p].flags & HN_INDEXED)
		return child_get_indexed(h, p, id, site, ret);
	for (x = h->nodes[p].child; x != HCCT_NONE; x = h->nodes[x].sibling) {
		scans++;
		if (h->nodes[x].id == id && h->nodes[x].site == site)
			break;
	}
	if (x == HCCT_NONE) {
		r = node_alloc(h, &x);
		if (r < 0)
			return r;
		link_child(h, p, x, id, site);
	} else if (x != h->nodes[p].child) {
		/* Move to front: hot children are found after one or two steps even under a node
		 * with many cold siblings (the root of a big program). */
		unlink_child(h, p, x);
		h->nodes[x].prev = HCCT_NONE;
		h->nodes[x].sibling = h->nodes[p].child;
		h->nodes[h->nodes[p].child].prev = x;
		h->nodes[p].child = x;
	}
	if (scans > INDEX_MIN && !(h->flags & HCCT_NO_INDEX))
		index_children(h, p);
	*ret = x;
	return 0;
}

/* Free v and its ancestors while each is an unmonitored leaf no cursor stands on. */
static void prune_up(struct hcct *h, uint32_t v)
{
	while (v != ROOT) {
		struct hnode *x = &h->nodes[v];
		uint32_t p = x->parent;

		if (x->child != HCCT_NONE || x->slot != HCCT_NONE || x->pins)
			return;
		/* The victim's path was made long ago and is out of the cache: one miss per node.
		 * A path is created top-down in one walk, from a free list that hands back the last
		 * pruned path in the same order, so ancestors often sit just below p: fetch ahead.
		 */
		__builtin_prefetch(&h->nodes[p > 4 ? p - 4 : 0]);
		unlink_child(h, p, v);
		if (h->nodes[p].flags & HN_INDEXED)
			index_del(h, v);
		if (x->flags & HN_INDEXED) /* no children left: no entries */
			h->indexed--;
		x->flags = 0;
		x->parent = HN_FREE;
		x->sibling = h->free_head;
		h->free_head = v;
		h->live--;
		h->pruned++;
		v = p;
	}
}

static void pin(struct hcct *h, uint32_t x)
{
	if (x != ROOT) {
		h->nodes[x].pins++;
		h->pins_total++;
	}
}

static void unpin(struct hcct *h, uint32_t x)
{
	if (x != ROOT) {
		h->nodes[x].pins--;
		h->pins_total--;
	}
}

/* ---- Space-Saving with the lazy minimum ---- */

static void find_min(struct hcct *h)
{
	uint32_t j = h->min_idx;
	uint64_t mn;

	if (!(h->flags & HCCT_EAGER_MIN)) {
		while (j < h->m && h->cnt[j] != h->min)
			j++;
		if (j < h->m) {
			h->min_idx = j;
			return;
		}
	}
	mn = h->cnt[0];
	j = 0;
	for (uint32_t i = 1; i < h->m; i++)
		if (h->cnt[i] < mn) {
			mn = h->cnt[i];
			j = i;
		}
	h->min = mn;
	h->min_idx = j;
	h->rescans++;
}

/* Count w more occurrences of context x; returns the evicted node or HCCT_NONE. */
static uint32_t ss_update(struct hcct *h, uint32_t x, uint64_t w)
{
	struct hnode *nx = &h->nodes[x];
	uint32_t j, v;

	if (nx->slot != HCCT_NONE) {
		h->cnt[nx->slot] += w;
		return HCCT_NONE;
	}
	if (h->used < h->m) {
		j = h->used++;
		h->cnt[j] = w;
		h->err[j] = 0;
		h->slot_node[j] = x;
		nx->slot = j;
		return HCCT_NONE;
	}
	find_min(h);
	j = h->min_idx;
	v = h->slot_node[j];
	h->nodes[v].slot = HCCT_NONE;
	h->err[j] = h->min;
	h->cnt[j] = h->min + w;
	h->slot_node[j] = x;
	nx->slot = j;
	h->evictions++;
	return v;
}

/* ---- prefetching the next victims ----
 *
 * Under a stream of new contexts nearly every sample takes over a slot, and the victim's path,
 * made m samples earlier, is out of the cache: pruning it costs a miss per node. The victims are
 * predictable, though: the lazy minimum takes the slots holding the minimum in index order. So
 * each sample looks PF_SCAN slots further for the next victims (up to PF_N ahead), fetches the
 * leaf of a new one, and moves every pending victim's fetch one node up its path: by the time a
 * victim is pruned, the nodes pruning will touch were fetched over the previous samples. A wrong
 * prediction (a slot counted again meanwhile, a new minimum) only wastes a prefetch. */

/* One step up a victim's path: v was fetched one sample ago. If v is its parent's only child,
 * pruning will free the parent after v: fetch it and go on from it. Otherwise pruning stops
 * after unlinking v: fetch what the unlink touches and stop. */
/* Fetch node v; a node is 40 bytes and may straddle two cache lines. */
static void pf_node(const struct hcct *h, uint32_t v)
{
	__builtin_prefetch(&h->nodes[v]);
	__builtin_prefetch((const char *)&h->nodes[v + 1] - 1);
}

static uint32_t pf_step(const struct hcct *h, uint32_t v)
{
	const struct hnode *x;

	if (v == HCCT_NONE || v >= h->nodes_used)
		return HCCT_NONE;
	x = &h->nodes[v];
	if (x->parent == HN_FREE || x->parent == HCCT_NONE || x->parent == ROOT)
		return HCCT_NONE;
	pf_node(h, x->parent);
	if (x->prev == HCCT_NONE && x->sibling == HCCT_NONE)
		return x->parent;
	if (x->prev != HCCT_NONE)
		pf_node(h, x->prev);
	if (x->sibling != HCCT_NONE)
		pf_node(h, x->sibling);
	if (h->idx) /* where index_del will look if the parent is indexed */
		__builtin_prefetch(
		    &h->idx[key_hash(x->parent, x->id, x->site) & (h->idx_nslots - 1)]);
	return HCCT_NONE;
}

static void prefetch_victims(struct hcct *h)
{
	uint32_t j, end;

	if (h->used < h->m)
		return;
	if (h->pf_min != h->min) {
		h->pf_len = 0;
		h->pf_next = h->min_idx;
		h->pf_min = h->min;
	}
	for (uint32_t k = 0; k < h->pf_len; k++) {
		uint32_t *f = &h->pf_node[(h->pf_head + k) % PF_N];

		*f = pf_step(h, *f);
	}
	end = h->m - h->pf_next > PF_SCAN ? h->pf_next + PF_SCAN : h->m - 1;
	for (j = h->pf_next + 1; j <= end && h->pf_len < PF_N; j++)
		if (h->cnt[j] == h->min) {
			uint32_t k = (h->pf_head + h->pf_len++) % PF_N;

			h->pf_slot[k] = j;
			h->pf_node[k] = h->slot_node[j];
			pf_node(h, h->slot_node[j]);
		}
	h->pf_next = j - 1;
}

/* Slot j was taken over: drop the predictions up to it. */
static void prefetch_taken(struct hcct *h, uint32_t j)
{
	while (h->pf_len && h->pf_slot[h->pf_head] <= j) {
		h->pf_head = (h->pf_head + 1) % PF_N;
		h->pf_len--;
	}
}

/* ---- sampled stacks ---- */

static void add_lost(struct hcct *h, uint64_t w)
{
	h->lost = w > UINT64_MAX - h->lost ? UINT64_MAX : h->lost + w;
}

/* Walk or create root -> ids[0..n); on failure prunes what it created. */
static int walk_path(struct hcct *h, const uint32_t *ids, const uint64_t *sites, size_t n,
		     uint32_t *ret)
{
	uint32_t cur = ROOT;

	for (size_t i = 0; i < n; i++) {
		int r = child_get(h, cur, ids[i], sites ? sites[i] : 0, &cur);

		if (r < 0) {
			prune_up(h, cur);
			return r;
		}
	}
	*ret = cur;
	return 0;
}

int hcct_add_stack_sites(struct hcct *h, const uint32_t *ids, const uint64_t *sites, size_t n,
			 uint64_t count)
{
	uint32_t leaf, v;
	int r;

	if (!h || !ids || n == 0 || count == 0)
		return -EINVAL;
	if (count > UINT64_MAX - h->n)
		return -EOVERFLOW;
	if (n > h->max_depth) {
		add_lost(h, count);
		return -E2BIG;
	}
	r = walk_path(h, ids, sites, n, &leaf);
	if (r < 0) {
		add_lost(h, count);
		return r;
	}
	h->n += count;
	v = ss_update(h, leaf, count);
	if (v != HCCT_NONE) { /* only a stream that evicts gains from fetching ahead */
		prefetch_taken(h, h->min_idx);
		prune_up(h, v);
		prefetch_victims(h);
	}
	return 0;
}

int hcct_add_stack(struct hcct *h, const uint32_t *ids, size_t n, uint64_t count)
{
	return hcct_add_stack_sites(h, ids, NULL, n, count);
}

/* ---- enter/exit through cursors ---- */

static bool cursor_valid(const struct hcct *h, const struct hcct_cursor *c)
{
	if (c->node == ROOT)
		return c->depth == 0;
	return c->node < h->nodes_used && h->nodes[c->node].parent != HN_FREE &&
	       h->nodes[c->node].pins > 0 && c->depth > 0 && c->depth <= h->max_depth;
}

int hcct_cursor_enter(struct hcct *h, struct hcct_cursor *c, uint32_t id, uint64_t call_site)
{
	uint32_t x, v;
	int r;

	if (!h || !c)
		return -EINVAL;
	if (c->lost) {
		if (c->lost == UINT32_MAX)
			return -EOVERFLOW;
		c->lost++;
		add_lost(h, 1);
		return -ENOSPC;
	}
	if (!cursor_valid(h, c))
		return -EINVAL;
	if (h->n == UINT64_MAX)
		return -EOVERFLOW;
	r = c->depth >= h->max_depth ? -E2BIG : child_get(h, c->node, id, call_site, &x);
	if (r < 0) {
		c->lost = 1;
		add_lost(h, 1);
		return r;
	}
	h->n++;
	unpin(h, c->node); /* still x's parent: never a leaf */
	pin(h, x);
	c->node = x;
	c->depth++;
	v = ss_update(h, x, 1);
	if (v != HCCT_NONE)
		prune_up(h, v);
	return 0;
}

int hcct_cursor_exit(struct hcct *h, struct hcct_cursor *c)
{
	uint32_t x;

	if (!h || !c)
		return -EINVAL;
	if (c->lost) {
		c->lost--;
		return 0;
	}
	if (c->node == ROOT || !cursor_valid(h, c))
		return -EINVAL;
	x = c->node;
	c->node = h->nodes[x].parent;
	c->depth--;
	pin(h, c->node);
	unpin(h, x);
	prune_up(h, x);
	return 0;
}

void hcct_cursor_release(struct hcct *h, struct hcct_cursor *c)
{
	if (!h || !c)
		return;
	if (c->node != ROOT && cursor_valid(h, c)) {
		uint32_t x = c->node;

		unpin(h, x);
		prune_up(h, x);
	}
	*c = (struct hcct_cursor){0};
}

int hcct_cursor_align(struct hcct *h, struct hcct_cursor *c, const uint32_t *ids,
		      const uint64_t *sites, size_t n)
{
	uint32_t x;
	int r;

	if (!h || !c || (n && !ids))
		return -EINVAL;
	hcct_cursor_release(h, c);
	if (n > h->max_depth)
		return -E2BIG;
	r = walk_path(h, ids, sites, n, &x);
	if (r < 0)
		return r;
	pin(h, x);
	c->node = x;
	c->depth = (uint32_t)n;
	return 0;
}

int hcct_enter(struct hcct *h, uint32_t id, uint64_t call_site)
{
	return h ? hcct_cursor_enter(h, &h->cur, id, call_site) : -EINVAL;
}

int hcct_exit(struct hcct *h)
{
	return h ? hcct_cursor_exit(h, &h->cur) : -EINVAL;
}

void hcct_get_stats(const struct hcct *h, struct hcct_stats *st)
{
	if (!h) {
		*st = (struct hcct_stats){0};
		return;
	}
	*st = (struct hcct_stats){
	    .n = h->n,
	    .lost = h->lost,
	    .evictions = h->evictions,
	    .pruned = h->pruned,
	    .rescans = h->rescans,
	    .min = h->min,
	    .min_idx = h->min_idx,
	    .slots = h->m,
	    .monitored = h->used,
	    .max_nodes = h->max_nodes,
	    .indexed = h->indexed,
	    .index_entries = h->idx_used,
	    .nodes = h->live,
	    .peak_nodes = h->peak,
	    .bytes = sizeof(*h) + (size_t)h->nodes_cap * sizeof(struct hnode) +
		     (size_t)h->idx_nslots * sizeof(struct islot) +
		     (size_t)h->m * (sizeof(*h->slot_node) + sizeof(*h->cnt) + sizeof(*h->err)),
	};
}
