// SPDX-License-Identifier: GPL-2.0-only
/* hwstruct.c: structural path profiling of code in anonymous memory by hardware breakpoints
 * (ALGORITHMS.md §9 "Structural profiling").
 *
 * SPP profiles one structure graph at a time and each graph is small, so each gets its own
 * turn of the four debug registers: the jccs of its own blocks (hwspp_own_conds), plus for the
 * outline graph the function's first instruction (each activation), for a loop graph an
 * arrival breakpoint on its header when the header does not end in a jcc (every local path
 * crosses the header), and in the registers left: the entry for a loop of the outline graph,
 * then arrival breakpoints on the blocks its inner loops exit to (routes the walker would
 * otherwise find ambiguous). A graph with more jccs than registers has them counted first, four
 * at a time, and the ones that went one way are assumed (hwspp_assume); if still too many went
 * both ways, or a branch is not on the flags (jrcxz, loop), the graph is not profiled and the
 * reply says why.
 *
 * Which graph is on is spp.c's controller's choice: the first ACTIVE one (the outline graph
 * first; when it has its share its inner loops that are not cold, and so on). Each hit goes to
 * its thread's walk (hwspp.c), whose local paths go to spp_add; when the graph is no longer
 * active (its share reached), or its time limit passed (spp_finish: the paper's timeout), the
 * next active graph gets the registers. Counts of graphs profiled at different times are put
 * together by spp's coefficients, exactly as the paper does (§3.5). Records carry
 * id << 10 | turn, so hits of an earlier turn still in the ring buffer are dropped. The budget
 * (paths.c) may take the breakpoints off and put them back (hwstruct_pause/resume): the turn's
 * time limit runs on meanwhile, its graph's profiled time does not; the threads' walks end when
 * they go off, and they come back as a new turn number, so no local path spans the time off.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kprof/hwbranch.h"
#include "os/clock.h"
#include "paths/hwstruct.h"
#include "kernel/loader.h"
#include "os/log.h"

#define TURN_BITS 10

/* ---- planning ---- */

static int slot_add(struct hwstruct_graph *x, uint64_t addr, uint32_t b, uint8_t kind, uint8_t cc)
{
	for (uint32_t i = 0; i < x->nslots; i++)
		if (x->slots[i].addr == addr && x->slots[i].kind == kind)
			return 0;
	if (x->nslots == HWBP_SLOTS)
		return -ENOSPC;
	x->slots[x->nslots++] = (struct hwstruct_slot){addr, b, kind, cc};
	return 0;
}

/* The own conditional branches of graph g, and whether they can be watched at all. */
static void plan_graph(struct hwstruct *s, uint32_t g)
{
	struct hwstruct_graph *x = &s->gr[g];
	size_t n = hwspp_own_conds(s->cfg, s->spp, g, x->conds, HWSTRUCT_MAX_CONDS);
	struct spp_graph_info gi;
	uint32_t avail = HWBP_SLOTS - (g == 0);

	x->planned = true;
	spp_graph_get(s->spp, g, &gi);
	if (n > HWSTRUCT_MAX_CONDS) {
		snprintf(x->note, sizeof(x->note), "not profiled: %zu branches of its own", n);
		return;
	}
	x->nconds = (uint32_t)n;
	for (uint32_t i = 0; i < x->nconds; i++) {
		const struct cfg_block *blk = cfg_block_get(s->cfg, x->conds[i]);
		int cc = blk->last >= s->start && blk->last - s->start < s->len
			     ? hwbranch_cc(s->code + (blk->last - s->start),
					   s->len - (blk->last - s->start))
			     : -EINVAL;

		if (cc < 0) {
			snprintf(
			    x->note, sizeof(x->note),
			    "not profiled: B%u ends in a branch not on the flags (jrcxz, loop)",
			    x->conds[i]);
			x->nconds = 0;
			return;
		}
		x->cc[i] = (uint8_t)cc;
	}
	if (g && cfg_block_get(s->cfg, gi.header)->term != CFG_TERM_COND)
		avail--; /* the header's arrival */
	x->count = x->nconds > avail;
	if (x->count && s->ncount < sizeof(s->count_graph) / sizeof(s->count_graph[0]))
		for (uint32_t i = 0; i < x->nconds; i += HWBP_SLOTS) {
			s->count_graph[s->ncount] = g;
			s->count_first[s->ncount++] = i;
		}
}

