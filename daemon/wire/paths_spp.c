// SPDX-License-Identifier: GPL-2.0-only
/* paths_spp.c: event counts and structural path profiles of a path trace, as the events,
 * loop_events and spp fields of a kprof.PathsReply (the wire mapping of events.h and spp.h).
 *
 * Events: every Ball-Larus path of the k-IPF's first level (the complete path profile, not the
 * top cut) adds count x its events to the function and to each loop it passes through. An edge
 * profile (too many paths to number) gives each block's executions instead: the traversals of
 * its out-edges plus its exits, each execution leaving the block exactly once. Anonymous code
 * (hardware breakpoints, hwpaths.c): only the loops followed, each from the block runs of its
 * turns' iterations, no function total, and a list of what the counts leave out. SPP:
 * the trace's budgeted structural profile, graph by graph, its local paths by global count, each
 * with its whole-function view, and the overlap percentages against the complete profiles of the
 * same trace (structural and flat).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cfg.h"
#include "kprof/events.h"
#include "kprof/ksf.h"
#include "kprof/spp.h"
#include "kprof/hwbranch.h"
#include "os/clock.h"
#include "paths/paths.h"
#include "paths/hwpaths.h"
#include "paths/hwstruct.h"
#include "wire/paths_reply.h"

static const char *ev_names[EV_NR];

struct evctx {
	const struct path_trace *tr;
	uint32_t *hdr;
	size_t nloops;
	uint64_t *func, *loops;
	int err;
};

static int ev_cb(uint32_t routine, const uint64_t *path, size_t n, uint64_t count, void *u)
{
	struct evctx *c = u;
	int r;

	(void)routine;
	if (n != 1)
		return 0;
	r = events_add_path(c->tr->cfg, c->tr->blockev, path[0], count, c->func, c->hdr, c->nloops,
			    c->loops);
	return r == -ERANGE ? 0 : r; /* an id the numbering does not have was never pushed */
}

/* From an edge profile: count(e) = sum over blocks of executions x the block's events. */
static int events_from_edges(const struct path_trace *tr, struct evctx *c)
{
	const struct cfg *g = tr->cfg;
	uint32_t nb = cfg_nblocks(g);
	uint64_t *runs = calloc(nb + 1, sizeof(uint64_t));

	if (!runs)
		return -ENOMEM;
	for (uint32_t i = 0; i < cfg_nedges(g); i++) {
		const struct cfg_edge *e = cfg_edge_get(g, i);

		if (e->dst != CFG_EXIT)
			runs[e->src] += tr->edge_counts[i];
	}
	for (uint32_t b = 0; b < nb; b++) {
		const uint32_t *ev = tr->blockev + (size_t)b * EV_NR;

		runs[b] += tr->exit_counts[b];
		for (unsigned k = 0; k < EV_NR; k++)
			c->func[k] += runs[b] * ev[k];
		for (size_t l = 0; l < c->nloops; l++) {
			if (!events_in_loop(g, b, c->hdr[l]))
				continue;
			for (unsigned k = 0; k < EV_NR; k++)
				c->loops[l * EV_NR + k] += runs[b] * ev[k];
		}
	}
	free(runs);
	return 0;
}

#define EVNC_MAX 32 /* lines of what the events of anonymous code leave out */
#define EVNC_LEN 240

