// SPDX-License-Identifier: GPL-2.0-only
/* ksf.c: the k-slab forest (see include/kprof/ksf.h, ALGORITHMS.md §3): its tables, pruning,
 * activations and walks. The k-iteration path forest built from it is in ksf_ipf.c, the
 * invariant checker in ksf_check.c, the layout they share in ksf_internal.h.
 *
 * Nodes live in one array, named by uint32 index, so growing it never invalidates a position an
 * activation holds; they are only appended, so a parent's index is below its children's. A node
 * keeps its children as a first-child/next-sibling list in move-to-front order, so the hot child
 * is found at once. A lookup that scans more than `index_min` siblings indexes the parent: its
 * children also go into an open-addressing table keyed by (parent, label), and later lookups in
 * that parent are expected O(1) whatever its degree. Roots are in a table keyed by (routine,
 * label), looked up once per chunk of k-1 items (Algorithm 4, §3.3). Room for 3k nodes and table
 * entries is reserved before an item touches the forest, so an item is processed whole or
 * dropped whole.
 *
 * Budget and pruning [DESIGN; T:686 and P:405 leave it open]. When an item would take the forest
 * past max_nodes, one pass frees the coldest quarter of the budget. With S(v) = sum of the
 * counters in v's subtree, S never grows going down a tree, so taking the nodes of smallest S
 * takes whole subtrees: the pass finds the value t of the (needed)-th smallest S, dooms every
 * node with S < t, and nodes with S == t in index order until an eighth more than needed is
 * doomed. Roots are not candidates while they fill at most a quarter of the budget: they hold
 * the BL profile. Zero-count leftovers of Algorithm 4 (S = 0) go first and cost nothing. Before
 * the doomed nodes go, each one's counter is folded into a surviving node that counts the same
 * positions with a shorter context: a lower-slab node (anchor at the previous chunk) into the
 * upper-slab path of the positions' own chunk, the path from depth k-1 down, which Algorithm 4
 * built as tau; failing that, or for an upper-slab node, into the root of its label, kept alone
 * if it was doomed (using the slack) or made after the pass if it does not exist (room
 * permitting). What finds no place is lost: pruned_items. The survivors are then compacted in
 * index order, which keeps parents below children, so each step of a pass is a sweep of the
 * array. Counts are LFU-like: a sequence that turns hot after the forest filled up competes with
 * old counters and survives a pass once its subtree sum beats the threshold.
 *
 * Activations hold (tau, beta) node indices, which a pass invalidates. Each activation records the
 * pass epoch and its last 2(k-1) path ids (current chunk and the one before) in the ctx; on a
 * stale epoch it walks the two paths again from the roots, recreating missing nodes with count
 * 0. So every item is counted at the node Algorithm 4 would count it at, and a counter only ever
 * counts positions whose context is the node's path. The k-IPF counts an occurrence of an
 * n-gram ending at position p through the node counting p, from its ancestor n-1 levels up
 * (§3.4); each position is counted by at most one node, so every k-IPF count is a lower bound.
 * A lost position misses from every n-gram ending there, a folded one from those longer than its
 * new context (at least the 1-gram survives): reported <= true <= reported + pruned_items +
 * folded_items + dropped, and for 1-grams (the BL profile) without folded_items.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/hash.h"
#include "kprof/ksf.h"
#include "ksf_internal.h"

static struct slot *slots_new(size_t n)
{
	struct slot *s = malloc(n * sizeof(*s));

	if (s)
		for (size_t i = 0; i < n; i++)
			s[i] = (struct slot){0, 0, KNONE};
	return s;
}

static int table_grow(struct slot **tab, size_t *nslots, size_t want)
{
	size_t n = *nslots;
	struct slot *s;
	uint64_t probes = 0;

	while (n < want * 2)
		n *= 2;
	if (n == *nslots)
		return 0;
	s = slots_new(n);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < *nslots; i++)
		if ((*tab)[i].node != KNONE)
			*slot_find(s, n, (*tab)[i].key, (*tab)[i].label, &probes) = (*tab)[i];
	free(*tab);
	*tab = s;
	*nslots = n;
	return 0;
}

int ksf_new(unsigned kk, const struct ksf_limits *lim, struct ksf **ret)
{
	struct ksf *k;
	size_t n = 64, min_nodes = 16 * (size_t)kk > 64 ? 16 * (size_t)kk : 64;

	if (kk < 1 || kk > KSF_K_MAX)
		return -EINVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	if (lim)
		k->lim = *lim;
	if (!k->lim.max_nodes)
		k->lim.max_nodes = 1u << 20;
	if (k->lim.max_nodes < min_nodes)
		k->lim.max_nodes = min_nodes;
	if (k->lim.max_nodes > MAX_NODES_CAP)
		k->lim.max_nodes = MAX_NODES_CAP;
	if (!k->lim.max_depth)
		k->lim.max_depth = 16384;
	if (!k->lim.index_min)
		k->lim.index_min = 8;
	k->k = kk;
	k->epoch = 1;
	while (n < 8 * (size_t)kk)
		n *= 2;
	k->roots = slots_new(n);
	k->edges = slots_new(n);
	if (!k->roots || !k->edges) {
		ksf_free(k);
		return -ENOMEM;
	}
	k->root_nslots = k->edge_nslots = n;
	k->st.k = kk;
	*ret = k;
	return 0;
}

void ksf_free(struct ksf *k)
{
	if (!k)
		return;
	free(k->nodes);
	free(k->roots);
	free(k->edges);
	free(k);
}

/* A new node; capacity was reserved. Nodes are only appended, so a child's index is above its
 * parent's; pruning compacts the array and keeps that order. */
