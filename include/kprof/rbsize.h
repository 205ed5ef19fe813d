/* SPDX-License-Identifier: GPL-2.0-only */
/* rbsize.h: the size of kprofd's BPF ring buffer, from what can arrive in it.
 *
 * Samples arrive at most at ncpus x max_freq a second: a per-thread event fires only while its
 * thread runs, and at most ncpus threads run at once; a per-CPU set fires on every CPU. kprofd
 * leaves samples in the buffer for up to interval_ms between two drains (it is woken sooner
 * once the buffer is an eighth full), so the buffer should hold ncpus x max_freq x record_bytes
 * x interval_ms / 1000 bytes. That need is rounded up to a power of two (the kernel's rule for
 * ring buffers), to at least RBSIZE_MIN_BYTES, and cut to the bound max_bytes: a ring buffer is
 * locked kernel memory, and a need that grows with the CPU count (117 MiB for 96 CPUs at
 * 4999 Hz) must not take it. Past the bound, samples that arrive faster than kprofd drains them
 * are lost and counted (kp_counters), never silently. Pure: no I/O, no globals.
 */
#ifndef KPROF_RBSIZE_H
#define KPROF_RBSIZE_H

#include <stdbool.h>
#include <stdint.h>

#define RBSIZE_MIN_BYTES (1u << 20)
#define RBSIZE_DEFAULT_MAX_MB 8 /* the default bound (daemon.ringbuf_max_mb) */
#define RBSIZE_LIMIT_MB 64	/* no configuration may ask for more */
#define RBSIZE_RECORD_BYTES 512 /* an average sample record: header and ~60 frames */

struct rbsize_in {
	unsigned ncpus;	       /* CPUs that can run a target at once */
	unsigned max_freq;     /* the highest sampling frequency, Hz */
	unsigned record_bytes; /* an average record */
	unsigned interval_ms;  /* the longest a record waits for a drain */
	uint64_t max_bytes;    /* the bound (rounded down to a power of two) */
};

struct rbsize {
	uint64_t need;	/* bytes that can arrive in one interval */
	uint64_t bytes; /* the size */
	bool capped;	/* the bound cut the size below the need */
};

/* 0, or -EINVAL if an input is 0 or the bound is below RBSIZE_MIN_BYTES. */
int rbsize_compute(const struct rbsize_in *in, struct rbsize *out);
/* A size set explicitly: rounded up to a power of two, at least page (a power of two).
 * -E2BIG above limit, -EINVAL for 0 or a page that is not a power of two. */
int rbsize_explicit(uint64_t asked, uint64_t page, uint64_t limit, uint64_t *bytes);
/* How long bytes hold the worst rate of in, in ms (UINT32_MAX if nothing can arrive). */
uint32_t rbsize_hold_ms(const struct rbsize_in *in, uint64_t bytes);

#endif