/* Arrival breakpoints on the own one-way blocks inner loops of g exit to, while room. */
static void add_exit_arrivals(struct hwstruct *s, uint32_t g, struct hwstruct_graph *x)
{
	for (uint32_t b = 0; b < cfg_nblocks(s->cfg) && x->nslots < HWBP_SLOTS; b++) {
		const struct cfg_block *blk = cfg_block_get(s->cfg, b);
		uint32_t gb = hwspp_block_graph(s->cfg, s->spp, b);

		if (gb == g)
			continue;
		for (uint32_t k = 0; k < blk->nedges; k++) {
			uint32_t d = cfg_edge_get(s->cfg, blk->first_edge + k)->dst;
			const struct cfg_block *db =
			    d == CFG_EXIT ? NULL : cfg_block_get(s->cfg, d);

			if (!db || db->term == CFG_TERM_COND ||
			    hwspp_block_graph(s->cfg, s->spp, d) != g ||
			    d == cfg_entry_block(s->cfg) || x->assume[d] == HWSPP_ARRIVE)
				continue;
			if (slot_add(x, db->start, d, HWSTRUCT_ARRIVE, 0) == 0)
				x->assume[d] = HWSPP_ARRIVE;
		}
	}
}

/* Whether the branch ending block b is a latch of loop graph g that can also leave it: one
 * edge back to the header, one out of the loop (not into an inner loop of its own). A loop
 * with a finite trip count goes both ways there over its runs, whether a counting turn, a
 * slice of one long run, saw it leave or not. (A JIT's checks that leave the loop for a
 * deoptimization have no back edge: they may never be taken, and are counted as they are.) */
static bool exit_latch(const struct hwstruct *s, uint32_t b, uint32_t g)
{
	const struct cfg_block *blk = cfg_block_get(s->cfg, b);
	bool back = false, out = false;

	if (!g)
		return false;
	for (uint32_t k = 0; k < blk->nedges; k++) {
		const struct cfg_edge *e = cfg_edge_get(s->cfg, blk->first_edge + k);
		struct spp_graph_info gi;
		uint32_t dg;

		if (e->back) {
			back = true;
			continue;
		}
		if (e->dst == CFG_EXIT) {
			out = true;
			continue;
		}
		if ((dg = hwspp_block_graph(s->cfg, s->spp, e->dst)) == g)
			continue;
		spp_graph_get(s->spp, dg, &gi);
		out |= gi.parent != g;
	}
	return back && out;
}

/* The own branches that keep a breakpoint (keep[], their number; -1: too many, note set):
 * all of them, or after counting those that went both ways (the header's always). */
static int keep_branches(const struct hwstruct *s, uint32_t g, struct hwstruct_graph *x,
			 uint32_t hdr, uint32_t avail, uint32_t *keep)
{
	int r;

	if (!x->count) {
		memcpy(keep, x->conds, x->nconds * sizeof(uint32_t));
		return (int)x->nconds;
	}
	/* the header's jcc stays watched, whatever it did: every path crosses it; so does the
	 * latch that leaves the loop (exit_latch) */
	for (uint32_t i = 0; i < x->nconds; i++)
		if ((x->conds[i] == hdr || exit_latch(s, x->conds[i], g)) &&
		    !(x->taken[i] && x->not_taken[i]))
			x->taken[i] = x->not_taken[i] = 1;
	r = hwspp_assume(x->conds, x->nconds, x->taken, x->not_taken, avail, x->assume, keep);
	if (r < 0) {
		snprintf(x->note, sizeof(x->note),
			 "not profiled: more than %u of its %u branches went both ways while counted",
			 avail, x->nconds);
		return -1;
	}
	x->nassumed = x->nconds - (uint32_t)r;
	return r;
}

