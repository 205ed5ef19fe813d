// SPDX-License-Identifier: GPL-2.0-only
/* exact.c: exact mode of a target (attach --calls): its life, its timers and what its probes
 * report.
 *
 * Exact mode owns its state (struct calls, exact_internal.h; opaque to the rest of kprofd): the
 * plan of probes and their links (exact_probes.c), the burst clock, the counts per function and
 * the HCCT of the calls as entered. Its timers run on the daemon's loop, given at creation with
 * the target's symbols and profile: --burst's (probes in for burst_ms of every period_ms) and
 * --calls=hot:N's warm-up (sampling first, then the N hottest JIT functions sampled are probed;
 * a try every CALLS_HOT_WARMUP_MS until one is sampled, CALLS_HOT_TRIES at most). The caller is
 * told when probes go in (calls_env.probes_in) so that it drains their events sooner.
 * Events (calls_on_event, on the ring buffer's path): only those stamped with the epoch of the
 * probe set all in count; each thread's cursor in the HCCT follows its entries and returns
 * (callsync.c: a loss, seen as a gap in the thread's numbers, never nests a context under a
 * caller it did not have; what was lost and left out is counted and shown).
 *
 * Cost and budget: a hit of a call probe (entry or return) and of a breakpoint costs the
 * thread a roughly fixed CPU time, measured on this host (probecost.c), so the probes' time is
 * the hits times that, and the slowdown of the target is its CPU time (its CPU clock, whatever
 * the kernel books the traps as) over that time less the probes'. Every CALLS_COST_CHECK_MS the
 * budget (--max-slowdown, else kprofd's probe_slowdown_pct) is kept by pcost_budget: a stretch
 * of probes over it goes off at once, and they come back when the target's work has paid for it
 * (with --burst, bursts are skipped meanwhile). The counts then cover the part of the time the
 * probes were in (the duty, shown with the times the budget took them off). Uprobes taken off
 * keep trapping for about a second, their program already detached (the kernel waits for a
 * grace period before it removes the int3): those hits send no event, so they are counted at
 * the rate of the stretch before, for as long as the int3 is at the hottest probed entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/pcost.h"
#include "kprof/profile.h"
#include "os/clock.h"
#include "exact/exact.h"
#include "exact/exact_internal.h"
#include "exact/hwcalls.h"
#include "kernel/hwbp.h"
#include "kernel/probecost.h"
#include "os/log.h"
#include "os/procfs.h"

#define CALLS_HOT_WARMUP_MS 1000 /* --calls=hot:N: samples before the choice */
#define CALLS_HOT_TRIES 10	 /* warm-ups before giving up (no JIT function sampled) */
#define CALLS_HOT_MAX 16
#define CALLS_COST_CHECK_MS 250 /* the probes' cost read, and the budget kept, this often */

/* "hot:N" of --calls: N, or -EINVAL with why. */
static int parse_hot(const char *functions, const struct calls_opts *o, char *err, size_t errlen)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(functions + 4, &end, 10);
	if (errno || *end || end == functions + 4 || n < 1 || n > CALLS_HOT_MAX) {
		snprintf(err, errlen, "--calls=hot:N takes N from 1 to %d", CALLS_HOT_MAX);
		return -EINVAL;
	}
	if (o->burst_ms) {
		snprintf(err, errlen, "--calls=hot:N does not go with --burst");
		return -EINVAL;
	}
	return (int)n;
}

/* The probes' cost per hit (measured once per kprofd) and the budget; err says why not. */
static int budget_setup(struct calls *c, const struct calls_opts *o, char *err, size_t errlen)
{
	struct probecost_budget b;
	int r = probecost_budget(c->env.loader, PROBECOST_CALL, o->max_slowdown,
				 c->env.max_slowdown, &b, err, errlen);

	c->hit_ns = b.hit_ns;
	c->max_slowdown = b.max;
	c->max_slowdown_default = b.max_default;
	return r;
}

