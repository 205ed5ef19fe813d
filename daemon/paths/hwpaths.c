// SPDX-License-Identifier: GPL-2.0-only
/* hwpaths.c: branch counts and loop paths of a JIT function in anonymous memory, where uprobes
 * cannot go, from hardware execute breakpoints on its loops' conditional branches.
 *
 * hwbranch_plan() cuts the branches into groups of at most four (the debug registers of a
 * thread): first a group per loop whose branches all fit, innermost first, then the rest for
 * their counts alone. The groups take turns in order, each for its share of the duration and
 * of the event budget; a turn opens one breakpoint per branch and thread (hwbp.c) with
 * kp_hwbp_hit attached, which reports every hit with the flags it saw. Here each hit becomes
 * taken or not taken (hwbranch_taken), and, in a loop's group, a step of that loop's paths
 * (hwbranch_walk_hit), pushed into the trace's k-SF: an iteration that ends on a back edge
 * is a Ball-Larus path of the function (cfg_path_encode); one that leaves the loop gets an id
 * above the function's paths, kept here for decoding. A loop activation is a k-SF activation,
 * so sequences of k iterations come out as k-iteration paths. Every iteration followed also adds
 * its blocks to the turn's block runs: the loop's event counts (events.h) without a path table.
 *
 * Records carry id << 18 | stretch << 10 | turn, so hits still in the ring buffer when a turn
 * ends are counted for the group that was on. The budget (paths.c) may take the breakpoints off
 * and put them back within a turn (hwpaths_pause/resume; the turn's time goes on meanwhile, its
 * branches' covered time does not, and a turn ends only once it was on HWPATHS_MIN_ON_MS or its
 * whole time): each time they come back is a new stretch, and a thread's
 * walk starts afresh at its first hit of a new stretch, so no path spans the time off. The
 * function's code is compared with the bytes read at the start every HWPATHS_CHECK_MS: recompiled
 * or freed code stops the trace, saying so, and what was counted stays.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kprof/events.h"
#include "os/clock.h"
#include "kernel/hwbp.h"
#include "paths/hwpaths.h"
#include "paths/hwstruct.h"
#include "kernel/loader.h"
#include "os/log.h"

#define TURN_BITS 10
#define STRETCH_BITS 8 /* of the 22 bits above the turn: the stretch, the rest the trace id */
#define STRETCH_MASK ((1u << STRETCH_BITS) - 1)
#define TAG_MASK ((1u << (STRETCH_BITS + TURN_BITS)) - 1)

struct emit_ctx {
	struct hwpaths *h;
	struct hwpaths_thread *th;
	uint32_t loop;
	size_t turn;
};

static uint64_t local_id(struct hwpaths *h, const struct cfg_step *steps, size_t n)
{
	uint64_t base = cfg_num_paths(h->cfg);
	struct hwpaths_local *l;

	for (size_t i = 0; i < h->nlocal; i++)
		if (h->local[i].n == n && !memcmp(h->local[i].steps, steps, n * sizeof(*steps)))
			return base + i;
	if (h->nlocal == HWPATHS_MAX_LOCAL)
		return UINT64_MAX;
	if (!h->local) {
		h->local = calloc(HWPATHS_MAX_LOCAL, sizeof(*h->local));
		if (!h->local)
			return UINT64_MAX;
	}
	l = &h->local[h->nlocal];
	l->steps = malloc(n * sizeof(*steps));
	if (!l->steps)
		return UINT64_MAX;
	memcpy(l->steps, steps, n * sizeof(*steps));
	l->n = (uint32_t)n;
	return base + h->nlocal++;
}

static uint64_t path_id(struct hwpaths *h, const struct cfg_step *steps, size_t n)
{
	uint64_t id;

	if (cfg_bl_ok(h->cfg) && cfg_path_encode(h->cfg, steps, n, &id) == 0)
		return id;
	return local_id(h, steps, n);
}

