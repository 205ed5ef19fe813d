// SPDX-License-Identifier: GPL-2.0-only
/* paths_spp.c: event counts and structural path profiles of a path trace, as the events,
 * loop_events and spp fields of a kprof.PathsReply (the wire mapping of events.h and spp.h).
 *
 * Events: every Ball-Larus path of the k-IPF's first level (the complete path profile, not the
 * top cut) adds count x its events to the function and to each loop it passes through. An edge
 * profile (too many paths to number) gives each block's executions instead: the traversals of
 * its out-edges plus its exits, each execution leaving the block exactly once. SPP:
 * the trace's budgeted structural profile, graph by graph, its local paths by global count, each
 * with its whole-function view, and the overlap percentages against the complete profiles of the
 * same trace (structural and flat).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kprof/cfg.h"
#include "kprof/events.h"
#include "kprof/ksf.h"
#include "kprof/spp.h"
#include "paths.h"
#include "paths_reply.h"

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

int paths_events_fill(const struct path_trace *tr, const struct ksf_ipf *ipf, struct paths_msg *pm)
{
	const struct cfg *g = tr->cfg;
	Kprof__PathsReply *r = &pm->r;
	struct evctx c = {.tr = tr};
	uint32_t nb = cfg_nblocks(g);
	int err;

	if (!tr->blockev)
		return 0;
	for (unsigned i = 0; i < EV_NR; i++)
		ev_names[i] = events_name(i);
	c.hdr = calloc(nb + 1, sizeof(uint32_t));
	if (!c.hdr)
		return -ENOMEM;
	for (uint32_t b = 0; b < nb; b++)
		if (cfg_block_get(g, b)->flags & CFG_BLOCK_HEADER)
			c.hdr[c.nloops++] = b;
	pm->evfunc = calloc(EV_NR, sizeof(uint64_t));
	pm->evloops = calloc(c.nloops * EV_NR + 1, sizeof(uint64_t));
	pm->lv = calloc(c.nloops + 1, sizeof(*pm->lv));
	pm->lp = calloc(c.nloops + 1, sizeof(*pm->lp));
	err = -ENOMEM;
	if (!pm->evfunc || !pm->evloops || !pm->lv || !pm->lp)
		goto out;
	c.func = pm->evfunc;
	c.loops = pm->evloops;
	err =
	    tr->edges ? events_from_edges(tr, &c) : ksf_ipf_foreach(ipf, KSF_ORDER_TREE, ev_cb, &c);
	if (err < 0)
		goto out;
	for (uint32_t b = 0; b < nb; b++) {
		pm->bv[b].n_events = EV_NR;
		pm->bv[b].events = tr->blockev + (size_t)b * EV_NR;
	}
	for (size_t l = 0; l < c.nloops; l++) {
		kprof__loop_events__init(&pm->lv[l]);
		pm->lv[l].header = c.hdr[l];
		pm->lv[l].depth = cfg_block_get(g, c.hdr[l])->loop_depth;
		pm->lv[l].n_counts = EV_NR;
		pm->lv[l].counts = pm->evloops + l * EV_NR;
		pm->lp[l] = &pm->lv[l];
	}
	r->n_event_names = EV_NR;
	r->event_names = (char **)ev_names;
	r->n_events = EV_NR;
	r->events = pm->evfunc;
	r->n_loop_events = c.nloops;
	r->loop_events = pm->lp;
	err = 0;
out:
	free(c.hdr);
	return err;
}

static const char *state_name(enum spp_state s)
{
	static const char *const names[] = {[SPP_IDLE] = "idle",
					    [SPP_ACTIVE] = "active",
					    [SPP_FINISHED] = "finished",
					    [SPP_TIMEOUT] = "timeout",
					    [SPP_COLD] = "cold"};

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
		x->state = (char *)state_name(gi.state);
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
	pm->r.spp = &pm->spp;
	return spp_paths_fill(tr, top, pm);
}

void paths_extra_release(struct paths_msg *pm)
{
	free(pm->evfunc);
	free(pm->evloops);
	free(pm->lv);
	free(pm->lp);
	free(pm->gv);
	free(pm->gp);
	free(pm->spv);
	free(pm->spp_p);
	free(pm->nodes);
}
