// SPDX-License-Identifier: GPL-2.0-only
/* ksf_ipf.c: the k-iteration path forest (include/kprof/ksf_ipf.h, ALGORITHMS.md §3.4,
 * Algorithms 5 and 6), built on demand from a k-SF and queried, never updated. Apart from ksf.c
 * because it is a structure of its own with its own nodes and table, built once per query off
 * the update path; it reads the forest's nodes through ksf_internal.h and never changes them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/array.h"
#include "kprof/hash.h"
#include "kprof/idxtab.h"
#include "kprof/ksf_ipf.h"
#include "ksf_internal.h"

/* --- k-IPF (Algorithms 5 and 6) --- */

struct inode {
	uint64_t label, count;
	uint32_t parent, child, next, routine;
	uint32_t depth; /* 0 for the dummy root (node 0), 1 for the k-IPF roots */
};

struct ksf_ipf {
	struct inode *nodes;
	size_t n, cap;
	struct idxtab tab; /* (parent, routine, label) -> node */
	unsigned max_len;
	size_t max_nodes;
	uint64_t max_error, max_error_1;
	bool sums_known;	    /* exact counts over all routines: level sums are known */
	uint64_t expect[KSF_K_MAX]; /* expected level sums (K5) */
};

static size_t ipf_hash(uint32_t parent, uint32_t routine, uint64_t label)
{
	return mix64(label ^ (((uint64_t)parent << 32 | routine) + 1) * GOLDEN);
}

static uint32_t *ipf_slot(const struct ksf_ipf *ipf, uint32_t parent, uint32_t routine,
			  uint64_t label)
{
	size_t j;

	idxtab_probe(&ipf->tab, ipf_hash(parent, routine, label), j) {
		const struct inode *x = &ipf->nodes[ipf->tab.slot[j] - 1];

		if (x->parent == parent && x->routine == routine && x->label == label)
			break;
	}
	return &ipf->tab.slot[j];
}

static uint64_t ipf_hash_at(const void *ctx, uint32_t i)
{
	const struct inode *x = &((const struct ksf_ipf *)ctx)->nodes[i];

	return ipf_hash(x->parent, x->routine, x->label);
}