static void evnc_add(struct paths_msg *pm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void evnc_add(struct paths_msg *pm, const char *fmt, ...)
{
	Kprof__PathsReply *r = &pm->r;
	va_list ap;

	if (r->n_events_not_covered == EVNC_MAX)
		return;
	pm->evnc[r->n_events_not_covered] = pm->evncbuf + r->n_events_not_covered * EVNC_LEN;
	va_start(ap, fmt);
	vsnprintf(pm->evnc[r->n_events_not_covered], EVNC_LEN, fmt, ap);
	va_end(ap);
	r->n_events_not_covered++;
}

/* The loop headed by h followed in some turn (its index in hdr[0..n)), or -1. */
static int followed(const uint32_t *hdr, size_t n, uint32_t h)
{
	for (size_t i = 0; i < n; i++)
		if (hdr[i] == h)
			return (int)i;
	return -1;
}

/* What the loops' counts leave out: blocks outside them (so no function total), loops not
 * followed, assumptions, activations given up. */
static void hw_events_gaps(const struct path_trace *tr, const uint32_t *hdr, size_t nl,
			   struct paths_msg *pm)
{
	const struct cfg *g = tr->cfg;
	uint32_t nb = cfg_nblocks(g), out = 0;
	char list[160] = "";
	size_t len = 0;

	for (uint32_t b = 0; b < nb; b++) {
		bool in = false;

		for (size_t l = 0; l < nl && !in; l++)
			in = hwbranch_in_loop(g, b, hdr[l]);
		if (in)
			continue;
		if (len < sizeof(list) - 16)
			len += (size_t)snprintf(list + len, sizeof(list) - len, " B%u", b);
		else if (len < sizeof(list) - 4)
			len += (size_t)snprintf(list + len, sizeof(list) - len, " ...");
		out++;
	}
	if (out)
		evnc_add(pm,
			 "no function totals: %u of %u blocks are outside every loop followed "
			 "(%s): breakpoints on loop branches do not see them run",
			 out, nb, list + 1);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t p = b;
		int in = -1;

		if (!(cfg_block_get(g, b)->flags & CFG_BLOCK_HEADER) || followed(hdr, nl, b) >= 0)
			continue;
		while (in < 0 && (p = cfg_block_get(g, p)->loop_parent) != CFG_NONE)
			in = followed(hdr, nl, p);
		if (in >= 0)
			evnc_add(
			    pm,
			    "loop at B%u: not followed on its own; its blocks count in the loop "
			    "at B%u",
			    b, hdr[in]);
		else
			evnc_add(pm,
				 "loop at B%u (0x%llx): its iterations were not followed: no "
				 "event counts",
				 b, (unsigned long long)cfg_block_get(g, b)->start);
	}
	for (size_t q = 0; q < tr->hw->nturns; q++)
		if (tr->hw->turns[q].assume && tr->hw->turns[q].loop != CFG_NONE)
			evnc_add(pm,
				 "loop at B%u: followed with branches assumed one way: its counts "
				 "are exact if those kept their way",
				 tr->hw->turns[q].loop);
	if (tr->hw->aborted)
		evnc_add(pm,
			 "%llu iterations given up (a hit missed or an assumption broken): "
			 "their blocks are not counted",
			 (unsigned long long)tr->hw->aborted);
}

/* Anonymous code: per loop followed (in the order of its first turn), its blocks' runs summed
 * over its turns, and events = sum of runs x events (events_from_runs). */
static int hw_events_fill(const struct path_trace *tr, struct paths_msg *pm, uint32_t *hdr)
{
	const struct hwpaths *h = tr->hw;
	const struct cfg *g = tr->cfg;
	Kprof__PathsReply *r = &pm->r;
	uint32_t nb = cfg_nblocks(g);
	size_t nl = 0, off = 0;

	for (size_t q = 0; q < h->nturns; q++)
		if (h->turns[q].loop != CFG_NONE && followed(hdr, nl, h->turns[q].loop) < 0)
			hdr[nl++] = h->turns[q].loop;
	pm->evloops = calloc(nl * EV_NR + 1, sizeof(uint64_t));
	pm->lv = calloc(nl + 1, sizeof(*pm->lv));
	pm->lp = calloc(nl + 1, sizeof(*pm->lp));
	pm->evblocks = calloc(nl * nb + 1, sizeof(uint32_t));
	pm->evruns = calloc(nl * nb + 1, sizeof(uint64_t));
	pm->evnc = calloc(EVNC_MAX, sizeof(*pm->evnc));
	pm->evncbuf = calloc(EVNC_MAX, EVNC_LEN);
	if (!pm->evloops || !pm->lv || !pm->lp || !pm->evblocks || !pm->evruns || !pm->evnc ||
	    !pm->evncbuf)
		return -ENOMEM;
	for (size_t l = 0; l < nl; l++) {
		Kprof__LoopEvents *x = &pm->lv[l];

		kprof__loop_events__init(x);
		x->header = hdr[l];
		x->depth = cfg_block_get(g, hdr[l])->loop_depth;
		x->n_counts = EV_NR;
		x->counts = pm->evloops + l * EV_NR;
		x->blocks = pm->evblocks + off;
		x->block_runs = pm->evruns + off;
		for (uint32_t b = 0; b < nb; b++)
			if (hwbranch_in_loop(g, b, hdr[l]))
				x->blocks[x->n_blocks++] = b;
		x->n_block_runs = x->n_blocks;
		off += x->n_blocks;
		for (size_t q = 0; q < h->nturns; q++) {
			if (h->turns[q].loop != hdr[l])
				continue;
			x->activations += h->group_acts[q];
			if (!h->runs[q])
				continue;
			events_from_runs(tr->blockev, h->runs[q], nb, x->counts);
			for (size_t i = 0; i < x->n_blocks; i++)
				x->block_runs[i] += h->runs[q][x->blocks[i]];
		}
		pm->lp[l] = x;
	}
	r->n_loop_events = nl;
	r->loop_events = pm->lp;
	r->events_not_covered = pm->evnc;
	hw_events_gaps(tr, hdr, nl, pm);
	return 0;
}

