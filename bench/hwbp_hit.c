// SPDX-License-Identifier: GPL-2.0-only
/* hwbp_hit.c: what a hardware execute breakpoint hit costs here (bench/hwbp.sh).
 *
 * Calls a function that does nothing (not inlined) N times, timed, with no breakpoint, then with
 * a counting breakpoint on its entry (perf_event_open, PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_X,
 * this thread, user space only: what `attach --calls=NAME` opens), and checks that the event
 * counted every call. Prints one Markdown row: N, ns per call without and with, ns per hit.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void target(volatile uint64_t *x)
{
	__asm__ volatile("" ::: "memory");
	(*x)++;
}

static double run(uint64_t n)
{
	volatile uint64_t x = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < n; i++)
		target(&x);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000, count = 0;
	struct perf_event_attr at = {
	    .type = PERF_TYPE_BREAKPOINT,
	    .size = sizeof(at),
	    .bp_type = HW_BREAKPOINT_X,
	    .bp_addr = (uintptr_t)target,
	    .bp_len = sizeof(long),
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	double plain, bp;
	int fd;

	run(n / 10); /* warm up */
	plain = run(n);
	fd = syscall(SYS_perf_event_open, &at, 0, -1, -1, 0);
	if (fd < 0) {
		fprintf(stderr, "hwbp_hit: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	bp = run(n);
	if (read(fd, &count, sizeof(count)) != sizeof(count) || count != n) {
		fprintf(stderr, "hwbp_hit: counted %" PRIu64 " of %" PRIu64 " calls\n", count, n);
		return 1;
	}
	printf("| %" PRIu64 " | %.1f | %.1f | %.2f |\n", n, plain / n, bp / n,
	       (bp - plain) / n / 1e3);
	return 0;
}