/* After counting (if any): the assumptions, the breakpoints and the walker of graph g. */
static void build_graph(struct hwstruct *s, uint32_t g)
{
	struct hwstruct_graph *x = &s->gr[g];
	struct spp_graph_info gi;
	uint32_t nb = (uint32_t)cfg_nblocks(s->cfg), keep[HWBP_SLOTS], nkeep = 0, hdr = CFG_NONE;
	bool hdr_arrive;
	uint32_t avail = HWBP_SLOTS - (g == 0);
	int r;

	x->built = true;
	spp_graph_get(s->spp, g, &gi);
	if (g)
		hdr = gi.header;
	hdr_arrive = g && cfg_block_get(s->cfg, hdr)->term != CFG_TERM_COND;
	avail -= hdr_arrive;
	if (!x->nconds && x->note[0])
		return;
	x->assume = calloc(nb, 1);
	if (!x->assume) {
		snprintf(x->note, sizeof(x->note), "not profiled: out of memory");
		return;
	}
	r = keep_branches(s, g, x, hdr, avail, keep);
	if (r < 0)
		return;
	nkeep = (uint32_t)r;
	if (g == 0)
		slot_add(x, cfg_block_get(s->cfg, cfg_entry_block(s->cfg))->start, CFG_NONE,
			 HWSTRUCT_ENTRY, 0);
	for (uint32_t i = 0; i < nkeep; i++)
		for (uint32_t j = 0; j < x->nconds; j++)
			if (x->conds[j] == keep[i])
				slot_add(x, cfg_block_get(s->cfg, keep[i])->last, keep[i],
					 HWSTRUCT_JCC, x->cc[j]);
	if (hdr_arrive) {
		slot_add(x, cfg_block_get(s->cfg, hdr)->start, hdr, HWSTRUCT_ARRIVE, 0);
		x->assume[hdr] = HWSPP_ARRIVE;
	}
	if (g && gi.parent == 0)
		slot_add(x, cfg_block_get(s->cfg, cfg_entry_block(s->cfg))->start, CFG_NONE,
			 HWSTRUCT_ENTRY, 0);
	add_exit_arrivals(s, g, x);
	r = hwspp_graph_new(s->cfg, s->spp, g, x->assume, &x->walk);
	if (r < 0) {
		snprintf(x->note, sizeof(x->note), "not profiled: %s", strerror(-r));
		return;
	}
	for (uint32_t i = 0; i < x->nslots; i++)
		if (g && x->slots[i].kind == HWSTRUCT_ENTRY)
			hwspp_graph_entry_bp(x->walk);
}

/* ---- turns ---- */

static void turn_close(struct hwstruct *s)
{
	uint64_t d;

	if (!s->set)
		return;
	hwbp_set_free(s->set);
	s->set = NULL;
	d = now_ns(CLOCK_MONOTONIC) - s->turn_since;
	s->turn_on += d;
	if (s->cur >= 0) {
		struct hwstruct_graph *x = &s->gr[s->cur];

		x->ns += d;
		for (size_t i = 0; s->threads && i < HWSTRUCT_THREADS; i++)
			if (s->threads[i].tid) {
				hwspp_walk_reset(&s->threads[i].w);
				x->given_up += s->threads[i].w.given_up;
				s->given_up += s->threads[i].w.given_up;
			}
	}
	if (s->threads)
		memset(s->threads, 0, HWSTRUCT_THREADS * sizeof(*s->threads));
	tidtab_clear(&s->tids);
}

/* The turn's breakpoints on, as a new turn number (hits of the last one still in the ring
 * buffer are then dropped). */
static int turn_arm(struct hwstruct *s, char *err, size_t errlen)
{
	uint32_t key = (uint32_t)s->pid, val;
	uint64_t addrs[HWBP_SLOTS];
	size_t na = 0;
	int r;

	s->turn++;
	val = s->id << TURN_BITS | (s->turn & ((1u << TURN_BITS) - 1));
	for (uint32_t i = 0; i < s->nslots; i++) {
		bool dup = false;

		for (size_t j = 0; j < na && !dup; j++)
			dup = addrs[j] == s->slots[i].addr;
		if (!dup)
			addrs[na++] = s->slots[i].addr;
	}
	r = bpf_map__update_elem(loader_hwbp_traces(s->loader), &key, sizeof(key), &val,
				 sizeof(val), 0);
	if (r < 0) {
		snprintf(err, errlen, "cannot register the trace (kp_hwbp_traces): %s",
			 strerror(-r));
		return r;
	}
	r = hwbp_set_open(s->pid, addrs, na, loader_hwbp_prog_fd(s->loader), &s->set, err, errlen);
	if (r < 0)
		return r;
	s->turn_since = now_ns(CLOCK_MONOTONIC);
	return 0;
}

