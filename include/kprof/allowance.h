/* SPDX-License-Identifier: GPL-2.0-only */
/* allowance.h: how much of something (bytes read, CPU time) may be spent, refilled with time: a
 * token bucket. It holds at most `burst` and gains `rate` per second up to that; spending takes
 * from it and may overdraw it by the last step (a step is measured after it is done), which
 * later refills repay. What a caller does while it is empty is its own: wait, never block. Pure:
 * the time is given by the caller (a monotonic clock, nanoseconds).
 */
#ifndef KPROF_ALLOWANCE_H
#define KPROF_ALLOWANCE_H

#include <stdbool.h>
#include <stdint.h>

struct allowance {
	uint64_t rate;	/* gained per second */
	uint64_t burst; /* held at most */
	int64_t left;	/* may be negative: overdrawn */
	uint64_t at_ns; /* of the last refill */
};

/* Full at now_ns. */
void allowance_init(struct allowance *a, uint64_t rate, uint64_t burst, uint64_t now_ns);
/* What may be spent at now_ns (0 while overdrawn or empty). */
uint64_t allowance_avail(struct allowance *a, uint64_t now_ns);
/* n was spent. */
void allowance_spend(struct allowance *a, uint64_t n);

#endif
