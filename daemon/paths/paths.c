// SPDX-License-Identifier: GPL-2.0-only
/* paths.c: the path tracer: multi-iteration path profiles of one JIT function of a target.
 *
 * Start: the function is found in the perf map (by name, or an address inside it), its code is
 * checked against the uprobe safety rules (exact.c), read with process_vm_readv and compared
 * with the mapped file (uprobes run the file's instructions: a difference other than another
 * probe's int3 is refused), and given to cfg.c: basic blocks, loops, Ball-Larus numbering. The
 * edge table kp_path_edges gets one action per edge (cfg_transition) and the exit value of every
 * block that can leave; then one uprobe goes on every block leader (kp_path_block, cookie:
 * trace id, block, entry and exit-only flags). The BPF side keeps the path register per thread
 * and activation and sends ENTER / PATH / EXIT / ABORT events; here they feed a k-SF (ksf.c)
 * through one ksf_ctx per thread. A per-thread sequence number and the activation depth in
 * every event show lost events: the thread is then resynchronized at its next outermost entry,
 * and the loss is counted, never silent.
 *
 * The trace ends at its duration, at its event budget, on request, or with the target; the
 * probes are then removed off the event loop (links_remove_async) and the BPF state of the
 * trace deleted after them. The k-SF stays for queries: a reply is its k-IPF, each path id
 * decoded back into its blocks. One trace runs per target at a time; the last one's results
 * are kept with the target (and in its saved profile, as a PathsReply).
 *
 * Code in anonymous memory (V8's, HotSpot's), where uprobes cannot go, is traced by hardware
 * breakpoints on the conditional branches of its loops instead (hwpaths.c): branch counts, and
 * the paths of every loop whose branches fit in the debug registers, into the same k-SF.
 *
 * Cost and budget: a probe hit (a uprobe trap per block executed, a breakpoint's debug trap)
 * costs the thread a measured CPU time (probecost.c), so the slowdown over the trace is the
 * target's CPU clock over that less hits x cost. The budget (--max-slowdown, else kprofd's
 * probe_slowdown_pct) is kept as exact mode keeps its own (pcost_budget): every
 * PATHS_COST_CHECK_MS a stretch of probes over it goes off, and they come back once the
 * target's work has paid for them; the trace runs its duration that way, its counts covering
 * the part of the time the probes were in (the duty, in the reply). When they come back every
 * thread starts afresh (the uprobe side's BPF thread states and ours cleared; breakpoints come
 * back as a new stretch in their records), so no path spans the time off. Uprobes taken off
 * trap for about a second more while the kernel removes them, with no hit counted: those hits
 * are estimated at the stretch's rate and counted in the slowdown.
 *
 * The parts, each calling only those before it (what they share is paths_internal.h):
 * paths_uprobe.c (the uprobe side's BPF state: reading and checking the code, the edge table,
 * the probes, cleaning up after them), this file (a trace's start, both tracers', and its stop,
 * lifetime and timer) and paths_events.c (what a running trace is fed: the uprobe tracer's
 * path events and the hardware breakpoints' hits). The hardware breakpoints' start stays here
 * with the uprobes' because both arm this file's timer and stop, and the stop reads both back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kprof/cfg.h"
#include "kprof/cleanup.h"
#include "kprof/events.h"
#include "kprof/ksf.h"
#include "kprof/pcost.h"
#include "kprof/perfmap.h"
#include "kprof/procmaps.h"
#include "os/clock.h"
#include "kernel/loader.h"
#include "paths/paths.h"
#include "kernel/probecost.h"
#include "paths/paths_internal.h"
#include "kernel/hwbp.h"
#include "paths/hwpaths.h"
#include "paths/hwstruct.h"
#include "symbols/symbolize.h"
#include "os/procfs.h"
#include "os/log.h"

static uint32_t next_trace_id = 1;

/* ---- target CPU times ---- */

struct cpu_times paths_read_cpu(pid_t pid)
{
	struct procinfo_stat st;
	struct cpu_times c = {0};

	if (procfs_stat(pid, &st) == 0) {
		c.user = st.utime;
		c.sys = st.stime;
		c.ok = true;
	}
	return c;
}

/* The target's CPU clock, ns (0 if unreadable). */
static uint64_t read_cpu_ns(pid_t pid)
{
	uint64_t ns = 0;

	return procfs_cpu_ns(pid, &ns) < 0 ? 0 : ns;
}

uint64_t paths_cpu_ns(const struct path_trace *tr)
{
	uint64_t ns = tr->tracing ? read_cpu_ns(tr->pid) : 0;

	return ns > tr->cpu_last_ns ? ns : tr->cpu_last_ns;
}

double paths_slowdown(const struct path_trace *tr, uint64_t cpu_ns, uint64_t hits,
		      unsigned min_cpu_ms)
{
	uint64_t cpu = cpu_ns > tr->cpu0_ns ? cpu_ns - tr->cpu0_ns : 0;

	if (!tr->hit_ns || !tr->cpu0_ns || cpu < min_cpu_ms * 1000000ULL)
		return 0;
	hits = (uint64_t)((double)hits + tr->hidden_hits);
	return pcost_slowdown(cpu, hits, paths_hit_ns(tr, cpu_ns, hits, NULL));
}