/* An iteration of the turn's loop, whole: its blocks ran once each (events_add_steps). */
static void runs_add(struct hwpaths *h, size_t turn, const struct cfg_step *steps, size_t n)
{
	if (!h->runs[turn])
		h->runs[turn] = calloc(cfg_nblocks(h->cfg) + 1, sizeof(uint64_t));
	if (h->runs[turn])
		events_add_steps(h->cfg, steps, n, 1, h->runs[turn]);
}

static void emit(void *ud, enum hwbranch_op op, const struct cfg_step *steps, size_t n)
{
	struct emit_ctx *c = ud;
	struct hwpaths *h = c->h;
	uint64_t id;

	switch (op) {
	case HWBRANCH_ENTER:
		/* routine 0 for every loop: a path followed in two turns (a loop alone, then within
		 * its parent) is one row, its count the sum over the turns */
		ksf_enter(h->ksf, &c->th->ctx, 0);
		h->activations++;
		h->group_acts[c->turn]++;
		return;
	case HWBRANCH_PATH:
	case HWBRANCH_LEAVE:
		runs_add(h, c->turn, steps, n);
		id = path_id(h, steps, n);
		if (id == UINT64_MAX) {
			h->aborted++;
		} else {
			ksf_push(h->ksf, &c->th->ctx, id);
			h->path_events++;
		}
		if (op == HWBRANCH_LEAVE)
			ksf_exit(h->ksf, &c->th->ctx);
		return;
	case HWBRANCH_ABORT:
		ksf_exit(h->ksf, &c->th->ctx);
		h->aborted++;
		return;
	}
}

static struct hwpaths_thread *thread_get(struct hwpaths *h, uint32_t tid)
{
	long i = h->threads ? tidtab_get(&h->tids, tid, NULL) : -ENOMEM;

	if (i < 0)
		return NULL;
	if (!h->threads[i] && (h->threads[i] = calloc(1, sizeof(**h->threads))))
		h->threads[i]->tid = tid;
	return h->threads[i];
}

static void turn_close(struct hwpaths *h)
{
	uint64_t d;
	const struct hwpaths_turn *g;

	if (!h->set)
		return;
	hwbp_set_free(h->set);
	h->set = NULL;
	d = now_ns(CLOCK_MONOTONIC) - h->turn_since;
	g = &h->turns[h->turn];
	for (uint32_t i = 0; i < g->n; i++)
		h->covered_ns[g->br[i]] += d;
	h->group_ns[h->turn] += d;
	h->turn_since = 0;
}

/* The breakpoints of the turn on: the trace registered as id, stretch and turn. */
static int turn_arm(struct hwpaths *h, char *err, size_t errlen)
{
	const struct hwpaths_turn *g = &h->turns[h->turn];
	uint32_t key = (uint32_t)h->pid, val;
	uint64_t addrs[HWBP_SLOTS];
	int r;

	h->stretch++;
	val = ((h->id << STRETCH_BITS) | (h->stretch & STRETCH_MASK)) << TURN_BITS |
	      (uint32_t)h->turn;
	for (uint32_t i = 0; i < g->n; i++)
		addrs[i] = h->plan.br[g->br[i]].addr;
	r = bpf_map__update_elem(loader_hwbp_traces(h->loader), &key, sizeof(key), &val,
				 sizeof(val), 0);
	if (r < 0) {
		snprintf(err, errlen, "cannot register the trace (kp_hwbp_traces): %s",
			 strerror(-r));
		return r;
	}
	r = hwbp_set_open(h->pid, addrs, g->n, loader_hwbp_prog_fd(h->loader), &h->set, err,
			  errlen);
	if (r < 0)
		return r;
	h->turn_since = now_ns(CLOCK_MONOTONIC);
	return 0;
}

