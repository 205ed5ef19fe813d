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
 * Events (calls_on_event, on the ring buffer's path): only those stamped inside the window of
 * the probe set in count; each thread's cursor in the HCCT follows its entries and returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/profile.h"
#include "os/clock.h"
#include "exact/exact.h"
#include "exact/exact_internal.h"
#include "exact/hwcalls.h"
#include "kernel/hwbp.h"
#include "os/log.h"

#define CALLS_HOT_WARMUP_MS 1000 /* --calls=hot:N: samples before the choice */
#define CALLS_HOT_TRIES 10	 /* warm-ups before giving up (no JIT function sampled) */
#define CALLS_HOT_MAX 16

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

static int calls_setup(struct calls *c, const struct calls_opts *o, char *err, size_t errlen)
{
	int r;

	r = hcct_new(&(struct hcct_params){.slots = c->env.hcct_slots}, &c->exact);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	c->force = o->force;
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

static void probes_in(const struct calls *c)
{
	if (c->env.probes_in)
		c->env.probes_in(c->env.ctx);
}

/* Bursting: probes on for burst_ms, off for the rest of each period_ms. */
static int on_burst(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct calls *c = userdata;
	char err[256];

	log_debug("pid %d: burst timer at %llu: probes %s", c->env.pid, (unsigned long long)usec,
		  c->nlinks ? "off" : "on");
	if (c->nlinks) {
		calls_off(c);
		return sd_event_source_set_time(s, usec + (c->period_ms - c->burst_ms) * 1000ULL);
	}
	/* A removal of probes in the same code is still waiting for the kernel: come back
	 * rather than block the loop (a probe attached now would wait for it in the kernel). */
	if (calls_may_attach(c, err, sizeof(err)) < 0)
		return sd_event_source_set_time(s, usec + 50000);
	if (calls_on(c, err, sizeof(err)) < 0) {
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
	if (r >= 0)
		r = calls_on(c, err, sizeof(err));
	if (r < 0) {
		log_warn("pid %d: exact mode on the hottest functions (%s): %s", c->env.pid, names,
			 err);
		return 0;
	}
	log_info("pid %d: exact mode on the %d hottest JIT functions sampled: %s", c->env.pid, got,
		 names);
	probes_in(c);
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
	r = calls_on(c, err, errlen);
	if (r < 0)
		return r;
	probes_in(c);
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

void calls_end(struct calls *c)
{
	if (!c)
		return;
	calls_off(c);
	c->timer = sd_event_source_disable_unref(c->timer);
	c->hot_timer = sd_event_source_disable_unref(c->hot_timer);
	if (!c->ended_ns)
		c->ended_ns = now_ns(CLOCK_MONOTONIC);
}

void calls_free(struct calls *c)
{
	if (!c)
		return;
	c->hot_timer = sd_event_source_disable_unref(c->hot_timer);
	c->timer = sd_event_source_disable_unref(c->timer);
	calls_probes_free(c);
	free(c->names);
	free(c->counts);
	hcct_free(c->exact);
	hcct_tree_free(c->saved_exact);
	free(c);
}

/* The cursor of thread tid (open addressing on a fixed table), NULL when the table is full. */
static struct hcct_cursor *thread_cursor(struct calls *c, uint32_t tid)
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
	return &c->threads[j].cur;
}

void calls_on_event(struct calls *c, const struct kp_call *ev, size_t nfuncs)
{
	struct hcct_cursor *cur;

	if (!c->exact || ev->func >= nfuncs)
		return;
	if (!c->win_start_ns || ev->time_ns < c->win_start_ns ||
	    (c->win_end_ns && ev->time_ns >= c->win_end_ns)) {
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
	cur = thread_cursor(c, ev->tid);
	if (!cur) {
		c->lost_threads++;
		return;
	}
	if (!ev->exit)
		hcct_cursor_enter(c->exact, cur, ev->func, 0);
	else if (hcct_cursor_exit(c->exact, cur) < 0)
		c->unmatched_exits++; /* entered before the probes were attached */
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

void calls_get_stats(const struct calls *c, struct calls_stats *s)
{
	uint64_t now = c->ended_ns ? c->ended_ns : now_ns(CLOCK_MONOTONIC);
	/* The window the probes were asked to be in place; their removal's wait for the
	 * kernel's grace period comes after the breakpoints are gone. */
	uint64_t active = c->active_ns + (c->on_since_ns ? now - c->on_since_ns : 0);

	*s = (struct calls_stats){
	    .events = c->events,
	    .unmatched_exits = c->unmatched_exits,
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
	c->saved_nprobes = s->probes;
	c->saved_duty = s->duty;
	c->saved_hw_n = s->hw_functions;
	c->saved_hw_estimated = s->hw_estimated;
	c->saved_hw_covered = s->hw_covered;
	snprintf(c->saved_hw_stopped, sizeof(c->saved_hw_stopped), "%s",
		 s->hw_stopped ? s->hw_stopped : "");
	c->counts = counts;
	c->ncounts = counts ? ncounts : 0;
	c->saved_exact = tree;
	*ret = c;
	return 0;
}
