// SPDX-License-Identifier: GPL-2.0-only
/* hwspp.c: one structure graph's local paths from hardware breakpoint hits (include/kprof/
 * hwspp.h, ALGORITHMS.md §9). Pure: no I/O, no globals.
 *
 * A graph X is compiled into local nodes: its own blocks, then its inner loops (loop nodes),
 * each with the transitions a walker may take out of it without a hit: an own block with a
 * breakpoint has none (a hit decides), an assumed one its assumed edge, another one its single
 * edge, a loop node every distinct exit of its loop. A transition goes to a node (flagged when
 * it is a back edge to X's header) or out of X's region (OUT). Routes between hits are counted
 * on that graph (memoized depth-first, saturating at 2, a cycle met counting as ambiguous), and
 * a path is only extended through a route that is unique.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/hwbranch.h"
#include "kprof/hwspp.h"
#include "kprof/spp.h"

#define NONE UINT32_MAX

enum { WHITE = 0, GRAY, BLACK };

struct lnode {
	uint32_t val;  /* spp node: a block, or SPP_LOOP | graph */
	uint8_t cover; /* own block: enum hwspp_cover (HWSPP_HIT on a conditional: a breakpoint) */
	bool loop, bp; /* a loop node; a breakpoint decides (a hit comes when control is here) */
	uint32_t first, n;
};

struct trans {
	uint32_t to; /* local node, or OUT (== m) */
	bool back;
};

struct hwspp_graph {
	const struct cfg *g;
	uint32_t x, header, nb, m, entry_node;
	uint32_t *nodeof; /* per block: local node, NONE outside X's region */
	struct lnode *ln;
	struct trans *tr, *entries;
	uint32_t ntr, ntrcap, nentries;
	uint8_t *color, *cnt;
	bool cyc, entry_bp, top; /* top: a loop of the outline (left, entered again by a call) */
};

/* ---- structure ---- */

uint32_t hwspp_block_graph(const struct cfg *g, const struct spp *s, uint32_t b)
{
	const struct cfg_block *blk = cfg_block_get(g, b);
	uint32_t h;
	int r;

	if (!blk)
		return 0;
	h = (blk->flags & CFG_BLOCK_HEADER) ? b : blk->loop_parent;
	if (h == CFG_NONE)
		return 0;
	r = spp_graph_of(s, h);
	return r < 0 ? 0 : (uint32_t)r;
}

size_t hwspp_own_conds(const struct cfg *g, const struct spp *s, uint32_t x, uint32_t *out,
		       size_t cap)
{
	size_t n = 0;

	for (uint32_t b = 0; b < cfg_nblocks(g); b++) {
		if (cfg_block_get(g, b)->term != CFG_TERM_COND || hwspp_block_graph(g, s, b) != x)
			continue;
		if (out && n < cap)
			out[n] = b;
		n++;
	}
	return n;
}

/* The child of x whose region holds a block of graph gb (gb itself when its parent is x);
 * NONE if gb is not under x. */
static uint32_t child_of(const struct spp *s, uint32_t x, uint32_t gb)
{
	struct spp_graph_info gi;

	for (size_t guard = 0; gb != 0 && guard < spp_ngraphs(s); guard++) {
		if (spp_graph_get(s, gb, &gi) < 0)
			return NONE;
		if (gi.parent == x)
			return gb;
		gb = gi.parent;
	}
	return NONE;
}

static bool in_region(const struct hwspp_graph *x, uint32_t b)
{
	return b != CFG_EXIT && b < x->nb && x->nodeof[b] != NONE;
}

