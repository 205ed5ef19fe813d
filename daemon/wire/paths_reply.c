// SPDX-License-Identifier: GPL-2.0-only
/* paths_reply.c: the results of a path trace as a kprof.PathsReply (the tracer's wire mapping).
 *
 * The k-IPF is built from the trace's k-SF on each query (ksf_ipf_build; the k-SF goes on
 * taking events), walked by count, and cut to the top N paths (length 1) and sequences (2..k);
 * every path id a kept sequence uses is kept too, and each is decoded back into its blocks and
 * branches with cfg_path_decode. The cost figures come from the BPF counters and the target's
 * CPU times (see paths.c). On anonymous code (hardware breakpoints, hwpaths.c) the reply adds
 * every planned branch with its counts, the loops whose paths were followed and what was not
 * covered; ids above the function's Ball-Larus paths decode from the tracer's own table. A trace
 * restored from a saved profile answers from its saved reply,
 * checked when it is read back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/array.h"
#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/ksf.h"
#include "os/clock.h"
#include "kernel/loader.h"
#include "paths/hwpaths.h"
#include "paths/hwstruct.h"
#include "paths/paths.h"
#include "wire/paths_reply.h"
#include "kernel/probecost.h"

static Kprof__PathEdge pb_edge(const struct cfg *g, uint32_t edge)
{
	const struct cfg_edge *e = edge == CFG_NONE ? NULL : cfg_edge_get(g, edge);

	if (!e)
		return KPROF__PATH_EDGE__PATH_EDGE_BACK;
	if (e->dst == CFG_EXIT)
		return KPROF__PATH_EDGE__PATH_EDGE_EXIT;
	switch (e->kind) {
	case CFG_EDGE_TAKEN:
		return KPROF__PATH_EDGE__PATH_EDGE_TAKEN;
	case CFG_EDGE_JUMP:
		return KPROF__PATH_EDGE__PATH_EDGE_JUMP;
	default:
		return KPROF__PATH_EDGE__PATH_EDGE_FALL;
	}
}

struct collect {
	uint32_t top;
	uint64_t *pid, *pcount; /* length-1 entries kept */
	size_t np, pcap;
	size_t np_top;	   /* the first np_top are the top paths, the rest are for the sequences */
	uint64_t *seq_ids; /* concatenated ids of kept sequences */
	size_t nids, idcap;
	uint32_t *seq_len;
	uint64_t *seq_count;
	size_t nseq, seqcap;
	uint64_t total_paths, total_seqs;
};

static int collect_cb(uint32_t routine, const uint64_t *path, size_t n, uint64_t count,
		      void *userdata)
{
	struct collect *c = userdata;

	(void)routine;
	if (n == 1) {
		c->total_paths++;
		if (c->top && c->np >= c->top)
			return 0;
		if (array_grow((void **)&c->pid, &c->pcap, c->np + 1, sizeof(uint64_t), 64) < 0)
			return -ENOMEM;
		c->pcount = realloc(c->pcount, c->pcap * sizeof(uint64_t));
		if (!c->pcount)
			return -ENOMEM;
		c->pid[c->np] = path[0];
		c->pcount[c->np++] = count;
		return 0;
	}
	c->total_seqs++;
	if (c->top && c->nseq >= c->top)
		return 0;
	{
		size_t cap = c->seqcap;

		if (array_grow((void **)&c->seq_len, &c->seqcap, c->nseq + 1, sizeof(uint32_t),
			       64) < 0)
			return -ENOMEM;
		if (cap != c->seqcap) {
			uint64_t *p = realloc(c->seq_count, c->seqcap * sizeof(uint64_t));

			if (!p)
				return -ENOMEM;
			c->seq_count = p;
		}
	}
	if (array_grow((void **)&c->seq_ids, &c->idcap, c->nids + n, sizeof(uint64_t), 64) < 0)
		return -ENOMEM;
	memcpy(c->seq_ids + c->nids, path, n * sizeof(uint64_t));
	c->nids += n;
	c->seq_len[c->nseq] = n;
	c->seq_count[c->nseq++] = count;
	return 0;
}

