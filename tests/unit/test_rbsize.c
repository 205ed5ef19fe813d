// SPDX-License-Identifier: GPL-2.0-only
/* test_rbsize.c: unit tests of the ring buffer's size (daemon/lib/rbsize.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kprof/config.h"
#include "kprof/rbsize.h"

#define MiB (1ULL << 20)

/* kprofd's defaults: the highest frequency an attach may ask, an average record, samples
 * drained every 500 ms, the 8 MiB bound. */
static struct rbsize defaults_for(unsigned ncpus, uint64_t bound)
{
	struct rbsize_in in = {ncpus, KPROF_MAX_FREQ, RBSIZE_RECORD_BYTES, 500, bound};
	struct rbsize r;

	assert_int_equal(rbsize_compute(&in, &r), 0);
	return r;
}

static void test_default_sizes(void **state)
{
	struct rbsize r;

	(void)state;
	/* 2 CPUs: 2 x 4999 Hz x 512 B x 0.5 s = 2.4 MiB -> 4 MiB, under the bound. */
	r = defaults_for(2, RBSIZE_DEFAULT_MAX_MB * MiB);
	assert_int_equal(r.need, 2559488);
	assert_int_equal(r.bytes, 4 * MiB);
	assert_false(r.capped);
	/* 96 CPUs would need 117 MiB: the bound holds it to 8 MiB. */
	r = defaults_for(96, RBSIZE_DEFAULT_MAX_MB * MiB);
	assert_int_equal(r.need, 122855424);
	assert_int_equal(r.bytes, 8 * MiB);
	assert_true(r.capped);
	/* 192 CPUs: 234 MiB needed, still 8 MiB (the old sizing locked 512 MiB). */
	r = defaults_for(192, RBSIZE_DEFAULT_MAX_MB * MiB);
	assert_int_equal(r.need, 245710848);
	assert_int_equal(r.bytes, 8 * MiB);
	assert_true(r.capped);
	/* The highest bound allowed. */
	r = defaults_for(192, RBSIZE_LIMIT_MB * MiB);
	assert_int_equal(r.bytes, 64 * MiB);
	assert_true(r.capped);
	r = defaults_for(96, RBSIZE_LIMIT_MB * MiB);
	assert_int_equal(r.bytes, 64 * MiB);
}

static void test_small_and_odd(void **state)
{
	struct rbsize_in in = {1, 99, 512, 50, 8 * MiB};
	struct rbsize r;

	(void)state;
	/* Little can arrive: the 1 MiB floor. */
	assert_int_equal(rbsize_compute(&in, &r), 0);
	assert_int_equal(r.need, 2534);
	assert_int_equal(r.bytes, MiB);
	assert_false(r.capped);
	/* A bound that is not a power of two is rounded down. */
	in = (struct rbsize_in){16, 4999, 512, 500, 12 * MiB};
	assert_int_equal(rbsize_compute(&in, &r), 0);
	assert_int_equal(r.bytes, 8 * MiB);
	assert_true(r.capped);
	/* Exactly a power of two needed: not doubled. */
	in = (struct rbsize_in){1, 1024, 1024, 2000, 8 * MiB};
	assert_int_equal(rbsize_compute(&in, &r), 0);
	assert_int_equal(r.need, 2 * MiB);
	assert_int_equal(r.bytes, 2 * MiB);
	/* Bad input. */
	in.ncpus = 0;
	assert_int_equal(rbsize_compute(&in, &r), -EINVAL);
	in = (struct rbsize_in){2, 99, 512, 500, MiB / 2};
	assert_int_equal(rbsize_compute(&in, &r), -EINVAL);
	/* The largest inputs do not overflow. */
	in = (struct rbsize_in){~0u, ~0u, ~0u, ~0u, 64 * MiB};
	assert_int_equal(rbsize_compute(&in, &r), 0);
	assert_int_equal(r.need, UINT64_MAX);
	assert_int_equal(r.bytes, 64 * MiB);
}

static void test_explicit(void **state)
{
	uint64_t b = 0;

	(void)state;
	assert_int_equal(rbsize_explicit(4096, 4096, 64 * MiB, &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(rbsize_explicit(1, 4096, 64 * MiB, &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(rbsize_explicit(3 * MiB, 4096, 64 * MiB, &b), 0);
	assert_int_equal(b, 4 * MiB);
	assert_int_equal(rbsize_explicit(64 * MiB, 4096, 64 * MiB, &b), 0);
	assert_int_equal(b, 64 * MiB);
	b = 7;
	assert_int_equal(rbsize_explicit(64 * MiB + 1, 4096, 64 * MiB, &b), -E2BIG);
	assert_int_equal(b, 7); /* untouched on error */
	assert_int_equal(rbsize_explicit(0, 4096, 64 * MiB, &b), -EINVAL);
	assert_int_equal(rbsize_explicit(4096, 3000, 64 * MiB, &b), -EINVAL);
}

static void test_hold(void **state)
{
	struct rbsize_in in = {2, 4999, 512, 500, 8 * MiB};

	(void)state;
	/* 4 MiB at 2 x 4999 x 512 B/s: 819 ms. */
	assert_int_equal(rbsize_hold_ms(&in, 4 * MiB), 819);
	in.ncpus = 96;
	assert_int_equal(rbsize_hold_ms(&in, 8 * MiB), 34);
	in.max_freq = 0;
	assert_int_equal(rbsize_hold_ms(&in, 8 * MiB), UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_sizes),
	    cmocka_unit_test(test_small_and_odd),
	    cmocka_unit_test(test_explicit),
	    cmocka_unit_test(test_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
