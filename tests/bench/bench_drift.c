// SPDX-License-Identifier: GPL-2.0-only
/* bench_drift.c: the CPU cost of the profile-drift detector per call of drift_add (daemon/lib/
 * drift.c), on the stream kprofd feeds it for minijit: each sample feeds a leaf JIT function
 * with an offset (a few hot instructions and a tail, 40 keys) and its JIT caller with a callee,
 * over F functions (default 6, as minijit --phase), with the default settings. The branch bias
 * of the first function flips halfway, so judgements, a drift and the relearning are in the
 * time. Usage: bench_drift [-n SAMPLES] [-f FUNCTIONS] [-r REPETITIONS]; prints ns per call
 * (the median of the repetitions, in the thread's CPU time) and the drifts seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"
#include "kprof/drift.h"

static uint64_t key_of(uint64_t *s, int flipped)
{
	uint64_t r = prng_next(s) % 1000;
	unsigned k = r < 500 ? r % 4 : r < 800 ? 4 + r % 12 : 16 + r % 24;

	return 0x40 + 4 * (flipped ? 39 - k : k);
}

static double one(long n, unsigned nf, uint64_t *drifts)
{
	struct drift *d;
	uint64_t s = 42, t = 1;
	double c0;

	if (drift_new(NULL, &d) < 0)
		exit(1);
	c0 = cpu_now();
	for (long i = 0; i < n; i++) {
		uint32_t f = (uint32_t)(prng_next(&s) % nf);
		int flipped = f == 0 && i > n / 2;

		*drifts += drift_add(d, f, key_of(&s, flipped), t) == 1;
		*drifts += drift_add(d, 100, (1ULL << 62) | f, t) == 1; /* the caller */
		t += 1000000;
	}
	c0 = cpu_now() - c0;
	drift_free(d);
	return c0 * 1e9 / (2.0 * n);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = 2000000;
	unsigned nf = 6, reps = 5;
	double v[64];
	uint64_t drifts = 0;
	int c;

	while ((c = getopt(argc, argv, "n:f:r:")) != -1) {
		if (c == 'n')
			n = atol(optarg);
		else if (c == 'f')
			nf = (unsigned)atoi(optarg);
		else if (c == 'r')
			reps = (unsigned)atoi(optarg);
		else
			return 2;
	}
	if (n < 1 || nf < 1 || nf > 64 || reps < 1 || reps > 64)
		return 2;
	for (unsigned r = 0; r < reps; r++)
		v[r] = one(n, nf, &drifts);
	qsort(v, reps, sizeof(v[0]), cmp);
	printf("drift_add: %.1f ns per call (median of %u runs of %ld samples, 2 calls each, %u "
	       "functions); %.1f drifts per run\n",
	       v[reps / 2], reps, n, nf, (double)drifts / reps);
	return 0;
}
