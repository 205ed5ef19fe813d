/* SPDX-License-Identifier: GPL-2.0-only */
/* pcost.h: what probes cost a target, from a measured cost per hit (daemon/lib/pcost.c). */
#ifndef KPROF_PCOST_H
#define KPROF_PCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCOST_MAX_SLOWDOWN 100.0 /* slowdowns above are "100x or more" */
#define PCOST_ROUNDS_MAX 16

/* One calibration round: the CPU time of a fixed loop without probes, with a probe hit each
 * iteration, and the hits the probe counted. */
struct pcost_round {
	uint64_t base_ns, probed_ns, hits;
};

/* The cost of one hit, ns: the median over the rounds of (probed - base) / hits. Rounds with no
 * hit, or where the probed loop ran faster than the bare one (noise), are left out; -ENODATA
 * when none is left, -EINVAL on a bad argument. */
int pcost_per_hit(const struct pcost_round *rounds, size_t n, uint64_t *ret_ns);

/* The slowdown of a target that used cpu_ns of CPU time while its probes were hit hits times,
 * at hit_ns each: cpu / (cpu - hits x hit_ns), the CPU time a unit of its work takes traced over
 * untraced; at most PCOST_MAX_SLOWDOWN (the probes then took all its time). 0 (unknown)
 * without CPU time or without a cost per hit. */
double pcost_slowdown(uint64_t cpu_ns, uint64_t hits, uint64_t hit_ns);

/* The same from the probes' time: cpu / (cpu - probe_ns), at most PCOST_MAX_SLOWDOWN; 0 without
 * CPU time. */
double pcost_slowdown_ns(uint64_t cpu_ns, uint64_t probe_ns);

/* The hits that keep a target using cpu_ns of CPU time at or under slowdown max (> 1): the
 * probes may take cpu x (1 - 1 / max). 0 when hit_ns is 0 or max <= 1. */
uint64_t pcost_hits_allowed(uint64_t cpu_ns, double max, uint64_t hit_ns);

/* A hit's cost measured in the target itself, from its own progress. A trap costs more than its
 * calibrated time when the code run after it is large: here (a VM) each trap leaves the branch
 * predictors and caches cold, and V8's code pays about 3.5 us more a hit than the calibration's
 * small loop. The target's progress is read from its samples: ref is the function outside the
 * traced code with the most leaf samples when the trace began, whose work per unit of the
 * target's work does not change; its share of the samples falls by the slowdown. base_ref of
 * base_all samples before the trace, ref of all since. */
struct pcost_ref {
	uint64_t base_ref, base_all, ref, all;
};

#define PCOST_REF_MIN_SHARE 0.10   /* ref held this much of the samples before the trace */
#define PCOST_REF_MIN_SAMPLES 200  /* samples before, and since, for a share */
#define PCOST_REF_MIN_SLOWDOWN 1.3 /* a slowdown the shares can tell from noise */
#define PCOST_REF_MAX_FACTOR 3	   /* at most this many times the calibrated cost */

/* The cost of one hit measured from the shares (cpu_ns of CPU time and hits hits since the
 * trace began): cpu x (1 - 1 / slowdown) / hits, at most PCOST_REF_MAX_FACTOR x calibrated_ns.
 * 0 when the shares cannot tell it (too few samples, a ref too small, a slowdown under
 * PCOST_REF_MIN_SLOWDOWN) or it is under the calibrated cost (which stands then). */
uint64_t pcost_ref_hit_ns(const struct pcost_ref *r, uint64_t cpu_ns, uint64_t hits,
			  uint64_t calibrated_ns);

/* A budget kept by taking probes off and putting them back (exact mode): what the probes cost a
 * target since they first went in (all) and since they last went in (stretch: the probes in
 * now), each as the target's CPU time and the probes' share of it. */
struct pcost_use {
	uint64_t cpu_ns, probe_ns;
};

enum pcost_step {
	PCOST_KEEP, /* as they are */
	PCOST_OFF,  /* in, and over the budget: take them off */
	PCOST_ON,   /* off, and back under it: put them in */
};

#define PCOST_STRETCH_MIN_CPU_NS 20000000ULL /* a stretch judged on its own from this much CPU */
#define PCOST_RESUME 0.8 /* back in once the probes' share is this part of what max allows */

/* The step that keeps the slowdown of the whole trace at or under max (> 1): probes in (on) go
 * off as soon as their stretch costs more than max allows (a stretch over it stalls the target
 * however cheap the trace was so far) or the whole trace does; probes off go back in once the
 * trace's share is under PCOST_RESUME of the allowed one. So a stretch over the budget lasts one
 * check, and the pause after it lasts until the target's own work has paid for it: the duty
 * cycle follows from the cost, and the slowdown over the trace stays at about max. PCOST_KEEP
 * when max <= 1 (no budget). */
enum pcost_step pcost_budget(bool on, const struct pcost_use *all, const struct pcost_use *stretch,
			     double max);

/* The target CPU time, ns, that the target still has to run before probes taken off for the
 * budget may go back in (pcost_budget's PCOST_ON): 0 when they may now, UINT64_MAX when they
 * may never (no budget: max <= 1). */
uint64_t pcost_pay_ns(const struct pcost_use *all, double max);

/* The line logged when a stretch first goes over the budget, for a mode named what ("exact
 * mode", "path trace of F"): "WHAT over its budget (...x slower in the last ... ms of its CPU
 * time, ...x allowed): probes off until ...", into buf (always terminated when len > 0). */
void pcost_over_budget(char *buf, size_t len, const char *what, const struct pcost_use *stretch,
		       double max);

/* The duty of probes taken off and put back: the part of the time span_ns they were in (on_ns),
 * 0 to 1 (1 with an empty span). */
double pcost_duty(uint64_t on_ns, uint64_t span_ns);

#endif