static int runs_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t local, double global,
		   void *u)
{
	double *runs = u;

	(void)g;
	(void)local;
	for (size_t i = 1; i + 1 < n; i++)
		if (!(nodes[i] & SPP_LOOP))
			runs[nodes[i]] += global;
	return 0;
}

/* Anonymous code with a structural profile: each block's runs are its own graph's global
 * counts of the local paths through it, so the function gets totals (an estimate: graphs
 * profiled at different times, scaled by their coefficients), per outline path counted. */
/* Each loop's events from the same block runs: the sum over its blocks (inner loops included)
 * of runs x events, with the blocks and their runs, as for the loops followed without
 * --structural. */
static int spp_loop_events(const struct path_trace *tr, struct paths_msg *pm, const uint64_t *runs)
{
	const struct cfg *g = tr->cfg;
	uint32_t nb = cfg_nblocks(g), ng = (uint32_t)spp_ngraphs(tr->spp), off = 0;
	uint64_t *masked = calloc(nb + 1, sizeof(uint64_t));

	pm->evloops = calloc(ng * EV_NR + 1, sizeof(uint64_t));
	pm->lv = calloc(ng + 1, sizeof(*pm->lv));
	pm->lp = calloc(ng + 1, sizeof(*pm->lp));
	pm->evblocks = calloc((size_t)ng * nb + 1, sizeof(uint32_t));
	pm->evruns = calloc((size_t)ng * nb + 1, sizeof(uint64_t));
	if (!masked || !pm->evloops || !pm->lv || !pm->lp || !pm->evblocks || !pm->evruns) {
		free(masked);
		return -ENOMEM;
	}
	for (uint32_t k = 1; k < ng; k++) {
		Kprof__LoopEvents *x = &pm->lv[k - 1];
		struct spp_graph_info gi;

		spp_graph_get(tr->spp, k, &gi);
		kprof__loop_events__init(x);
		x->header = gi.header;
		x->depth = cfg_block_get(g, gi.header)->loop_depth;
		x->n_counts = EV_NR;
		x->counts = pm->evloops + (k - 1) * EV_NR;
		x->blocks = pm->evblocks + off;
		x->block_runs = pm->evruns + off;
		x->activations = (uint64_t)(gi.coefficient * (double)gi.entries + 0.5);
		memset(masked, 0, (nb + 1) * sizeof(uint64_t));
		for (uint32_t b = 0; b < nb; b++) {
			if (!hwbranch_in_loop(g, b, gi.header))
				continue;
			masked[b] = runs[b];
			x->block_runs[x->n_blocks] = runs[b];
			x->blocks[x->n_blocks++] = b;
		}
		x->n_block_runs = x->n_blocks;
		off += x->n_blocks;
		events_from_runs(tr->blockev, masked, nb, x->counts);
		pm->lp[k - 1] = x;
	}
	free(masked);
	pm->r.n_loop_events = ng ? ng - 1 : 0;
	pm->r.loop_events = pm->lp;
	return 0;
}

