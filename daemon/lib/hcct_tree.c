// SPDX-License-Identifier: GPL-2.0-only
/* hcct_tree.c: the HCCT's results (include/kprof/hcct_tree.h): a query (the (phi, eps)-HCCT) or
 * a snapshot built from the MCCT, the filter that gives a query of a saved snapshot, and the
 * relabelling that merges routines found to be one after the fact. Apart from hcct.c because
 * none of it is on the update path: it reads the MCCT (hcct_internal.h) and never changes it,
 * and works on struct hcct_tree, an array the caller owns.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/hcct.h"
#include "hcct_internal.h"

/* ---- queries ---- */

uint64_t hcct_threshold(const struct hcct *h, uint64_t phi_num, uint64_t phi_den)
{
	if (!h || !phi_den)
		return 0;
	return (uint64_t)((unsigned __int128)phi_num * h->n / phi_den);
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

/* Parents come first: one backward pass marks the hot entries and their ancestors. -EINVAL
 * when an entry comes before its parent. */
static int filter_mark(const struct hcct_tree *snap, uint64_t thr, bool *keep)
{
	for (size_t i = snap->len; i-- > 0;) {
		const struct hcct_entry *e = &snap->entries[i];
		bool mon = e->flags & HCCT_ENTRY_MONITORED;

		if (e->parent != HCCT_NONE && e->parent >= i)
			return -EINVAL;
		if (mon && e->count >= thr && e->count > 0)
			keep[i] = true;
		if (keep[i] && e->parent != HCCT_NONE)
			keep[e->parent] = true;
	}
	return 0;
}

/* The kept entries in order into tree (room for snap->len), re-indexed through newidx. */
static void filter_copy(const struct hcct_tree *snap, uint64_t thr, const bool *keep,
			uint32_t *newidx, struct hcct_tree *tree)
{
	size_t k = 0;

	for (size_t i = 0; i < snap->len; i++) {
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
}

int hcct_tree_filter(const struct hcct_tree *snap, uint64_t phi_num, uint64_t phi_den,
		     struct hcct_tree **ret)
{
	size_t n;
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
	err = filter_mark(snap, thr, keep);
	if (err < 0)
		goto out;
	filter_copy(snap, thr, keep, newidx, tree);
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
	struct idxtab tab;    /* (parent, id, site) -> merged index */
	size_t n;
};

static uint64_t relabel_hash(uint32_t parent, uint32_t id, uint64_t site)
{
	return mix64(((uint64_t)parent << 32 | id) ^ mix64(site));
}

/* The merged entry of key (parent, id, site), made if missing (the table has room for every
 * entry of the input: reserved once). */
static uint32_t relabel_get(struct relabel *r, uint32_t parent, uint32_t id, uint64_t site)
{
	size_t j;

	idxtab_probe(&r->tab, relabel_hash(parent, id, site), j) {
		const struct hcct_entry *e = &r->m[r->tab.slot[j] - 1];

		if (e->parent == parent && e->id == id && e->call_site == site)
			return r->tab.slot[j] - 1;
	}
	r->m[r->n] =
	    (struct hcct_entry){.id = id, .call_site = site, .parent = parent, .slot = HCCT_NONE};
	r->tab.slot[j] = ++r->n;
	return r->n - 1;
}

static uint64_t relabel_hash_of(const void *ctx, uint32_t i)
{
	const struct hcct_entry *e = &((const struct relabel *)ctx)->m[i];

	return relabel_hash(e->parent, e->id, e->call_site);
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

/* Each entry of in, parents first, into its merged entry; to[i]: in's entry i's. -EINVAL when
 * a child comes before its parent. */
static int relabel_merge(struct relabel *r, const struct hcct_tree *in, const uint32_t *map,
			 size_t nmap, uint32_t *to)
{
	for (size_t i = 0; i < in->len; i++) {
		const struct hcct_entry *e = &in->entries[i];
		uint32_t id = e->id < nmap ? map[e->id] : e->id, k;
		struct hcct_entry *o;

		if (e->parent != HCCT_NONE && e->parent >= i)
			return -EINVAL;
		k = relabel_get(r, e->parent == HCCT_NONE ? HCCT_NONE : to[e->parent], id,
				e->call_site);
		to[i] = k;
		o = &r->m[k];
		/* Merged contexts: the counters add up, and so do their error bounds. */
		if (e->flags & HCCT_ENTRY_MONITORED) {
			o->count += e->count;
			o->err += e->err;
			if (o->slot == HCCT_NONE)
				o->slot = e->slot;
		}
		o->flags |= e->flags;
	}
	return 0;
}

/* in's threshold and totals on t, and the hot flag of each merged entry that reaches it. */
static void relabel_finish(const struct hcct_tree *in, struct hcct_tree *t)
{
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
	r.m = calloc(n ? n : 1, sizeof(*r.m));
	to = malloc((n ? n : 1) * sizeof(*to));
	t = calloc(1, sizeof(*t));
	if (idxtab_reserve(&r.tab, n, 16, relabel_hash_of, &r) < 0 || !r.m || !to || !t ||
	    !(t->entries = calloc(n ? n : 1, sizeof(*t->entries)))) {
		err = -ENOMEM;
		goto out;
	}
	err = relabel_merge(&r, in, map, nmap, to);
	if (err >= 0)
		err = relabel_emit(&r, t);
	if (err < 0)
		goto out;
	relabel_finish(in, t);
	*ret = t;
	t = NULL;
	err = 0;
out:
	idxtab_release(&r.tab);
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