/* A turn on slots begins (its breakpoints on, unless the budget holds them off). */
static int turn_open(struct hwstruct *s, const struct hwstruct_slot *slots, uint32_t n, char *err,
		     size_t errlen)
{
	memmove(s->slots, slots, n * sizeof(*slots));
	s->nslots = n;
	s->has_entry = false;
	for (uint32_t i = 0; i < n; i++)
		s->has_entry |= slots[i].kind == HWSTRUCT_ENTRY;
	s->turn_start = now_ns(CLOCK_MONOTONIC);
	s->turn_on = 0;
	return s->paused ? 0 : turn_arm(s, err, errlen);
}

static int open_count(struct hwstruct *s, char *err, size_t errlen)
{
	uint32_t g = s->count_graph[s->count_turn], f = s->count_first[s->count_turn];
	struct hwstruct_graph *x = &s->gr[g];
	struct hwstruct_slot sl[HWBP_SLOTS];
	uint32_t n = 0;

	for (uint32_t i = f; i < x->nconds && n < HWBP_SLOTS; i++)
		sl[n++] = (struct hwstruct_slot){cfg_block_get(s->cfg, x->conds[i])->last,
						 x->conds[i], HWSTRUCT_JCC, x->cc[i]};
	s->cur = -1;
	snprintf(s->turn_desc, sizeof(s->turn_desc),
		 "structure graph %u: counting %u of its branches (more than the debug registers)",
		 g, n);
	return turn_open(s, sl, n, err, errlen);
}

/* The first active graph that can be profiled; graphs that cannot are finished (timeout). */
static int pick_graph(struct hwstruct *s)
{
	for (uint32_t pass = 0; pass <= s->ngraphs; pass++) {
		bool again = false;

		for (uint32_t g = 0; g < s->ngraphs && !again; g++) {
			struct spp_graph_info gi;

			spp_graph_get(s->spp, g, &gi);
			if (gi.state != SPP_ACTIVE)
				continue;
			if (!s->gr[g].built)
				build_graph(s, g);
			if (s->gr[g].walk)
				return (int)g;
			spp_finish(s->spp, g);
			again = true; /* its inner loops may have become active */
		}
		if (!again)
			return -1;
	}
	return -1;
}

/* Every graph done: the trace ends, saying whether each counted something. A graph that counted
 * nothing (not profiled: its plan did not fit; or its code did not run in its turn) is no
 * evidence about its loops, so "complete" is not said then. */
static void stop_done(struct hwstruct *s)
{
	char why[160];
	uint32_t none = 0;

	for (uint32_t g = 0; g < s->ngraphs; g++) {
		struct spp_graph_info gi;

		spp_graph_get(s->spp, g, &gi);
		none += gi.state == SPP_TIMEOUT && gi.counted == 0;
	}
	if (!none) {
		s->stop(s->stop_arg, "structural profile complete");
		return;
	}
	snprintf(why, sizeof(why),
		 "structural profile done, but %u of its %u structure graphs counted nothing: "
		 "see each graph's state and note",
		 none, s->ngraphs);
	s->stop(s->stop_arg, why);
}

/* The next turn, or the end of the trace (1). */
static int next_turn(struct hwstruct *s, const char *why)
{
	char err[256];
	int g, r;

	turn_close(s);
	s->next = false;
	if (s->count_turn < s->ncount) {
		r = open_count(s, err, sizeof(err));
		s->count_turn++;
	} else {
		if (s->cur >= 0 && why) { /* its time is up */
			struct hwstruct_graph *x = &s->gr[s->cur];

			if (!x->paths && !x->note[0])
				snprintf(x->note, sizeof(x->note),
					 "its turn of %.0f ms passed with no path counted: its code did "
					 "not run then (no evidence about its loops)",
					 x->ns / 1e6);
			spp_finish(s->spp, (uint32_t)s->cur);
		}
		g = pick_graph(s);
		if (g < 0) {
			s->cur = -1;
			s->turn_desc[0] = '\0';
			stop_done(s);
			return 1;
		}
		s->cur = g;
		s->gr[g].turns++;
		snprintf(s->turn_desc, sizeof(s->turn_desc),
			 "structure graph %d (%s): its local paths, %u breakpoints, %u branches "
			 "assumed",
			 g, g ? "a loop" : "the outline", s->gr[g].nslots, s->gr[g].nassumed);
		r = turn_open(s, s->gr[g].slots, s->gr[g].nslots, err, sizeof(err));
	}
	if (r < 0) {
		snprintf(s->stopped, sizeof(s->stopped), "%s", err);
		log_warn("pid %d: structural trace: %s", s->pid, err);
		s->stop(s->stop_arg, "breakpoints failed");
		return 1;
	}
	return 0;
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct hwstruct *s = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC), limit, on;

	(void)usec;
	if (!s->set && !s->paused)
		return sd_event_source_set_enabled(src, SD_EVENT_OFF);
	if (hwbp_code_changed(s->pid, s->start, s->code, s->len, s->stopped, sizeof(s->stopped))) {
		log_warn("pid %d: structural trace: %s", s->pid, s->stopped);
		s->stop(s->stop_arg, "code changed");
		return 0;
	}
	limit = s->cur < 0 ? s->count_ns : s->turn_ns;
	/* The limit is the wall's (each graph gets its share of the duration while the budget
	 * takes the breakpoints off and on), but a turn that fell into the time they were off
	 * waits until they were on for HWSTRUCT_MIN_ON_MS (or its whole limit, if shorter). */
	on = s->turn_on + (s->set ? now - s->turn_since : 0);
	if (now - s->turn_start >= limit &&
	    on >= (limit < HWSTRUCT_MIN_ON_MS * 1000000ULL ? limit
							   : HWSTRUCT_MIN_ON_MS * 1000000ULL) &&
	    next_turn(s, "time limit"))
		return 0;
	return sd_event_source_set_time(src, (now + HWSTRUCT_CHECK_MS * 1000000ULL) / 1000);
}