uint64_t paths_hit_ns(const struct path_trace *tr, uint64_t cpu_ns, uint64_t hits, bool *measured)
{
	struct pcost_ref r = {.base_ref = tr->ref0, .base_all = tr->ref_all0};
	uint64_t ref = tr->ref1, all = tr->ref_all1, c;
	uint32_t id = tr->ref_id;

	if (measured)
		*measured = false;
	if (tr->ref_id == PATHS_NO_REF || !tr->cpu0_ns || cpu_ns <= tr->cpu0_ns)
		return tr->hit_ns;
	if (tr->tracing && tr->env.ref_samples)
		tr->env.ref_samples(tr->env.ctx, tr->start, tr->size, &id, &ref, &all, NULL, 0);
	if (ref < tr->ref0 || all < tr->ref_all0)
		return tr->hit_ns;
	r.ref = ref - tr->ref0;
	r.all = all - tr->ref_all0;
	c = pcost_ref_hit_ns(&r, cpu_ns - tr->cpu0_ns, hits, tr->hit_ns);
	if (!c)
		return tr->hit_ns;
	if (measured)
		*measured = true;
	return c;
}

double paths_duty(const struct path_trace *tr)
{
	uint64_t end = tr->tracing ? now_ns(CLOCK_MONOTONIC) : tr->stopped_ns;
	uint64_t on = tr->on_ns + (tr->tracing && tr->on_since_ns ? end - tr->on_since_ns : 0);

	return end > tr->started_ns ? pcost_duty(on, end - tr->started_ns) : 1;
}

bool paths_breakpoint_at(const struct path_trace *tr, uint64_t addr)
{
	if (!tr || !tr->tracing || !tr->hw)
		return false;
	return hwbp_set_has(tr->hw->set, addr) ||
	       (tr->hw->st && hwbp_set_has(tr->hw->st->set, addr));
}

/* The probe hits of the trace so far (every trace's of the daemon: the BPF counter). */
static uint64_t hits_now(const struct path_trace *tr)
{
	uint64_t c[KP_CTR_NR];

	loader_counters(tr->env.loader, c, NULL);
	return c[KP_CTR_PATH_HITS] - tr->ctr0[KP_CTR_PATH_HITS];
}

/* The target's CPU time since the trace attached, ms. */
static uint64_t cpu_ms_since_attach(const struct path_trace *tr, uint64_t cpu_ns)
{
	return cpu_ns > tr->cpu0_ns && tr->cpu0_ns ? (cpu_ns - tr->cpu0_ns) / 1000000 : 0;
}

static void mark_samples(struct path_trace *tr)
{
	if (tr->env.code_samples)
		tr->env.code_samples(tr->env.ctx, tr->start, tr->size, &tr->samples0,
				     &tr->samples_in0, NULL, 0);
	tr->ref_id = PATHS_NO_REF;
	if (tr->env.ref_samples)
		tr->env.ref_samples(tr->env.ctx, tr->start, tr->size, &tr->ref_id, &tr->ref0,
				    &tr->ref_all0, tr->ref_name, sizeof(tr->ref_name));
	tr->ref1 = tr->ref0;
	tr->ref_all1 = tr->ref_all0;
}

/* The figures at the attach: CPU times, wall time, samples, counters (the budget's first
 * stretch begins). */
static void mark_attach(struct path_trace *tr)
{
	tr->cpu_attach = paths_read_cpu(tr->pid);
	tr->cpu0_ns = tr->stretch_cpu_ns = tr->cpu_last_ns = read_cpu_ns(tr->pid);
	tr->attach_wall_ns = now_ns(CLOCK_MONOTONIC);
	mark_samples(tr);
	loader_counters(tr->env.loader, tr->ctr0, NULL);
}

/* Tracing from now: the probes are in. */
static void mark_started(struct path_trace *tr)
{
	tr->tracing = true;
	tr->started_ns = tr->on_since_ns = now_ns(CLOCK_MONOTONIC);
	tr->cpu_start = paths_read_cpu(tr->pid);
}

/* No hit yet, and probes that cannot tell (breakpoints turned over the loops, one structure
 * graph at a time): the samples can. Stopped with the reason if none of PATHS_NO_HIT_SAMPLES
 * since the attach was in the code. */
static bool stop_if_not_sampled(struct path_trace *tr)
{
	uint64_t all = 0, in = 0;
	char hot[128] = "", why[sizeof(tr->reason)];

	if (!tr->env.code_samples)
		return false;
	tr->env.code_samples(tr->env.ctx, tr->start, tr->size, &all, &in, hot, sizeof(hot));
	if (in > tr->samples_in0 || all < tr->samples0 + PATHS_NO_HIT_SAMPLES)
		return false;
	snprintf(why, sizeof(why),
		 "no hit, and none of the target's %" PRIu64
		 " samples since the start in this code:"
		 " it does not run (inlined into callers%s%.96s, or replaced by a newer copy)",
		 all - tr->samples0, hot[0] ? " such as " : "", hot);
	paths_stop(tr, why);
	return true;
}

/* ---- the budget ---- */

/* The probes off for the budget: breakpoints at once; uprobes keep trapping while the kernel
 * removes them, at the stretch's rate (lingering). */
static void probes_off(struct path_trace *tr, uint64_t cpu, uint64_t hits)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (tr->hw) {
		hwpaths_pause(tr->hw);
	} else {
		paths_probes_off(tr);
		tr->lingering = cpu > tr->stretch_cpu_ns;
		tr->linger_rate = tr->lingering ? (double)(hits - tr->stretch_hits) /
						      (double)(cpu - tr->stretch_cpu_ns)
						: 0;
		tr->linger_cpu_ns = cpu;
	}
	if (tr->on_since_ns)
		tr->on_ns += now - tr->on_since_ns;
	tr->on_since_ns = 0;
	tr->off = true;
	tr->budget_offs++;
}

