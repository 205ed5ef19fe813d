// SPDX-License-Identifier: GPL-2.0-only
/* allowance.c: a token bucket (allowance.h): refilled at rate per second up to burst, spent
 * after the fact (possibly overdrawn), never blocking. A clock that goes back refills nothing;
 * the fraction of a unit not gained yet is gained at a later call (the refill time only moves
 * with what was gained). */
#include "kprof/allowance.h"

void allowance_init(struct allowance *a, uint64_t rate, uint64_t burst, uint64_t now_ns)
{
	if (burst > INT64_MAX)
		burst = INT64_MAX;
	*a = (struct allowance){.rate = rate, .burst = burst, .left = (int64_t)burst, .at_ns = now_ns};
}

static void refill(struct allowance *a, uint64_t now_ns)
{
	unsigned __int128 gain;

	if (now_ns <= a->at_ns || !a->rate)
		return;
	gain = (unsigned __int128)(now_ns - a->at_ns) * a->rate / 1000000000u;
	if (!gain)
		return;
	if (gain >= (unsigned __int128)((__int128)a->burst - a->left)) {
		a->left = (int64_t)a->burst;
		a->at_ns = now_ns; /* full: what more it would gain is lost anyway */
		return;
	}
	a->left += (int64_t)gain;
	a->at_ns += (uint64_t)(gain * 1000000000u / a->rate); /* the time those units took */
}

uint64_t allowance_avail(struct allowance *a, uint64_t now_ns)
{
	refill(a, now_ns);
	return a->left > 0 ? (uint64_t)a->left : 0;
}

void allowance_spend(struct allowance *a, uint64_t n)
{
	if (n > (uint64_t)INT64_MAX || a->left < INT64_MIN + (int64_t)n)
		a->left = INT64_MIN;
	else
		a->left -= (int64_t)n;
}
