// SPDX-License-Identifier: GPL-2.0-only
/* hcct.c: (phi, eps)-HCCT with Space-Saving over MCCT nodes (see include/kprof/hcct.h).
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

#define ROOT 0u
#define HN_FREE (UINT32_MAX - 1) /* parent of a node on the free list */

struct hnode {
	uint64_t site;
	uint32_t id;
	uint32_t parent;
	uint32_t child;
	uint32_t sibling;
	uint32_t prev;	/* previous sibling, HCCT_NONE for the first child: O(1) unlink */
	uint32_t slot;	/* HCCT_NONE: not monitored */
	uint32_t pins;	/* cursors standing on this node */
	uint32_t flags; /* HN_INDEXED */
};

enum {
	HN_INDEXED = 1u << 0, /* the children are in the child index too */
};

#define PF_N 8u		    /* victims fetched ahead */
#define PF_SCAN 8u	    /* slots looked at per sample for the next prediction */
#define INDEX_MIN 8u	    /* index a node once a lookup scans more siblings than this */
#define INDEX_MIN_SLOTS 64u /* the table's first size */

/* A child-index slot: node HCCT_NONE is empty. */
struct islot {
	uint32_t hash; /* key_hash(parent, id, site) of the node */
	uint32_t node;
};

_Static_assert(sizeof(struct hnode) == 40, "MCCT node size");
/* No implicit padding in what callers may copy, compare or serialize. */
_Static_assert(sizeof(struct hcct_entry) == 48, "hcct_entry padding");
_Static_assert(sizeof(struct hcct_stats) == 72 + 3 * sizeof(size_t), "hcct_stats padding");

struct hcct {
	struct hnode *nodes;
	uint32_t nodes_cap;  /* allocated */
	uint32_t nodes_used; /* high-water index */
	uint32_t free_head;
	uint32_t live;
	uint32_t peak;
	uint32_t max_nodes, max_depth, flags;

	struct islot *idx; /* child index, NULL until a node is indexed */
	uint32_t idx_nslots, idx_used, indexed;

	uint32_t m, used;
	uint32_t *slot_node;
	uint64_t *cnt;
	uint64_t *err;
	uint64_t min;
	uint32_t min_idx;

	uint64_t n, lost, evictions, pruned, rescans;
	uint64_t pins_total;
	struct hcct_cursor cur;

	/* Prefetch of the next victims: their slots, in the order they will be taken over, and
	 * for each the node whose parent is fetched next (HCCT_NONE: done). */
	uint32_t pf_slot[PF_N], pf_node[PF_N];
	uint32_t pf_head, pf_len;
	uint32_t pf_next; /* the last slot looked at for a prediction */
	uint64_t pf_min;  /* the minimum the predictions were made for */
};

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

static uint32_t key_hash(uint32_t p, uint32_t id, uint64_t site)
{
	return (uint32_t)mix64(((uint64_t)p << 32 | id) ^ (site * 0x9e3779b97f4a7c15ULL));
}

/* The slot holding p's child (id, site), or the empty slot where it would go. */
static struct islot *index_find(const struct hcct *h, uint32_t hash, uint32_t p, uint32_t id,
				uint64_t site)
{
	uint32_t mask = h->idx_nslots - 1, j = hash & mask;

	for (;; j = (j + 1) & mask) {
		struct islot *s = &h->idx[j];
		const struct hnode *x;

		if (s->node == HCCT_NONE)
			return s;
		x = &h->nodes[s->node];
		if (s->hash == hash && x->parent == p && x->id == id && x->site == site)
			return s;
	}
}

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

/* ---- queries ---- */

uint64_t hcct_threshold(const struct hcct *h, uint64_t phi_num, uint64_t phi_den)
{
	if (!h || !phi_den)
		return 0;
	return (uint64_t)((unsigned __int128)phi_num * h->n / phi_den);
}

struct pending {
	uint64_t site;
	uint32_t id;
	uint32_t node;
	uint32_t parent_out;
};

/* Descending, so that the smallest key is on top of the stack. */
static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? 1 : -1;
	if (x->site != y->site)
		return x->site < y->site ? 1 : -1;
	return 0;
}

