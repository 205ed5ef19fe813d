/* SPDX-License-Identifier: GPL-2.0-only */
/* clock.h: one clock reading in nanoseconds, for every glue file. */
#ifndef KPROF_DAEMON_CLOCK_H
#define KPROF_DAEMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clock_gettime(clock) in ns. */
static inline uint64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
