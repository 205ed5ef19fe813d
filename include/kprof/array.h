/* SPDX-License-Identifier: GPL-2.0-only */
/* array.h: array_grow, the growth step of kprof's growable arrays.
 *
 * A growable array is a pointer, a count and a capacity kept by the caller. array_grow makes room
 * for `need` elements by doubling the capacity (from `first` when there is none yet), so n
 * appends cost O(n) copying in all. It is a function on void * and an element size rather than a
 * macro, so that the arithmetic is checked once: a capacity whose byte size would overflow
 * size_t is refused with -ENOMEM instead of wrapping into a short allocation. Arrays whose
 * capacity is bounded by a limit, or that grow several arrays at once, keep their own code.
 */
#ifndef KPROF_ARRAY_H
#define KPROF_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make *arr (capacity *cap elements of elem bytes) hold at least need elements; first > 0.
 * Allocates even when need is 0 and *arr is NULL, so a successful call leaves *arr non-NULL.
 * 0 or -ENOMEM; on failure *arr and *cap are unchanged. */
static inline int array_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *q;

	if (need <= *cap && *arr)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*arr, n * elem);
	if (!q)
		return -ENOMEM;
	*arr = q;
	*cap = n;
	return 0;
}

#endif