/* And back in: each thread starts afresh (no path spans the time off). 1: not yet (the last
 * removal still runs), 0: in, or a negative errno with err. */
static int probes_on(struct path_trace *tr, uint64_t cpu, uint64_t hits, char *err, size_t errlen)
{
	int r;

	err[0] = '\0';
	if (tr->hw) {
		r = hwpaths_resume(tr->hw, err, errlen);
	} else {
		r = paths_probes_on(tr, err, errlen);
		if (r == -EBUSY && !err[0])
			return 1;
		for (size_t i = 0; r == 0 && i < PATHS_THREAD_SLOTS; i++) {
			struct path_thread *th = &tr->threads[i];

			ksf_ctx_release(&th->ctx);
			paths_spp_stack_release(&th->spp);
			th->seq = 0;
			th->desync = false;
		}
	}
	if (r < 0)
		return r;
	tr->lingering = false; /* whatever lingered is gone: the kernel let the probes in */
	tr->off = false;
	tr->on_since_ns = now_ns(CLOCK_MONOTONIC);
	tr->stretch_cpu_ns = cpu;
	tr->stretch_hits = hits;
	return 0;
}

/* The budget's check at cpu on the target's CPU clock, hits counted: the probes off when over
 * it, back in once the target's work has paid for them (pcost_budget). */
static void budget_step(struct path_trace *tr, uint64_t cpu, uint64_t hits)
{
	struct pcost_use all, st;
	enum pcost_step step;
	uint64_t hit;
	char err[384], why[sizeof(tr->reason)], what[160];
	int r;

	if (tr->lingering) {
		tr->hidden_hits += tr->linger_rate * (double)(cpu - tr->linger_cpu_ns);
		tr->linger_cpu_ns = cpu;
		tr->lingering = removal_busy(tr->removal); /* gone: counted to now */
	}
	/* a hit's cost measured in the target where its samples tell it, else the calibrated */
	hit = paths_hit_ns(tr, cpu, (uint64_t)((double)hits + tr->hidden_hits), NULL);
	all = (struct pcost_use){cpu - tr->cpu0_ns,
				 (uint64_t)(((double)hits + tr->hidden_hits) * (double)hit)};
	st = (struct pcost_use){cpu - tr->stretch_cpu_ns, (hits - tr->stretch_hits) * hit};
	step = pcost_budget(!tr->off, &all, &st, tr->max_slowdown);
	tr->pay_ns = tr->off ? pcost_pay_ns(&all, tr->max_slowdown) : 0;
	if (step == PCOST_OFF) {
		if (!tr->budget_offs) {
			snprintf(what, sizeof(what), "path trace of %s", tr->func);
			pcost_over_budget(err, sizeof(err), what, &st, tr->max_slowdown);
			log_info("pid %d: %s", tr->pid, err);
		}
		probes_off(tr, cpu, hits);
		tr->pay_ns = pcost_pay_ns(&all, tr->max_slowdown);
	} else if (step == PCOST_ON && (r = probes_on(tr, cpu, hits, err, sizeof(err))) < 0) {
		snprintf(why, sizeof(why), "the probes could not go back in: %.200s", err);
		paths_stop(tr, why);
	}
}

/* Every PATHS_COST_CHECK_MS (PATHS_COST_OFF_CHECK_MS while off): a trace whose code got no hit
 * in its first PATHS_NO_HIT_MS while the target ran PATHS_NO_HIT_CPU_MS stops (the code traced
 * is not what runs), and the budget is kept (budget_step). The first second is judged once, at
 * its end: a target that was idle then (waiting for work) and later runs other code first is
 * not stopped for the CPU of that later work. */