/* The turn h->turn begins (its breakpoints on, unless the budget holds them off). */
static int turn_open(struct hwpaths *h, char *err, size_t errlen)
{
	const struct hwpaths_turn *g = &h->turns[h->turn];
	int r;

	h->turn_start = now_ns(CLOCK_MONOTONIC);
	h->turn_events = 0;
	/* The description once the breakpoints are in (a client waits for it to start work). */
	r = h->paused ? 0 : turn_arm(h, err, errlen);
	if (r < 0)
		return r;
	if (g->assume)
		snprintf(h->turn_desc, sizeof(h->turn_desc),
			 "turn %zu of %zu: the paths of the loop at B%u, %u branches followed, the "
			 "others assumed one way",
			 h->turn + 1, h->nturns, g->loop, g->n);
	else
		snprintf(h->turn_desc, sizeof(h->turn_desc),
			 "turn %zu of %zu: %u branches counted%s", h->turn + 1, h->nturns, g->n,
			 g->loop != CFG_NONE ? ", their loop's paths followed" : "");
	return 0;
}

/* After the counting turns: a turn per loop that did not fit but whose branches that went both
 * ways do, innermost first, sharing the time and budget left. */
static void plan_assumed(struct hwpaths *h)
{
	size_t nb = cfg_nblocks(h->cfg), first = h->nturns;
	uint64_t now = now_ns(CLOCK_MONOTONIC), left;

	for (size_t i = 0; i < h->plan.nbr && h->nturns < HWBRANCH_MAX; i++) {
		uint32_t lp = h->plan.br[i].loop;
		struct hwpaths_turn *t = &h->turns[h->nturns];
		bool seen = false;
		int n;

		for (size_t j = 0; j < h->nturns && !seen; j++)
			seen = h->turns[j].loop == lp;
		if (seen)
			continue;
		t->assume = malloc(nb);
		if (!t->assume)
			return;
		n = hwbranch_assume_plan(h->cfg, &h->plan, lp, h->taken, h->not_taken, t->assume,
					 t->br);
		if (n <= 0) {
			free(t->assume);
			t->assume = NULL;
			continue;
		}
		t->n = (uint32_t)n;
		t->loop = lp;
		h->nturns++;
	}
	/* None could be followed: the counting turns again, for the time left. */
	for (size_t q = 0; h->nturns == first && q < h->ncount && first + q < HWBRANCH_MAX; q++) {
		h->turns[first + q] = h->turns[q];
		h->turns[first + q].assume = NULL;
		if (q + 1 == h->ncount || first + q + 1 == HWBRANCH_MAX)
			h->nturns = first + q + 1;
	}
	if (h->nturns == first)
		return;
	left = h->started_ns + h->duration_ns > now ? h->started_ns + h->duration_ns - now : 0;
	h->turn_ns = left / (h->nturns - first);
	if (h->budget)
		h->turn_budget = (h->budget / 2 + h->nturns - first - 1) / (h->nturns - first);
}

/* The next group's turn, or the end of the trace after the last (1: ended). */
static int next_turn(struct hwpaths *h, const char *why)
{
	char err[256];

	turn_close(h);
	if (h->second_half && h->turn + 1 == h->ncount)
		plan_assumed(h);
	if (h->turn + 1 >= h->nturns) {
		h->stop(h->stop_arg, why);
		return 1;
	}
	h->turn++;
	if (turn_open(h, err, sizeof(err)) < 0) {
		snprintf(h->stopped, sizeof(h->stopped), "%s", err);
		log_warn("pid %d: branch trace: %s", h->pid, err);
		h->stop(h->stop_arg, "breakpoints failed");
		return 1;
	}
	return 0;
}

/* Whether the turn on was on long enough to end: its time is the wall's, so that every group
 * gets its share of the duration while the budget takes the breakpoints off and on, but a turn
 * that fell into the time they were off waits until they were on for HWPATHS_MIN_ON_MS (or its
 * whole time, if shorter). */