static uint32_t node_new(struct ksf *k, uint64_t label, uint32_t up, uint32_t depth)
{
	uint32_t i = k->used++;

	k->nodes[i] = (struct knode){label, 0, KNONE, KNONE, up, depth, KN_LIVE};
	k->st.created++;
	return i;
}

static uint32_t root_get(struct ksf *k, uint32_t routine, uint64_t label)
{
	struct slot *s = slot_find(k->roots, k->root_nslots, routine, label, &k->st.probes);

	if (s->node == KNONE) {
		*s = (struct slot){label, routine, node_new(k, label, routine, 0)};
		k->st.roots++;
	}
	return s->node;
}

static void child_link(struct ksf *k, uint32_t parent, uint32_t c)
{
	if (k->nodes[parent].child == KNONE)
		k->st.internal++;
	k->nodes[c].next = k->nodes[parent].child;
	k->nodes[parent].child = c;
}

/* Hash the children of parent; skipped (lists still work) if the table cannot grow. */
static void index_children(struct ksf *k, uint32_t parent)
{
	size_t d = 0;
	uint64_t probes = 0;

	for (uint32_t c = k->nodes[parent].child; c != KNONE; c = k->nodes[c].next)
		d++;
	if (table_grow(&k->edges, &k->edge_nslots, k->nedges + d + 3 * k->k) < 0)
		return;
	for (uint32_t c = k->nodes[parent].child; c != KNONE; c = k->nodes[c].next)
		*slot_find(k->edges, k->edge_nslots, parent, k->nodes[c].label, &probes) =
		    (struct slot){k->nodes[c].label, parent, c};
	k->nedges += d;
	k->fast_limit = 0; /* entries without nodes: recompute the room */
	k->nodes[parent].flags |= KN_INDEXED;
	k->st.indexed++;
}

