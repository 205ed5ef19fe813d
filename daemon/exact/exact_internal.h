/* SPDX-License-Identifier: GPL-2.0-only */
/* exact_internal.h: exact mode's state (struct calls) and what its parts call in one another
 * and nothing else does: exact_probes.c (the probes: which functions, attached, taken away) and
 * exact.c (a mode's life, its timers and what the probes report), which calls the former, never
 * the other way. The rest of kprofd sees exact.h only (tests/layers.txt forbids this header to
 * every folder above exact/). */
#ifndef KPROF_DAEMON_EXACT_INTERNAL_H
#define KPROF_DAEMON_EXACT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "kprof/callsync.h"
#include "kprof/hcct.h"
#include "kprof/tidtab.h"
#include "exact/exact.h"

struct bpf_link;
struct hwcalls;
struct probe;
struct removal;

#define CALLS_MAX_THREADS 2048

/* Exact mode of a target: uprobes at every JIT function entry and return. */
struct calls {
	struct calls_env env; /* given at creation (NULL loop and loader: a restored profile) */
	bool force;
	unsigned burst_ms, period_ms; /* 0: probes stay attached */
	struct probe *probes;
	size_t nprobes;
	struct bpf_link **links;
	size_t nlinks;
	sd_event_source *timer; /* the bursts' */
	/* CLOCK_MONOTONIC; enabled_ns: when the first probes were in (0: not yet) */
	uint64_t on_since_ns, active_ns, enabled_ns, ended_ns;
	/* Removing uprobes waits for an RCU grace period in the kernel (about 1 s here): a worker
	 * thread does it off the event loop, and nothing in the loop waits for it. */
	struct removal *removal;
	uint64_t bursts, events, unmatched_exits;
	/* The epoch of the probe set now or last in (loader_calls_open, 0: none yet; open: not
	 * yet closed): the BPF side stamps it on the events of the time the whole set was in, 0 on
	 * the others (a set half attached or half removed), which are counted apart (outside) and
	 * never enter the counts or the tree. Events lost on the way (gaps in a thread's numbers)
	 * and those left out of the tree until their thread is back where its cursor knows it to
	 * be (callsync.h) are counted too. */
	uint32_t epoch;
	bool epoch_open;
	uint64_t outside, lost, skipped;
	uint64_t *counts; /* entries per function id */
	size_t ncounts;
	struct hcct *exact; /* contexts of the calls, exactly as entered */
	/* A profile restored from disk: the exact tree as a snapshot (exact is NULL), the number
	 * of probes and their duty then (probes is NULL). */
	struct hcct_tree *saved_exact;
	size_t saved_nprobes;
	double saved_duty;
	struct {
		uint32_t tid; /* 0: free */
		struct callsync cs;
	} * threads; /* CALLS_MAX_THREADS, by their slot in tids */
	struct tidtab tids;
	uint64_t lost_threads;
	/* attach --calls=NAME,...: only these functions (comma-separated; NULL: every one);
	 * those in anonymous memory are counted by hardware breakpoints (hwcalls.c). */
	char *names;
	struct hwcalls *hw;
	/* --calls=hot:N: the N hottest JIT functions of the samples, chosen after a warm-up
	 * (hot_timer); 0 when the functions were named or are chosen. */
	unsigned hot, hot_tries;
	sd_event_source *hot_timer;
	/* The budget (exact.c, pcost.h): a hit's cost measured on this host (uprobes: a call
	 * probe's; breakpoints), the target's CPU time and the probes' when the first probes went
	 * in and when the last stretch began, and the budget's state: probes off for it (held),
	 * times it took them off, the check's timer. */
	uint64_t hit_ns, hw_hit_ns;
	double max_slowdown;
	bool max_slowdown_default;
	uint64_t cpu0_ns, cpu_last_ns, stretch_cpu_ns, stretch_hits;
	bool held;
	/* Uprobes taken off keep trapping, their program already gone, until the kernel removes
	 * them (about a second here): their hits then are estimated (hidden_hits) from the rate of
	 * the stretch before (hits per ns of the target's CPU time), for as long as the int3 is
	 * still at the entry of the hottest function probed (linger_addr; 0: none lingers). */
	double hidden_hits, linger_rate;
	uint64_t linger_addr, linger_cpu_ns;
	uint64_t budget_offs;
	sd_event_source *cost_timer;
	/* The cost figures kept when exact mode ended (calls_end), or a restored profile's. */
	uint64_t saved_hits, saved_hit_ns;
	double saved_hits_per_s, saved_slowdown;
	char saved_cost_kind[32];
	/* A restored profile's breakpoint figures (hw is NULL then). */
	uint32_t saved_hw_n;
	bool saved_hw_estimated;
	double saved_hw_covered;
	char saved_hw_stopped[256];
};

/* exact_probes.c */

/* Pick the functions to probe (c->names: only those; then the ones uprobes cannot reach go to
 * hardware breakpoints) and check the safety rules; err says why not. */
int calls_plan(struct calls *c, bool force, char *err, size_t errlen);
/* Attach the planned probes and breakpoints (a burst begins); err says why not. */
int calls_on(struct calls *c, char *err, size_t errlen);
/* Take the probes away (asynchronously: probes.c); the counts stay, and the threads' cursors,
 * for the events of the window still on their way. */
void calls_off(struct calls *c);
/* The probes may attach now (no removal of their files running); else why in err. */
int calls_may_attach(const struct calls *c, char *err, size_t errlen);
/* Forget where every thread stands (probes went away). */
void calls_reset_cursors(struct calls *c);
/* The n JIT functions with the most self samples so far, comma-separated (*ret malloc'd):
 * how many, 0 if none has samples yet, or -ENOMEM. */
int calls_hot_names(const struct profile *p, unsigned n, char **ret);
/* The entry of the probed function called most so far (0: no probe). */
uint64_t calls_hottest_probe(const struct calls *c);
/* Probes off and everything of the probes freed (plan, links, breakpoints, cursors). */
void calls_probes_free(struct calls *c);

#endif