static int spp_events_fill(const struct path_trace *tr, struct paths_msg *pm)
{
	Kprof__PathsReply *r = &pm->r;
	uint32_t nb = cfg_nblocks(tr->cfg);
	double *runs = calloc(nb + 1, sizeof(double));
	uint64_t *iruns = calloc(nb + 1, sizeof(uint64_t));

	pm->evfunc = calloc(EV_NR, sizeof(uint64_t));
	pm->evnc = calloc(EVNC_MAX, sizeof(*pm->evnc));
	pm->evncbuf = calloc(EVNC_MAX, EVNC_LEN);
	if (!runs || !iruns || !pm->evfunc || !pm->evnc || !pm->evncbuf) {
		free(runs);
		free(iruns);
		return -ENOMEM;
	}
	spp_foreach_path(tr->spp, runs_cb, runs);
	for (uint32_t b = 0; b < nb; b++)
		iruns[b] = (uint64_t)(runs[b] + 0.5);
	events_from_runs(tr->blockev, iruns, nb, pm->evfunc);
	free(runs);
	if (spp_loop_events(tr, pm, iruns) < 0) {
		free(iruns);
		return -ENOMEM;
	}
	free(iruns);
	for (uint32_t b = 0; b < nb; b++) {
		pm->bv[b].n_events = EV_NR;
		pm->bv[b].events = tr->blockev + (size_t)b * EV_NR;
	}
	r->n_event_names = EV_NR;
	r->event_names = (char **)ev_names;
	r->n_events = EV_NR;
	r->events = pm->evfunc;
	r->events_from_spp = true;
	r->events_not_covered = pm->evnc;
	evnc_add(pm, "function totals estimated from the structural profile: a block's runs are "
		     "its graph's global counts of the local paths through it (graphs profiled at "
		     "different times, scaled by their coefficients)");
	for (uint32_t g = 0; g < spp_ngraphs(tr->spp) && g < tr->hw->st->ngraphs; g++)
		if (tr->hw->st->gr[g].note[0])
			evnc_add(pm, "graph %u: %s: its blocks are not counted", g,
				 tr->hw->st->gr[g].note);
	return 0;
}

/* Each block's events point into the trace's table. */
static void block_events(const struct path_trace *tr, struct paths_msg *pm)
{
	uint32_t nb = cfg_nblocks(tr->cfg);

	for (uint32_t b = 0; b < nb; b++) {
		pm->bv[b].n_events = EV_NR;
		pm->bv[b].events = tr->blockev + (size_t)b * EV_NR;
	}
}

/* One LoopEvents per loop header of c, its counts in pm->evloops. */
static void loop_events(const struct cfg *g, const struct evctx *c, struct paths_msg *pm)
{
	for (size_t l = 0; l < c->nloops; l++) {
		kprof__loop_events__init(&pm->lv[l]);
		pm->lv[l].header = c->hdr[l];
		pm->lv[l].depth = cfg_block_get(g, c->hdr[l])->loop_depth;
		pm->lv[l].n_counts = EV_NR;
		pm->lv[l].counts = pm->evloops + l * EV_NR;
		pm->lp[l] = &pm->lv[l];
	}
}

/* Without hardware breakpoints: the function's and each loop's events from the edge counts
 * or the k-SF's paths (c->hdr has room for every block). */
static int cfg_events_fill(const struct path_trace *tr, const struct ksf_ipf *ipf,
			   struct paths_msg *pm, struct evctx *c)
{
	const struct cfg *g = tr->cfg;
	Kprof__PathsReply *r = &pm->r;
	uint32_t nb = cfg_nblocks(g);
	int err;

	for (uint32_t b = 0; b < nb; b++)
		if (cfg_block_get(g, b)->flags & CFG_BLOCK_HEADER)
			c->hdr[c->nloops++] = b;
	pm->evfunc = calloc(EV_NR, sizeof(uint64_t));
	pm->evloops = calloc(c->nloops * EV_NR + 1, sizeof(uint64_t));
	pm->lv = calloc(c->nloops + 1, sizeof(*pm->lv));
	pm->lp = calloc(c->nloops + 1, sizeof(*pm->lp));
	if (!pm->evfunc || !pm->evloops || !pm->lv || !pm->lp)
		return -ENOMEM;
	c->func = pm->evfunc;
	c->loops = pm->evloops;
	err = tr->edges ? events_from_edges(tr, c) : ksf_ipf_foreach(ipf, KSF_ORDER_TREE, ev_cb, c);
	if (err < 0)
		return err;
	block_events(tr, pm);
	loop_events(g, c, pm);
	r->n_event_names = EV_NR;
	r->event_names = (char **)ev_names;
	r->n_events = EV_NR;
	r->events = pm->evfunc;
	r->n_loop_events = c->nloops;
	r->loop_events = pm->lp;
	return 0;
}

