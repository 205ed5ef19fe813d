/* SPDX-License-Identifier: GPL-2.0-only */
/* pcost.h: what probes cost a target, from a measured cost per hit (daemon/lib/pcost.c). */
#ifndef KPROF_PCOST_H
#define KPROF_PCOST_H

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

/* The hits that keep a target using cpu_ns of CPU time at or under slowdown max (> 1): the
 * probes may take cpu x (1 - 1 / max). 0 when hit_ns is 0 or max <= 1. */
uint64_t pcost_hits_allowed(uint64_t cpu_ns, double max, uint64_t hit_ns);

#endif
