// SPDX-License-Identifier: GPL-2.0-only
/* pcost.c: what probes cost a target (see include/kprof/pcost.h).
 *
 * A probe hit (a uprobe's trap, a hardware breakpoint's debug exception: on a VM a VM exit)
 * costs the thread that hits it a roughly fixed CPU time, booked to that thread, as user or
 * system time depending on where the hypervisor's clock ran. So the time the probes took is
 * hits x cost per hit, whatever the split, and the slowdown of the target's work is its CPU
 * time over that time less the probes'. The cost per hit is measured on the host (probecost.c
 * runs the rounds); this file only does the arithmetic, no I/O. Where the code run between hits
 * is large a hit costs more than the calibration's (cold predictors and caches after each trap),
 * and the target's own progress, read from its samples, measures it (pcost_ref_hit_ns).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kprof/pcost.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int pcost_per_hit(const struct pcost_round *rounds, size_t n, uint64_t *ret_ns)
{
	uint64_t c[PCOST_ROUNDS_MAX];
	size_t k = 0;

	if (!rounds || !ret_ns || n > PCOST_ROUNDS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct pcost_round *r = &rounds[i];

		if (r->hits == 0 || r->probed_ns <= r->base_ns)
			continue;
		c[k++] = (r->probed_ns - r->base_ns) / r->hits;
	}
	if (k == 0)
		return -ENODATA;
	qsort(c, k, sizeof(c[0]), cmp_u64);
	*ret_ns = k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
	return 0;
}

static double slowdown(uint64_t cpu_ns, double probes)
{
	double work = (double)cpu_ns - probes;

	if (cpu_ns == 0)
		return 0;
	if (work <= (double)cpu_ns / PCOST_MAX_SLOWDOWN)
		return PCOST_MAX_SLOWDOWN;
	return (double)cpu_ns / work;
}

double pcost_slowdown(uint64_t cpu_ns, uint64_t hits, uint64_t hit_ns)
{
	return hit_ns ? slowdown(cpu_ns, (double)hits * (double)hit_ns) : 0;
}

double pcost_slowdown_ns(uint64_t cpu_ns, uint64_t probe_ns)
{
	return slowdown(cpu_ns, (double)probe_ns);
}

uint64_t pcost_ref_hit_ns(const struct pcost_ref *r, uint64_t cpu_ns, uint64_t hits,
			  uint64_t calibrated_ns)
{
	double before, during, sd, c;

	if (!r || !hits || !calibrated_ns || r->base_all < PCOST_REF_MIN_SAMPLES ||
	    r->all < PCOST_REF_MIN_SAMPLES || r->base_ref > r->base_all || r->ref > r->all)
		return 0;
	before = (double)r->base_ref / (double)r->base_all;
	during = (double)r->ref / (double)r->all;
	if (before < PCOST_REF_MIN_SHARE || during <= 0)
		return 0;
	sd = before / during;
	if (sd < PCOST_REF_MIN_SLOWDOWN)
		return 0;
	c = (double)cpu_ns * (1.0 - 1.0 / sd) / (double)hits;
	if (c <= (double)calibrated_ns)
		return 0;
	if (c > (double)calibrated_ns * PCOST_REF_MAX_FACTOR)
		c = (double)calibrated_ns * PCOST_REF_MAX_FACTOR;
	return (uint64_t)c;
}

uint64_t pcost_hits_allowed(uint64_t cpu_ns, double max, uint64_t hit_ns)
{
	if (hit_ns == 0 || !(max > 1))
		return 0;
	return (uint64_t)((double)cpu_ns * (1.0 - 1.0 / max) / (double)hit_ns);
}

/* The probes' share of u's CPU time over share, the most max allows: whether they are over. */
static bool over(const struct pcost_use *u, double share)
{
	return (double)u->probe_ns > share * (double)u->cpu_ns;
}

enum pcost_step pcost_budget(bool on, const struct pcost_use *all, const struct pcost_use *stretch,
			     double max)
{
	double share;

	if (!(max > 1) || !all || !stretch)
		return PCOST_KEEP;
	share = 1.0 - 1.0 / max;
	if (on)
		return (stretch->cpu_ns >= PCOST_STRETCH_MIN_CPU_NS && over(stretch, share)) ||
			       (all->cpu_ns >= PCOST_STRETCH_MIN_CPU_NS && over(all, share))
			   ? PCOST_OFF
			   : PCOST_KEEP;
	return all->cpu_ns && !over(all, PCOST_RESUME * share) ? PCOST_ON : PCOST_KEEP;
}

uint64_t pcost_pay_ns(const struct pcost_use *all, double max)
{
	double need;

	if (!all || !(max > 1))
		return UINT64_MAX;
	/* probe / (cpu + x) <= PCOST_RESUME x share, and cpu + x > 0 */
	need = (double)all->probe_ns / (PCOST_RESUME * (1.0 - 1.0 / max));
	if (need <= (double)all->cpu_ns)
		return all->cpu_ns ? 0 : 1;
	if (need - (double)all->cpu_ns >= (double)UINT64_MAX / 2)
		return UINT64_MAX / 2;
	return (uint64_t)(need - (double)all->cpu_ns) + 1;
}

void pcost_over_budget(char *buf, size_t len, const char *what, const struct pcost_use *stretch,
		       double max)
{
	if (!buf || !len || !what || !stretch)
		return;
	snprintf(buf, len,
		 "%s over its budget (%.2fx slower in the last %.0f ms of its CPU time, %.2fx "
		 "allowed): probes off until the target's work has paid for them, and so on",
		 what, pcost_slowdown_ns(stretch->cpu_ns, stretch->probe_ns),
		 (double)stretch->cpu_ns / 1e6, max);
}

double pcost_duty(uint64_t on_ns, uint64_t span_ns)
{
	if (span_ns == 0)
		return 1;
	return on_ns >= span_ns ? 1 : (double)on_ns / (double)span_ns;
}
