// SPDX-License-Identifier: GPL-2.0-only
/* spp.c: structural path profiling over a block trace (see include/kprof/spp.h and
 * ALGORITHMS.md §8).
 *
 * Graphs: graph 0 is the outline graph, graph i >= 1 the loop of the i-th header in block
 * order. Every block belongs to its innermost graph (a header to its own loop's graph), and its
 * chain is the list of graphs from the outline graph to that one; on the graph at level j of the
 * chain, a block is itself (j is the last level) or the loop node of the graph at level j + 1.
 *
 * Each activation keeps one open local path per level of the current block's chain. A step
 * u -> v closes the paths of u's levels that v's chain does not share (X: they leave their
 * region), then on each shared level either the graph's header is reached again (a back edge:
 * the path ends with B and the next one starts with B at the header), or v's node is appended
 * unless it is the same loop node as u's (control stays inside an inner loop), and finally opens
 * a path E at each new level of v's chain. Returning closes every open path with X. A closed
 * path is counted when its graph is active (always, without a budget), in a hash table keyed by
 * (graph, nodes) whose keys live in one array. The controller runs when counts change and at
 * each activation start (timeouts).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cfg.h"
#include "kprof/idxtab.h"
#include "kprof/spp.h"

#define NO UINT32_MAX

struct graph {
	uint32_t header, parent, level;
	enum spp_state state;
	uint64_t share, counted, entries, loop_count, start_act;
	size_t npaths;
};

struct prec {
	uint32_t graph, off, n;
	uint64_t count;
};

struct spp {
	const struct cfg *g;
	struct spp_opts o;
	uint32_t nblocks, ngraphs, maxlevel, rowlen;
	struct graph *gr;
	uint32_t *block_graph;
	uint32_t *cu, *cv; /* chain scratch, maxlevel + 1 each */
	struct prec *paths;
	size_t npaths, pcap;
	uint32_t *arena;
	size_t alen, acap;
	struct idxtab ht; /* (graph, nodes) -> path index */
	uint64_t acts, counted, dropped;
};

/* ---- construction ---- */

static uint32_t graph_of_block(const struct spp *s, uint32_t b)
{
	const struct cfg_block *blk = cfg_block_get(s->g, b);
	uint32_t h = (blk->flags & CFG_BLOCK_HEADER) ? b : blk->loop_parent;

	if (h == CFG_NONE)
		return 0;
	for (uint32_t i = 1; i < s->ngraphs; i++)
		if (s->gr[i].header == h)
			return i;
	return 0;
}

static uint32_t graph_level(struct spp *s, uint32_t i)
{
	uint32_t lvl = 0;

	for (uint32_t x = i; x != 0 && lvl <= s->ngraphs; x = s->gr[x].parent)
		lvl++;
	return lvl;
}

static int graphs_make(struct spp *s)
{
	uint32_t n = 1;

	for (uint32_t b = 0; b < s->nblocks; b++)
		n += !!(cfg_block_get(s->g, b)->flags & CFG_BLOCK_HEADER);
	s->gr = calloc(n, sizeof(*s->gr));
	s->block_graph = calloc(s->nblocks ? s->nblocks : 1, sizeof(uint32_t));
	if (!s->gr || !s->block_graph)
		return -ENOMEM;
	s->gr[0] = (struct graph){.header = NO, .parent = NO};
	s->ngraphs = 1;
	for (uint32_t b = 0; b < s->nblocks; b++)
		if (cfg_block_get(s->g, b)->flags & CFG_BLOCK_HEADER)
			s->gr[s->ngraphs++] = (struct graph){.header = b};
	for (uint32_t i = 1; i < s->ngraphs; i++) {
		uint32_t lp = cfg_block_get(s->g, s->gr[i].header)->loop_parent;

		s->gr[i].parent = lp == CFG_NONE ? 0 : graph_of_block(s, lp);
	}
	for (uint32_t i = 0; i < s->ngraphs; i++) {
		s->gr[i].level = graph_level(s, i);
		if (s->gr[i].level > s->maxlevel)
			s->maxlevel = s->gr[i].level;
	}
	for (uint32_t b = 0; b < s->nblocks; b++)
		s->block_graph[b] = graph_of_block(s, b);
	return 0;
}