/* The child of parent labelled label, created with count 0 if missing. */
static uint32_t child_get(struct ksf *k, uint32_t parent, uint64_t label)
{
	struct knode *p = &k->nodes[parent];
	uint32_t c, prev = KNONE, scans = 0;
	struct slot *s;

	k->slow_lookups++;
	if (p->flags & KN_INDEXED) {
		s = slot_find(k->edges, k->edge_nslots, parent, label, &k->st.probes);
		if (s->node == KNONE) {
			*s = (struct slot){label, parent, node_new(k, label, parent, p->depth + 1)};
			k->nedges++;
			child_link(k, parent, s->node);
		}
		return s->node;
	}
	for (c = p->child; c != KNONE; prev = c, c = k->nodes[c].next) {
		scans++;
		if (k->nodes[c].label == label)
			break;
	}
	k->st.scans += scans;
	if (c == KNONE) {
		c = node_new(k, label, parent, p->depth + 1);
		child_link(k, parent, c);
	} else if (prev != KNONE) {
		k->nodes[prev].next = k->nodes[c].next;
		k->nodes[c].next = p->child;
		p->child = c;
	}
	if (scans > k->lim.index_min)
		index_children(k, parent);
	return c;
}

/* --- pruning --- */

/* The value of rank r (0-based) among v[0..n), reordering v (Wirth's selection). */
static uint64_t select_rank(uint64_t *v, size_t n, size_t r)
{
	ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, kth = (ptrdiff_t)r;

	while (l < m) {
		uint64_t x = v[kth], tmp;
		ptrdiff_t i = l, j = m;

		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				tmp = v[i];
				v[i++] = v[j];
				v[j--] = tmp;
			}
		} while (i <= j);
		if (j < kth)
			l = i;
		if (kth < i)
			m = j;
	}
	return v[kth];
}

static uint32_t child_find(const struct ksf *k, uint32_t parent, uint64_t label)
{
	uint64_t probes = 0;
	uint32_t c;

	if (k->nodes[parent].flags & KN_INDEXED)
		return slot_find(k->edges, k->edge_nslots, parent, label, &probes)->node;
	for (c = k->nodes[parent].child; c != KNONE && k->nodes[c].label != label;
	     c = k->nodes[c].next)
		;
	return c;
}

/* A counter that found no surviving node to fold into: its label's root is made after the
 * compaction, room permitting. */
struct orphan {
	uint64_t label, count;
	uint32_t routine;
	bool lower; /* from the lower slab */
};

struct prune {
	size_t want, doomed;
	struct orphan *orphans;
	size_t norphans, orphans_cap;
};

/* The surviving node of the path labels[0..n) from a root, or KNONE. A doomed root asked for
 * alone is kept (without its subtree) while the pass has slack: roots hold the BL profile. */
static uint32_t find_kept(struct ksf *k, struct prune *pr, uint32_t routine, const uint64_t *labels,
			  size_t n)
{
	uint64_t probes = 0;
	uint32_t v = slot_find(k->roots, k->root_nslots, routine, labels[0], &probes)->node;

	if (n == 1 && v != KNONE && (k->nodes[v].flags & KN_DOOMED) && pr->doomed > pr->want) {
		k->nodes[v].flags &= ~KN_DOOMED;
		pr->doomed--;
	}
	for (size_t i = 1; v != KNONE && i < n; i++)
		v = child_find(k, v, labels[i]);
	return v == KNONE || (k->nodes[v].flags & KN_DOOMED) ? KNONE : v;
}

/* Move the counter of doomed node v to a surviving node that counts the same positions with a
 * shorter context: a lower-slab node's positions to the upper-slab path of their own chunk
 * (the path from depth k-1 down), else (and an upper one's) to the root of its label. */