/* Room for one more node and its index entry. */
static int ipf_grow(struct ksf_ipf *ipf)
{
	struct inode *nodes;

	if (ipf->n == ipf->cap) {
		nodes = realloc(ipf->nodes, (ipf->cap ? ipf->cap * 2 : 1024) * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		ipf->nodes = nodes;
		ipf->cap = ipf->cap ? ipf->cap * 2 : 1024;
	}
	return idxtab_reserve(&ipf->tab, ipf->n + 1, 2048, ipf_hash_at, ipf);
}

/* The k-IPF child of parent labelled label, created with count 0. */
static int ipf_child(struct ksf_ipf *ipf, uint32_t parent, uint32_t routine, uint64_t label)
{
	uint32_t *s;
	int err;

	if (ipf->tab.nslots) {
		s = ipf_slot(ipf, parent, routine, label);
		if (*s)
			return *s - 1;
	}
	if (ipf->n >= ipf->max_nodes)
		return -E2BIG;
	if ((ipf->n == ipf->cap || (ipf->n + 1) * 2 > ipf->tab.nslots) && (err = ipf_grow(ipf)) < 0)
		return err;
	ipf->nodes[ipf->n] = (struct inode){label, 0, parent, KNONE, KNONE, routine, 0};
	if (ipf->n) {
		ipf->nodes[ipf->n].depth = ipf->nodes[parent].depth + 1;
		ipf->nodes[ipf->n].next = ipf->nodes[parent].child;
		ipf->nodes[parent].child = ipf->n;
	}
	*ipf_slot(ipf, parent, routine, label) = ipf->n + 1;
	return ipf->n++;
}

/* join_subtree(rho, gamma, d) with T's `d > 1` test: d levels of rho's subtree under gamma. */
static int join(const struct ksf *k, struct ksf_ipf *ipf, uint32_t rho, uint32_t gamma,
		uint32_t routine, unsigned d)
{
	int delta = ipf_child(ipf, gamma, routine, k->nodes[rho].label), err;

	if (delta < 0)
		return delta;
	ipf->nodes[delta].count += k->nodes[rho].count;
	if (d > 1)
		for (uint32_t c = k->nodes[rho].child; c != KNONE; c = k->nodes[c].next)
			if ((err = join(k, ipf, c, delta, routine, d - 1)) < 0)
				return err;
	return 0;
}

/* Join every node of rho's tree under the dummy root (the order does not matter, K8). */
static int join_tree(const struct ksf *k, struct ksf_ipf *ipf, uint32_t rho, uint32_t routine)
{
	int err = join(k, ipf, rho, 0, routine, ipf->max_len);

	for (uint32_t c = k->nodes[rho].child; !err && c != KNONE; c = k->nodes[c].next)
		err = join_tree(k, ipf, c, routine);
	return err;
}

int ksf_ipf_build(const struct ksf *k, const struct ksf_ipf_opts *opts, struct ksf_ipf **ret)
{
	struct ksf_ipf_opts o = opts ? *opts : (struct ksf_ipf_opts){0};
	struct ksf_ipf *ipf = calloc(1, sizeof(*ipf));
	uint64_t expect;
	int err;

	if (!ipf)
		return -ENOMEM;
	ipf->max_len = o.max_len && o.max_len < k->k ? o.max_len : k->k;
	ipf->max_nodes = o.max_nodes ? o.max_nodes : 1u << 24;
	if (ipf->max_nodes > MAX_NODES_CAP)
		ipf->max_nodes = MAX_NODES_CAP;
	ipf->max_nodes++; /* the dummy root */
	ipf->max_error_1 = k->st.pruned_items + k->st.dropped;
	ipf->max_error = ipf->max_error_1 + folded_items(k);
	err = ipf_child(ipf, KNONE, 0, 0);
	for (size_t i = 0; i < k->root_nslots && err >= 0; i++) {
		const struct slot *s = &k->roots[i];

		if (s->node != KNONE && (!o.one_routine || s->key == o.routine))
			err = join_tree(k, ipf, s->node, s->key);
	}
	if (err < 0) {
		ksf_ipf_free(ipf);
		return err;
	}
	ipf->sums_known = !ipf->max_error && !o.one_routine;
	/* Level j+1 sums the items at position >= j of their activation. */
	expect = k->st.upper + k->st.lower + k->st.dropped - k->untracked;
	for (unsigned j = 0; j < ipf->max_len; j++) {
		ipf->expect[j] = expect;
		expect -= j < k->k - 1 ? k->pos_hist[j] : 0;
	}
	*ret = ipf;
	return 0;
}

void ksf_ipf_free(struct ksf_ipf *ipf)
{
	if (!ipf)
		return;
	free(ipf->nodes);
	idxtab_release(&ipf->tab);
	free(ipf);
}

uint64_t ksf_ipf_count(const struct ksf_ipf *ipf, uint32_t routine, const uint64_t *path, size_t n)
{
	uint32_t v = 0, *s;

	if (!n || n > ipf->max_len)
		return 0;
	for (size_t i = 0; i < n; i++) {
		s = ipf_slot(ipf, v, routine, path[i]);
		if (!*s)
			return 0;
		v = *s - 1;
	}
	return ipf->nodes[v].count;
}

/* The path of node v, root first, into path[]; its length. */
static size_t ipf_path(const struct ksf_ipf *ipf, uint32_t v, uint64_t *path)
{
	size_t d = ipf->nodes[v].depth;

	for (size_t i = d; i > 0; i--, v = ipf->nodes[v].parent)
		path[i - 1] = ipf->nodes[v].label;
	return d;
}

static int ipf_cmp(const void *a, const void *b, void *userdata)
{
	const struct ksf_ipf *ipf = userdata;
	const struct inode *x = &ipf->nodes[*(const uint32_t *)a];
	const struct inode *y = &ipf->nodes[*(const uint32_t *)b];
	uint64_t px[KSF_K_MAX], py[KSF_K_MAX];

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->routine != y->routine)
		return x->routine < y->routine ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	ipf_path(ipf, *(const uint32_t *)a, px);
	ipf_path(ipf, *(const uint32_t *)b, py);
	for (size_t i = 0; i < x->depth; i++)
		if (px[i] != py[i])
			return px[i] < py[i] ? -1 : 1;
	return 0;
}

