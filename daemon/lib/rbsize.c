// SPDX-License-Identifier: GPL-2.0-only
/* rbsize.c: the ring buffer's size from the worst rate and the drain interval (see
 * include/kprof/rbsize.h). Sizes are powers of two, as the kernel requires of a ring buffer.
 */
#include <errno.h>
#include <stdint.h>

#include "kprof/rbsize.h"

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t n = 1;

	while (n < v && n < (1ULL << 62))
		n <<= 1;
	return n;
}

static uint64_t pow2_at_most(uint64_t v)
{
	uint64_t n = 1;

	while (n <= v / 2)
		n <<= 1;
	return n;
}

int rbsize_compute(const struct rbsize_in *in, struct rbsize *out)
{
	unsigned __int128 need;
	uint64_t max, bytes;

	if (!in->ncpus || !in->max_freq || !in->record_bytes || !in->interval_ms ||
	    in->max_bytes < RBSIZE_MIN_BYTES)
		return -EINVAL;
	max = pow2_at_most(in->max_bytes);
	need =
	    (unsigned __int128)in->ncpus * in->max_freq * in->record_bytes * in->interval_ms / 1000;
	out->need = need > UINT64_MAX ? UINT64_MAX : (uint64_t)need;
	bytes = pow2_at_least(out->need);
	if (bytes < RBSIZE_MIN_BYTES)
		bytes = RBSIZE_MIN_BYTES;
	out->capped = bytes > max;
	out->bytes = out->capped ? max : bytes;
	return 0;
}

int rbsize_explicit(uint64_t asked, uint64_t page, uint64_t limit, uint64_t *bytes)
{
	uint64_t n;

	if (!asked || !page || (page & (page - 1)))
		return -EINVAL;
	n = pow2_at_least(asked);
	if (n < page)
		n = page;
	if (n > limit)
		return -E2BIG;
	*bytes = n;
	return 0;
}

uint32_t rbsize_hold_ms(const struct rbsize_in *in, uint64_t bytes)
{
	uint64_t per_sec = (uint64_t)in->ncpus * in->max_freq * in->record_bytes, ms;

	if (!per_sec)
		return UINT32_MAX;
	ms = bytes * 1000 / per_sec;
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}