static void fold(struct ksf *k, struct prune *pr, uint32_t v)
{
	struct knode *n = &k->nodes[v];
	uint64_t path[2 * KSF_K_MAX];
	uint32_t d = n->depth, u = v, t = KNONE;

	for (uint32_t i = d + 1; i-- > 0; u = i ? k->nodes[u].up : u)
		path[i] = k->nodes[u].label;
	if (!is_upper(k, d))
		t = find_kept(k, pr, k->nodes[u].up, path + k->k - 1, d + 2 - k->k);
	if (t == KNONE)
		t = find_kept(k, pr, k->nodes[u].up, path + d, 1);
	if (t == v || (t == KNONE && !d)) /* a root is not re-made from itself: lost */
		return;
	if (t == KNONE) {
		if (array_grow((void **)&pr->orphans, &pr->orphans_cap, pr->norphans + 1,
			       sizeof(*pr->orphans), 256) < 0)
			return; /* lost */
		pr->orphans[pr->norphans++] =
		    (struct orphan){n->label, n->count, k->nodes[u].up, !is_upper(k, d)};
		n->count = 0;
		return;
	}
	k->nodes[t].count += n->count;
	*(is_upper(k, d) ? &k->upper_folds : &k->moved_up) += n->count;
	n->count = 0;
}

/* After the compaction: each orphan goes to the root of its label, made if needed while there
 * is room for it and for an item; what does not fit is lost. */
static void adopt(struct ksf *k, struct prune *pr, size_t need)
{
	uint64_t probes = 0;

	for (size_t i = 0; i < pr->norphans; i++) {
		struct orphan *o = &pr->orphans[i];
		struct slot *s = slot_find(k->roots, k->root_nslots, o->routine, o->label, &probes);

		if (s->node == KNONE && k->used + need < k->cap &&
		    (k->st.roots + need + 1) * 2 <= k->root_nslots) {
			*s = (struct slot){o->label, o->routine,
					   node_new(k, o->label, o->routine, 0)};
			k->st.roots++;
		}
		if (s->node == KNONE) {
			*(o->lower ? &k->pruned_lower : &k->pruned_upper) += o->count;
			k->st.pruned_items += o->count;
			continue;
		}
		k->nodes[s->node].count += o->count;
		*(o->lower ? &k->moved_up : &k->upper_folds) += o->count;
	}
	free(pr->orphans);
}

/* Doom the nodes to free: S(v), the sum of the counters in v's subtree, never grows going down
 * a tree, so every node with S < t goes with its subtree, and nodes with S == t go in index
 * order until an eighth over what is needed (slack for fold() to keep roots). Roots are not
 * candidates while they fill at most a quarter of the budget: they are the fold targets that
 * keep the BL profile, and the rest of the forest then holds enough to free. Both sweeps run
 * over the array, children after parents. */
static void mark(struct ksf *k, struct prune *pr, uint64_t *sum, uint64_t *vals)
{
	bool keep_roots = k->st.roots <= k->lim.max_nodes / 4;
	size_t n = k->used, nv = 0;
	uint64_t t;

	for (size_t i = 0; i < n; i++)
		sum[i] = k->nodes[i].count;
	for (size_t i = n; i-- > 0;)
		if (k->nodes[i].depth)
			sum[k->nodes[i].up] += sum[i];
	for (size_t i = 0; i < n; i++)
		if (!keep_roots || k->nodes[i].depth)
			vals[nv++] = sum[i];
	if (pr->want > nv)
		pr->want = nv;
	t = nv ? select_rank(vals, nv, pr->want - 1) : 0;
	k->st.prune_threshold = t;
	for (size_t i = 0; i < n; i++) {
		struct knode *x = &k->nodes[i];

		if (keep_roots && !x->depth)
			continue;
		if ((x->depth && (k->nodes[x->up].flags & KN_DOOMED)) || sum[i] < t ||
		    (sum[i] == t && pr->doomed < pr->want + pr->want / 8)) {
			x->flags |= KN_DOOMED;
			pr->doomed++;
		}
	}
}

/* Keep the survivors, in index order, at the front of the array, relink them, and rebuild
 * both tables; what is left in a doomed counter is lost. */
