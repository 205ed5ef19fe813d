/* SPDX-License-Identifier: GPL-2.0-only */
/* search.h: last_le, the binary search of sorted address tables.
 *
 * The symbol tables keep their start addresses in plain sorted arrays (and a sparse top level
 * over them). Looking up an address is finding the last start <= the address. The loop below
 * always runs ceil(log2 n) steps and picks the half with a conditional move, not a branch: on
 * random addresses a branch would be mispredicted half the time.
 */
#ifndef KPROF_SEARCH_H
#define KPROF_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* Index of the last of the n values in v that is <= x; n >= 1 and v[0] <= x. */
static inline size_t last_le(const uint64_t *v, size_t n, uint64_t x)
{
	const uint64_t *base = v;
	size_t half;

	while (n > 1) {
		half = n / 2;
		base = base[half] <= x ? base + half : base;
		n -= half;
	}
	return (size_t)(base - v);
}

#endif
