/* bench_util.h: the small helpers the benchmark programs share (header-only). */
#ifndef KPROF_BENCH_UTIL_H
#define KPROF_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* splitmix64: a fast, seedable generator; the same seed gives the same stream everywhere. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The calling thread's CPU time in seconds: what the timed code itself spent, whatever else
 * the machine runs. */
static inline double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