static bool turn_had_time(const struct hwpaths *h, uint64_t now)
{
	uint64_t on = h->group_ns[h->turn] + (h->set ? now - h->turn_since : 0);
	uint64_t need = HWPATHS_MIN_ON_MS * 1000000ULL;

	return on >= (h->turn_ns < need ? h->turn_ns : need);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct hwpaths *h = userdata;
	uint64_t now = now_ns(CLOCK_MONOTONIC), end;

	(void)usec;
	if (!h->set && !h->paused)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (hwbp_code_changed(h->pid, h->start, h->code, h->len, h->stopped, sizeof(h->stopped))) {
		log_warn("pid %d: branch trace: %s", h->pid, h->stopped);
		h->stop(h->stop_arg, "code changed");
		return 0;
	}
	end = h->turn_start + h->turn_ns;
	if (now >= end && turn_had_time(h, now)) {
		if (next_turn(h, "duration"))
			return 0;
		end = h->turn_start + h->turn_ns;
	}
	if (end <= now) /* its time is up, not its time on: see again soon */
		end = now + HWPATHS_MIN_ON_MS * 1000000ULL / 2;
	if (end > now + HWPATHS_CHECK_MS * 1000000ULL)
		end = now + HWPATHS_CHECK_MS * 1000000ULL;
	return sd_event_source_set_time(s, end / 1000);
}

int hwpaths_start(struct hwpaths *h, sd_event *event, char *err, size_t errlen)
{
	int r = hwbranch_plan(h->cfg, h->code, h->len, h->start, &h->plan);

	if (!h->threads) { /* the threads' states, each allocated at its first event */
		h->threads = calloc(HWPATHS_THREAD_SLOTS, sizeof(*h->threads));
		tidtab_init(&h->tids, HWPATHS_THREAD_SLOTS);
		if (!h->threads) {
			snprintf(err, errlen, "no memory for the threads' states");
			return -ENOMEM;
		}
	}
	if (r == -ENOENT) {
		snprintf(
		    err, errlen,
		    "no loop of the function at 0x%" PRIx64
		    " has a conditional branch on the flags (%zu outside loops, %zu not on the "
		    "flags): nothing for hardware breakpoints to follow",
		    h->start, h->plan.not_looped, h->plan.not_flag);
		return r;
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot plan the breakpoints: %s", strerror(-r));
		return r;
	}
	for (size_t q = 0; q < h->plan.ngroups; q++) {
		const struct hwbranch_group *g = &h->plan.groups[q];

		h->turns[q] = (struct hwpaths_turn){.n = g->n, .loop = g->loop};
		memcpy(h->turns[q].br, h->plan.idx + g->first, g->n * sizeof(uint32_t));
	}
	h->nturns = h->ncount = h->plan.ngroups;
	/* A loop with no group of its own: keep half the time for following it on assumptions. */
	for (size_t i = 0; i < h->plan.nbr && !h->second_half; i++) {
		bool has = false;

		for (size_t q = 0; q < h->ncount && !has; q++)
			has = h->turns[q].loop == h->plan.br[i].loop;
		h->second_half = !has;
	}
	h->started_ns = now_ns(CLOCK_MONOTONIC);
	h->turn_ns = h->duration_ns / (h->second_half ? 2 : 1) / h->nturns;
	h->turn_budget =
	    h->budget ? (h->budget / (h->second_half ? 2 : 1) + h->nturns - 1) / h->nturns : 0;
	r = turn_open(h, err, errlen);
	if (r < 0)
		return r;
	r = sd_event_add_time(event, &h->timer, CLOCK_MONOTONIC,
			      (now_ns(CLOCK_MONOTONIC) + HWPATHS_CHECK_MS * 1000000ULL) / 1000,
			      1000, on_timer, h);
	if (r >= 0) /* not one-shot: the timer comes back for every check and turn */
		r = sd_event_source_set_enabled(h->timer, SD_EVENT_ON);
	if (r < 0) {
		snprintf(err, errlen, "cannot arm the turn timer: %s", strerror(-r));
		hwpaths_stop(h);
	}
	return r;
}