static int calls_setup(struct calls *c, const struct calls_opts *o, char *err, size_t errlen)
{
	int r;

	r = hcct_new(&(struct hcct_params){.slots = c->env.hcct_slots}, &c->exact);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	c->force = o->force;
	r = budget_setup(c, o, err, errlen);
	if (r < 0)
		return r;
	if (o->functions && !strncmp(o->functions, "hot:", 4)) {
		r = parse_hot(o->functions, o, err, errlen);
		if (r > 0)
			c->hot = (unsigned)r;
		return r;
	}
	if (o->functions && o->functions[0]) {
		c->names = strdup(o->functions);
		if (!c->names)
			return -ENOMEM;
	}
	c->burst_ms = o->burst_ms;
	c->period_ms = o->period_ms;
	return calls_plan(c, o->force, err, errlen);
}

int calls_new(const struct calls_env *env, const struct calls_opts *o, struct calls **ret,
	      char *err, size_t errlen)
{
	struct calls *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->env = *env;
	r = calls_setup(c, o, err, errlen);
	if (r < 0) {
		calls_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

size_t calls_nprobes(const struct calls *c)
{
	return c ? c->nprobes : 0;
}

/* The uprobes' hits so far: their events received, and those estimated while they linger. */
static uint64_t uprobe_hits(const struct calls *c)
{
	return c->events + c->outside + (uint64_t)c->hidden_hits;
}

/* The CPU time of the probes so far, ns: their hits (the uprobes', and the breakpoints') at
 * the cost of one. */
static uint64_t probe_ns(const struct calls *c)
{
	return uprobe_hits(c) * c->hit_ns + hwcalls_hits(c->hw) * c->hw_hit_ns;
}

/* The target's CPU time now, ns (0: gone; its last reading stays in the stretch figures). */
static uint64_t target_cpu_ns(const struct calls *c)
{
	uint64_t ns = 0;

	return procfs_cpu_ns(c->env.pid, &ns) < 0 ? 0 : ns;
}

/* Probes off (calls_off), and their lingering watched: the kernel detaches their program at
 * once and removes their int3 about a second later, and the traps in between cost the target
 * as much as before while no event tells of them. */
static void go_off(struct calls *c)
{
	uint64_t cpu = target_cpu_ns(c), hits = c->events + c->outside - c->stretch_hits;

	calls_off(c);
	c->linger_addr = c->nprobes && cpu > c->stretch_cpu_ns ? calls_hottest_probe(c) : 0;
	c->linger_rate = c->linger_addr ? (double)hits / (double)(cpu - c->stretch_cpu_ns) : 0;
	c->linger_cpu_ns = cpu;
}

/* While the hottest probe's int3 is still in the code: its traps so far, at the rate before. */
static void linger_step(struct calls *c, uint64_t cpu)
{
	uint8_t b = 0;

	if (!c->linger_addr || cpu < c->linger_cpu_ns)
		return;
	c->hidden_hits += c->linger_rate * (double)(cpu - c->linger_cpu_ns);
	c->linger_cpu_ns = cpu;
	if (procfs_read_mem(c->env.pid, c->linger_addr, &b, 1) != 1 || b != 0xcc)
		c->linger_addr = 0; /* gone (at most one check ago: counted to now) */
}

static int on_cost(sd_event_source *s, uint64_t usec, void *userdata);

/* Probes in (calls_on), the stretch's figures taken, the caller told, the cost's check armed
 * at the first; err says why not. */
static int go_on(struct calls *c, char *err, size_t errlen)
{
	bool first = !c->enabled_ns;
	int r = calls_on(c, err, errlen);

	if (r < 0)
		return r;
	c->linger_addr = 0; /* whatever lingered is gone: the kernel let the probes in */
	c->stretch_cpu_ns = target_cpu_ns(c);
	c->stretch_hits = c->events + c->outside;
	if (first)
		c->cpu0_ns = c->cpu_last_ns = c->stretch_cpu_ns;
	if (c->env.probes_in)
		c->env.probes_in(c->env.ctx);
	if (c->cost_timer || !(c->hit_ns || c->hw_hit_ns))
		return 0;
	r = sd_event_add_time_relative(c->env.event, &c->cost_timer, CLOCK_MONOTONIC,
				       CALLS_COST_CHECK_MS * 1000ULL, 1000, on_cost, c);
	if (r < 0)
		log_warn("pid %d: exact mode: no cost check (%s): its budget is not kept",
			 c->env.pid, strerror(-r));
	return 0;
}

/* The budget's check: probes off for it, or back in (pcost_budget). */
static void budget_step(struct calls *c, uint64_t cpu)
{
	uint64_t p = probe_ns(c);
	struct pcost_use all = {cpu - c->cpu0_ns, p},
			 st = {cpu - c->stretch_cpu_ns,
			       (c->events + c->outside - c->stretch_hits) * c->hit_ns};
	enum pcost_step step = pcost_budget(c->on_since_ns != 0, &all, &st, c->max_slowdown);
	char err[256], msg[320];

	log_debug("pid %d: exact mode's cost: %.3fx over %.0f ms of CPU time, %.3fx over the last "
		  "%.0f ms%s: %s",
		  c->env.pid, pcost_slowdown_ns(all.cpu_ns, all.probe_ns), all.cpu_ns / 1e6,
		  pcost_slowdown_ns(st.cpu_ns, st.probe_ns), st.cpu_ns / 1e6,
		  c->on_since_ns ? ""
		  : c->held	 ? " (off: budget)"
				 : " (off)",
		  step == PCOST_OFF  ? "off"
		  : step == PCOST_ON ? "on"
				     : "as is");
	if (step == PCOST_OFF) {
		if (!c->budget_offs) {
			pcost_over_budget(msg, sizeof(msg), "exact mode", &st, c->max_slowdown);
			log_info("pid %d: %s", c->env.pid, msg);
		}
		go_off(c);
		c->held = true;
		c->budget_offs++;
	} else if (step == PCOST_ON && c->held) {
		/* With --burst the next burst puts them back in; else here, once the kernel is
		 * done removing the last ones (else at a later check). */
		if (!c->burst_ms && calls_may_attach(c, err, sizeof(err)) < 0)
			return;
		c->held = false;
		if (!c->burst_ms && go_on(c, err, sizeof(err)) < 0)
			log_warn("pid %d: exact mode stopped: %s", c->env.pid, err);
	}
}

static int on_cost(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct calls *c = userdata;
	uint64_t cpu = target_cpu_ns(c);
	int r;

	if (cpu >= c->cpu0_ns && cpu >= c->stretch_cpu_ns && cpu) {
		c->cpu_last_ns = cpu;
		linger_step(c, cpu);
		budget_step(c, cpu);
	}
	r = sd_event_source_set_time(s, usec + CALLS_COST_CHECK_MS * 1000ULL);
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Bursting: probes on for burst_ms, off for the rest of each period_ms. */
static int on_burst(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct calls *c = userdata;
	char err[256];

	log_debug("pid %d: burst timer at %llu: probes %s", c->env.pid, (unsigned long long)usec,
		  c->on_since_ns ? "off"
		  : c->held	 ? "off (budget)"
				 : "on");
	if (c->on_since_ns) {
		go_off(c);
		return sd_event_source_set_time(s, usec + (c->period_ms - c->burst_ms) * 1000ULL);
	}
	if (c->held) /* over the budget: this burst left out */
		return sd_event_source_set_time(s, usec + c->period_ms * 1000ULL);
	/* A removal of probes in the same code is still waiting for the kernel: come back
	 * rather than block the loop (a probe attached now would wait for it in the kernel). */
	if (calls_may_attach(c, err, sizeof(err)) < 0)
		return sd_event_source_set_time(s, usec + 50000);
	if (go_on(c, err, sizeof(err)) < 0) {
		log_warn("pid %d: exact mode stopped: %s", c->env.pid, err);
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	}
	/* The window starts once the probes are in (attaching may have waited for the last
	 * removal to finish). */
	return sd_event_source_set_time(s, now_ns(CLOCK_MONOTONIC) / 1000 + c->burst_ms * 1000ULL);
}

/* --calls=hot:N, after a warm-up: exact mode on the N hottest JIT functions sampled. */
static int on_hot(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct calls *c = userdata;
	char err[256], *names = NULL;
	int r, got;

	if (!c->hot)
		return 0;
	r = got = calls_hot_names(c->env.profile, c->hot, &names);
	if (r == 0 && ++c->hot_tries < CALLS_HOT_TRIES) {
		free(names);
		r = sd_event_source_set_time(s, usec + CALLS_HOT_WARMUP_MS * 1000ULL);
		return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	}
	c->hot = 0;
	if (r <= 0) {
		free(names);
		log_warn("pid %d: exact mode: no JIT function sampled after %u s: no calls counted",
			 c->env.pid, CALLS_HOT_TRIES * CALLS_HOT_WARMUP_MS / 1000);
		return 0;
	}
	free(c->names);
	c->names = names;
	r = calls_plan(c, c->force, err, sizeof(err));
	if (r >= 0 && c->hw && c->hw->n &&
	    (r = probecost_hwbp_check(c->env.loader, err, sizeof(err))) >= 0)
		c->hw_hit_ns = probecost_hit_ns(c->env.loader, PROBECOST_HWBP);
	if (r >= 0)
		r = go_on(c, err, sizeof(err));
	if (r < 0) {
		log_warn("pid %d: exact mode on the hottest functions (%s): %s", c->env.pid, names,
			 err);
		return 0;
	}
	log_info("pid %d: exact mode on the %d hottest JIT functions sampled: %s", c->env.pid, got,
		 names);
	return 0;
}

int calls_start(struct calls *c, char *err, size_t errlen)
{
	int r;

	if (c->hot) { /* sample first, choose after a warm-up (on_hot) */
		r = sd_event_add_time_relative(c->env.event, &c->hot_timer, CLOCK_MONOTONIC,
					       CALLS_HOT_WARMUP_MS * 1000ULL, 1000, on_hot, c);
		if (r < 0)
			snprintf(err, errlen, "cannot arm the warm-up timer: %s", strerror(-r));
		return r;
	}
	if (c->hw && c->hw->n) {
		r = probecost_hwbp_check(c->env.loader, err, errlen);
		if (r < 0)
			return r;
		c->hw_hit_ns = probecost_hit_ns(c->env.loader, PROBECOST_HWBP);
	}
	r = go_on(c, err, errlen);
	if (r < 0)
		return r;
	if (!c->burst_ms)
		return 0;
	r = sd_event_add_time_relative(c->env.event, &c->timer, CLOCK_MONOTONIC,
				       c->burst_ms * 1000ULL, 1000, on_burst, c);
	if (r >= 0)
		r = sd_event_source_set_enabled(c->timer, SD_EVENT_ON);
	if (r < 0)
		snprintf(err, errlen, "cannot arm the burst timer: %s", strerror(-r));
	return r;
}

/* The probes' cost since the first went in, now (now: CLOCK_MONOTONIC). */
static void cost_live(const struct calls *c, uint64_t now, struct calls_stats *s)
{
	uint64_t hw = hwcalls_hits(c->hw), up = uprobe_hits(c), cpu;

	s->hits = up + hw;
	s->hit_ns = s->hits ? probe_ns(c) / s->hits : c->hit_ns ? c->hit_ns : c->hw_hit_ns;
	s->cost_kind = !hw  ? probecost_name(PROBECOST_CALL)
		       : up ? "call probe and hardware breakpoint"
			    : probecost_name(PROBECOST_HWBP);
	if (now > c->enabled_ns)
		s->hits_per_s = (double)s->hits * 1e9 / (double)(now - c->enabled_ns);
	if ((cpu = target_cpu_ns(c)) < c->cpu_last_ns)
		cpu = c->cpu_last_ns; /* gone: the last check's */
	if ((c->hit_ns || c->hw_hit_ns) && cpu > c->cpu0_ns)
		s->slowdown = pcost_slowdown_ns(cpu - c->cpu0_ns, probe_ns(c));
}

/* Exact mode ended: its cost as it stands kept (the saved profile's), nothing added later. */
static void cost_freeze(struct calls *c)
{
	struct calls_stats s = {0};

	if (!c->enabled_ns)
		return;
	cost_live(c, c->ended_ns, &s);
	c->saved_hits = s.hits;
	c->saved_hit_ns = s.hit_ns;
	snprintf(c->saved_cost_kind, sizeof(c->saved_cost_kind), "%s", s.cost_kind);
	c->saved_hits_per_s = s.hits_per_s;
	c->saved_slowdown = s.slowdown;
}

void calls_end(struct calls *c)
{
	if (!c)
		return;
	calls_off(c);
	c->timer = sd_event_source_disable_unref(c->timer);
	c->hot_timer = sd_event_source_disable_unref(c->hot_timer);
	c->cost_timer = sd_event_source_disable_unref(c->cost_timer);
	if (c->ended_ns)
		return;
	c->ended_ns = now_ns(CLOCK_MONOTONIC);
	cost_freeze(c);
}

void calls_free(struct calls *c)
{
	if (!c)
		return;
	c->hot_timer = sd_event_source_disable_unref(c->hot_timer);
	c->timer = sd_event_source_disable_unref(c->timer);
	c->cost_timer = sd_event_source_disable_unref(c->cost_timer);
	calls_probes_free(c);
	free(c->names);
	free(c->counts);
	hcct_free(c->exact);
	hcct_tree_free(c->saved_exact);
	free(c);
}

/* The state of thread tid (open addressing on a fixed table), NULL when the table is full. */
static struct callsync *thread_sync(struct calls *c, uint32_t tid)
{
	long j;

	if (!c->threads) {
		c->threads = calloc(CALLS_MAX_THREADS, sizeof(*c->threads));
		if (!c->threads)
			return NULL;
		tidtab_init(&c->tids, CALLS_MAX_THREADS);
	}
	j = tidtab_get(&c->tids, tid, NULL);
	if (j < 0)
		return NULL;
	c->threads[j].tid = tid;
	return &c->threads[j].cs;
}

void calls_on_event(struct calls *c, const struct kp_call *ev, size_t nfuncs)
{
	struct callsync *cs;

	if (!c->exact || ev->func >= nfuncs)
		return;
	if (!c->epoch || ev->epoch != c->epoch) {
		c->outside++; /* a probe set half attached or half removed */
		return;
	}
	c->events++;
	if (!ev->exit) {
		if (ev->func >= c->ncounts) {
			size_t n = nfuncs;
			uint64_t *v = realloc(c->counts, n * sizeof(*v));

			if (!v)
				return;
			memset(v + c->ncounts, 0, (n - c->ncounts) * sizeof(*v));
			c->counts = v;
			c->ncounts = n;
		}
		c->counts[ev->func]++;
	}
	cs = thread_sync(c, ev->tid);
	if (!cs) {
		c->lost_threads++;
		c->skipped++; /* more threads than the table holds: left out of the tree */
		return;
	}
	switch (callsync_event(c->exact, cs, ev, &c->lost)) {
	case CALLSYNC_UNMATCHED:
		c->unmatched_exits++; /* entered before the probes were in */
		break;
	case CALLSYNC_SKIPPED:
		c->skipped++; /* in frames that lost events hid */
		break;
	default:
		break;
	}
}

const uint64_t *calls_counts(const struct calls *c, size_t *n)
{
	*n = c ? c->ncounts : 0;
	return c ? c->counts : NULL;
}

const struct hcct *calls_tree(const struct calls *c)
{
	return c ? c->exact : NULL;
}

const struct hcct_tree *calls_saved_tree(const struct calls *c)
{
	return c ? c->saved_exact : NULL;
}

bool calls_by_breakpoints(const struct calls *c)
{
	return c && (c->hw || c->saved_hw_n);
}

bool calls_breakpoint_at(const struct calls *c, uint64_t addr)
{
	return c && c->hw && hwbp_set_has(c->hw->set, addr);
}

uint64_t calls_memory(const struct calls *c)
{
	struct hcct_stats hs;
	uint64_t n = 0;

	if (!c)
		return 0;
	if (c->saved_exact)
		n += c->saved_exact->len * sizeof(*c->saved_exact->entries);
	if (c->exact) {
		hcct_get_stats(c->exact, &hs);
		n += hs.bytes;
	}
	return n;
}

/* The probes' cost since the first went in: as saved once exact mode ended (the events still on
 * their way then are left out, as the saved profile leaves them), or a restored profile's. */
static void cost_stats(const struct calls *c, uint64_t now, struct calls_stats *s)
{
	s->max_slowdown = c->max_slowdown;
	s->max_slowdown_default = c->max_slowdown_default;
	s->budget_offs = c->budget_offs;
	s->budget_off = c->held;
	if (c->enabled_ns && !c->ended_ns) {
		cost_live(c, now, s);
		return;
	}
	s->hits = c->saved_hits;
	s->hit_ns = c->saved_hit_ns;
	s->cost_kind = c->saved_cost_kind;
	s->hits_per_s = c->saved_hits_per_s;
	s->slowdown = c->saved_slowdown;
}

void calls_get_stats(const struct calls *c, struct calls_stats *s)
{
	uint64_t now = c->ended_ns ? c->ended_ns : now_ns(CLOCK_MONOTONIC);
	/* The window the probes were asked to be in place; their removal's wait for the
	 * kernel's grace period comes after the breakpoints are gone. */
	uint64_t active = c->active_ns + (c->on_since_ns ? now - c->on_since_ns : 0);

	*s = (struct calls_stats){
	    .events = c->events,
	    .unmatched_exits = c->unmatched_exits,
	    .lost = c->lost,
	    .skipped = c->skipped,
	    .outside = c->outside,
	    /* Without bursts the probes stay in: no bursts to count, duty 1 once in. A restored
	     * profile's are as saved. */
	    .bursts = c->burst_ms || !c->env.loader ? c->bursts : 0,
	    .probes = c->probes ? c->nprobes : c->saved_nprobes,
	    .hot = c->hot,
	    .hw_stopped = "",
	};
	if (c->hw && c->hw->n) {
		s->hw_functions = c->hw->n;
		s->hw_estimated = hwcalls_estimated(c->hw);
		s->hw_covered = hwcalls_covered(c->hw);
		s->hw_stopped = c->hw->stopped;
	} else if (c->saved_hw_n) {
		s->hw_functions = c->saved_hw_n;
		s->hw_estimated = c->saved_hw_estimated;
		s->hw_covered = c->saved_hw_covered;
		s->hw_stopped = c->saved_hw_stopped;
	}
	if (!c->enabled_ns) /* never attached here: a restored profile's, or 0 */
		s->duty = c->saved_duty;
	else
		s->duty = now > c->enabled_ns ? (double)active / (now - c->enabled_ns) : 0;
	cost_stats(c, now, s);
}

int calls_restore(const struct calls_stats *s, uint64_t *counts, size_t ncounts,
		  struct hcct_tree *tree, struct calls **ret)
{
	struct calls *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->events = s->events;
	c->bursts = s->bursts;
	c->unmatched_exits = s->unmatched_exits;
	c->lost = s->lost;
	c->skipped = s->skipped;
	c->outside = s->outside;
	c->saved_nprobes = s->probes;
	c->saved_duty = s->duty;
	c->saved_hw_n = s->hw_functions;
	c->saved_hw_estimated = s->hw_estimated;
	c->saved_hw_covered = s->hw_covered;
	snprintf(c->saved_hw_stopped, sizeof(c->saved_hw_stopped), "%s",
		 s->hw_stopped ? s->hw_stopped : "");
	c->saved_hits = s->hits;
	c->saved_hit_ns = s->hit_ns;
	snprintf(c->saved_cost_kind, sizeof(c->saved_cost_kind), "%s",
		 s->cost_kind ? s->cost_kind : "");
	c->saved_hits_per_s = s->hits_per_s;
	c->saved_slowdown = s->slowdown;
	c->max_slowdown = s->max_slowdown;
	c->max_slowdown_default = s->max_slowdown_default;
	c->budget_offs = s->budget_offs;
	c->counts = counts;
	c->ncounts = counts ? ncounts : 0;
	c->saved_exact = tree;
	*ret = c;
	return 0;
}