static int on_cost_check(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct path_trace *tr = userdata;
	uint64_t hits = hits_now(tr), cpu = read_cpu_ns(tr->pid), cpu_ms;
	char why[sizeof(tr->reason)];
	int r;

	if (!tr->tracing)
		return 0;
	if (cpu >= tr->cpu_last_ns && cpu >= tr->stretch_cpu_ns && tr->cpu0_ns)
		tr->cpu_last_ns = cpu;
	cpu_ms = cpu_ms_since_attach(tr, tr->cpu_last_ns);
	tr->hit_seen |= hits > 0;
	if (!tr->hit_seen && tr->hw && (tr->hw->st || tr->hw->nturns > 1) &&
	    now_ns(CLOCK_MONOTONIC) - tr->attach_wall_ns >= PATHS_NO_HIT_MS * 1000000ULL &&
	    stop_if_not_sampled(tr))
		return 0;
	/* Uprobes are on every block (any run hits them); breakpoints only when one turn holds
	 * every branch followed (a turn on a cold loop's branches is no evidence). */
	if (!tr->hit_seen && !tr->nohit_judged &&
	    (!tr->hw || (!tr->hw->st && tr->hw->nturns == 1)) &&
	    now_ns(CLOCK_MONOTONIC) - tr->attach_wall_ns >= PATHS_NO_HIT_MS * 1000000ULL) {
		tr->nohit_judged = true;
		if (cpu_ms >= PATHS_NO_HIT_CPU_MS) {
			snprintf(why, sizeof(why),
				 "no hit in the first second while the target ran %" PRIu64
				 " ms: the code at 0x%" PRIx64 " did not run then, or was inlined "
				 "into its callers or replaced by a newer copy",
				 cpu_ms, tr->start);
			paths_stop(tr, why);
			return 0;
		}
	}
	if (tr->max_slowdown && tr->cpu_last_ns == cpu && cpu) {
		budget_step(tr, cpu, hits);
		if (!tr->tracing)
			return 0;
	}
	r = sd_event_source_set_time(
	    s, usec + (tr->off ? PATHS_COST_OFF_CHECK_MS : PATHS_COST_CHECK_MS) * 1000ULL);
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int arm_cost_check(struct path_trace *tr, char *err, size_t errlen)
{
	int r;

	r = sd_event_add_time(tr->env.event, &tr->cost_timer, CLOCK_MONOTONIC,
			      now_ns(CLOCK_MONOTONIC) / 1000 + PATHS_COST_CHECK_MS * 1000ULL, 1000,
			      on_cost_check, tr);
	if (r < 0)
		snprintf(err, errlen, "cannot arm the cost check: %s", strerror(-r));
	return r;
}

/* ---- structural path profiling: per-thread activations ---- */

void paths_spp_stack_release(struct spp_stack *st)
{
	for (uint32_t i = 0; st->a && i < 2 * PATHS_SPP_MAX_DEPTH; i++)
		spp_act_release(&st->a[i]);
	free(st->a);
	memset(st, 0, sizeof(*st));
}

static int spp_setup(struct path_trace *tr, const struct paths_opts *req, char *err, size_t errlen)
{
	uint64_t budget = req->spp_budget ? req->spp_budget : PATHS_SPP_BUDGET;

	if (budget > PATHS_SPP_MAX_BUDGET) {
		snprintf(err, errlen, "SPP budget %" PRIu64 " is over the limit of %u", budget,
			 PATHS_SPP_MAX_BUDGET);
		return -EINVAL;
	}
	if (tr->edges) {
		snprintf(err, errlen,
			 "%s has more acyclic paths than kprofd numbers: structural path "
			 "profiling needs a path numbering (raise [limits] max_paths)",
			 tr->func);
		return -E2BIG;
	}
	if (req->spp_timeout > PATHS_SPP_MAX_BUDGET) {
		snprintf(err, errlen, "SPP timeout %" PRIu64 " is over the limit of %u activations",
			 req->spp_timeout, PATHS_SPP_MAX_BUDGET);
		return -EINVAL;
	}
	tr->spp_budget = budget;
	tr->spp_timeout = req->spp_timeout;
	tr->steps = calloc(cfg_nblocks(tr->cfg) + 1, sizeof(*tr->steps));
	if (!tr->steps ||
	    spp_new(tr->cfg, &(struct spp_opts){.budget = budget, .timeout = tr->spp_timeout},
		    &tr->spp) < 0 ||
	    spp_new(tr->cfg, NULL, &tr->spp_full) < 0 || spp_flat_new(budget, 0, &tr->flat) < 0 ||
	    spp_flat_new(0, 0, &tr->flat_full) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* ---- finding the function and reading its code ---- */

struct find {
	const char *name;
	uint64_t addr;
	bool by_addr;
	bool exact;	 /* hit is the name itself, not a name that starts with it */
	unsigned others; /* other names that start with it (V8's "JS:*f FILE:LINE:COL") */
	char other[160]; /* one of them */
	struct perfmap_sym hit;
	char *hit_name;
	int err;
};

static int find_cb(const struct perfmap_sym *s, void *userdata)
{
	struct find *f = userdata;
	int m = f->by_addr ? (f->addr >= s->start && f->addr - s->start < s->size ? 2 : 0)
			   : perfmap_name_match(s->name, f->name, strlen(f->name));

	if (!m || (f->exact && m < 2))
		return 0;
	if (m < 2 && f->hit_name && strcmp(f->hit_name, s->name) && !f->others++)
		snprintf(f->other, sizeof(f->other), "%s", f->hit_name); /* starts the same */
	if (m == 2 && !f->exact)
		f->others = 0;
	f->exact = m == 2;
	/* The perf map is in feed order: a later line for the same name is the live code. */
	free(f->hit_name);
	f->hit_name = strdup(s->name);
	if (!f->hit_name) {
		f->err = -ENOMEM;
		return -ENOMEM;
	}
	f->hit = *s;
	f->hit.name = f->hit_name;
	return 0;
}

/* ---- lifetime ---- */

void paths_trace_free(struct path_trace *tr)
{
	if (!tr)
		return;
	removal_put(tr->removal);
	sd_event_source_disable_unref(tr->timer);
	sd_event_source_disable_unref(tr->cost_timer);
	for (size_t i = 0; tr->threads && i < PATHS_THREAD_SLOTS; i++) {
		ksf_ctx_release(&tr->threads[i].ctx);
		paths_spp_stack_release(&tr->threads[i].spp);
	}
	free(tr->threads);
	tidtab_release(&tr->tids);
	free(tr->blockev);
	free(tr->steps);
	spp_free(tr->spp);
	spp_free(tr->spp_full);
	spp_flat_free(tr->flat);
	spp_flat_free(tr->flat_full);
	free(tr->edge_counts);
	free(tr->exit_counts);
	hwpaths_free(tr->hw); /* before the k-SF its threads' contexts point into */
	ksf_free(tr->ksf);
	cfg_free(tr->cfg);
	free(tr->func);
	if (tr->saved)
		tr->saved_free(tr->saved);
	free(tr);
}

void paths_free(struct path_trace *tr)
{
	paths_stop(tr, "target freed");
	paths_trace_free(tr);
}

bool paths_tracing(const struct path_trace *tr)
{
	return tr && tr->tracing;
}

bool paths_is_function(const struct path_trace *tr, const char *function)
{
	uint64_t a;
	char *end;

	if (!tr || !function)
		return false;
	if (!strcmp(tr->func, function))
		return true;
	if (strncmp(function, "0x", 2))
		return false;
	errno = 0;
	a = strtoull(function, &end, 16);
	return !errno && *end == '\0' && a >= tr->start && a - tr->start < tr->size;
}

void paths_hw_sync(struct path_trace *tr)
{
	const struct hwpaths *h = tr->hw;

	if (h->st) {
		struct spp_graph_info gi;

		/* activations: the outline's paths counted (one per call), the unit of the
		 * structural profile's global counts */
		if (spp_graph_get(tr->spp, 0, &gi) == 0)
			tr->activations = gi.counted;
		tr->events = h->st->hits;
		tr->path_events = h->st->paths;
		tr->aborted = h->st->given_up;
		tr->lost_threads = h->st->lost_threads;
		return;
	}

	tr->events = h->events;
	tr->activations = h->activations;
	tr->path_events = h->path_events;
	tr->aborted = h->aborted;
	tr->lost_threads = h->lost_threads;
}

void paths_stop(struct path_trace *tr, const char *reason)
{
	struct loader *l;
	struct paths_cleanup *c;

	if (!tr || !tr->tracing)
		return;
	l = tr->env.loader;
	tr->tracing = false;
	snprintf(tr->reason, sizeof(tr->reason), "%s", reason);
	tr->stopped_ns = now_ns(CLOCK_MONOTONIC);
	{
		struct cpu_times c = paths_read_cpu(tr->pid);
		uint64_t ns = read_cpu_ns(tr->pid);

		if (c.ok) /* else (the target is gone) the last reading while tracing stands */
			tr->cpu_end = c;
		if (ns > tr->cpu_last_ns)
			tr->cpu_last_ns = ns;
	}
	if (tr->ref_id != PATHS_NO_REF && tr->env.ref_samples) /* the shares' end */
		tr->env.ref_samples(tr->env.ctx, tr->start, tr->size, &tr->ref_id, &tr->ref1,
				    &tr->ref_all1, NULL, 0);
	if (tr->on_since_ns)
		tr->on_ns += tr->stopped_ns - tr->on_since_ns;
	tr->on_since_ns = 0;
	loader_counters(l, tr->ctr1, NULL);
	tr->timer = sd_event_source_disable_unref(tr->timer);
	tr->cost_timer = sd_event_source_disable_unref(tr->cost_timer);
	if (tr->hw) {
		hwpaths_stop(tr->hw);
		paths_hw_sync(tr);
		log_info("pid %d: branch trace of %s ended (%s): %" PRIu64 " hits, %" PRIu64
			 " loop activations, %" PRIu64 " paths",
			 tr->pid, tr->func, reason, tr->events, tr->activations, tr->path_events);
		return;
	}
	if (tr->edges)
		paths_read_edges(tr); /* the final counts, before the table entries go */
	c = malloc(sizeof(*c));
	if (c)
		*c = (struct paths_cleanup){loader_path_edges(l), loader_path_threads(l), tr->id,
					    tr->pid};
	removal_put(tr->removal);
	tr->removal = links_remove_async(tr->links, tr->nlinks, &tr->file, 1,
					 c ? paths_bpf_cleanup : NULL, c);
	tr->links = NULL;
	tr->nlinks = 0;
	log_info("pid %d: path trace of %s ended (%s): %" PRIu64 " activations, %" PRIu64 " paths",
		 tr->pid, tr->func, reason, tr->activations, tr->path_events);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct path_trace *tr = userdata;

	(void)s;
	(void)usec;
	paths_stop(tr, "duration");
	return 0;
}

/* The JIT function named (or at the address in) function, from sym's perf map: tr->func, start
 * and size set. */
static int find_function(struct tsym *sym, struct path_trace *tr, const char *function, char *err,
			 size_t errlen)
{
	struct find f = {.name = function};
	char *end;
	int r;

	if (!strncmp(function, "0x", 2)) {
		errno = 0;
		f.addr = strtoull(function, &end, 16);
		f.by_addr = !errno && *end == '\0' && end != function + 2;
	}
	tsym_refresh_asked(sym);
	r = tsym_foreach_jit(sym, find_cb, &f);
	if (r < 0 || f.err < 0) {
		free(f.hit_name);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!f.hit_name && tsym_behind(sym)) {
		/* Symbol files are read in steps within a CPU allowance (a loaded or slow host can
		 * spend it): not found yet is not "not there". kprofctl asks again. */
		snprintf(err, errlen,
			 "the perf map of pid %d (%s) is not read in full yet: kprofd reads symbol "
			 "files in steps",
			 tr->pid, tsym_get_stats(sym)->perfmap_path);
		return -EAGAIN;
	}
	if (!f.hit_name) {
		snprintf(err, errlen, "no JIT function %s %s in the perf map of pid %d (%s)",
			 f.by_addr ? "at" : "named", function, tr->pid,
			 tsym_get_stats(sym)->perfmap_path);
		return -ENOENT;
	}
	if (!f.exact && f.others) {
		snprintf(err, errlen,
			 "more than one function of pid %d is %s followed by its source (%s; %s): "
			 "give the whole name",
			 tr->pid, function, f.other, f.hit_name);
		free(f.hit_name);
		return -ENOENT;
	}
	tr->func = f.hit_name;
	tr->start = f.hit.start;
	tr->size = f.hit.size;
	return 0;
}

/* Where tr's code is mapped: a file uprobes may go in (site filled), else anonymous memory
 * (tr->hw allocated); tr->size cut to the mapping and checked. */
static int locate_code(struct path_trace *tr, bool force, struct uprobe_site *site, char *err,
		       size_t errlen)
{
	struct procmaps *pm = NULL;
	int r;

	r = procmaps_read_pid(tr->pid, &pm, err, errlen);
	if (r < 0)
		return r;
	r = uprobe_site_check(pm, tr->start, tr->func, force, site, err, errlen);
	if (r == 0 && tr->size > site->map_end - tr->start)
		tr->size = site->map_end - tr->start; /* a perf-map size past the mapping */
	if (r == -EOPNOTSUPP) { /* anonymous memory: hardware breakpoints instead */
		const struct procmaps_entry *m = procmaps_find(pm, tr->start);

		tr->hw = calloc(1, sizeof(*tr->hw));
		r = tr->hw ? 0 : -ENOMEM;
		if (m && tr->size > m->end - tr->start)
			tr->size = m->end - tr->start;
	}
	procmaps_free(pm);
	if (r < 0)
		return r;
	if (tr->size == 0 || tr->size > PATHS_MAX_CODE) {
		snprintf(err, errlen, "%s is %" PRIu64 " bytes long: path tracing takes 1 to %u",
			 tr->func, tr->size, PATHS_MAX_CODE);
		return -E2BIG;
	}
	return 0;
}

/* The function's tr->size bytes of code into code, through the uprobe site's file or, for
 * hardware breakpoints, the target's memory. */
static int read_code(struct path_trace *tr, struct uprobe_site *site, uint8_t *code, char *err,
		     size_t errlen)
{
	int r;

	if (tr->hw) {
		r = hwbp_read_code(tr->pid, tr->start, code, tr->size);
		if (r < 0)
			snprintf(err, errlen, "cannot read the code of %s (0x%" PRIx64 "): %s",
				 tr->func, tr->start, strerror(-r));
		return r;
	}
	return paths_read_code(tr->pid, site, tr->start, code, tr->size, tr->func, err, errlen);
}

/* Each block's instruction classes into tr->blockev; without them (logged) the trace goes
 * on with no event counts. */
static int classify_blocks(struct path_trace *tr, const uint8_t *code)
{
	int r;

	tr->blockev = calloc(cfg_nblocks(tr->cfg) * EV_NR, sizeof(uint32_t));
	if (!tr->blockev)
		return -ENOMEM;
	r = events_blocks(code, tr->size, tr->start, tr->cfg, tr->blockev);
	if (r < 0) { /* the paths do not need the events: trace without them */
		log_warn("pid %d: cannot classify the instructions of %s: %s; no event counts",
			 tr->pid, tr->func, strerror(-r));
		free(tr->blockev);
		tr->blockev = NULL;
	}
	return 0;
}

/* Resolve, read, analyze: tr->func/start/size/cfg set, site filled. */
static int prepare(struct tsym *sym, struct path_trace *tr, const char *function, bool force,
		   struct uprobe_site *site, char *err, size_t errlen)
{
	_cleanup_free_ uint8_t *code = NULL;
	struct cfg_stats cs;
	int r;

	if (!sym) {
		snprintf(err, errlen, "pid %d has no symbols loaded", tr->pid);
		return -ENODATA;
	}
	r = find_function(sym, tr, function, err, errlen);
	if (r < 0)
		return r;
	r = locate_code(tr, force, site, err, errlen);
	if (r < 0)
		return r;
	code = malloc(tr->size);
	if (!code)
		return -ENOMEM;
	r = read_code(tr, site, code, err, errlen);
	if (r < 0)
		return r;
	r = cfg_build(code, tr->size, tr->start, tr->start,
		      &(struct cfg_limits){.max_blocks = PATHS_MAX_BLOCKS,
					   .max_paths = tr->env.max_paths,
					   .flags = CFG_BAD_IS_EXIT},
		      &tr->cfg);
	if (r < 0) {
		snprintf(err, errlen, "cannot recover the control flow of %s: %s%s", tr->func,
			 strerror(-r),
			 r == -E2BIG ? " (more than 1024 basic blocks or too much code)" : "");
		return r;
	}
	cfg_get_stats(tr->cfg, &cs);
	r = classify_blocks(tr, code);
	if (r < 0)
		return r;
	if (tr->hw) { /* paths above the numbering's are the tracer's own: no edge profile */
		tr->hw->code = TAKE_PTR(code);
		tr->hw->len = tr->size;
		tr->hw->start = tr->start;
		return 0;
	}
	if (!cs.bl_ok) { /* too many paths to number: count the edges instead */
		tr->edges = true;
		tr->edge_counts = calloc(cfg_nedges(tr->cfg) + 1, sizeof(uint64_t));
		tr->exit_counts = calloc(cfg_nblocks(tr->cfg) + 1, sizeof(uint64_t));
		if (!tr->edge_counts || !tr->exit_counts)
			return -ENOMEM;
	}
	return 0;
}

static void hw_stop(void *arg, const char *reason)
{
	paths_stop(arg, reason);
}

/* paths --structural on anonymous code: the structure graphs take turns (hwstruct.c). */
static int start_hw_spp(struct path_trace *tr, char *err, size_t errlen)
{
	struct hwpaths *h = tr->hw;
	struct hwstruct *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	h->st = st;
	st->pid = tr->pid;
	st->loader = tr->env.loader;
	st->cfg = tr->cfg;
	st->spp = tr->spp;
	st->code = h->code;
	st->len = h->len;
	st->start = h->start;
	st->id = h->id;
	st->duration_ns = h->duration_ns;
	st->stop = hw_stop;
	st->stop_arg = tr;
	return hwstruct_start(st, tr->env.event, err, errlen);
}

/* The branch tracer on anonymous code: breakpoints on the first group of branches. */
static int start_hw(struct path_trace *tr, char *err, size_t errlen)
{
	struct hwpaths *h = tr->hw;
	int r;

	h->pid = tr->pid;
	h->loader = tr->env.loader;
	h->cfg = tr->cfg;
	h->ksf = tr->ksf;
	h->id = tr->id & 0x3fff;
	h->duration_ns = (uint64_t)tr->duration_ms * 1000000;
	h->budget = tr->budget;
	h->stop = hw_stop;
	h->stop_arg = tr;
	mark_attach(tr);
	if (tr->spp) {
		r = start_hw_spp(tr, err, errlen);
		if (r < 0)
			return r;
	} else {
		r = hwpaths_start(h, tr->env.event, err, errlen);
		if (r < 0)
			return r;
	}
	tr->probes = h->plan.nbr;
	r = sd_event_add_time(tr->env.event, &tr->timer, CLOCK_MONOTONIC,
			      now_ns(CLOCK_MONOTONIC) / 1000 + (uint64_t)tr->duration_ms * 1000,
			      1000, on_timer, tr);
	if (r < 0) {
		snprintf(err, errlen, "cannot arm the duration timer: %s", strerror(-r));
		hwpaths_stop(h);
		return r;
	}
	mark_started(tr);
	log_info("pid %d: tracing the branches of %s (0x%" PRIx64 ", anonymous memory) with "
		 "hardware breakpoints: %zu branches in %zu groups, k %u, for %u ms",
		 tr->pid, tr->func, tr->start, h->plan.nbr, h->plan.ngroups, tr->k,
		 tr->duration_ms);
	return 0;
}

/* A trace request for pid (k iterations) that may start: 0, or why not in err. */
static int check_request(const struct paths_opts *req, pid_t pid, const struct path_trace *old,
			 unsigned k, char *err, size_t errlen)
{
	if (k < 1 || k > KSF_K_MAX) {
		snprintf(err, errlen, "k %u is out of range 1-%d", k, KSF_K_MAX);
		return -EINVAL;
	}
	if (req->duration_ms > PATHS_MAX_DURATION_MS) {
		snprintf(err, errlen, "duration %u ms is over the limit of %u ms", req->duration_ms,
			 PATHS_MAX_DURATION_MS);
		return -EINVAL;
	}
	if (!req->function || !req->function[0] || strlen(req->function) > 4096) {
		snprintf(err, errlen, "no function given");
		return -EINVAL;
	}
	if (old && old->tracing) {
		snprintf(err, errlen,
			 "pid %d is already tracing the paths of %s (one trace at a time)", pid,
			 old->func);
		return -EBUSY;
	}
	return 0;
}

/* The uprobe tracer armed on a prepared trace: the edge table, a probe on every block, the
 * start entry, the duration timer. On error the links (if any) and the edges go, the same way
 * a stopped trace's do. */
static int start_uprobes(struct path_trace *tr, const struct uprobe_site *site, char *err,
			 size_t errlen)
{
	const struct paths_env *env = &tr->env;
	int r;

	r = paths_fill_edges(loader_path_edges(env->loader), tr->id, tr->cfg, tr->edges);
	if (r < 0) {
		snprintf(err, errlen, "cannot fill the BPF edge table: %s", strerror(-r));
		goto fail_bpf;
	}
	mark_attach(tr);
	r = paths_attach_probes(tr, site, err, errlen);
	if (r < 0)
		goto fail_bpf;
	/* Armed: activations may begin now that every probe is on. */
	r = paths_put_edge(loader_path_edges(env->loader), tr->id, KP_PATH_NONE,
			   cfg_entry_block(tr->cfg), KP_PACT_START, tr->edges ? KP_PEF_EDGES : 0, 0,
			   0);
	if (r < 0) {
		snprintf(err, errlen, "cannot fill the BPF edge table: %s", strerror(-r));
		goto fail_bpf;
	}
	/* Not sd_event_add_time_relative: the loop's cached time is stale after a wait above. */
	r = sd_event_add_time(env->event, &tr->timer, CLOCK_MONOTONIC,
			      now_ns(CLOCK_MONOTONIC) / 1000 + (uint64_t)tr->duration_ms * 1000,
			      1000, on_timer, tr);
	if (r < 0) {
		snprintf(err, errlen, "cannot arm the duration timer: %s", strerror(-r));
		goto fail_bpf;
	}
	mark_started(tr);
	return 0;

fail_bpf:
	/* Links (if any) and the edges go, the same way a stopped trace's do. */
	{
		struct paths_cleanup *c = malloc(sizeof(*c));

		if (c)
			*c = (struct paths_cleanup){loader_path_edges(env->loader),
						    loader_path_threads(env->loader), tr->id,
						    tr->pid};
		tr->removal = links_remove_async(tr->links, tr->nlinks, &tr->file, 1,
						 c ? paths_bpf_cleanup : NULL, c);
		tr->links = NULL;
	}
	return r;
}

/* The copies of one JIT function (its whole name) seen in a perf map, and the one tried. */
struct same {
	char *name; /* the whole name start_one resolved, owned */
	uint64_t tried;
	uint64_t starts[PATHS_SAME_NAME_MAX];
	size_t n;
};

static int start_one(struct path_trace **slot, const struct paths_env *env, pid_t pid,
		     struct tsym *sym, const struct paths_opts *req, struct same *same, char *err,
		     size_t errlen)
{
	struct path_trace *tr, *old = *slot;
	struct probecost_budget bud;
	unsigned k = req->k ? req->k : 4;
	int r;

	r = check_request(req, pid, old, k, err, errlen);
	if (r < 0)
		return r;
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->ref_id = PATHS_NO_REF;
	tr->pid = pid;
	tr->env = *env;
	tr->k = k;
	tr->budget = req->budget;
	tr->duration_ms = req->duration_ms ? req->duration_ms : 10000;
	tr->threads = calloc(PATHS_THREAD_SLOTS, sizeof(*tr->threads));
	tidtab_init(&tr->tids, PATHS_THREAD_SLOTS);
	if (!tr->threads) {
		r = -ENOMEM;
		goto fail;
	}
	r = prepare(sym, tr, req->function, req->force, &tr->site, err, errlen);
	if (r < 0)
		goto fail;
	if (req->structural && (r = spp_setup(tr, req, err, errlen)) < 0)
		goto fail;
	r = ksf_new(k, &(struct ksf_limits){.max_nodes = env->ksf_max_nodes}, &tr->ksf);
	if (r < 0)
		goto fail;
	/* Measured once per kprofd, before the counters are read: the calibration's hits are
	 * not this trace's. A host whose breakpoints count nothing is said so, not traced. */
	if (tr->hw && (r = probecost_hwbp_check(env->loader, err, errlen)) < 0)
		goto fail;
	r = probecost_budget(env->loader, tr->hw ? PROBECOST_HWBP : PROBECOST_UPROBE,
			     req->max_slowdown, env->max_slowdown, &bud, err, errlen);
	if (r < 0)
		goto fail;
	tr->hit_ns = bud.hit_ns;
	tr->max_slowdown = bud.max;
	tr->max_slowdown_default = bud.max_default;
	if (old) /* the previous trace's probes must be gone first */
		paths_trace_free(old);
	*slot = NULL;
	tr->id = next_trace_id++;
	if (next_trace_id == 0)
		next_trace_id = 1;
	if (tr->hw) {
		r = start_hw(tr, err, errlen);
		if (r == -ENOENT && same && !same->name) { /* no loop: the caller may try others */
			same->name = strdup(tr->func);
			same->tried = tr->start;
		}
		if (r < 0)
			goto fail;
		*slot = tr;
		if ((r = arm_cost_check(tr, err, errlen)) < 0)
			paths_stop(tr, "cost check");
		return r < 0 ? r : 0;
	}
	r = start_uprobes(tr, &tr->site, err, errlen);
	if (r < 0)
		goto fail;
	*slot = tr;
	if ((r = arm_cost_check(tr, err, errlen)) < 0) {
		paths_stop(tr, "cost check");
		return r;
	}
	log_info("pid %d: tracing the %s of %s (0x%" PRIx64 ", %zu blocks, %" PRIu64
		 " paths, k %u) for %u ms",
		 tr->pid, tr->edges ? "edges (too many paths to number)" : "paths", tr->func,
		 tr->start, cfg_nblocks(tr->cfg), cfg_num_paths(tr->cfg), k, tr->duration_ms);
	return 0;

fail:
	free(tr->links);
	paths_trace_free(tr);
	return r;
}

static int same_cb(const struct perfmap_sym *s, void *userdata)
{
	struct same *c = userdata;

	if (strcmp(s->name, c->name) || s->start == c->tried)
		return 0;
	if (c->n == PATHS_SAME_NAME_MAX) /* keep the newest */
		memmove(c->starts, c->starts + 1, --c->n * sizeof(c->starts[0]));
	c->starts[c->n++] = s->start;
	return 0;
}

int paths_start(struct path_trace **slot, const struct paths_env *env, pid_t pid, struct tsym *sym,
		const struct paths_opts *req, char *err, size_t errlen)
{
	struct same c = {0};
	int r = start_one(slot, env, pid, sym, req, &c, err, errlen);

	/* A JIT may give several copies of a function one name (V8's on-stack-replacement code,
	 * entered in the middle of its loop, which the CFG from its start does not reach): on
	 * anonymous code, when the one tried has no loop to follow, the others of its whole name
	 * are tried, newest first. */
	if (!c.name || !strncmp(req->function, "0x", 2) || tsym_foreach_jit(sym, same_cb, &c) < 0) {
		free(c.name);
		return r;
	}
	for (size_t i = c.n; i-- > 0 && r == -ENOENT;) {
		char addr[24], why[256];
		struct paths_opts o = *req;

		snprintf(addr, sizeof(addr), "0x%" PRIx64, c.starts[i]);
		o.function = addr;
		r = start_one(slot, env, pid, sym, &o, NULL, why, sizeof(why));
		if (r != -ENOENT && r < 0) /* else the first copy's reason stands */
			snprintf(err, errlen, "%s", why);
	}
	free(c.name);
	return r;
}