int paths_events_fill(const struct path_trace *tr, const struct ksf_ipf *ipf, struct paths_msg *pm)
{
	Kprof__PathsReply *r = &pm->r;
	struct evctx c = {.tr = tr};
	uint32_t nb = cfg_nblocks(tr->cfg);
	int err;

	if (!tr->blockev)
		return 0;
	for (unsigned i = 0; i < EV_NR; i++)
		ev_names[i] = events_name(i);
	c.hdr = calloc(nb + 1, sizeof(uint32_t));
	if (!c.hdr)
		return -ENOMEM;
	if (tr->hw && tr->hw->st) {
		err = spp_events_fill(tr, pm);
	} else if (tr->hw) {
		err = hw_events_fill(tr, pm, c.hdr);
		if (err == 0) {
			block_events(tr, pm);
			r->n_event_names = EV_NR;
			r->event_names = (char **)ev_names;
		}
	} else {
		err = cfg_events_fill(tr, ipf, pm, &c);
	}
	free(c.hdr);
	return err;
}

/* A graph's state as the reply names it: once the trace ended, a graph still waiting for its
 * share is "unfinished", and one whose outer graph never had its share "not started" (neither
 * "active" nor "idle": nothing goes on). */
static const char *state_name(enum spp_state s, bool tracing)
{
	static const char *const names[] = {[SPP_IDLE] = "idle",
					    [SPP_ACTIVE] = "active",
					    [SPP_FINISHED] = "finished",
					    [SPP_TIMEOUT] = "timeout",
					    [SPP_COLD] = "cold"};

	if (!tracing && (s == SPP_ACTIVE || s == SPP_IDLE))
		return s == SPP_ACTIVE ? "unfinished" : "not started";
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

struct sppctx {
	const struct spp *s;
	struct paths_msg *pm;
	size_t n, cap, nnodes, nodecap, maxlen;
	uint32_t *scratch;
	int err;
};

static int32_t node_pb(uint32_t x)
{
	return (x & SPP_LOOP) ? -(int32_t)(x & ~SPP_LOOP) : (int32_t)x;
}

static int spp_cb(uint32_t g, const uint32_t *nodes, size_t n, uint64_t local, double global,
		  void *u)
{
	struct sppctx *c = u;
	Kprof__SppPath *p;
	int m;

	if (c->n >= c->cap || !local)
		return 0;
	m = spp_expand(c->s, g, nodes, n, c->scratch, c->maxlen);
	if (m < 0)
		m = 0;
	if (c->nnodes + n + (size_t)m > c->nodecap)
		return 0;
	p = &c->pm->spv[c->n++];
	kprof__spp_path__init(p);
	p->graph = g;
	p->from_back = nodes[0] == SPP_M_BACK;
	p->to_back = nodes[n - 1] == SPP_M_BACK;
	p->local = local;
	p->global = global;
	p->nodes = c->pm->nodes + c->nnodes;
	for (size_t i = 1; i + 1 < n; i++)
		p->nodes[p->n_nodes++] = node_pb(nodes[i]);
	c->nnodes += p->n_nodes;
	p->whole = c->pm->nodes + c->nnodes;
	for (int i = 0; i < m; i++)
		p->whole[p->n_whole++] = node_pb(c->scratch[i]);
	c->nnodes += p->n_whole;
	return 0;
}

static int spp_path_cmp(const void *a, const void *b)
{
	const Kprof__SppPath *x = *(Kprof__SppPath *const *)a, *y = *(Kprof__SppPath *const *)b;

	if (x->global != y->global)
		return x->global < y->global ? 1 : -1;
	return x->graph < y->graph ? -1 : x->graph > y->graph;
}

static int spp_paths_fill(const struct path_trace *tr, uint32_t top, struct paths_msg *pm)
{
	struct spp_stats st;
	struct sppctx c = {.s = tr->spp, .pm = pm};
	size_t nb = cfg_nblocks(tr->cfg);

	spp_get_stats(tr->spp, &st);
	c.cap = 0;
	for (uint32_t g = 0; g < spp_ngraphs(tr->spp); g++) {
		struct spp_graph_info gi;

		spp_graph_get(tr->spp, g, &gi);
		c.cap += gi.npaths;
	}
	pm->spp.paths_total = c.cap;
	c.maxlen = 4 * nb + 8;
	c.nodecap = c.cap * (nb + 2 + c.maxlen) + 1;
	pm->spv = calloc(c.cap + 1, sizeof(*pm->spv));
	pm->spp_p = calloc(c.cap + 1, sizeof(*pm->spp_p));
	pm->nodes = calloc(c.nodecap, sizeof(int32_t));
	c.scratch = calloc(c.maxlen, sizeof(uint32_t));
	if (!pm->spv || !pm->spp_p || !pm->nodes || !c.scratch) {
		free(c.scratch);
		return -ENOMEM;
	}
	spp_foreach_path(tr->spp, spp_cb, &c);
	free(c.scratch);
	for (size_t i = 0; i < c.n; i++)
		pm->spp_p[i] = &pm->spv[i];
	qsort(pm->spp_p, c.n, sizeof(*pm->spp_p), spp_path_cmp);
	pm->spp.n_paths = top && c.n > top ? top : c.n;
	pm->spp.paths = pm->spp_p;
	return 0;
}

/* Anonymous code: each graph's turn of the debug registers, and why a graph was not profiled;
 * no complete profile (the overlaps stay 0). */
static void spp_hw_fill(const struct hwstruct *st, struct paths_msg *pm)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	pm->spp.hw = true;
	pm->spp.hw_given_up = st->given_up;
	pm->spp.overlap = pm->spp.flat_overlap = 0;
	for (uint32_t g = 0; g < st->ngraphs && g < pm->spp.n_graphs; g++) {
		const struct hwstruct_graph *x = &st->gr[g];
		Kprof__SppGraph *y = &pm->gv[g];
		uint64_t ns = x->ns + (st->set && st->cur == (int)g ? now - st->turn_since : 0);

		y->hw_ms = (double)ns / 1e6;
		y->hw_breakpoints = x->nslots;
		y->hw_assumed = x->nassumed;
		y->hw_given_up = x->given_up;
		y->hw_note = (char *)x->note;
		/* Never given the registers (its plan did not fit): not a timeout. */
		if (!x->turns && !y->counted && x->note[0])
			y->state = "unprofiled";
	}
}