static void compact(struct ksf *k, uint32_t *newi, struct slot *roots, struct slot *edges)
{
	size_t n = k->used, m = 0;
	uint64_t probes = 0;

	k->st.roots = k->st.internal = k->st.indexed = k->nedges = 0;
	for (size_t i = 0; i < n; i++) {
		struct knode x = k->nodes[i];

		if (x.flags & KN_DOOMED) {
			*(is_upper(k, x.depth) ? &k->pruned_upper : &k->pruned_lower) += x.count;
			k->st.pruned_items += x.count;
			newi[i] = KNONE;
			continue;
		}
		newi[i] = m;
		x.child = KNONE;
		x.next = KNONE;
		if (x.depth) {
			struct knode *p = &k->nodes[x.up = newi[x.up]];

			k->st.internal += p->child == KNONE;
			x.next = p->child;
			p->child = m;
			if (p->flags & KN_INDEXED) {
				*slot_find(edges, k->edge_nslots, x.up, x.label, &probes) =
				    (struct slot){x.label, x.up, m};
				k->nedges++;
			}
		} else {
			*slot_find(roots, k->root_nslots, x.up, x.label, &probes) =
			    (struct slot){x.label, x.up, m};
			k->st.roots++;
		}
		k->st.indexed += !!(x.flags & KN_INDEXED);
		k->nodes[m++] = x;
	}
	k->st.pruned_nodes += n - m;
	k->used = m;
}

static int prune(struct ksf *k, size_t need)
{
	size_t goal = k->lim.max_nodes - k->lim.max_nodes / 4, n = k->used;
	struct prune pr = {.want = n + need > goal ? n + need - goal : 1};
	uint64_t *sum = malloc(n * sizeof(*sum)), *vals = calloc(n, sizeof(*vals));
	struct slot *roots = slots_new(k->root_nslots), *edges = slots_new(k->edge_nslots);

	if (!sum || !vals || !roots || !edges) {
		free(sum);
		free(vals);
		free(roots);
		free(edges);
		return -ENOMEM;
	}
	mark(k, &pr, sum, vals);
	for (size_t i = 0; i < n; i++)
		if ((k->nodes[i].flags & KN_DOOMED) && k->nodes[i].count)
			fold(k, &pr, i);
	compact(k, (uint32_t *)vals, roots, edges);
	free(sum);
	free(vals);
	free(k->roots);
	free(k->edges);
	k->roots = roots;
	k->edges = edges;
	adopt(k, &pr, need);
	k->st.prune_passes++;
	if (++k->epoch == 0)
		k->epoch = 1;
	return 0;
}