static void entry_fill(const struct hcct *h, struct hcct_tree *t, const struct pending *pd,
		       bool hot_flags)
{
	struct hcct_entry *e = &t->entries[t->len];
	const struct hnode *x = &h->nodes[pd->node];

	*e = (struct hcct_entry){.call_site = x->site,
				 .id = x->id,
				 .parent = pd->parent_out,
				 .depth = 1,
				 .slot = x->slot};
	if (pd->parent_out != HCCT_NONE) {
		e->depth = t->entries[pd->parent_out].depth + 1;
		t->entries[pd->parent_out].children++;
	}
	if (x->slot != HCCT_NONE) {
		e->count = h->cnt[x->slot];
		e->err = h->err[x->slot];
		e->flags = HCCT_ENTRY_MONITORED;
		if (hot_flags && e->count >= t->threshold)
			e->flags |= HCCT_ENTRY_HOT;
	}
}

/* Depth-first listing of the nodes marked in keep (kept of them), siblings by key. */
static int tree_emit(const struct hcct *h, const uint8_t *keep, size_t kept, bool hot_flags,
		     struct hcct_tree *t)
{
	struct pending *stack;
	size_t top = 0;

	t->entries = malloc((kept ? kept : 1) * sizeof(*t->entries));
	stack = malloc((kept + 1) * sizeof(*stack));
	if (!t->entries || !stack) {
		free(stack);
		return -ENOMEM;
	}
	stack[top++] = (struct pending){.node = ROOT, .parent_out = HCCT_NONE};
	while (top) {
		struct pending pd = stack[--top];
		uint32_t out = HCCT_NONE;
		size_t first = top;

		if (pd.node != ROOT) {
			entry_fill(h, t, &pd, hot_flags);
			out = (uint32_t)t->len++;
		}
		for (uint32_t c = h->nodes[pd.node].child; c != HCCT_NONE; c = h->nodes[c].sibling)
			if (keep[c])
				stack[top++] = (struct pending){.site = h->nodes[c].site,
								.id = h->nodes[c].id,
								.node = c,
								.parent_out = out};
		qsort(stack + first, top - first, sizeof(*stack), pending_cmp);
	}
	free(stack);
	return 0;
}

static int tree_build(const struct hcct *h, uint64_t num, uint64_t den, bool all,
		      struct hcct_tree **ret)
{
	struct hcct_tree *t;
	uint8_t *keep;
	size_t kept = 0;
	int r;