int hwstruct_start(struct hwstruct *s, sd_event *event, char *err, size_t errlen)
{
	uint32_t turns;
	int r;

	s->ngraphs = (uint32_t)spp_ngraphs(s->spp);
	if (s->ngraphs > HWSTRUCT_MAX_GRAPHS) {
		snprintf(err, errlen, "%u structure graphs, more than the %d followed", s->ngraphs,
			 HWSTRUCT_MAX_GRAPHS);
		return -E2BIG;
	}
	for (uint32_t g = 0; g < s->ngraphs; g++)
		plan_graph(s, g);
	s->threads = calloc(HWSTRUCT_THREADS, sizeof(*s->threads));
	tidtab_init(&s->tids, HWSTRUCT_THREADS);
	if (!s->threads)
		return -ENOMEM;
	turns = s->ngraphs + s->ncount;
	s->turn_ns = s->duration_ns / (turns ? turns : 1);
	s->count_ns = s->turn_ns / 2 > HWSTRUCT_MIN_COUNT_MS * 1000000ULL
			  ? s->turn_ns / 2
			  : HWSTRUCT_MIN_COUNT_MS * 1000000ULL;
	s->started_ns = now_ns(CLOCK_MONOTONIC);
	s->cur = -1;
	if (next_turn(s, NULL)) {
		snprintf(err, errlen, "%s", s->stopped[0] ? s->stopped : "no graph to profile");
		return -ENOENT;
	}
	r = sd_event_add_time(event, &s->timer, CLOCK_MONOTONIC,
			      (now_ns(CLOCK_MONOTONIC) + HWSTRUCT_CHECK_MS * 1000000ULL) / 1000,
			      1000, on_timer, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->timer, SD_EVENT_ON);
	if (r < 0) {
		snprintf(err, errlen, "cannot arm the turn timer: %s", strerror(-r));
		hwstruct_stop(s);
	}
	return r;
}

/* ---- hits ---- */

static struct hwstruct_thread *thread_get(struct hwstruct *s, uint32_t tid)
{
	bool added;
	long i = tidtab_get(&s->tids, tid, &added);

	if (i < 0)
		return NULL;
	if (added) {
		s->threads[i].tid = tid;
		s->threads[i].w.lost = true; /* where it is, is unknown */
	}
	return &s->threads[i];
}

struct emit_ctx {
	struct hwstruct *s;
	uint32_t g;
};

static void emit(void *ud, const uint32_t *nodes, size_t n)
{
	struct emit_ctx *c = ud;
	struct spp_graph_info gi;

	if (spp_add(c->s->spp, c->g, nodes, n, 1) == 0) {
		c->s->paths++;
		c->s->gr[c->g].paths++;
	}
	spp_graph_get(c->s->spp, c->g, &gi);
	if (gi.state != SPP_ACTIVE)
		c->s->next = true;
}

