/* SPDX-License-Identifier: GPL-2.0-only */
/* prng.h: the seedable generator of the unit tests, fuzz targets, benchmarks and minijit.
 *
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
 * the state advances by a fixed odd constant and each output is a strong mix of it. Any seed,
 * 0 included, gives a full-period, well-mixed stream, and one state word can be copied,
 * printed and replayed. The same seed gives the same stream on every build, so a failing test
 * or a fuzz input reproduces exactly. Not for anything that needs unpredictability.
 */
#ifndef KPROF_TESTS_PRNG_H
#define KPROF_TESTS_PRNG_H

#include <stdint.h>

/* The next 64 random bits of the stream whose state is *s. */
static inline uint64_t prng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A uniform double in [0, 1), from the top 53 bits of the next output. */
static inline double prng_unit(uint64_t *s)
{
	return (double)(prng_next(s) >> 11) * 0x1.0p-53;
}

#endif