	t = calloc(1, sizeof(*t));
	keep = calloc(h->nodes_used, 1);
	if (!t || !keep) {
		free(t);
		free(keep);
		return -ENOMEM;
	}
	t->n = h->n;
	t->phi_num = num;
	t->phi_den = den;
	t->threshold = hcct_threshold(h, num, den);
	if (all) {
		for (uint32_t x = 1; x < h->nodes_used; x++)
			if (h->nodes[x].parent != HN_FREE) {
				keep[x] = 1;
				kept++;
			}
	} else {
		for (uint32_t j = 0; j < h->used; j++) {
			if (h->cnt[j] < t->threshold)
				continue;
			for (uint32_t x = h->slot_node[j]; x != ROOT && !keep[x];
			     x = h->nodes[x].parent) {
				keep[x] = 1;
				kept++;
			}
		}
	}
	r = tree_emit(h, keep, kept, !all, t);
	free(keep);
	if (r < 0) {
		hcct_tree_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

int hcct_query(const struct hcct *h, uint64_t phi_num, uint64_t phi_den, struct hcct_tree **ret)
{
	if (!h || !ret || !phi_den || phi_num > phi_den)
		return -EINVAL;
	return tree_build(h, phi_num, phi_den, false, ret);
}

int hcct_snapshot(const struct hcct *h, struct hcct_tree **ret)
{
	if (!h || !ret)
		return -EINVAL;
	return tree_build(h, 0, 1, true, ret);
}

int hcct_tree_filter(const struct hcct_tree *snap, uint64_t phi_num, uint64_t phi_den,
		     struct hcct_tree **ret)
{
	size_t n, k = 0;
	uint64_t thr;
	uint32_t *newidx = NULL;
	bool *keep = NULL;
	struct hcct_tree *tree = NULL;
	int err = -ENOMEM;

	if (!snap || !ret || !phi_den || phi_num > phi_den)
		return -EINVAL;
	n = snap->len;
	thr = (uint64_t)((unsigned __int128)phi_num * snap->n / phi_den);
	newidx = calloc(n ? n : 1, sizeof(*newidx));
	keep = calloc(n ? n : 1, sizeof(*keep));
	tree = calloc(1, sizeof(*tree));
	if (!newidx || !keep || !tree ||
	    !(tree->entries = calloc(n ? n : 1, sizeof(*tree->entries))))
		goto out;
	/* Parents come first: one backward pass marks the hot entries and their ancestors. */
	err = -EINVAL;
	for (size_t i = n; i-- > 0;) {
		const struct hcct_entry *e = &snap->entries[i];
		bool mon = e->flags & HCCT_ENTRY_MONITORED;

		if (e->parent != HCCT_NONE && e->parent >= i)
			goto out;
		if (mon && e->count >= thr && e->count > 0)
			keep[i] = true;
		if (keep[i] && e->parent != HCCT_NONE)
			keep[e->parent] = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hcct_entry *e = &snap->entries[i];
		bool mon = e->flags & HCCT_ENTRY_MONITORED;
		struct hcct_entry *o;

		if (!keep[i])
			continue;
		newidx[i] = k;
		o = &tree->entries[k++];
		*o = *e;
		o->count = mon ? e->count : 0;
		o->err = mon ? e->err : 0;
		o->parent = e->parent == HCCT_NONE ? HCCT_NONE : newidx[e->parent];
		o->depth = e->parent == HCCT_NONE ? 1 : tree->entries[o->parent].depth + 1;
		o->children = 0;
		o->flags = (mon ? HCCT_ENTRY_MONITORED : 0) |
			   (mon && e->count >= thr && e->count > 0 ? HCCT_ENTRY_HOT : 0);
		if (e->parent != HCCT_NONE)
			tree->entries[o->parent].children++;
	}
	tree->len = k;
	tree->n = snap->n;
	tree->phi_num = phi_num;
	tree->phi_den = phi_den;
	tree->threshold = thr;
	*ret = tree;
	tree = NULL;
	err = 0;
out:
	free(newidx);
	free(keep);
	hcct_tree_free(tree);
	return err;
}

/* ---- relabelling a tree (routines merged after the fact) ----
 * Entries are relabelled in input order (parents first); an entry whose parent's new entry
 * already has a child of its new key is merged into that child, and so its subtree is merged
 * too. The result is then laid out depth first with sorted siblings, as a query's. */
struct relabel {
	struct hcct_entry *m; /* merged entries, parent = merged index */
	uint32_t *slots;      /* (parent, id, site) -> merged index + 1 */
	size_t nslots, n;
};

static uint64_t relabel_hash(uint32_t parent, uint32_t id, uint64_t site)
{
	return mix64(((uint64_t)parent << 32 | id) ^ mix64(site));
}

/* The merged entry of key (parent, id, site), made if missing. */
static uint32_t relabel_get(struct relabel *r, uint32_t parent, uint32_t id, uint64_t site)
{
	size_t j;

	for (j = relabel_hash(parent, id, site) & (r->nslots - 1); r->slots[j];
	     j = (j + 1) & (r->nslots - 1)) {
		const struct hcct_entry *e = &r->m[r->slots[j] - 1];

		if (e->parent == parent && e->id == id && e->call_site == site)
			return r->slots[j] - 1;
	}
	r->m[r->n] =
	    (struct hcct_entry){.id = id, .call_site = site, .parent = parent, .slot = HCCT_NONE};
	r->slots[j] = ++r->n;
	return r->n - 1;
}

static int cmp_entry_key(const void *a, const void *b, void *ctx)
{
	const struct hcct_entry *m = ctx;
	const struct hcct_entry *x = &m[*(const uint32_t *)a], *y = &m[*(const uint32_t *)b];

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->call_site < y->call_site ? -1 : x->call_site > y->call_site;
}

/* Lay r's entries out depth first, siblings sorted, into t->entries (room for r->n). */
static int relabel_emit(struct relabel *r, struct hcct_tree *t)
{
	size_t n = r->n, nroots = 0, k = 0, sp = 0;
	uint32_t *first = calloc(n + 2, sizeof(*first)), *kids = malloc((n + 1) * sizeof(*kids));
	uint32_t *stack = malloc((n + 1) * sizeof(*stack)),
		 *newidx = malloc((n + 1) * sizeof(*newidx));
	int err = -ENOMEM;

	if (!first || !kids || !stack || !newidx)
		goto out;
	/* Children lists by counting: slot 0 holds the roots, slot i + 1 the children of i. */
	for (size_t i = 0; i < n; i++)
		first[(r->m[i].parent == HCCT_NONE ? 0 : r->m[i].parent + 1) + 1]++;
	for (size_t i = 1; i < n + 2; i++)
		first[i] += first[i - 1];
	memset(stack, 0, (n + 1) * sizeof(*stack)); /* per list: children placed so far */
	for (size_t i = 0; i < n; i++) {
		size_t g = r->m[i].parent == HCCT_NONE ? 0 : r->m[i].parent + 1;

		kids[first[g] + stack[g]++] = i;
	}
	for (size_t g = 0; g < n + 1; g++)
		qsort_r(kids + first[g], first[g + 1] - first[g], sizeof(*kids), cmp_entry_key,
			r->m);
	nroots = first[1];
	/* Depth first: push children in reverse so the smallest key comes out first. */
	for (size_t i = nroots; i-- > 0;)
		stack[sp++] = kids[i];
	while (sp) {
		uint32_t i = stack[--sp];
		struct hcct_entry *o = &t->entries[k];

		*o = r->m[i];
		newidx[i] = k++;
		o->parent = r->m[i].parent == HCCT_NONE ? HCCT_NONE : newidx[r->m[i].parent];
		o->depth = o->parent == HCCT_NONE ? 1 : t->entries[o->parent].depth + 1;
		o->children = first[i + 2] - first[i + 1];
		for (size_t c = first[i + 2]; c-- > first[i + 1];)
			stack[sp++] = kids[c];
	}
	t->len = k;
	err = 0;
out:
	free(first);
	free(kids);
	free(stack);
	free(newidx);
	return err;
}

int hcct_tree_relabel(const struct hcct_tree *in, const uint32_t *map, size_t nmap,
		      struct hcct_tree **ret)
{
	struct relabel r = {0};
	struct hcct_tree *t = NULL;
	uint32_t *to = NULL;
	size_t n;
	int err = -EINVAL;

	if (!in || !ret || (nmap && !map))
		return -EINVAL;
	n = in->len;
	r.nslots = 16;
	while (r.nslots < 2 * n)
		r.nslots *= 2;
	r.slots = calloc(r.nslots, sizeof(*r.slots));
	r.m = calloc(n ? n : 1, sizeof(*r.m));
	to = malloc((n ? n : 1) * sizeof(*to));
	t = calloc(1, sizeof(*t));
	if (!r.slots || !r.m || !to || !t ||
	    !(t->entries = calloc(n ? n : 1, sizeof(*t->entries)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hcct_entry *e = &in->entries[i];
		uint32_t id = e->id < nmap ? map[e->id] : e->id, k;
		struct hcct_entry *o;

		if (e->parent != HCCT_NONE && e->parent >= i)
			goto out; /* -EINVAL: a child before its parent */
		k = relabel_get(&r, e->parent == HCCT_NONE ? HCCT_NONE : to[e->parent], id,
				e->call_site);
		to[i] = k;
		o = &r.m[k];
		/* Merged contexts: the counters add up, and so do their error bounds. */
		if (e->flags & HCCT_ENTRY_MONITORED) {
			o->count += e->count;
			o->err += e->err;
			if (o->slot == HCCT_NONE)
				o->slot = e->slot;
		}
		o->flags |= e->flags;
	}
	err = relabel_emit(&r, t);
	if (err < 0)
		goto out;
	for (size_t i = 0; i < t->len; i++) {
		struct hcct_entry *e = &t->entries[i];

		if (in->phi_den && (e->flags & HCCT_ENTRY_MONITORED) && e->count > 0 &&
		    e->count >= in->threshold && in->threshold > 0)
			e->flags |= HCCT_ENTRY_HOT;
	}
	t->n = in->n;
	t->phi_num = in->phi_num;
	t->phi_den = in->phi_den;
	t->threshold = in->threshold;
	*ret = t;
	t = NULL;
	err = 0;
out:
	free(r.slots);
	free(r.m);
	free(to);
	hcct_tree_free(t);
	return err;
}

void hcct_tree_free(struct hcct_tree *t)
{
	if (!t)
		return;
	free(t->entries);
	free(t);
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

/* ---- invariant checker ---- */

static int check_slots(const struct hcct *h)
{
	unsigned __int128 sum = 0;
	uint64_t mn = UINT64_MAX;

	if (h->used > h->m || h->min_idx > h->m)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->used; j++) {
		uint32_t x = h->slot_node[j];

		if (x == ROOT || x >= h->nodes_used || h->nodes[x].parent == HN_FREE ||
		    h->nodes[x].slot != j || h->err[j] > h->cnt[j] || h->cnt[j] == 0)
			return -EUCLEAN;
		sum += h->cnt[j];
		if (h->cnt[j] < mn)
			mn = h->cnt[j];
	}
	if (sum != h->n)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->used; j++) /* H3: err <= min; exact during the fill */
		if (h->err[j] > (h->used == h->m ? mn : 0))
			return -EUCLEAN;
	if (h->used == h->m) {
		if (mn > h->n / h->m || h->min > mn) /* H2, and the lazy min is a lower bound */
			return -EUCLEAN;
		for (uint32_t j = 0; j < h->min_idx && j < h->m; j++)
			if (h->cnt[j] <= h->min) /* slots before min_idx hold more than min */
				return -EUCLEAN;
	} else if (h->min != 0 || h->min_idx != 0) {
		return -EUCLEAN;
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return -pending_cmp(x, y);
}

/* Sibling keys of v are distinct; tmp has room for every node. */
static int check_keys(const struct hcct *h, uint32_t v, struct pending *tmp)
{
	size_t k = 0;

	for (uint32_t c = h->nodes[v].child; c != HCCT_NONE; c = h->nodes[c].sibling)
		tmp[k++] = (struct pending){.site = h->nodes[c].site, .id = h->nodes[c].id};
	qsort(tmp, k, sizeof(*tmp), key_cmp);
	for (size_t i = 1; i < k; i++)
		if (!key_cmp(&tmp[i - 1], &tmp[i]))
			return -EUCLEAN;
	return 0;
}

static int check_node(const struct hcct *h, uint32_t v, uint32_t depth, uint8_t *seen)
{
	const struct hnode *x;

	if (v >= h->nodes_used || seen[v] || depth > h->max_depth)
		return -EUCLEAN;
	x = &h->nodes[v];
	if (x->parent == HN_FREE)
		return -EUCLEAN;
	seen[v] = 1;
	if (v != ROOT && x->child == HCCT_NONE && x->slot == HCCT_NONE && !x->pins)
		return -EUCLEAN; /* H4: a leaf nothing holds */
	if (x->slot != HCCT_NONE && (x->slot >= h->used || h->slot_node[x->slot] != v))
		return -EUCLEAN;
	return 0;
}

/* The child index: load <= 1/2 within its cap, every entry a child of an indexed node, with
 * its key's hash, where a lookup of that key stops. check_tree() checks the converse. */
static int check_index(const struct hcct *h)
{
	uint64_t cap = INDEX_MIN_SLOTS, used = 0;

	while (cap < 2 * (uint64_t)h->max_nodes)
		cap *= 2;
	if (!h->idx)
		return h->idx_nslots || h->idx_used || h->indexed ? -EUCLEAN : 0;
	if (h->idx_nslots & (h->idx_nslots - 1) || h->idx_nslots < INDEX_MIN_SLOTS ||
	    h->idx_nslots > cap || 2 * (uint64_t)h->idx_used > h->idx_nslots)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->idx_nslots; j++) {
		const struct islot *s = &h->idx[j];
		const struct hnode *x;

		if (s->node == HCCT_NONE)
			continue;
		used++;
		if (s->node == ROOT || s->node >= h->nodes_used)
			return -EUCLEAN;
		x = &h->nodes[s->node];
		if (x->parent == HN_FREE || x->parent >= h->nodes_used ||
		    !(h->nodes[x->parent].flags & HN_INDEXED) ||
		    s->hash != key_hash(x->parent, x->id, x->site))
			return -EUCLEAN;
	}
	if (used != h->idx_used)
		return -EUCLEAN;
	for (uint32_t j = 0; j < h->idx_nslots; j++) { /* every node is valid: look them up */
		const struct islot *s = &h->idx[j];
		const struct hnode *x = &h->nodes[s->node == HCCT_NONE ? ROOT : s->node];

		if (s->node != HCCT_NONE && index_find(h, s->hash, x->parent, x->id, x->site) != s)
			return -EUCLEAN;
	}
	return 0;
}

/* H4 over the whole tree: returns the number of live, monitored nodes and pins found. */
static int check_tree(const struct hcct *h, uint8_t *seen, uint32_t *stack, uint32_t *depth,
		      struct pending *tmp)
{
	uint64_t live = 0, mon = 0, pins = 0, indexed = 0, entries = 0;
	size_t top = 0;
	int r;

	if (h->nodes[ROOT].parent != HCCT_NONE || h->nodes[ROOT].slot != HCCT_NONE ||
	    h->nodes[ROOT].pins)
		return -EUCLEAN;
	stack[top] = ROOT;
	depth[top++] = 0;
	while (top) {
		uint32_t v = stack[--top], d = depth[top];

		r = check_node(h, v, d, seen);
		if (r < 0)
			return r;
		live++;
		mon += h->nodes[v].slot != HCCT_NONE;
		pins += h->nodes[v].pins;
		indexed += !!(h->nodes[v].flags & HN_INDEXED);
		for (uint32_t c = h->nodes[v].child, prev = HCCT_NONE; c != HCCT_NONE;
		     prev = c, c = h->nodes[c].sibling) {
			const struct hnode *x;

			if (c >= h->nodes_used || h->nodes[c].parent != v ||
			    h->nodes[c].prev != prev || top >= h->live)
				return -EUCLEAN;
			x = &h->nodes[c];
			if (h->nodes[v].flags & HN_INDEXED) { /* every child is in the index */
				if (index_find(h, key_hash(v, x->id, x->site), v, x->id, x->site)
					->node != c)
					return -EUCLEAN;
				entries++;
			}
			stack[top] = c;
			depth[top++] = d + 1;
		}
		r = check_keys(h, v, tmp);
		if (r < 0)
			return r;
	}
	if (live != h->live || mon != h->used || pins != h->pins_total || indexed != h->indexed ||
	    entries != h->idx_used)
		return -EUCLEAN;
	return 0;
}

static int check_free(const struct hcct *h, const uint8_t *seen)
{
	uint64_t n = 0;

	for (uint32_t x = h->free_head; x != HCCT_NONE; x = h->nodes[x].sibling) {
		if (x >= h->nodes_used || seen[x] || h->nodes[x].parent != HN_FREE ||
		    ++n > h->nodes_used)
			return -EUCLEAN;
	}
	return n + h->live == h->nodes_used ? 0 : -EUCLEAN;
}

int hcct_check(const struct hcct *h)
{
	uint8_t *seen = NULL;
	uint32_t *stack = NULL, *depth = NULL;
	struct pending *tmp = NULL;
	int r;

	if (!h)
		return -EINVAL;
	if (h->nodes_used > h->nodes_cap || h->nodes_cap > h->max_nodes || h->live > h->max_nodes ||
	    h->live < 1 || h->live > h->nodes_used || h->peak < h->live)
		return -EUCLEAN;
	r = check_slots(h);
	if (r == 0)
		r = check_index(h);
	if (r < 0)
		return r;
	seen = calloc(h->nodes_used, 1);
	stack = malloc(h->live * sizeof(*stack));
	depth = malloc(h->live * sizeof(*depth));
	tmp = malloc(h->live * sizeof(*tmp));
	r = -ENOMEM;
	if (seen && stack && depth && tmp) {
		r = check_tree(h, seen, stack, depth, tmp);
		if (r == 0)
			r = check_free(h, seen);
	}
	free(seen);
	free(stack);
	free(depth);
	free(tmp);
	return r;
}