static int reserve_slow(struct ksf *k, size_t need)
{
	size_t n, r, e;
	struct knode *nodes;
	int err;

	if (k->used + need > k->lim.max_nodes && (err = prune(k, need)) < 0)
		return err;
	if (k->used + need > k->cap) {
		n = k->cap ? k->cap * 2 : 1024;
		if (n > k->lim.max_nodes)
			n = k->lim.max_nodes;
		nodes = realloc(k->nodes, n * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		k->nodes = nodes;
		k->cap = n;
	}
	if ((err = table_grow(&k->roots, &k->root_nslots, k->st.roots + need)) < 0 ||
	    (err = table_grow(&k->edges, &k->edge_nslots, k->nedges + need)) < 0)
		return err;
	/* Each node created adds at most one entry to one table: while `used` stays below this,
	 * the room for an item is there. */
	r = k->used + k->root_nslots / 2 - k->st.roots - need;
	e = k->used + k->edge_nslots / 2 - k->nedges - need;
	n = k->cap - need;
	k->fast_limit = (n < r ? (n < e ? n : e) : (r < e ? r : e)) + 1;
	return 0;
}

static inline int reserve(struct ksf *k)
{
	return k->used < k->fast_limit ? 0 : reserve_slow(k, 3 * (size_t)k->k);
}

/* --- activations --- */

static uint32_t ring_len(const struct ksf *k)
{
	return 2 * (k->k - 1);
}

static int ctx_bad(struct ksf *k, const struct ksf_ctx *ctx)
{
	if ((ctx->depth || ctx->dead) && ctx->owner == k)
		return 0;
	k->st.bad_events++;
	return -EINVAL;
}

static int ctx_grow(struct ksf *k, struct ksf_ctx *ctx)
{
	uint32_t n = ctx->cap ? ctx->cap * 2 : 8;
	struct ksf_act *acts;
	uint64_t *labels;

	if (n > k->lim.max_depth)
		n = k->lim.max_depth;
	acts = realloc(ctx->acts, n * sizeof(*acts));
	if (!acts)
		return -ENOMEM;
	ctx->acts = acts;
	if (ring_len(k)) {
		labels = realloc(ctx->labels, (size_t)n * ring_len(k) * sizeof(*labels));
		if (!labels)
			return -ENOMEM;
		ctx->labels = labels;
	}
	ctx->cap = n;
	return 0;
}

int ksf_enter(struct ksf *k, struct ksf_ctx *ctx, uint32_t routine)
{
	if (ctx->depth || ctx->dead) {
		if (ctx_bad(k, ctx) < 0)
			return -EINVAL;
	} else if (ctx->owner != k) {
		ksf_ctx_release(ctx); /* the label stride depends on k */
		ctx->owner = k;
	}
	if (ctx->dead || ctx->depth >= k->lim.max_depth) {
		ctx->dead++;
		return -E2BIG;
	}
	if (ctx->depth == ctx->cap && ctx_grow(k, ctx) < 0) {
		ctx->dead++;
		return -ENOMEM;
	}
	ctx->acts[ctx->depth++] =
	    (struct ksf_act){.routine = routine, .tau = KNONE, .beta = KNONE, .epoch = k->epoch};
	k->st.activations++;
	return 0;
}

int ksf_exit(struct ksf *k, struct ksf_ctx *ctx)
{
	if (ctx_bad(k, ctx) < 0)
		return -EINVAL;
	if (ctx->dead)
		ctx->dead--;
	else
		ctx->depth--;
	return 0;
}

/* The node at the end of the path of the last cnt path ids, from the root. */
static uint32_t walk(struct ksf *k, uint32_t routine, const uint64_t *ring, uint32_t rpos,
		     uint32_t cnt)
{
	uint32_t len = ring_len(k), v = root_get(k, routine, ring[(rpos + len - cnt) % len]);

	for (uint32_t b = cnt - 1; b >= 1; b--)
		v = child_get(k, v, ring[(rpos + len - b) % len]);
	k->walk_lookups += cnt - 1;
	return v;
}

/* Rebuild tau and beta after a pruning pass (the nodes Algorithm 4 would stand on). */
static void recover(struct ksf *k, struct ksf_act *a, const uint64_t *ring)
{
	uint32_t c = k->k - 1, m = a->cpos ? a->cpos : c;

	a->tau = a->beta = KNONE;
	if (a->n) {
		a->tau = walk(k, a->routine, ring, a->rpos, m);
		if (a->n > m)
			a->beta = walk(k, a->routine, ring, a->rpos, m + c);
		k->st.recoveries++;
	}
	a->epoch = k->epoch;
}

/* child_get, with the move-to-front head checked inline. */
static inline uint32_t child_next(struct ksf *k, uint32_t parent, uint64_t label)
{
	uint32_t c = k->nodes[parent].child;

	if (c != KNONE && k->nodes[c].label == label)
		return c;
	return child_get(k, parent, label);
}

/* Algorithm 4 for one path id. */
static void step(struct ksf *k, struct ksf_act *a, uint64_t label)
{
	if (a->cpos == 0) {
		a->beta = a->tau;
		a->tau = root_get(k, a->routine, label);
		k->st.root_lookups++;
	} else {
		a->tau = child_next(k, a->tau, label);
	}
	if (a->beta != KNONE) {
		a->beta = child_next(k, a->beta, label);
		k->nodes[a->beta].count++;
		k->st.lower++;
	} else {
		k->nodes[a->tau].count++;
		k->st.upper++;
	}
}

int ksf_push(struct ksf *k, struct ksf_ctx *ctx, uint64_t label)
{
	struct ksf_act *a;
	uint64_t *ring = NULL;
	int err;

	if (ctx_bad(k, ctx) < 0)
		return -EINVAL;
	if (ctx->dead) {
		k->st.dropped++;
		k->untracked++;
		return -E2BIG;
	}
	a = &ctx->acts[ctx->depth - 1];
	if (k->k > 1)
		ring = ctx->labels + (size_t)(ctx->depth - 1) * ring_len(k);
	if (a->n < k->k - 1)
		k->pos_hist[a->n]++;
	err = reserve(k);
	if (err < 0) {
		k->st.dropped++;
		a->epoch = 0;
	} else if (!ring) { /* k = 1: Ball-Larus counting */
		k->nodes[root_get(k, a->routine, label)].count++;
		k->st.root_lookups++;
		k->st.upper++;
	} else {
		if (a->epoch != k->epoch)
			recover(k, a, ring);
		step(k, a, label);
	}
	if (ring) {
		ring[a->rpos] = label;
		a->rpos = a->rpos + 1 == ring_len(k) ? 0 : a->rpos + 1;
		a->cpos = a->cpos + 1 == k->k - 1 ? 0 : a->cpos + 1;
	}
	a->n++;
	return err;
}

size_t ksf_ctx_depth(const struct ksf_ctx *ctx, uint32_t *routine)
{
	if (routine && ctx->depth && !ctx->dead)
		*routine = ctx->acts[ctx->depth - 1].routine;
	return (size_t)ctx->depth + ctx->dead;
}

void ksf_ctx_release(struct ksf_ctx *ctx)
{
	free(ctx->acts);
	free(ctx->labels);
	ctx->acts = NULL;
	ctx->labels = NULL;
	ctx->depth = ctx->cap = ctx->dead = 0;
	ctx->owner = NULL;
}

/* --- walks, stats, checks --- */

static int foreach_node(const struct ksf *k, uint32_t routine, uint32_t v, uint64_t *path, size_t d,
			ksf_path_fn fn, void *userdata)
{
	int r;

	path[d] = k->nodes[v].label;
	r = fn(routine, path, d + 1, k->nodes[v].count, userdata);
	for (uint32_t c = k->nodes[v].child; r >= 0 && c != KNONE; c = k->nodes[c].next)
		r = foreach_node(k, routine, c, path, d + 1, fn, userdata);
	return r < 0 ? r : 0;
}

int ksf_foreach_node(const struct ksf *k, ksf_path_fn fn, void *userdata)
{
	uint64_t path[2 * KSF_K_MAX];

	for (size_t i = 0; i < k->root_nslots; i++) {
		int r;

		if (k->roots[i].node == KNONE)
			continue;
		r = foreach_node(k, k->roots[i].key, k->roots[i].node, path, 0, fn, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

void ksf_get_stats(const struct ksf *k, struct ksf_stats *st)
{
	uint64_t lookups = k->st.upper + 2 * k->st.lower - k->st.root_lookups;

	*st = k->st;
	st->items = k->st.upper + k->st.lower + k->st.dropped;
	st->folded_items = folded_items(k);
	if (k->k > 1) /* head hits: one scan each */
		st->scans += lookups - (k->slow_lookups - k->walk_lookups);
	st->nodes = k->used;
	st->max_nodes = k->lim.max_nodes;
	st->memory = sizeof(*k) + k->cap * sizeof(*k->nodes) +
		     (k->root_nslots + k->edge_nslots) * sizeof(struct slot);
}