int spp_new(const struct cfg *g, const struct spp_opts *o, struct spp **ret)
{
	struct spp *s;

	if (!g || !ret)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->g = g;
	s->o = o ? *o : (struct spp_opts){0};
	if (!s->o.max_paths)
		s->o.max_paths = SPP_MAX_PATHS_DEFAULT;
	s->nblocks = (uint32_t)cfg_nblocks(g);
	s->rowlen = s->nblocks + 3;
	if (graphs_make(s) < 0)
		goto nomem;
	s->cu = calloc(s->maxlevel + 1, sizeof(uint32_t));
	s->cv = calloc(s->maxlevel + 1, sizeof(uint32_t));
	if (!s->cu || !s->cv)
		goto nomem;
	for (uint32_t i = 0; i < s->ngraphs; i++) {
		if (s->o.budget) {
			s->gr[i].share = s->o.budget / s->ngraphs;
			if (!s->gr[i].share)
				s->gr[i].share = 1;
		}
		s->gr[i].state = (i == 0 || !s->o.budget) ? SPP_ACTIVE : SPP_IDLE;
	}
	*ret = s;
	return 0;
nomem:
	spp_free(s);
	return -ENOMEM;
}

void spp_free(struct spp *s)
{
	if (!s)
		return;
	free(s->gr);
	free(s->block_graph);
	free(s->cu);
	free(s->cv);
	free(s->paths);
	free(s->arena);
	idxtab_release(&s->ht);
	free(s);
}

size_t spp_ngraphs(const struct spp *s)
{
	return s->ngraphs;
}

int spp_graph_of(const struct spp *s, uint32_t h)
{
	for (uint32_t i = 1; i < s->ngraphs; i++)
		if (s->gr[i].header == h)
			return (int)i;
	return -ENOENT;
}

/* ---- the path table ---- */