static int ipf_foreach_tree(const struct ksf_ipf *ipf, uint32_t v, uint64_t *path, ksf_path_fn fn,
			    void *userdata)
{
	const struct inode *x = &ipf->nodes[v];
	int r = 0;

	if (v) {
		path[x->depth - 1] = x->label;
		r = fn(x->routine, path, x->depth, x->count, userdata);
	}
	for (uint32_t c = x->child; r >= 0 && c != KNONE; c = ipf->nodes[c].next)
		r = ipf_foreach_tree(ipf, c, path, fn, userdata);
	return r < 0 ? r : 0;
}

int ksf_ipf_foreach(const struct ksf_ipf *ipf, enum ksf_order order, ksf_path_fn fn, void *userdata)
{
	uint64_t path[KSF_K_MAX];
	uint32_t *v;
	int r = 0;

	if (order == KSF_ORDER_TREE)
		return ipf_foreach_tree(ipf, 0, path, fn, userdata);
	v = malloc(ipf->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < ipf->n; i++)
		v[i - 1] = i;
	qsort_r(v, ipf->n - 1, sizeof(*v), ipf_cmp, (void *)ipf);
	for (size_t i = 0; i + 1 < ipf->n && r >= 0; i++) {
		size_t d = ipf_path(ipf, v[i], path);

		r = fn(ipf->nodes[v[i]].routine, path, d, ipf->nodes[v[i]].count, userdata);
	}
	free(v);
	return r < 0 ? r : 0;
}

void ksf_ipf_get_stats(const struct ksf_ipf *ipf, struct ksf_ipf_stats *st)
{
	*st = (struct ksf_ipf_stats){
	    .nodes = ipf->n - 1,
	    .max_len = ipf->max_len,
	    .max_error = ipf->max_error,
	    .max_error_1 = ipf->max_error_1,
	    .memory =
		sizeof(*ipf) + ipf->cap * sizeof(*ipf->nodes) + ipf->tab.nslots * sizeof(*ipf->tab.slot),
	};
	for (size_t i = 1; i < ipf->n; i++) {
		st->roots += ipf->nodes[i].depth == 1;
		st->level_sum[ipf->nodes[i].depth - 1] += ipf->nodes[i].count;
	}
}

int ksf_ipf_check(const struct ksf_ipf *ipf)
{
	struct ksf_ipf_stats st;
	size_t linked = 0;

	if (!ipf->n || ipf->nodes[0].depth || ipf->nodes[0].parent != KNONE)
		return -EUCLEAN;
	for (size_t i = 0; i < ipf->n; i++) {
		const struct inode *x = &ipf->nodes[i];
		uint64_t below = 0;

		if (i && (x->parent >= ipf->n || x->depth != ipf->nodes[x->parent].depth + 1 ||
			  x->depth > ipf->max_len ||
			  (x->parent && x->routine != ipf->nodes[x->parent].routine) ||
			  *ipf_slot(ipf, x->parent, x->routine, x->label) != i + 1))
			return -EUCLEAN; /* the index lookup also proves sibling labels unique */
		for (uint32_t c = x->child; c != KNONE; c = ipf->nodes[c].next) {
			if (c >= ipf->n || ipf->nodes[c].parent != i || ++linked >= ipf->n)
				return -EUCLEAN;
			below += ipf->nodes[c].count;
		}
		if (i && !ipf->max_error && (x->count < 1 || x->count < below))
			return -EUCLEAN; /* K6 */
	}
	if (linked != ipf->n - 1)
		return -EUCLEAN;
	ksf_ipf_get_stats(ipf, &st);
	for (unsigned j = 0; ipf->sums_known && j < ipf->max_len; j++)
		if (st.level_sum[j] != ipf->expect[j])
			return -EUCLEAN; /* K5 */
	return 0;
}