int paths_spp_fill(const struct path_trace *tr, uint32_t top, struct paths_msg *pm)
{
	struct spp_stats st, full;
	size_t ng;

	if (!tr->spp)
		return 0;
	kprof__spp_reply__init(&pm->spp);
	spp_get_stats(tr->spp, &st);
	spp_get_stats(tr->spp_full, &full);
	ng = spp_ngraphs(tr->spp);
	pm->gv = calloc(ng, sizeof(*pm->gv));
	pm->gp = calloc(ng, sizeof(*pm->gp));
	if (!pm->gv || !pm->gp)
		return -ENOMEM;
	for (uint32_t g = 0; g < ng; g++) {
		Kprof__SppGraph *x = &pm->gv[g];
		struct spp_graph_info gi;

		spp_graph_get(tr->spp, g, &gi);
		kprof__spp_graph__init(x);
		x->header = g ? (int32_t)gi.header : -1;
		x->parent = g ? (int32_t)gi.parent : -1;
		x->level = gi.level;
		x->state = (char *)state_name(gi.state, tr->tracing);
		x->share = gi.share;
		x->counted = gi.counted;
		x->entries = gi.entries;
		x->loop_count = gi.loop_count;
		x->coefficient = gi.coefficient;
		x->paths = gi.npaths;
		pm->gp[g] = x;
	}
	pm->spp.budget = tr->spp_budget;
	pm->spp.timeout = tr->spp_timeout;
	pm->spp.counted = st.counted;
	pm->spp.complete = st.complete;
	pm->spp.n_graphs = ng;
	pm->spp.graphs = pm->gp;
	pm->spp.overlap = spp_overlap(tr->spp, tr->spp_full);
	pm->spp.flat_overlap = spp_flat_overlap(tr->flat, tr->flat_full);
	pm->spp.full_counted = full.counted;
	pm->spp.dropped = st.dropped + full.dropped + tr->spp_untracked;
	if (tr->hw && tr->hw->st)
		spp_hw_fill(tr->hw->st, pm);
	pm->r.spp = &pm->spp;
	return spp_paths_fill(tr, top, pm);
}

void paths_extra_release(struct paths_msg *pm)
{
	free(pm->evfunc);
	free(pm->evloops);
	free(pm->evblocks);
	free(pm->evruns);
	free(pm->evnc);
	free(pm->evncbuf);
	free(pm->lv);
	free(pm->lp);
	free(pm->gv);
	free(pm->gp);
	free(pm->spv);
	free(pm->spp_p);
	free(pm->nodes);
}