static void count_hit(struct hwstruct *s, const struct kp_hwbp *ev)
{
	uint32_t g = s->count_graph[s->count_turn - 1];
	struct hwstruct_graph *x = &s->gr[g];

	for (uint32_t i = 0; i < x->nconds; i++) {
		if (cfg_block_get(s->cfg, x->conds[i])->last != ev->ip)
			continue;
		if (hwbranch_taken(x->cc[i], ev->flags))
			x->taken[i]++;
		else
			x->not_taken[i]++;
		return;
	}
	s->stray++;
}

/* With the entry breakpoint, a thread's hits count from its first call in the turn, as
 * spp.c counts a graph from the call after it became active: a loop graph then starts
 * with its entry, not in the middle of an activation (which would leave a long loop's
 * window without an entry, and its coefficient without a denominator). False (counted as
 * unsynced) for a hit to ignore. */
static bool thread_sync(struct hwstruct *s, struct hwstruct_thread *th, const struct kp_hwbp *ev)
{
	bool entry = false;

	if (!s->has_entry || th->synced)
		return true;
	for (uint32_t i = 0; i < s->nslots; i++)
		entry |= s->slots[i].addr == ev->ip && s->slots[i].kind == HWSTRUCT_ENTRY;
	if (!entry) {
		s->unsynced++;
		return false;
	}
	th->synced = true;
	return true;
}

/* The hit through the current graph's walk for each slot at its address: false if none. */
static bool walk_hit(struct hwstruct *s, struct hwstruct_thread *th, const struct kp_hwbp *ev,
		     struct emit_ctx *c)
{
	bool used = false;

	for (uint32_t i = 0; i < s->nslots; i++) { /* the entry first, then its jcc if one */
		const struct hwstruct_slot *sl = &s->slots[i];

		if (sl->addr != ev->ip || sl->kind != HWSTRUCT_ENTRY)
			continue;
		hwspp_entry(s->gr[s->cur].walk, &th->w, emit, c);
		used = true;
	}
	for (uint32_t i = 0; i < s->nslots; i++) {
		const struct hwstruct_slot *sl = &s->slots[i];

		if (sl->addr != ev->ip || sl->kind == HWSTRUCT_ENTRY)
			continue;
		hwspp_hit(s->gr[s->cur].walk, &th->w, sl->block,
			  sl->kind == HWSTRUCT_JCC && hwbranch_taken(sl->cc, ev->flags), emit, c);
		used = true;
	}
	return used;
}

void hwstruct_on_event(struct hwstruct *s, const struct kp_hwbp *ev)
{
	struct hwstruct_thread *th;
	struct emit_ctx c;

	if (ev->trace >> TURN_BITS != s->id ||
	    (ev->trace & ((1u << TURN_BITS) - 1)) != (s->turn & ((1u << TURN_BITS) - 1)) ||
	    !s->set) {
		s->late++;
		return;
	}
	s->hits++;
	if (s->cur < 0) {
		count_hit(s, ev);
		return;
	}
	c = (struct emit_ctx){s, (uint32_t)s->cur};
	s->gr[s->cur].hits++;
	th = thread_get(s, ev->tid);
	if (!th) {
		s->lost_threads++;
		return;
	}
	if (!thread_sync(s, th, ev))
		return;
	if (!walk_hit(s, th, ev, &c))
		s->stray++;
	if (s->next)
		next_turn(s, NULL);
}

void hwstruct_pause(struct hwstruct *s)
{
	if (s->paused || !s->set)
		return;
	turn_close(s); /* the threads' walks end: none spans the time off */
	s->paused = true;
}

int hwstruct_resume(struct hwstruct *s, char *err, size_t errlen)
{
	if (!s->paused)
		return 0;
	s->paused = false;
	return s->timer ? turn_arm(s, err, errlen) : 0;
}

void hwstruct_stop(struct hwstruct *s)
{
	uint32_t key = (uint32_t)s->pid;

	turn_close(s);
	s->turn_desc[0] = '\0';
	if (s->loader)
		bpf_map__delete_elem(loader_hwbp_traces(s->loader), &key, sizeof(key), 0);
	s->timer = sd_event_source_disable_unref(s->timer);
}

void hwstruct_release(struct hwstruct *s)
{
	if (!s)
		return;
	hwstruct_stop(s);
	for (uint32_t g = 0; g < HWSTRUCT_MAX_GRAPHS; g++) {
		hwspp_graph_free(s->gr[g].walk);
		free(s->gr[g].assume);
	}
	free(s->threads);
	tidtab_release(&s->tids);
	s->threads = NULL;
}
