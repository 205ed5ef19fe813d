/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz.h: helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Targets must be deterministic: every "random" choice (piece sizes, limits, probe addresses)
 * comes from a small PRNG seeded with a hash of the input, so an input replays exactly. A broken
 * invariant prints what broke and aborts; libFuzzer then saves the input as a crash.
 */
#ifndef KPROF_FUZZ_H
#define KPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../prng.h" /* prng_next: splitmix64, any seed */

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__,       \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* FNV-1a, 64-bit. */
static inline uint64_t fuzz_hash(const uint8_t *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* The size of the next piece of a stream with `left` bytes to go (left > 0): mostly small
 * pieces (torn headers and lines), sometimes medium, sometimes all that is left. */
static inline size_t fuzz_piece(uint64_t *s, size_t left)
{
	uint64_t r = prng_next(s);
	size_t n;

	switch (r & 3) {
	case 0:
		n = 1 + (size_t)((r >> 2) % 4);
		break;
	case 1:
		n = 1 + (size_t)((r >> 2) % 64);
		break;
	case 2:
		n = 1 + (size_t)((r >> 2) % 1024);
		break;
	default:
		n = left;
		break;
	}
	return n < left ? n : left;
}

/* Little-endian 64-bit word at p[0..8), zero-padded past n. */
static inline uint64_t fuzz_word(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#endif