void hwpaths_on_event(struct hwpaths *h, const struct kp_hwbp *ev)
{
	const struct hwpaths_turn *g;
	const struct hwbranch *br = NULL;
	struct hwpaths_thread *th;
	size_t turn = ev->trace & ((1u << TURN_BITS) - 1), bi = 0;
	uint32_t tag = ev->trace & TAG_MASK; /* the stretch and turn of the hit */
	bool taken;

	if (ev->trace >> (TURN_BITS + STRETCH_BITS) != h->id || turn >= h->nturns) {
		h->late++;
		return;
	}
	g = &h->turns[turn];
	for (uint32_t i = 0; i < g->n && !br; i++)
		if (h->plan.br[g->br[i]].addr == ev->ip)
			br = &h->plan.br[bi = g->br[i]];
	if (!br) {
		h->stray++;
		return;
	}
	h->events++;
	taken = hwbranch_taken(br->cc, ev->flags);
	if (taken)
		h->taken[bi]++;
	else
		h->not_taken[bi]++;
	if (g->loop != CFG_NONE) {
		th = thread_get(h, ev->tid);
		if (!th) {
			h->lost_threads++;
		} else {
			struct emit_ctx c = {h, th, g->loop, turn};

			/* A new turn, or the breakpoints back after the budget took them off: the
			 * thread starts afresh (no path spans the time they were off). */
			if (th->turn != tag)
				hwbranch_walk_reset(&th->walk, emit, &c);
			th->turn = tag;
			hwbranch_walk_hit_assume(h->cfg, g->loop, g->assume, &th->walk, br->block,
						 taken, emit, &c);
		}
	}
	if (turn == h->turn && h->set && h->turn_budget && ++h->turn_events >= h->turn_budget)
		next_turn(h, "budget");
}

void hwpaths_pause(struct hwpaths *h)
{
	if (h->st) {
		hwstruct_pause(h->st);
		return;
	}
	if (h->paused || !h->set)
		return;
	turn_close(h);
	h->paused = true;
}

int hwpaths_resume(struct hwpaths *h, char *err, size_t errlen)
{
	bool was = h->paused;

	if (h->st)
		return hwstruct_resume(h->st, err, errlen);
	h->paused = false; /* back on the turn now (unless the trace ended: no timer) */
	return was && h->timer ? turn_arm(h, err, errlen) : 0;
}

void hwpaths_stop(struct hwpaths *h)
{
	uint32_t key = (uint32_t)h->pid;

	if (h->st) {
		hwstruct_stop(h->st);
		return;
	}
	turn_close(h);
	h->turn_desc[0] = '\0';
	if (h->loader)
		bpf_map__delete_elem(loader_hwbp_traces(h->loader), &key, sizeof(key), 0);
	h->timer = sd_event_source_disable_unref(h->timer);
}

int hwpaths_decode(const struct hwpaths *h, uint64_t id, struct cfg_step *steps, size_t cap)
{
	uint64_t base = cfg_num_paths(h->cfg);

	if (id < base)
		return cfg_path_decode(h->cfg, id, steps, cap);
	if (id - base >= h->nlocal)
		return -ERANGE;
	if (h->local[id - base].n > cap)
		return -ENOSPC;
	memcpy(steps, h->local[id - base].steps, h->local[id - base].n * sizeof(*steps));
	return (int)h->local[id - base].n;
}

uint64_t hwpaths_covered(const struct hwpaths *h, size_t i)
{
	const struct hwpaths_turn *g = &h->turns[h->turn];
	uint64_t c = h->covered_ns[i];

	if (h->set)
		for (uint32_t j = 0; j < g->n; j++)
			if (g->br[j] == i)
				c += now_ns(CLOCK_MONOTONIC) - h->turn_since;
	return c;
}

void hwpaths_free(struct hwpaths *h)
{
	if (!h)
		return;
	hwpaths_stop(h);
	hwstruct_release(h->st);
	free(h->st);
	for (size_t i = 0; h->threads && i < HWPATHS_THREAD_SLOTS; i++) {
		if (h->threads[i])
			ksf_ctx_release(&h->threads[i]->ctx);
		free(h->threads[i]);
	}
	free(h->threads);
	tidtab_release(&h->tids);
	for (size_t i = 0; i < h->nturns; i++) {
		free(h->turns[i].assume);
		free(h->runs[i]);
	}
	for (size_t i = 0; i < h->nlocal; i++)
		free(h->local[i].steps);
	free(h->local);
	free(h->code);
	free(h);
}