static void collect_free(struct collect *c)
{
	free(c->pid);
	free(c->pcount);
	free(c->seq_ids);
	free(c->seq_len);
	free(c->seq_count);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Ids the kept sequences use that the kept paths miss (the top cut): added with their counts. */
static int add_missing_paths(struct collect *c, const struct ksf_ipf *ipf)
{
	_cleanup_free_ uint64_t *have = malloc((c->np ? c->np : 1) * sizeof(uint64_t));
	_cleanup_free_ uint64_t *want = malloc((c->nids ? c->nids : 1) * sizeof(uint64_t));
	size_t nw = 0;

	if (!have || !want)
		return -ENOMEM;
	if (c->np)
		memcpy(have, c->pid, c->np * sizeof(uint64_t));
	qsort(have, c->np, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < c->nids; i++)
		if (!bsearch(&c->seq_ids[i], have, c->np, sizeof(uint64_t), cmp_u64))
			want[nw++] = c->seq_ids[i];
	qsort(want, nw, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < nw; i++) {
		if (i && want[i] == want[i - 1])
			continue;
		if (array_grow((void **)&c->pid, &c->pcap, c->np + 1, sizeof(uint64_t), 64) < 0)
			return -ENOMEM;
		c->pcount = realloc(c->pcount, c->pcap * sizeof(uint64_t));
		if (!c->pcount)
			return -ENOMEM;
		c->pid[c->np] = want[i];
		c->pcount[c->np++] = ksf_ipf_count(ipf, 0, &want[i], 1);
	}
	return 0;
}

/* The system-time share between two readings; -1 below min_ticks of CPU time (the times come
 * in clock ticks, 10 ms here: a short trace cannot tell). */
static double share(const struct cpu_times *a, const struct cpu_times *b, uint64_t min_ticks)
{
	uint64_t u, s;

	if (!a->ok || !b->ok || b->user < a->user || b->sys < a->sys)
		return -1;
	u = b->user - a->user;
	s = b->sys - a->sys;
	return u + s >= min_ticks ? (double)s / (double)(u + s) : -1;
}

/* The function whose share of the samples measures a hit's cost in the target (paths_hit_ns):
 * its share before the trace and while traced. */
static void fill_ref(const struct path_trace *tr, Kprof__PathsReply *r)
{
	uint64_t ref = tr->ref1, all = tr->ref_all1;
	uint32_t id = tr->ref_id;

	if (tr->ref_id == PATHS_NO_REF)
		return;
	r->cost_ref = (char *)tr->ref_name;
	if (tr->tracing && tr->env.ref_samples)
		tr->env.ref_samples(tr->env.ctx, tr->start, tr->size, &id, &ref, &all, NULL, 0);
	if (tr->ref_all0)
		r->ref_share_before = (double)tr->ref0 / (double)tr->ref_all0;
	if (all > tr->ref_all0 && ref >= tr->ref0)
		r->ref_share_during = (double)(ref - tr->ref0) / (double)(all - tr->ref_all0);
}

/* The kernel's share of the target's CPU time before and while traced (for information), the
 * CPU time traced, the slowdown over the trace from the hits and the measured cost of one
 * (pcost.h), from the attach to now (or the end), and what the budget did. */
static void fill_cpu(const struct path_trace *tr, const struct cpu_times *now, uint64_t hits,
		     uint64_t end_ns, Kprof__PathsReply *r)
{
	long tck = sysconf(_SC_CLK_TCK);

	/* The share of system time before the trace is the target's whole life until then. */
	r->kernel_share_before = share(&(struct cpu_times){0, 0, true}, &tr->cpu_attach, 10);
	r->kernel_share_during = share(&tr->cpu_start, now, 50);
	if (tr->cpu_start.ok && now->ok &&
	    now->user + now->sys >= tr->cpu_start.user + tr->cpu_start.sys)
		r->traced_cpu_ms = (now->user + now->sys - tr->cpu_start.user - tr->cpu_start.sys) *
				   1000 / (uint64_t)(tck > 0 ? tck : 100);
	r->hit_cost_calibrated_ns = tr->hit_ns;
	r->hit_cost_ns = paths_hit_ns(tr, paths_cpu_ns(tr),
				      (uint64_t)((double)hits + tr->hidden_hits), NULL);
	fill_ref(tr, r);
	r->cost_kind = (char *)probecost_name(tr->hw ? PROBECOST_HWBP : PROBECOST_UPROBE);
	if (end_ns > tr->attach_wall_ns)
		r->hits_per_s = (double)hits * 1e9 / (double)(end_ns - tr->attach_wall_ns);
	r->max_slowdown = tr->max_slowdown;
	r->max_slowdown_default = tr->max_slowdown_default;
	/* 0 (unknown): no cost measured, or under half a second of CPU time */
	r->slowdown = paths_slowdown(tr, paths_cpu_ns(tr), hits, PATHS_MIN_CPU_MS);
	r->duty = paths_duty(tr);
	r->budget_offs = tr->budget_offs;
	r->budget_off = tr->off;
	r->budget_wait_cpu_s = tr->off && tr->pay_ns < UINT64_MAX / 2 ? tr->pay_ns / 1e9 : 0;
	r->hidden_hits = (uint64_t)tr->hidden_hits;
}

static void fill_stats(const struct path_trace *tr, Kprof__PathsReply *r)
{
	struct cfg_stats cs;
	struct ksf_stats ks;
	const uint64_t *c1 = tr->tracing ? NULL : tr->ctr1;
	uint64_t ctr_now[KP_CTR_NR];
	uint64_t end_ns = tr->tracing ? now_ns(CLOCK_MONOTONIC) : tr->stopped_ns;
	struct cpu_times now = tr->tracing ? paths_read_cpu(tr->pid) : tr->cpu_end;

	if (!c1) {
		loader_counters(tr->env.loader, ctr_now, NULL);
		c1 = ctr_now;
	}
	cfg_get_stats(tr->cfg, &cs);
	ksf_get_stats(tr->ksf, &ks);
	r->function = tr->func;
	r->start = tr->start;
	r->size = tr->size;
	r->k = tr->k;
	r->state = tr->tracing ? KPROF__PATHS_STATE__PATHS_STATE_TRACING
			       : KPROF__PATHS_STATE__PATHS_STATE_DONE;
	r->end_reason = (char *)(tr->tracing ? "" : tr->reason);
	r->num_paths = cs.num_paths;
	r->probes = tr->probes;
	r->hw = tr->hw != NULL;
	r->hw_turn = tr->hw ? tr->hw->turn_desc : (char *)"";
	if (tr->hw && tr->hw->st) /* --structural: the structure graph on now */
		r->hw_turn = tr->hw->st->turn_desc;
	r->loops = cs.loops;
	r->back_edges = cs.back_edges;
	r->activations = tr->activations;
	r->path_events = tr->path_events;
	r->budget = tr->budget;
	r->duration_ms = tr->duration_ms;
	r->traced_ns = end_ns - tr->started_ns;
	r->probe_hits = c1[KP_CTR_PATH_HITS] - tr->ctr0[KP_CTR_PATH_HITS];
	r->stray_hits = c1[KP_CTR_PATH_STRAY] - tr->ctr0[KP_CTR_PATH_STRAY];
	r->lost_events = c1[KP_CTR_PATH_DROPS] - tr->ctr0[KP_CTR_PATH_DROPS] +
			 c1[KP_CTR_PATH_NOTHREAD] - tr->ctr0[KP_CTR_PATH_NOTHREAD] +
			 tr->lost_threads + tr->dropped + ks.dropped;
	r->resyncs = tr->resyncs;
	r->aborted = tr->aborted;
	r->ksf_nodes = ks.nodes;
	r->pruned_items = ks.pruned_items;
	fill_cpu(tr, &now, r->probe_hits, end_ns, r);
}

void paths_fill_target(const struct path_trace *tr, Kprof__Target *pb)
{
	Kprof__PathsReply r = KPROF__PATHS_REPLY__INIT;
	uint64_t c[KP_CTR_NR];
	struct cpu_times now;

	if (!tr || !tr->tracing)
		return;
	loader_counters(tr->env.loader, c, NULL);
	now = paths_read_cpu(tr->pid);
	pb->paths_hits = c[KP_CTR_PATH_HITS] - tr->ctr0[KP_CTR_PATH_HITS];
	fill_cpu(tr, &now, pb->paths_hits, now_ns(CLOCK_MONOTONIC), &r);
	pb->paths_function = tr->func;
	pb->paths_mode = (char *)(tr->hw ? tr->spp ? "hardware breakpoints, structural"
						   : "hardware breakpoints"
				  : tr->spp ? "uprobes, structural"
					    : "uprobes");
	pb->paths_hits_per_s = r.hits_per_s;
	pb->paths_hit_cost_ns = r.hit_cost_ns;
	pb->paths_cost_kind = r.cost_kind;
	pb->paths_slowdown = r.slowdown;
	pb->paths_max_slowdown = r.max_slowdown;
	pb->paths_max_slowdown_default = r.max_slowdown_default;
	pb->paths_duty = r.duty;
	pb->paths_budget_offs = r.budget_offs;
	pb->paths_budget_off = r.budget_off;
}

void paths_msg_release(struct paths_msg *pm)
{
	if (!pm)
		return;
	free(pm->bv);
	free(pm->bp);
	free(pm->pv);
	free(pm->pp);
	free(pm->sv);
	free(pm->sp);
	free(pm->qv);
	free(pm->qp);
	free(pm->ids);
	free(pm->levels);
	free(pm->ev);
	free(pm->ep);
	paths_extra_release(pm);
	free(pm->bcv);
	free(pm->bcp);
	free(pm->hlv);
	free(pm->hlp);
	free(pm->lblocks);
	free(pm->assumed);
	free(pm->nc);
	free(pm->ncbuf);
	memset(pm, 0, sizeof(*pm));
}

/* The edge profile: every edge of the CFG and every exit, with its count. */
static int build_edges(struct path_trace *tr, struct paths_msg *pm)
{
	const struct cfg *g = tr->cfg;
	size_t n = 0, cap = cfg_nedges(g) + cfg_nblocks(g);

	if (tr->tracing)
		paths_read_edges(tr);
	pm->ev = calloc(cap + 1, sizeof(*pm->ev));
	pm->ep = calloc(cap + 1, sizeof(*pm->ep));
	if (!pm->ev || !pm->ep)
		return -ENOMEM;
	for (uint32_t i = 0; i < cfg_nedges(g); i++) {
		const struct cfg_edge *e = cfg_edge_get(g, i);

		if (e->dst == CFG_EXIT)
			continue;
		kprof__edge_count__init(&pm->ev[n]);
		pm->ev[n].from = e->src;
		pm->ev[n].to = e->dst;
		pm->ev[n].kind = pb_edge(g, i);
		pm->ev[n].count = tr->edge_counts[i];
		pm->ep[n] = &pm->ev[n];
		n++;
	}
	for (uint32_t b = 0; b < cfg_nblocks(g); b++) {
		if (!(cfg_block_get(g, b)->flags & CFG_BLOCK_EXIT))
			continue;
		kprof__edge_count__init(&pm->ev[n]);
		pm->ev[n].from = b;
		pm->ev[n].exit = true;
		pm->ev[n].kind = KPROF__PATH_EDGE__PATH_EDGE_EXIT;
		pm->ev[n].count = tr->exit_counts[b];
		pm->ep[n] = &pm->ev[n];
		n++;
	}
	pm->r.edge_profile = true;
	pm->r.n_edges = n;
	pm->r.edges = pm->ep;
	pm->r.activations = tr->edge_activations;
	return 0;
}

#define NC_MAX 64 /* lines of what was not covered */
#define NC_LEN 200

static void nc_add(struct paths_msg *pm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void nc_add(struct paths_msg *pm, const char *fmt, ...)
{
	Kprof__PathsReply *r = &pm->r;
	va_list ap;

	if (r->n_not_covered == NC_MAX)
		return;
	pm->nc[r->n_not_covered] = pm->ncbuf + r->n_not_covered * NC_LEN;
	va_start(ap, fmt);
	vsnprintf(pm->nc[r->n_not_covered], NC_LEN, fmt, ap);
	va_end(ap);
	r->n_not_covered++;
}

/* Loops with branches that no loop group covers: their paths could not be followed. */
static void not_covered_loops(const struct hwpaths *h, struct paths_msg *pm)
{
	const struct hwbranch_plan *p = &h->plan;

	for (size_t i = 0; i < p->nbr; i++) {
		uint32_t lp = p->br[i].loop, n = 0;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = p->br[j].loop == lp;
		for (size_t q = 0; q < h->nturns && !seen; q++)
			seen = h->turns[q].loop == lp;
		if (seen)
			continue;
		for (size_t j = 0; j < p->nbr; j++)
			n += hwbranch_in_loop(h->cfg, p->br[j].block, lp);
		nc_add(pm,
		       "loop at B%u (0x%llx): %u conditional branches, more than the %d debug "
		       "registers (and more than %d went both ways, or the trace ended before its "
		       "turn): branch counts only, no paths",
		       lp, (unsigned long long)cfg_block_get(h->cfg, lp)->start, n, HWBRANCH_SLOTS,
		       HWBRANCH_SLOTS);
	}
	if (p->not_looped)
		nc_add(pm, "%zu conditional branch%s outside every loop: no breakpoint",
		       p->not_looped, p->not_looped == 1 ? "" : "es");
	if (p->not_flag)
		nc_add(pm, "%zu conditional branch%s not on the flags (jrcxz, loop): no breakpoint",
		       p->not_flag, p->not_flag == 1 ? "" : "es");
}

static int hw_alloc(const struct hwpaths *h, size_t nb, struct paths_msg *pm)
{
	const struct hwbranch_plan *p = &h->plan;

	pm->bcv = calloc(p->nbr + 1, sizeof(*pm->bcv));
	pm->bcp = calloc(p->nbr + 1, sizeof(*pm->bcp));
	pm->hlv = calloc(h->nturns + 1, sizeof(*pm->hlv));
	pm->hlp = calloc(h->nturns + 1, sizeof(*pm->hlp));
	pm->lblocks = calloc(h->nturns * nb + 1, sizeof(*pm->lblocks));
	pm->assumed = calloc(h->nturns * nb + 1, sizeof(*pm->assumed));
	pm->nc = calloc(NC_MAX, sizeof(*pm->nc));
	pm->ncbuf = calloc(NC_MAX, NC_LEN);
	if (!pm->bcv || !pm->bcp || !pm->hlv || !pm->hlp || !pm->lblocks || !pm->nc || !pm->ncbuf ||
	    !pm->assumed)
		return -ENOMEM;
	return 0;
}

/* Each conditional branch with a breakpoint: where it goes when taken, and its counts. */
static void hw_branches(const struct path_trace *tr, struct paths_msg *pm)
{
	const struct hwpaths *h = tr->hw;
	const struct hwbranch_plan *p = &h->plan;

	for (size_t i = 0; i < p->nbr; i++) {
		const struct cfg_block *blk = cfg_block_get(tr->cfg, p->br[i].block);
		Kprof__BranchCount *b = &pm->bcv[i];

		kprof__branch_count__init(b);
		b->block = p->br[i].block;
		b->address = p->br[i].addr;
		b->cond = (char *)hwbranch_cc_name(p->br[i].cc);
		for (uint32_t e = 0; e < blk->nedges; e++) {
			const struct cfg_edge *ed = cfg_edge_get(tr->cfg, blk->first_edge + e);

			if (ed->kind == CFG_EDGE_TAKEN && ed->dst != CFG_EXIT)
				b->taken_to = cfg_block_get(tr->cfg, ed->dst)->start;
		}
		b->taken = h->taken[i];
		b->not_taken = h->not_taken[i];
		b->covered_ns = hwpaths_covered(h, i);
		b->loop = p->br[i].loop;
		pm->bcp[i] = b;
	}
	pm->r.n_branches = p->nbr;
	pm->r.branches = pm->bcp;
}

/* One entry per loop that a group of turns covers, its blocks and assumed branches, with the
 * activations and time of all its groups summed. */
static void hw_loops(const struct path_trace *tr, size_t nb, struct paths_msg *pm)
{
	const struct hwpaths *h = tr->hw;
	size_t nl = 0, off = 0, noff = 0;

	for (size_t q = 0; q < h->nturns; q++) {
		const struct hwpaths_turn *g = &h->turns[q];
		uint64_t ns =
		    h->group_ns[q] +
		    (h->set && h->turn == q ? now_ns(CLOCK_MONOTONIC) - h->turn_since : 0);
		Kprof__HwLoop *x = NULL;

		if (g->loop == CFG_NONE)
			continue;
		for (size_t j = 0; j < nl && !x; j++)
			if (pm->hlp[j]->header == g->loop)
				x = pm->hlp[j];
		if (!x) {
			x = &pm->hlv[nl];
			kprof__hw_loop__init(x);
			x->header = g->loop;
			x->blocks = pm->lblocks + off;
			for (uint32_t b = 0; b < nb; b++)
				if (hwbranch_in_loop(tr->cfg, b, g->loop))
					pm->lblocks[off + x->n_blocks++] = b;
			off += x->n_blocks;
			x->assumed = pm->assumed + noff;
			for (uint32_t b = 0; g->assume && b < nb; b++)
				if (g->assume[b] != HWBRANCH_COVERED)
					pm->assumed[noff + x->n_assumed++] =
					    cfg_block_get(tr->cfg, b)->last;
			noff += x->n_assumed;
			pm->hlp[nl++] = x;
		}
		x->branches = g->n;
		x->activations += h->group_acts[q];
		x->covered_ns += ns;
	}
	pm->r.n_hw_loops = nl;
	pm->r.hw_loops = pm->hlp;
}

static int build_hw(struct path_trace *tr, struct paths_msg *pm)
{
	const struct hwpaths *h = tr->hw;
	const struct hwbranch_plan *p = &h->plan;
	Kprof__PathsReply *r = &pm->r;
	size_t nb = cfg_nblocks(tr->cfg);

	if (hw_alloc(h, nb, pm) < 0)
		return -ENOMEM;
	r->hw = true;
	r->hw_stray = h->stray;
	r->hw_stopped = (char *)h->stopped;
	hw_branches(tr, pm);
	hw_loops(tr, nb, pm);
	r->not_covered = pm->nc;
	not_covered_loops(h, pm);
	for (size_t q = 0; q < h->ncount; q++)
		if (!h->group_ns[q] && !(h->set && h->turn == q))
			nc_add(
			    pm,
			    "group %zu (%u branch%s%s) never had its turn: the trace ended first",
			    q + 1, p->groups[q].n, p->groups[q].n == 1 ? "" : "es",
			    p->groups[q].loop == CFG_NONE ? "" : ", a loop's paths");
	return 0;
}

/* The reply's arrays for c's paths and sequences over nb blocks and k levels. */
static int live_alloc(const struct collect *c, size_t nb, unsigned k, struct paths_msg *pm)
{
	pm->levels = calloc(k, sizeof(uint64_t));
	pm->bv = calloc(nb, sizeof(*pm->bv));
	pm->bp = calloc(nb, sizeof(*pm->bp));
	pm->pv = calloc(c->np ? c->np : 1, sizeof(*pm->pv));
	pm->pp = calloc(c->np ? c->np : 1, sizeof(*pm->pp));
	pm->sv = calloc(c->np * nb + 1, sizeof(*pm->sv));
	pm->sp = calloc(c->np * nb + 1, sizeof(*pm->sp));
	pm->qv = calloc(c->nseq ? c->nseq : 1, sizeof(*pm->qv));
	pm->qp = calloc(c->nseq ? c->nseq : 1, sizeof(*pm->qp));
	pm->ids = malloc((c->nids ? c->nids : 1) * sizeof(uint64_t));
	if (!pm->levels || !pm->bv || !pm->bp || !pm->pv || !pm->pp || !pm->sv || !pm->sp ||
	    !pm->qv || !pm->qp || !pm->ids)
		return -ENOMEM;
	return 0;
}

static void live_blocks(const struct cfg *g, struct paths_msg *pm)
{
	size_t nb = cfg_nblocks(g);

	for (uint32_t b = 0; b < nb; b++) {
		const struct cfg_block *blk = cfg_block_get(g, b);
		Kprof__PathBlock *x = &pm->bv[b];

		kprof__path_block__init(x);
		x->start = blk->start;
		x->end = blk->end;
		x->insns = blk->ninsns;
		x->entry = blk->flags & CFG_BLOCK_ENTRY;
		x->loop_header = blk->flags & CFG_BLOCK_HEADER;
		x->loop_depth = blk->loop_depth;
		x->term = (char *)cfg_term_name(blk->term);
		pm->bp[b] = x;
	}
	pm->r.n_blocks = nb;
	pm->r.blocks = pm->bp;
}

/* Each kept path decoded into its blocks and edges (steps: room for nb of them). */
static void live_paths(const struct path_trace *tr, const struct collect *c, struct cfg_step *steps,
		       struct paths_msg *pm)
{
	const struct cfg *g = tr->cfg;
	size_t nb = cfg_nblocks(g), nsteps = 0;

	for (size_t i = 0; i < c->np; i++) {
		Kprof__PathInfo *x = &pm->pv[i];
		int n = tr->hw ? hwpaths_decode(tr->hw, c->pid[i], steps, nb)
			       : cfg_path_decode(g, c->pid[i], steps, nb);

		kprof__path_info__init(x);
		x->id = c->pid[i];
		x->count = c->pcount[i];
		x->for_sequences = i >= c->np_top;
		x->steps = &pm->sp[nsteps];
		for (int j = 0; j < n; j++) {
			Kprof__PathStep *s = &pm->sv[nsteps];

			kprof__path_step__init(s);
			s->block = steps[j].block;
			s->edge = pb_edge(g, steps[j].edge);
			pm->sp[nsteps++] = s;
			x->n_steps++;
		}
		pm->pp[i] = x;
	}
	pm->r.n_paths = c->np;
	pm->r.paths = pm->pp;
}

static void live_sequences(const struct collect *c, struct paths_msg *pm)
{
	if (c->nids)
		memcpy(pm->ids, c->seq_ids, c->nids * sizeof(uint64_t));
	for (size_t i = 0, off = 0; i < c->nseq; i++) {
		Kprof__PathSeq *q = &pm->qv[i];

		kprof__path_seq__init(q);
		q->ids = pm->ids + off;
		q->n_ids = c->seq_len[i];
		q->count = c->seq_count[i];
		off += c->seq_len[i];
		pm->qp[i] = q;
	}
	pm->r.n_sequences = c->nseq;
	pm->r.sequences = pm->qp;
}

static int build_live(struct path_trace *tr, uint32_t top, struct paths_msg *pm)
{
	Kprof__PathsReply *r = &pm->r;
	size_t nb = cfg_nblocks(tr->cfg);
	struct ksf_ipf *ipf = NULL;
	struct ksf_ipf_stats is;
	struct collect c = {.top = top};
	_cleanup_free_ struct cfg_step *steps = NULL;
	int err = -ENOMEM;

	fill_stats(tr, r);
	if (ksf_ipf_build(tr->ksf, &(struct ksf_ipf_opts){.max_len = tr->k}, &ipf) < 0)
		return -ENOMEM;
	if (ksf_ipf_foreach(ipf, KSF_ORDER_COUNT, collect_cb, &c) < 0)
		goto out;
	c.np_top = c.np;
	if (add_missing_paths(&c, ipf) < 0)
		goto out;
	ksf_ipf_get_stats(ipf, &is);
	r->ipf_nodes = is.nodes;
	r->max_error = is.max_error > is.max_error_1 ? is.max_error : is.max_error_1;
	r->paths_total = c.total_paths;
	r->sequences_total = c.total_seqs;
	steps = calloc(nb, sizeof(*steps));
	if (live_alloc(&c, nb, tr->k, pm) < 0 || !steps)
		goto out;
	for (unsigned i = 0; i < tr->k; i++)
		pm->levels[i] = is.level_sum[i];
	r->n_level_sums = tr->k;
	r->level_sums = pm->levels;
	live_blocks(tr->cfg, pm);
	live_paths(tr, &c, steps, pm);
	live_sequences(&c, pm);
	err = tr->edges ? build_edges(tr, pm) : 0;
	if (err == 0)
		err = paths_events_fill(tr, ipf, pm);
	if (err == 0)
		err = paths_spp_fill(tr, top, pm);
	if (!err && tr->hw)
		err = build_hw(tr, pm);
out:
	collect_free(&c);
	ksf_ipf_free(ipf);
	return err;
}

int paths_reply(const struct target *t, uint32_t top, bool brief, struct paths_msg *pm)
{
	struct path_trace *tr = t->paths;

	memset(pm, 0, sizeof(*pm));
	kprof__paths_reply__init(&pm->r);
	if (!tr)
		return -ENODATA;
	if (tr->saved) {
		pm->r = *(const Kprof__PathsReply *)tr->saved; /* shallow: points into it */
		if (top && pm->r.n_sequences > top)
			pm->r.n_sequences = top;
		if (brief)
			pm->r.n_blocks = pm->r.n_paths = pm->r.n_sequences = 0;
		return 0;
	}
	if (brief) {
		fill_stats(tr, &pm->r);
		return 0;
	}
	return build_live(tr, top, pm);
}

static void saved_free(void *saved)
{
	kprof__paths_reply__free_unpacked(saved, NULL);
}

/* A saved trace must be consistent before queries trust it: -EBADMSG otherwise. */
static int saved_check(const Kprof__PathsReply *r)
{
	if (!r->function || r->k < 1 || r->k > KSF_K_MAX || r->n_level_sums > KSF_K_MAX ||
	    r->n_blocks > PATHS_MAX_BLOCKS)
		return -EBADMSG;
	for (size_t i = 0; i < r->n_paths; i++)
		for (size_t j = 0; j < r->paths[i]->n_steps; j++)
			if (r->paths[i]->steps[j]->block >= r->n_blocks)
				return -EBADMSG;
	for (size_t i = 0; i < r->n_sequences; i++)
		if (r->sequences[i]->n_ids < 2 || r->sequences[i]->n_ids > r->k)
			return -EBADMSG;
	for (size_t i = 0; i < r->n_edges; i++)
		if (r->edges[i]->from >= r->n_blocks ||
		    (!r->edges[i]->exit && r->edges[i]->to >= r->n_blocks))
			return -EBADMSG;
	return 0;
}

int paths_restore(struct target *t, const Kprof__PathsReply *saved)
{
	struct path_trace *tr;

	if (saved_check(saved) < 0)
		return -EBADMSG;
	size_t len = kprof__paths_reply__get_packed_size(saved);
	_cleanup_free_ uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return -ENOMEM;
	kprof__paths_reply__pack(saved, buf);
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->ref_id = PATHS_NO_REF;
	tr->pid = t->pid;
	tr->saved_free = saved_free;
	tr->saved = kprof__paths_reply__unpack(NULL, len, buf);
	tr->func = strdup(saved->function ? saved->function : "");
	if (!tr->saved || !tr->func) {
		paths_trace_free(tr);
		return -ENOMEM;
	}
	((Kprof__PathsReply *)tr->saved)->state = KPROF__PATHS_STATE__PATHS_STATE_DONE;
	((Kprof__PathsReply *)tr->saved)->target = NULL;
	paths_trace_free(t->paths);
	t->paths = tr;
	return 0;
}
