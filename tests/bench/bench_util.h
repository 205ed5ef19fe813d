/* SPDX-License-Identifier: GPL-2.0-only */
/* bench_util.h: the small helpers the benchmark programs share (header-only). */
#ifndef KPROF_BENCH_UTIL_H
#define KPROF_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

#include "../prng.h" /* prng_next, prng_unit: splitmix64, seedable */

/* The calling thread's CPU time in seconds: what the timed code itself spent, whatever else
 * the machine runs. */
static inline double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