static int trans_add(struct hwspp_graph *x, uint32_t to, bool back)
{
	if (x->ntr == x->ntrcap) {
		uint32_t cap = x->ntrcap ? 2 * x->ntrcap : 64;
		struct trans *t = realloc(x->tr, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		x->tr = t;
		x->ntrcap = cap;
	}
	x->tr[x->ntr++] = (struct trans){to, back};
	return 0;
}

/* Where an edge from inside X's region to dst goes, as a transition. */
static struct trans edge_to(const struct hwspp_graph *x, uint32_t dst)
{
	if (!in_region(x, dst))
		return (struct trans){x->m, false};
	return (struct trans){x->nodeof[dst], x->header != CFG_NONE && dst == x->header};
}

/* The edge a jcc in block b takes, CFG_NONE if the CFG has none. */
static uint32_t jcc_edge(const struct cfg *g, uint32_t b, bool taken)
{
	const struct cfg_block *blk = cfg_block_get(g, b);

	for (uint32_t i = 0; i < blk->nedges; i++)
		if ((cfg_edge_get(g, blk->first_edge + i)->kind == CFG_EDGE_TAKEN) == taken)
			return blk->first_edge + i;
	return blk->nedges == 1 ? blk->first_edge : CFG_NONE;
}

static int add_unique(struct hwspp_graph *x, uint32_t first, struct trans t)
{
	for (uint32_t k = first; k < x->ntr; k++)
		if (x->tr[k].to == t.to && x->tr[k].back == t.back)
			return 0;
	return trans_add(x, t.to, t.back);
}

/* The transitions out of own block b (local node i). */
static int own_trans(struct hwspp_graph *x, uint32_t i, uint32_t b, uint8_t cover)
{
	const struct cfg_block *blk = cfg_block_get(x->g, b);
	struct lnode *ln = &x->ln[i];
	uint32_t e;
	int r = 0;

	ln->val = b;
	ln->cover = cover;
	ln->first = x->ntr;
	if (blk->term == CFG_TERM_COND) {
		ln->bp = cover == HWSPP_HIT;
		if (cover == HWSPP_FALL || cover == HWSPP_TAKEN) {
			e = jcc_edge(x->g, b, cover == HWSPP_TAKEN);
			if (e != CFG_NONE) {
				struct trans t = edge_to(x, cfg_edge_get(x->g, e)->dst);

				r = trans_add(x, t.to, t.back);
			}
		}
	} else {
		ln->bp = cover == HWSPP_ARRIVE;
		for (uint32_t k = 0; k < blk->nedges && r == 0; k++)
			r = add_unique(x, ln->first,
				       edge_to(x, cfg_edge_get(x->g, blk->first_edge + k)->dst));
	}
	ln->n = x->ntr - ln->first;
	return r;
}

/* The transitions out of the loop node of graph c (local node i): its loop's exits. */
static int loop_trans(struct hwspp_graph *x, const struct spp *s, uint32_t i, uint32_t c)
{
	struct spp_graph_info gi;
	struct lnode *ln = &x->ln[i];
	int r = 0;

	spp_graph_get(s, c, &gi);
	*ln = (struct lnode){.val = SPP_LOOP | c, .loop = true, .first = x->ntr};
	for (uint32_t b = 0; b < x->nb && r == 0; b++) {
		const struct cfg_block *blk = cfg_block_get(x->g, b);

		if (!hwbranch_in_loop(x->g, b, gi.header))
			continue;
		for (uint32_t k = 0; k < blk->nedges && r == 0; k++) {
			uint32_t d = cfg_edge_get(x->g, blk->first_edge + k)->dst;

			if (d == CFG_EXIT || !hwbranch_in_loop(x->g, d, gi.header))
				r = add_unique(x, ln->first, edge_to(x, d));
		}
	}
	ln->n = x->ntr - ln->first;
	return r;
}

/* Region, local nodes (own blocks, then loop nodes), transitions, entries. */
static int compile(struct hwspp_graph *x, const struct spp *s, const uint8_t *assume)
{
	uint32_t ng = (uint32_t)spp_ngraphs(s), nown = 0, *loopnode = calloc(ng, sizeof(uint32_t));
	int r = 0;

	if (!loopnode)
		return -ENOMEM;
	for (uint32_t b = 0; b < x->nb; b++) {
		uint32_t gb = hwspp_block_graph(x->g, s, b), c;

		x->nodeof[b] = NONE;
		if (gb == x->x) {
			x->nodeof[b] = x->m++;
			nown++;
		} else if ((c = child_of(s, x->x, gb)) != NONE && !loopnode[c]) {
			loopnode[c] = 1;
		}
	}
	for (uint32_t c = 1; c < ng; c++)
		if (loopnode[c])
			loopnode[c] = ++x->m; /* local node + 1 */
	x->ln = calloc(x->m + 1, sizeof(*x->ln));
	x->color = calloc(x->m + 1, 1);
	x->cnt = calloc(x->m + 1, 1);
	if (!x->ln || !x->color || !x->cnt) {
		free(loopnode);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < x->nb; b++) {
		uint32_t gb = hwspp_block_graph(x->g, s, b), c;

		if (gb != x->x && (c = child_of(s, x->x, gb)) != NONE)
			x->nodeof[b] = loopnode[c] - 1;
	}
	for (uint32_t b = 0; b < x->nb && r == 0; b++)
		if (hwspp_block_graph(x->g, s, b) == x->x)
			r = own_trans(x, x->nodeof[b], b, assume ? assume[b] : HWSPP_HIT);
	for (uint32_t c = 1; c < ng && r == 0; c++)
		if (loopnode[c])
			r = loop_trans(x, s, loopnode[c] - 1, c);
	free(loopnode);
	return r;
}

static int entries_make(struct hwspp_graph *x)
{
	uint32_t first = x->ntr, eb = cfg_entry_block(x->g);
	int r = 0;

	if (in_region(x, eb))
		r = trans_add(x, x->nodeof[eb], false);
	for (uint32_t b = 0; b < x->nb && r == 0; b++) {
		const struct cfg_block *blk = cfg_block_get(x->g, b);

		if (in_region(x, b))
			continue;
		for (uint32_t k = 0; k < blk->nedges && r == 0; k++) {
			uint32_t d = cfg_edge_get(x->g, blk->first_edge + k)->dst;

			if (in_region(x, d))
				r = add_unique(x, first, (struct trans){x->nodeof[d], false});
		}
	}
	x->entries = x->tr + first; /* fixed below: tr may move */
	x->nentries = x->ntr - first;
	x->entry_node = in_region(x, eb) ? x->nodeof[eb] : NONE;
	return r;
}

int hwspp_graph_new(const struct cfg *g, const struct spp *s, uint32_t xg, const uint8_t *assume,
		    struct hwspp_graph **ret)
{
	struct hwspp_graph *x;
	struct spp_graph_info gi;
	uint32_t first;
	int r;

	if (!g || !s || !ret || spp_graph_get(s, xg, &gi) < 0 || !cfg_nblocks(g))
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->g = g;
	x->x = xg;
	x->header = xg ? gi.header : CFG_NONE;
	x->top = xg && gi.parent == 0;
	x->nb = (uint32_t)cfg_nblocks(g);
	x->nodeof = calloc(x->nb, sizeof(uint32_t));
	r = x->nodeof ? compile(x, s, assume) : -ENOMEM;
	first = x->ntr;
	if (r == 0)
		r = entries_make(x);
	if (r < 0) {
		hwspp_graph_free(x);
		return r;
	}
	x->entries = x->tr + first;
	*ret = x;
	return 0;
}

void hwspp_graph_free(struct hwspp_graph *x)
{
	if (!x)
		return;
	free(x->nodeof);
	free(x->ln);
	free(x->tr);
	free(x->color);
	free(x->cnt);
	free(x);
}

/* ---- routes ---- */

static uint8_t count_from(struct hwspp_graph *x, const struct trans *t, uint32_t n, uint32_t to);

static uint8_t count_node(struct hwspp_graph *x, uint32_t i, uint32_t to)
{
	if (x->color[i] == BLACK)
		return x->cnt[i];
	if (x->color[i] == GRAY) {
		x->cyc = true; /* a cycle without a breakpoint: maybe endless routes */
		return 0;
	}
	x->color[i] = GRAY;
	x->cnt[i] = x->ln[i].bp ? 0 : count_from(x, x->tr + x->ln[i].first, x->ln[i].n, to);
	x->color[i] = BLACK;
	return x->cnt[i];
}

static uint8_t count_from(struct hwspp_graph *x, const struct trans *t, uint32_t n, uint32_t to)
{
	unsigned c = 0;

	for (uint32_t k = 0; k < n && c < 2; k++)
		c += t[k].to == to ? 1 : t[k].to == x->m ? 0 : count_node(x, t[k].to, to);
	return c > 2 ? 2 : (uint8_t)c;
}

/* Routes from transitions t[0..n) to local node `to` (or OUT): 0, 1, or 2 for several. */
static uint8_t routes(struct hwspp_graph *x, const struct trans *t, uint32_t n, uint32_t to)
{
	uint8_t c;

	memset(x->color, WHITE, x->m + 1);
	x->cyc = false;
	c = count_from(x, t, n, to);
	return x->cyc && c ? 2 : c;
}

/* ---- the walk ---- */

static void push(struct hwspp_walk *w, uint32_t v)
{
	if (w->n + 1 >= HWSPP_PATH_MAX) {
		if (!w->lost)
			w->given_up++;
		w->lost = true;
		return;
	}
	w->nodes[w->n++] = v;
}

static void close_path(struct hwspp_walk *w, uint32_t end, hwspp_emit_fn emit, void *ud)
{
	push(w, end);
	if (!w->lost) {
		emit(ud, w->nodes, w->n);
		w->paths++;
	}
	w->n = 0;
	w->lost = false;
	w->state = HWSPP_IDLE;
}

void hwspp_walk_reset(struct hwspp_walk *w)
{
	if (w->state != HWSPP_IDLE && !w->lost)
		w->given_up++;
	w->state = HWSPP_IDLE;
	w->lost = true; /* where control is, is unknown */
	w->n = 0;
}

/* Take transition t: 1 if the walk stopped (a node with a breakpoint, a loop node, or out). */
static int step(struct hwspp_graph *x, struct hwspp_walk *w, struct trans t, hwspp_emit_fn emit,
		void *ud)
{
	const struct lnode *ln;

	if (t.to == x->m) {
		close_path(w, SPP_M_EXIT, emit, ud);
		return 1;
	}
	if (t.back) {
		close_path(w, SPP_M_BACK, emit, ud);
		push(w, SPP_M_BACK);
	}
	ln = &x->ln[t.to];
	push(w, ln->val);
	if (ln->loop) {
		w->state = HWSPP_WAIT;
		w->at = t.to;
		return 1;
	}
	w->state = HWSPP_EXPECT;
	w->at = t.to;
	return ln->bp;
}

/* From transition t on through nodes with one way out, until a breakpoint, a loop node or out. */
static void walk_from(struct hwspp_graph *x, struct hwspp_walk *w, struct trans t,
		      hwspp_emit_fn emit, void *ud)
{
	for (uint32_t guard = 0; guard <= 2 * x->m + 2; guard++) {
		const struct lnode *ln;

		if (step(x, w, t, emit, ud))
			return;
		ln = &x->ln[t.to];
		if (ln->n != 1)
			break; /* never ran while counted, or a branch nothing decides */
		t = x->tr[ln->first];
	}
	hwspp_walk_reset(w);
}

/* Follow the unique route from t[0..n) to `to` (routes() said 1). */
static void follow(struct hwspp_graph *x, struct hwspp_walk *w, const struct trans *t, uint32_t n,
		   uint32_t to, hwspp_emit_fn emit, void *ud)
{
	for (uint32_t guard = 0; guard <= x->m + 1; guard++) {
		uint32_t k, j;

		routes(x, t, n, to); /* memo for this start */
		for (k = 0; k < n; k++)
			if (t[k].to == to || (t[k].to != x->m && count_node(x, t[k].to, to) == 1))
				break;
		if (k == n)
			break;
		j = t[k].to;
		step(x, w, t[k], emit, ud);
		if (j == to)
			return;
		t = x->tr + x->ln[j].first;
		n = x->ln[j].n;
	}
	hwspp_walk_reset(w);
}

static void open_entry(struct hwspp_walk *w)
{
	w->n = 0;
	w->lost = false;
	push(w, SPP_M_ENTRY);
}

/* A hit at own node i whose beginning is not known: follow on, drop the path at its end. */
static void resume_lost(struct hwspp_graph *x, struct hwspp_walk *w, uint32_t i)
{
	if (!w->lost)
		w->given_up++;
	w->lost = true;
	w->n = 0;
	push(w, x->ln[i].val);
	w->state = HWSPP_EXPECT;
	w->at = i;
}

/* Waiting in loop node c, a hit at node i: through the loop's exits by one route (for a loop
 * graph, possibly out of the region and in again by its entry). */
static void from_loop(struct hwspp_graph *x, struct hwspp_walk *w, uint32_t i, hwspp_emit_fn emit,
		      void *ud)
{
	const struct lnode *c = &x->ln[w->at];
	uint8_t in = routes(x, x->tr + c->first, c->n, i), out = 0, again = 0;

	if (x->header != CFG_NONE && !(x->entry_bp && x->top) && in < 2) {
		out = routes(x, x->tr + c->first, c->n, x->m);
		again = out ? routes(x, x->entries, x->nentries, i) : 0;
	}
	if (in + out * again != 1) {
		resume_lost(x, w, i);
		return;
	}
	if (in) {
		follow(x, w, x->tr + c->first, c->n, i, emit, ud);
		return;
	}
	follow(x, w, x->tr + c->first, c->n, x->m, emit, ud);
	open_entry(w);
	follow(x, w, x->entries, x->nentries, i, emit, ud);
}

int hwspp_hit(struct hwspp_graph *x, struct hwspp_walk *w, uint32_t b, bool taken,
	      hwspp_emit_fn emit, void *ud)
{
	const struct cfg_block *blk = cfg_block_get(x ? x->g : NULL, b);
	uint32_t i, e;

	if (!x || !w || !emit || !blk || x->nodeof[b] == NONE || !x->ln[x->nodeof[b]].bp ||
	    x->ln[x->nodeof[b]].loop)
		return -EINVAL;
	i = x->nodeof[b];
	if (w->state == HWSPP_WAIT)
		from_loop(x, w, i, emit, ud);
	else if (w->state == HWSPP_EXPECT && w->at != i)
		resume_lost(x, w, i); /* a hit missed, or code reached some other way */
	else if (w->state == HWSPP_IDLE && !w->lost && x->header != CFG_NONE &&
		 routes(x, x->entries, x->nentries, i) == 1) {
		open_entry(w);
		follow(x, w, x->entries, x->nentries, i, emit, ud);
	} else if (w->state == HWSPP_IDLE)
		resume_lost(x, w, i);
	if (w->state != HWSPP_EXPECT || w->at != i)
		return 0; /* given up on the way */
	if (blk->term == CFG_TERM_COND) {
		e = jcc_edge(x->g, b, taken);
		if (e == CFG_NONE) {
			hwspp_walk_reset(w);
			return 0;
		}
		walk_from(x, w, edge_to(x, cfg_edge_get(x->g, e)->dst), emit, ud);
	} else if (x->ln[i].n == 1) {
		walk_from(x, w, x->tr[x->ln[i].first], emit, ud);
	} else {
		hwspp_walk_reset(w);
	}
	return 0;
}

void hwspp_walk_end(struct hwspp_graph *x, struct hwspp_walk *w, hwspp_emit_fn emit, void *ud)
{
	if (w->state == HWSPP_WAIT) {
		const struct lnode *c = &x->ln[w->at];

		if (routes(x, x->tr + c->first, c->n, x->m) == 1)
			follow(x, w, x->tr + c->first, c->n, x->m, emit, ud);
		else
			hwspp_walk_reset(w);
	} else if (w->state == HWSPP_EXPECT) {
		hwspp_walk_reset(w); /* a return missed, or a recursive call */
	}
	w->state = HWSPP_IDLE;
	w->lost = false;
	w->n = 0;
}

void hwspp_graph_entry_bp(struct hwspp_graph *x)
{
	x->entry_bp = true;
}

int hwspp_entry(struct hwspp_graph *x, struct hwspp_walk *w, hwspp_emit_fn emit, void *ud)
{
	if (!x || !w || !emit || (x->header == CFG_NONE ? x->entry_node == NONE : !x->entry_bp))
		return -EINVAL;
	hwspp_walk_end(x, w, emit, ud);
	if (x->header != CFG_NONE)
		return 0; /* a loop graph: outside its region until a hit comes from its entry */
	open_entry(w);
	walk_from(x, w, (struct trans){x->entry_node, false}, emit, ud);
	return 0;
}

int hwspp_assume(const uint32_t *blocks, size_t n, const uint64_t *taken, const uint64_t *not_taken,
		 size_t slots, uint8_t *assume, uint32_t *keep)
{
	size_t k = 0;

	if (!blocks || !taken || !not_taken || !assume || !keep)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (taken[i] && not_taken[i]) {
			if (k == slots)
				return -E2BIG;
			keep[k++] = blocks[i];
			assume[blocks[i]] = HWSPP_HIT;
		} else {
			assume[blocks[i]] = taken[i]	   ? HWSPP_TAKEN
					    : not_taken[i] ? HWSPP_FALL
							   : HWSPP_NEVER;
		}
	}
	return (int)k;
}