static uint64_t key_hash(uint32_t g, const uint32_t *nodes, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ g;

	for (size_t i = 0; i < n; i++)
		h = (h ^ nodes[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static bool key_eq(const struct spp *s, const struct prec *p, uint32_t g, const uint32_t *nodes,
		   size_t n)
{
	return p->graph == g && p->n == n && !memcmp(s->arena + p->off, nodes, n * sizeof(*nodes));
}

static long path_find(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n)
{
	size_t i;

	if (!s->ht.nslots)
		return -1;
	idxtab_probe(&s->ht, key_hash(g, nodes, n), i)
		if (key_eq(s, &s->paths[s->ht.slot[i] - 1], g, nodes, n))
			return (long)s->ht.slot[i] - 1;
	return -1;
}

static uint64_t path_hash(const void *ctx, uint32_t k)
{
	const struct spp *s = ctx;
	const struct prec *p = &s->paths[k];

	return key_hash(p->graph, s->arena + p->off, p->n);
}

static long path_insert(struct spp *s, uint32_t g, const uint32_t *nodes, size_t n)
{
	size_t i;

	if (s->npaths >= s->o.max_paths)
		return -ENOSPC;
	if (idxtab_reserve(&s->ht, s->npaths + 1, 64, path_hash, s) < 0)
		return -ENOMEM;
	if (s->npaths == s->pcap) {
		size_t cap = s->pcap ? 2 * s->pcap : 64;
		struct prec *p = realloc(s->paths, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->paths = p;
		s->pcap = cap;
	}
	if (s->alen + n > s->acap) {
		size_t cap = s->acap ? 2 * s->acap : 1024;
		uint32_t *a;

		while (cap < s->alen + n)
			cap *= 2;
		a = realloc(s->arena, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		s->arena = a;
		s->acap = cap;
	}
	memcpy(s->arena + s->alen, nodes, n * sizeof(*nodes));
	s->paths[s->npaths] = (struct prec){.graph = g, .off = (uint32_t)s->alen, .n = (uint32_t)n};
	s->alen += n;
	idxtab_probe(&s->ht, key_hash(g, nodes, n), i)
		;
	s->ht.slot[i] = (uint32_t)s->npaths + 1;
	s->gr[g].npaths++;
	return (long)s->npaths++;
}

/* ---- the controller ---- */

static void mark_cold(struct spp *s, uint32_t g)
{
	s->gr[g].state = SPP_COLD;
	for (uint32_t c = 1; c < s->ngraphs; c++)
		if (s->gr[c].parent == g && s->gr[c].state == SPP_IDLE)
			mark_cold(s, c);
}

/* Graph g is done (st): its inner graphs start, but those its counted paths never entered are
 * cold. A graph that counted nothing (timed out unprofiled: a breakpoint plan that did not fit,
 * code that did not run) is no evidence either way: its inner graphs start. */
static void finish(struct spp *s, uint32_t g, enum spp_state st)
{
	s->gr[g].state = st;
	for (uint32_t c = 1; c < s->ngraphs; c++) {
		if (s->gr[c].parent != g || s->gr[c].state != SPP_IDLE)
			continue;
		if (s->gr[c].loop_count == 0 && s->gr[g].counted > 0) {
			mark_cold(s, c);
		} else {
			s->gr[c].state = SPP_ACTIVE;
			s->gr[c].start_act = s->acts;
		}
	}
}

static bool valid_path(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n)
{
	if (n < 2 || (nodes[0] != SPP_M_ENTRY && nodes[0] != SPP_M_BACK) ||
	    (nodes[n - 1] != SPP_M_EXIT && nodes[n - 1] != SPP_M_BACK))
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		uint32_t x = nodes[i];

		if (x & SPP_LOOP) {
			x &= ~SPP_LOOP;
			if (x == 0 || x >= s->ngraphs || s->gr[x].parent != g)
				return false;
		} else if (x >= s->nblocks || s->block_graph[x] != g) {
			return false;
		}
	}
	return true;
}

int spp_add(struct spp *s, uint32_t g, const uint32_t *nodes, size_t n, uint64_t count)
{
	long k;

	if (g >= s->ngraphs || !valid_path(s, g, nodes, n))
		return -EINVAL;
	if (s->o.budget && s->gr[g].state != SPP_ACTIVE)
		return 0;
	k = path_find(s, g, nodes, n);
	if (k < 0)
		k = path_insert(s, g, nodes, n);
	if (k < 0) {
		s->dropped += count;
		return (int)k;
	}
	s->paths[k].count += count;
	s->counted += count;
	s->gr[g].counted += count;
	if (nodes[0] == SPP_M_ENTRY)
		s->gr[g].entries += count;
	for (size_t i = 1; i + 1 < n; i++)
		if (nodes[i] & SPP_LOOP)
			s->gr[nodes[i] & ~SPP_LOOP].loop_count += count;
	if (s->o.budget && s->gr[g].counted >= s->gr[g].share)
		finish(s, g, SPP_FINISHED);
	return 0;
}

int spp_finish(struct spp *s, uint32_t g)
{
	if (g >= s->ngraphs)
		return -EINVAL;
	if (!s->o.budget || s->gr[g].state != SPP_ACTIVE)
		return 0;
	finish(s, g, SPP_TIMEOUT);
	return 1;
}

/* ---- feeding ---- */

/* The chain of block b into ch[0..L]; returns L. */
static uint32_t chain(const struct spp *s, uint32_t b, uint32_t *ch)
{
	uint32_t g = s->block_graph[b], l = s->gr[g].level;

	for (uint32_t i = l + 1; i-- > 0; g = s->gr[g].parent)
		ch[i] = g;
	return l;
}

static uint32_t node_at(const uint32_t *ch, uint32_t l, uint32_t lvl, uint32_t b)
{
	return lvl == l ? b : (SPP_LOOP | ch[lvl + 1]);
}

static void push(const struct spp *s, struct spp_act *a, uint32_t lvl, uint32_t x)
{
	uint32_t *len = &a->len[lvl];

	if (*len == NO)
		return; /* too long already: dropped when closed */
	if (*len + 1 >= s->rowlen) {
		*len = NO;
		return;
	}
	a->buf[lvl * s->rowlen + (*len)++] = x;
}

static void close_path(struct spp *s, struct spp_act *a, uint32_t lvl, uint32_t g, uint32_t end)
{
	push(s, a, lvl, end);
	if (a->len[lvl] == NO)
		s->dropped++;
	else if (!s->o.budget || s->gr[g].state == SPP_ACTIVE)
		spp_add(s, g, a->buf + lvl * s->rowlen, a->len[lvl], 1);
	a->len[lvl] = 0;
}

static void open_path(struct spp *s, struct spp_act *a, uint32_t lvl, uint32_t start, uint32_t x)
{
	a->len[lvl] = 0;
	push(s, a, lvl, start);
	push(s, a, lvl, x);
}

int spp_enter(struct spp *s, struct spp_act *a)
{
	size_t levels = s->maxlevel + 1;

	s->acts++;
	if (s->o.budget && s->o.timeout)
		for (uint32_t g = 0; g < s->ngraphs; g++)
			if (s->gr[g].state == SPP_ACTIVE &&
			    s->acts - s->gr[g].start_act > s->o.timeout)
				finish(s, g, SPP_TIMEOUT);
	if (!a->buf) {
		a->buf = calloc(levels * s->rowlen, sizeof(uint32_t));
		a->len = calloc(levels, sizeof(uint32_t));
		if (!a->buf || !a->len) {
			spp_act_release(a);
			return -ENOMEM;
		}
	}
	a->prev = NO;
	a->live = true;
	return 0;
}

int spp_block(struct spp *s, struct spp_act *a, uint32_t v)
{
	uint32_t lu, lv, c = 0;

	if (!a->live)
		return -EINVAL;
	if (v >= s->nblocks) {
		spp_act_reset(a);
		return -EINVAL;
	}
	lv = chain(s, v, s->cv);
	if (a->prev == NO) {
		for (uint32_t l = 0; l <= lv; l++)
			open_path(s, a, l, SPP_M_ENTRY, node_at(s->cv, lv, l, v));
		a->prev = v;
		return 0;
	}
	lu = chain(s, a->prev, s->cu);
	while (c <= lu && c <= lv && s->cu[c] == s->cv[c])
		c++;
	for (uint32_t l = lu + 1; l-- > c;)
		close_path(s, a, l, s->cu[l], SPP_M_EXIT);
	for (uint32_t l = 0; l < c; l++) {
		uint32_t g = s->cv[l], nu = node_at(s->cu, lu, l, a->prev);
		uint32_t nv = node_at(s->cv, lv, l, v);

		if (g != 0 && v == s->gr[g].header) {
			close_path(s, a, l, g, SPP_M_BACK);
			open_path(s, a, l, SPP_M_BACK, v);
		} else if (nu != nv || !(nv & SPP_LOOP)) {
			push(s, a, l, nv);
		}
	}
	for (uint32_t l = c; l <= lv; l++)
		open_path(s, a, l, SPP_M_ENTRY, node_at(s->cv, lv, l, v));
	a->prev = v;
	return 0;
}

void spp_exit(struct spp *s, struct spp_act *a)
{
	uint32_t lu;

	if (!a->live)
		return;
	if (a->prev != NO) {
		lu = chain(s, a->prev, s->cu);
		for (uint32_t l = lu + 1; l-- > 0;)
			close_path(s, a, l, s->cu[l], SPP_M_EXIT);
	}
	spp_act_reset(a);
}

void spp_act_reset(struct spp_act *a)
{
	a->prev = NO;
	a->live = false;
}

void spp_act_release(struct spp_act *a)
{
	free(a->buf);
	free(a->len);
	memset(a, 0, sizeof(*a));
	a->prev = NO;
}

/* ---- results ---- */

static double coef(const struct spp *s, uint32_t g)
{
	const struct graph *x = &s->gr[g];

	if (g == 0)
		return 1.0;
	if (x->entries == 0)
		return 0.0;
	return coef(s, x->parent) * (double)x->loop_count / (double)x->entries;
}

int spp_graph_get(const struct spp *s, uint32_t g, struct spp_graph_info *gi)
{
	const struct graph *x;

	if (g >= s->ngraphs)
		return -ENOENT;
	x = &s->gr[g];
	*gi = (struct spp_graph_info){
	    .header = x->header,
	    .parent = x->parent,
	    .level = x->level,
	    .state = x->state,
	    .share = x->share,
	    .counted = x->counted,
	    .entries = x->entries,
	    .loop_count = x->loop_count,
	    .coefficient = coef(s, g),
	    .npaths = x->npaths,
	};
	return 0;
}

void spp_get_stats(const struct spp *s, struct spp_stats *st)
{
	bool complete = s->o.budget != 0;

	for (uint32_t g = 0; g < s->ngraphs; g++)
		if (s->gr[g].state == SPP_IDLE || s->gr[g].state == SPP_ACTIVE)
			complete = false;
	*st = (struct spp_stats){
	    .graphs = s->ngraphs,
	    .activations = s->acts,
	    .counted = s->counted,
	    .dropped = s->dropped,
	    .complete = complete,
	    .memory = sizeof(*s) + s->ngraphs * sizeof(struct graph) +
		      s->pcap * sizeof(struct prec) + s->acap * 4 + s->ht.nslots * 4 + s->nblocks * 4,
	};
}

int spp_foreach_path(const struct spp *s, spp_path_fn fn, void *userdata)
{
	for (size_t i = 0; i < s->npaths; i++) {
		const struct prec *p = &s->paths[i];
		int r = fn(p->graph, s->arena + p->off, p->n, p->count,
			   (double)p->count * coef(s, p->graph), userdata);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The hottest kept path of graph g that enters and leaves without iterating; -1 if none. */
static long pass_through(const struct spp *s, uint32_t g)
{
	long best = -1;

	for (size_t i = 0; i < s->npaths; i++) {
		const struct prec *p = &s->paths[i];
		const uint32_t *n = s->arena + p->off;

		if (p->graph == g && p->count && n[0] == SPP_M_ENTRY && n[p->n - 1] == SPP_M_EXIT &&
		    (best < 0 || p->count > s->paths[best].count))
			best = (long)i;
	}
	return best;
}

static int expand(const struct spp *s, const uint32_t *nodes, size_t n, uint32_t *out, size_t cap,
		  size_t *len, unsigned depth)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t x = nodes[i];
		long k;

		if (x == SPP_M_ENTRY || x == SPP_M_BACK || x == SPP_M_EXIT)
			continue;
		k = (x & SPP_LOOP) && depth <= s->maxlevel ? pass_through(s, x & ~SPP_LOOP) : -1;
		if (k >= 0) {
			const struct prec *p = &s->paths[k];
			int r = expand(s, s->arena + p->off, p->n, out, cap, len, depth + 1);

			if (r < 0)
				return r;
			continue;
		}
		if (*len >= cap)
			return -ENOSPC;
		out[(*len)++] = x;
	}
	return 0;
}

int spp_expand(const struct spp *s, uint32_t g, const uint32_t *nodes, size_t n, uint32_t *out,
	       size_t cap)
{
	size_t len = 0;
	int r;

	if (g >= s->ngraphs)
		return -EINVAL;
	r = expand(s, nodes, n, out, cap, &len, 0);
	return r < 0 ? r : (int)len;
}

static double total(const struct spp *s)
{
	double t = 0;

	for (size_t i = 0; i < s->npaths; i++)
		t += (double)s->paths[i].count * coef(s, s->paths[i].graph);
	return t;
}

double spp_overlap(const struct spp *a, const struct spp *b)
{
	double ta = total(a), tb = total(b), sum = 0;

	if (ta <= 0 || tb <= 0)
		return 0;
	for (size_t i = 0; i < a->npaths; i++) {
		const struct prec *p = &a->paths[i];
		long k = path_find(b, p->graph, a->arena + p->off, p->n);
		double x = (double)p->count * coef(a, p->graph) / ta, y;

		if (k < 0)
			continue;
		y = (double)b->paths[k].count * coef(b, p->graph) / tb;
		sum += x < y ? x : y;
	}
	return 100.0 * sum;
}

double spp_overlap_vec(const double *a, const double *b, size_t n)
{
	double ta = 0, tb = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		ta += a[i];
		tb += b[i];
	}
	if (ta <= 0 || tb <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		double x = a[i] / ta, y = b[i] / tb;

		sum += x < y ? x : y;
	}
	return 100.0 * sum;
}

/* ---- flat Ball-Larus profiles ---- */

struct spp_flat {
	uint64_t budget, counted;
	size_t max_ids, n, cap; /* cap: a power of two, at least 2n */
	uint64_t *id, *count;	/* count 0: empty slot */
};

int spp_flat_new(uint64_t budget, size_t max_ids, struct spp_flat **ret)
{
	struct spp_flat *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->budget = budget;
	f->max_ids = max_ids ? max_ids : SPP_MAX_PATHS_DEFAULT;
	*ret = f;
	return 0;
}

void spp_flat_free(struct spp_flat *f)
{
	if (!f)
		return;
	free(f->id);
	free(f->count);
	free(f);
}

static size_t flat_slot(const uint64_t *ids, const uint64_t *counts, size_t cap, uint64_t id)
{
	size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);

	while (counts[i] && ids[i] != id)
		i = (i + 1) & (cap - 1);
	return i;
}

static int flat_grow(struct spp_flat *f)
{
	size_t cap = f->cap ? 2 * f->cap : 64;
	uint64_t *id = calloc(cap, sizeof(*id)), *count = calloc(cap, sizeof(*count));

	if (!id || !count) {
		free(id);
		free(count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->cap; i++) {
		size_t j;

		if (!f->count[i])
			continue;
		j = flat_slot(id, count, cap, f->id[i]);
		id[j] = f->id[i];
		count[j] = f->count[i];
	}
	free(f->id);
	free(f->count);
	f->id = id;
	f->count = count;
	f->cap = cap;
	return 0;
}

int spp_flat_add(struct spp_flat *f, uint64_t id)
{
	size_t i;

	if (f->budget && f->counted >= f->budget)
		return 0;
	if ((f->n + 1) * 2 > f->cap && flat_grow(f) < 0)
		return -ENOMEM;
	i = flat_slot(f->id, f->count, f->cap, id);
	if (!f->count[i]) {
		if (f->n >= f->max_ids)
			return -ENOSPC;
		f->n++;
		f->id[i] = id;
	}
	f->count[i]++;
	f->counted++;
	return 0;
}

uint64_t spp_flat_counted(const struct spp_flat *f)
{
	return f->counted;
}

double spp_flat_overlap(const struct spp_flat *a, const struct spp_flat *b)
{
	double sum = 0;

	if (!a->counted || !b->counted || !b->cap)
		return 0;
	for (size_t i = 0; i < a->cap; i++) {
		size_t j;
		double x, y;

		if (!a->count[i])
			continue;
		j = flat_slot(b->id, b->count, b->cap, a->id[i]);
		if (!b->count[j])
			continue;
		x = (double)a->count[i] / (double)a->counted;
		y = (double)b->count[j] / (double)b->counted;
		sum += x < y ? x : y;
	}
	return 100.0 * sum;
}
